/* stats.c: the statistical primitives of a campaign and the paired effect
 * (statistics-anchors.md §3.2-§3.5; the API is documented in kgate/stats.h).
 *
 * kg_effect_compute() turns the per-process mean log ratios D(p) of one
 * arm into the estimate and the interval of §3.3 with the direction as a
 * stratum, plus the order check of §3.4.  kg_verdict_of() applies the
 * three-outcome rule of §3.5.
 *
 * This file does not read rows, pick baselines or apply the gate: that is
 * analysis.c.  It does no I/O and keeps no state. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kgate/stats.h"

/* Merges the sorted halves v[0..n1) and v[n1..n) through tmp, stably: the
 * left value first unless it is greater (a NaN on either side keeps the
 * left one, as glibc's merge sort does). */
static void merge_halves(double *v, size_t n, size_t n1, double *tmp)
{
    size_t n2 = n - n1;
    double *b1 = v, *b2 = v + n1, *t = tmp;
    while (n1 > 0 && n2 > 0) {
        if (!(*b1 > *b2)) {
            *t++ = *b1++;
            n1--;
        } else {
            *t++ = *b2++;
            n2--;
        }
    }
    if (n1 > 0) memcpy(t, b1, n1 * sizeof *t);
    memcpy(v, tmp, (n - n2) * sizeof *v);
}

/* The merge sort of glibc's qsort (n1 = n / 2 on the left; the left
 * element first unless it is greater), with the comparison written out
 * instead of called: the same order for every input, NaN included, so
 * every median and quantile is the one qsort gave. */
static void sort_merge(double *v, size_t n, double *tmp)
{
    if (n <= 1) return;
    if (n == 2) {
        if (v[0] > v[1]) {
            double t = v[0];
            v[0] = v[1];
            v[1] = t;
        }
        return;
    }
    size_t n1 = n / 2;
    sort_merge(v, n1, tmp);
    sort_merge(v + n1, n - n1, tmp);
    merge_halves(v, n, n1, tmp);
}

/* Insertion sort, stable: below a few dozen values, and the leaves of the
 * merge where no value is NaN. */
static void sort_insert(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* sort_merge with insertion-sorted leaves: without NaN the comparison
 * is a total preorder, and a stable sort's result is the one result */
static void sort_merge_leaves(double *v, size_t n, double *tmp)
{
    if (n <= 16) {
        sort_insert(v, n);
        return;
    }
    size_t n1 = n / 2;
    sort_merge_leaves(v, n1, tmp);
    sort_merge_leaves(v + n1, n - n1, tmp);
    merge_halves(v, n, n1, tmp);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static int any_nan(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(v[i])) return 1;
    return 0;
}

void kg_sort_doubles(double *v, size_t n)
{
    double small[256];
    double *tmp = n <= 256 ? small : malloc(n * sizeof *tmp);
    if (tmp == NULL) {
        qsort(v, n, sizeof *v, cmp_double);   /* in place: what glibc's own falls back to */
        return;
    }
    if (any_nan(v, n)) sort_merge(v, n, tmp);
    else sort_merge_leaves(v, n, tmp);
    if (tmp != small) free(tmp);
}

/* The k-th smallest of a[0..n) (k < n), a reordered so that a[0..k)
 * are not greater: quickselect, median-of-three pivots, and the merge
 * sort (tmp: n doubles) once the partitions have not shrunk enough.
 * Only where no value is NaN or zero: values that compare equal then
 * have the same bits, and any order gives the sorted copy's value. */
static double select_k(double *a, size_t n, size_t k, double *tmp)
{
    size_t lo = 0, hi = n - 1;
    int budget = 8;
    for (size_t m = n; m > 1; m >>= 1) budget += 2;
    while (hi > lo) {
        if (hi - lo < 24 || budget-- == 0) {
            sort_merge_leaves(a + lo, hi - lo + 1, tmp);
            break;
        }
        size_t mid = lo + (hi - lo) / 2;
        double x = a[lo], y = a[mid], z = a[hi];
        double p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < p) i++;
            while (a[j] > p) j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j && j < hi) hi = j;
        else if (k >= i) lo = i;
        else break;   /* between j and i: equal to the pivot */
    }
    return a[k];
}

/* The median of a copy: the middle of the order qsort would give
 * (kg_sort_doubles), found by selection where that gives the same bits
 * (no NaN, no zero), else by sorting the copy. */
double kg_median(const double *v, size_t n)
{
    if (v == NULL || n == 0) return (double)NAN;
    double small[512];
    double *w = n <= 256 ? small : malloc(2 * n * sizeof *w);
    if (w == NULL) return (double)NAN;
    int plain = 1;
    for (size_t i = 0; i < n; i++) {
        w[i] = v[i];
        plain &= !isnan(v[i]) && v[i] != 0.0;
    }
    double m;
    if (plain) {
        double hi = select_k(w, n, n / 2, w + n);
        if (n % 2 == 1) {
            m = hi;
        } else {
            double lo = w[0];
            for (size_t i = 1; i < n / 2; i++)
                if (w[i] > lo) lo = w[i];
            m = 0.5 * (lo + hi);
        }
    } else {
        sort_merge(w, n, w + n);
        m = (n % 2 == 1) ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
    }
    if (w != small) free(w);
    return m;
}

double kg_mean(const double *v, size_t n)
{
    if (v == NULL || n == 0) return (double)NAN;
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += v[i];
    return s / (double)n;
}

double kg_huber(const double *v, size_t n, double *work)
{
    if (v == NULL || n == 0) return (double)NAN;
    if (n <= 2 || work == NULL) return kg_mean(v, n);
    double med = kg_median(v, n);
    for (size_t i = 0; i < n; i++) work[i] = fabs(v[i] - med);
    double scale = 1.4826 * kg_median(work, n);
    if (!(scale > 0.0) || !isfinite(scale)) return kg_mean(v, n);
    double k = 1.345 * scale, mu = med;
    for (int it = 0; it < 50; it++) {
        double sw = 0.0, swx = 0.0;
        for (size_t i = 0; i < n; i++) {
            double r = fabs(v[i] - mu), w = r <= k ? 1.0 : k / r;
            sw += w;
            swx += w * v[i];
        }
        double nmu = swx / sw;
        int done = fabs(nmu - mu) < 1e-12 * (1.0 + fabs(mu));
        mu = nmu;
        if (done) break;
    }
    return mu;
}

double kg_sd(const double *v, size_t n)
{
    if (v == NULL || n < 2) return 0.0;
    double m = kg_mean(v, n), ss = 0.0;
    for (size_t i = 0; i < n; i++) ss += (v[i] - m) * (v[i] - m);
    return sqrt(ss / (double)(n - 1));
}

double kg_t_quantile(double p, double df)
{
    if (!(p >= 0.0 && p <= 1.0) || !(df > 0.0)) return (double)NAN;
    /* GSL's default error handler aborts the process, which library code
     * must never do; a failed inversion becomes (double)NAN instead. */
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    double q = gsl_cdf_tdist_Pinv(p, df);
    gsl_set_error_handler(old);
    return q;
}

double kg_t_sf(double x, double df)
{
    if (isnan(x) || !(df > 0.0)) return (double)NAN;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    double q = gsl_cdf_tdist_Q(x, df);
    gsl_set_error_handler(old);
    return q;
}

double kg_z_of_p(double p)
{
    if (!(p > 0.0)) return (double)INFINITY;
    if (!(p < 1.0)) return -(double)INFINITY;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    double z = gsl_cdf_ugaussian_Qinv(p);
    gsl_set_error_handler(old);
    return z;
}

static void effect_clear_interval(kg_effect *e)
{
    e->has_interval = 0;
    e->s = e->se = e->df = e->tq = (double)NAN;
    e->lo = e->hi = e->rho_lo = e->rho_hi = (double)NAN;
    e->order_se = e->order_tq = (double)NAN;
    e->order_flag = 0;
    for (int d = 0; d < 2; d++) e->rho_lo_dir[d] = e->rho_hi_dir[d] = (double)NAN;
}

int kg_effect_compute(const double *D, const int *dir, int n, double alpha,
                      double order_min, kg_effect *out, kg_err *err)
{
    if (out == NULL) return kg_errorf(err, KG_EINTERNAL, "effect: no output record");
    memset(out, 0, sizeof *out);
    effect_clear_interval(out);
    out->theta_dir[0] = out->theta_dir[1] = out->theta = out->rho = (double)NAN;
    out->order_diff = (double)NAN;
    if (n < 0 || (n > 0 && (D == NULL || dir == NULL)))
        return kg_errorf(err, KG_EINTERNAL, "effect: bad arguments (n = %d)", n);
    if (!(alpha > 0.0 && alpha < 1.0))
        return kg_errorf(err, KG_EINPUT, "effect: alpha %g is not in (0, 1)", alpha);

    double sum[2] = {0.0, 0.0};
    for (int i = 0; i < n; i++) {
        if (dir[i] != KG_DIR_FWD && dir[i] != KG_DIR_REV)
            return kg_errorf(err, KG_EINPUT, "effect: process %d has direction %d", i, dir[i]);
        if (!isfinite(D[i]))
            return kg_errorf(err, KG_EINPUT, "effect: process %d has a non-finite mean", i);
        out->n[dir[i]]++;
        sum[dir[i]] += D[i];
    }
    if (out->n[0] == 0 || out->n[1] == 0)
        return kg_errorf(err, KG_EINPUT,
                         "effect: no %s process (need both directions; %d forward, %d reverse)",
                         out->n[0] == 0 ? "forward" : "reverse", out->n[0], out->n[1]);

    for (int d = 0; d < 2; d++) out->theta_dir[d] = sum[d] / out->n[d];
    out->theta = 0.5 * (out->theta_dir[0] + out->theta_dir[1]);
    out->rho = 1.0 - exp(out->theta);
    out->order_diff = out->theta_dir[0] - out->theta_dir[1];

    /* One process per direction leaves no within-direction variation:
     * §3.3 refuses an interval rather than borrow one from rounds. */
    if (out->n[0] < 2 || out->n[1] < 2) return KG_OK;

    double ss = 0.0;
    for (int i = 0; i < n; i++) {
        double r = D[i] - out->theta_dir[dir[i]];
        ss += r * r;
    }
    double nf = out->n[0], nr = out->n[1];
    out->has_interval = 1;
    out->df = nf + nr - 2.0;
    out->s = sqrt(ss / out->df);
    /* Var(theta) = (s^2/nf + s^2/nr) / 4: each direction weighs one half. */
    out->se = out->s * sqrt(1.0 / (4.0 * nf) + 1.0 / (4.0 * nr));
    out->tq = kg_t_quantile(1.0 - alpha, out->df);
    out->lo = out->theta - out->tq * out->se;
    out->hi = out->theta + out->tq * out->se;
    /* A smaller log ratio is a larger reduction, so the bounds swap. */
    out->rho_lo = 1.0 - exp(out->hi);
    out->rho_hi = 1.0 - exp(out->lo);
    /* each direction alone, with the pooled s and df */
    for (int d = 0; d < 2; d++) {
        double sed = out->s / sqrt((double)out->n[d]);
        out->rho_lo_dir[d] = 1.0 - exp(out->theta_dir[d] + out->tq * sed);
        out->rho_hi_dir[d] = 1.0 - exp(out->theta_dir[d] - out->tq * sed);
    }
    /* The order check is a two-sided t test of theta_fwd = theta_rev at
     * the plan's alpha and the analysis' df (a fixed 2.5 SE alarmed in
     * 13% of A/A campaigns at 2 processes per direction, where t(0.975, 2)
     * is 4.30), and the difference must exceed order_min too. */
    out->order_se = out->s * sqrt(1.0 / nf + 1.0 / nr);
    out->order_tq = kg_t_quantile(1.0 - alpha / 2.0, out->df);
    double ad = fabs(out->order_diff);
    out->order_flag = ad > out->order_tq * out->order_se && ad > order_min;
    return KG_OK;
}

kg_verdict kg_verdict_of(const kg_effect *e, double margin, double equivalence)
{
    if (e == NULL || !e->has_interval || isnan(e->rho_lo) || isnan(e->rho_hi))
        return KG_VERDICT_INCONCLUSIVE;
    /* with an order effect, each direction on its own must support the claim */
    int fast_dirs = !e->order_flag || fmin(e->rho_lo_dir[0], e->rho_lo_dir[1]) > margin;
    int slow_dirs = !e->order_flag || fmax(e->rho_hi_dir[0], e->rho_hi_dir[1]) < -margin;
    if (e->rho_lo > margin) return fast_dirs ? KG_VERDICT_FASTER : KG_VERDICT_INCONCLUSIVE;
    if (e->rho_hi < -margin) return slow_dirs ? KG_VERDICT_SLOWER : KG_VERDICT_INCONCLUSIVE;
    if (-equivalence < e->rho_lo && e->rho_hi < equivalence) return KG_VERDICT_EQUIVALENT;
    return KG_VERDICT_INCONCLUSIVE;
}

const char *kg_verdict_label(kg_verdict v, int order_flag)
{
    if (order_flag && v == KG_VERDICT_FASTER) return "FASTER (order-sensitive)";
    if (order_flag && v == KG_VERDICT_SLOWER) return "SLOWER (order-sensitive)";
    return kg_verdict_name(v);
}

int kg_change_compute(const kg_effect *a, const kg_effect *b, double alpha, kg_change *out, kg_err *err)
{
    memset(out, 0, sizeof *out);
    out->se = out->df = out->tq = out->lo = out->hi = (double)NAN;
    out->ratio_lo = out->ratio_hi = out->change_lo = out->change_hi = (double)NAN;
    if (!(alpha > 0.0 && alpha < 1.0))
        return kg_errorf(err, KG_EINPUT, "change: alpha %g is not in (0, 1) (give e.g. 0.05)", alpha);
    out->diff = b->theta - a->theta;
    out->ratio = exp(out->diff);
    out->change = out->ratio - 1.0;
    if (!a->has_interval || !b->has_interval || !(a->df > 0.0) || !(b->df > 0.0) || !isfinite(a->se)
        || !isfinite(b->se))
        return KG_OK;
    double va = a->se * a->se, vb = b->se * b->se, v = va + vb;
    /* Welch-Satterthwaite; with no spread in either campaign the df of
     * the two variance estimates together */
    double den = va * va / a->df + vb * vb / b->df;
    out->df = den > 0.0 ? v * v / den : a->df + b->df;
    out->se = sqrt(v);
    out->tq = kg_t_quantile(1.0 - alpha / 2.0, out->df);
    if (!isfinite(out->tq)) return KG_OK;
    out->lo = out->diff - out->tq * out->se;
    out->hi = out->diff + out->tq * out->se;
    out->ratio_lo = exp(out->lo);
    out->ratio_hi = exp(out->hi);
    out->change_lo = out->ratio_lo - 1.0;
    out->change_hi = out->ratio_hi - 1.0;
    out->has_interval = 1;
    return KG_OK;
}

kg_verdict kg_change_verdict(const kg_change *c, double margin)
{
    if (c == NULL || !c->has_interval) return KG_VERDICT_INCONCLUSIVE;
    /* the campaign's rule on the reduction 1 - ratio, no order flag */
    kg_effect e;
    memset(&e, 0, sizeof e);
    e.has_interval = 1;
    e.rho_lo = 1.0 - c->ratio_hi;
    e.rho_hi = 1.0 - c->ratio_lo;
    return kg_verdict_of(&e, margin, margin);
}

const char *kg_verdict_name(kg_verdict v)
{
    switch (v) {
    case KG_VERDICT_FASTER: return "FASTER";
    case KG_VERDICT_SLOWER: return "SLOWER";
    case KG_VERDICT_EQUIVALENT: return "EQUIVALENT";
    case KG_VERDICT_INCONCLUSIVE: return "INCONCLUSIVE";
    case KG_VERDICT_INCORRECT: return "INCORRECT";
    case KG_VERDICT_INADMISSIBLE: return "INADMISSIBLE";
    case KG_VERDICT_NODATA: return "NO DATA";
    case KG_VERDICT_WEAK: return "WEAK CASE";
    case KG_VERDICT_INVALID: return "INVALID";
    }
    return "UNKNOWN";
}

typedef struct { double p; int i; } pidx;

static int cmp_pidx(const void *a, const void *b)
{
    const pidx *x = a, *y = b;
    if (x->p != y->p) return (x->p > y->p) - (x->p < y->p);
    return (x->i > y->i) - (x->i < y->i);
}

void kg_holm(const double *p, int m, double *padj)
{
    if (m <= 0) return;
    pidx *v = malloc((size_t)m * sizeof *v);
    if (v == NULL) {
        /* Bonferroni, which Holm never exceeds */
        for (int i = 0; i < m; i++) padj[i] = fmin(1.0, (double)m * p[i]);
        return;
    }
    for (int i = 0; i < m; i++) v[i] = (pidx){ isnan(p[i]) ? 1.0 : p[i], i };
    qsort(v, (size_t)m, sizeof *v, cmp_pidx);
    double run = 0.0;
    for (int j = 0; j < m; j++) {
        double a = fmin(1.0, (double)(m - j) * v[j].p);
        if (a > run) run = a;
        padj[v[j].i] = run;
    }
    free(v);
}

int kg_maxt(const double *R, int m, double df, double alpha, uint64_t seed, int n, const double *t,
            double *crit, double *padj, kg_err *err)
{
    if (m < 1 || n < 100 || !(df > 0.0) || !(alpha > 0.0 && alpha < 1.0) || R == NULL || crit == NULL)
        return kg_errorf(err, KG_EINTERNAL, "maxt: bad arguments (m %d, n %d, df %g)", m, n, df);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_matrix *L = gsl_matrix_alloc((size_t)m, (size_t)m);
    double *mx = malloc((size_t)n * sizeof *mx), *z = malloc((size_t)m * sizeof *z);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int rc = KG_OK;
    if (L == NULL || mx == NULL || z == NULL || rng == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "maxt: out of memory");
        goto done;
    }
    /* Cholesky of R, shrunk toward the identity until positive definite */
    int ok = 0;
    for (double lam = 0.0; lam <= 1.0 && !ok; lam = lam == 0.0 ? 1e-6 : lam * 10.0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++)
                gsl_matrix_set(L, (size_t)i, (size_t)j, (1.0 - lam) * R[i * m + j] + (i == j ? lam : 0.0));
        ok = gsl_linalg_cholesky_decomp1(L) == 0;
    }
    if (!ok) {
        rc = kg_errorf(err, KG_EINPUT, "maxt: the correlation matrix cannot be factored");
        goto done;
    }
    gsl_rng_set(rng, (unsigned long)(seed ^ (seed >> 32)));
    for (int k = 0; k < n; k++) {
        double w = sqrt(gsl_ran_chisq(rng, df) / df), best = -INFINITY;
        for (int i = 0; i < m; i++) z[i] = gsl_ran_gaussian(rng, 1.0);
        for (int i = 0; i < m; i++) {
            double zi = 0.0;
            for (int j = 0; j <= i; j++) zi += gsl_matrix_get(L, (size_t)i, (size_t)j) * z[j];
            double ti = zi / w;
            if (ti > best) best = ti;
        }
        mx[k] = best;
    }
    if (padj != NULL && t != NULL)
        for (int i = 0; i < m; i++) {
            int over = 0;
            for (int k = 0; k < n; k++) over += mx[k] >= t[i];
            padj[i] = (double)over / (double)n;
        }
    kg_sort_doubles(mx, (size_t)n);
    int q = (int)ceil((1.0 - alpha) * (double)n) - 1;
    if (q < 0) q = 0;
    if (q >= n) q = n - 1;
    *crit = mx[q];
done:
    gsl_set_error_handler(old);
    gsl_matrix_free(L);
    gsl_rng_free(rng);
    free(mx);
    free(z);
    return rc;
}

/* The boundaries of the last (K, alpha) computed: they depend on nothing
 * else (the simulation's seed is fixed), and an analysis asks for them at
 * every look, the supervisor at every process. */
static struct {
    int K;
    double alpha;
    double c[KG_PLAN_MAX_LOOKS];
} seq_memo;

static int seq_bounds_draw(int K, double alpha, double *c, kg_err *err);

int kg_seq_bounds(int K, double alpha, double *c, kg_err *err)
{
    if (K < 1 || K > KG_PLAN_MAX_LOOKS || !(alpha > 0.0 && alpha < 0.5) || c == NULL)
        return kg_errorf(err, KG_EINTERNAL, "sequential bounds: K %d, alpha %g", K, alpha);
    if (K == 1) {
        c[0] = gsl_cdf_ugaussian_Qinv(alpha);
        return KG_OK;
    }
    if (seq_memo.K == K && seq_memo.alpha == alpha) {
        memcpy(c, seq_memo.c, (size_t)K * sizeof *c);
        return KG_OK;
    }
    int rc = seq_bounds_draw(K, alpha, c, err);
    if (rc == KG_OK) {
        memcpy(seq_memo.c, c, (size_t)K * sizeof *c);
        seq_memo.alpha = alpha;
        seq_memo.K = K;
    }
    return rc;
}

/* O'Brien-Fleming boundaries by simulation (K > 1). */
static int seq_bounds_draw(int K, double alpha, double *c, kg_err *err)
{
    enum { DRAWS = 400000 };
    double *z = malloc((size_t)DRAWS * (size_t)K * sizeof *z);
    unsigned char *alive = malloc(DRAWS);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int rc = KG_OK;
    if (z == NULL || alive == NULL || rng == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "sequential bounds: out of memory");
        goto done;
    }
    gsl_rng_set(rng, 20261201ul + (unsigned long)K);
    /* z_k = W(t_k) / sqrt(t_k), W a Brownian motion observed at k / K */
    for (int d = 0; d < DRAWS; d++) {
        double w = 0.0;
        for (int k = 0; k < K; k++) {
            w += gsl_ran_gaussian(rng, sqrt(1.0 / K));
            z[(size_t)d * (size_t)K + (size_t)k] = w / sqrt((double)(k + 1) / K);
        }
        alive[d] = 1;
    }
    double za = gsl_cdf_ugaussian_Qinv(alpha / 2.0), spent = 0.0;
    double *col = malloc((size_t)DRAWS * sizeof *col);
    if (col == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "sequential bounds: out of memory");
        goto done;
    }
    for (int k = 0; k < K; k++) {
        double t = (double)(k + 1) / K;
        double target = 2.0 - 2.0 * gsl_cdf_ugaussian_P(za / sqrt(t));
        double step = target - spent;
        /* the boundary that the paths still alive cross with probability step */
        int n = 0;
        for (int d = 0; d < DRAWS; d++)
            if (alive[d]) col[n++] = z[(size_t)d * (size_t)K + (size_t)k];
        kg_sort_doubles(col, (size_t)n);
        int cross = (int)(step * DRAWS + 0.5);
        if (cross < 1) cross = 1;
        if (cross > n) cross = n;
        /* the first look's boundary is exact; later ones from the paths */
        c[k] = k == 0 ? gsl_cdf_ugaussian_Qinv(target) : col[n - cross];
        for (int d = 0; d < DRAWS; d++)
            if (alive[d] && z[(size_t)d * (size_t)K + (size_t)k] >= c[k]) alive[d] = 0;
        spent = target;
    }
    free(col);
done:
    free(z);
    free(alive);
    gsl_rng_free(rng);
    return rc;
}
