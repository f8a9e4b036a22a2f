/* varcomp.c: variance components (sample, round, process) of each arm's
 * log times and of each contrast, and the power of a design built from
 * them (the API and the model are in kgate/varcomp.h; the derivation is
 * in docs/statistics.md, "Variance components and the size of a design").
 *
 * Per (case, arm) with n_pr samples in round r of process p,
 * n_p = sum_r n_pr, N_d = sum over the processes of direction d of n_p,
 * B rounds and A processes in all, and D the directions with samples:
 *   SS_sample  = sum (y - ybar_pr)^2,              df N - B
 *   SS_round   = sum n_pr (ybar_pr - ybar_p)^2,    df B - A
 *   SS_process = sum n_p (ybar_p - ybar_d)^2,      df A - D
 * with the expected mean squares
 *   E MS_sample  = v_s
 *   E MS_round   = v_s + k1 v_r,  k1 = (N - sum_p sum_r n_pr^2 / n_p) / (B - A)
 *   E MS_process = v_s + k2 v_r + k3 v_p,
 *     k2 = sum_d (sum_{p in d} sum_r n_pr^2 / n_p - sum_{p in d} sum_r n_pr^2 / N_d) / (A - D)
 *     k3 = sum_d (N_d - sum_{p in d} n_p^2 / N_d) / (A - D)
 * (k1 = k2 = S and k3 = R S when balanced), solved in order; v_p uses the
 * untruncated v_r, and each estimate is then truncated at 0.
 *
 * The contrast is the analysis' own (statistics.md step 1): y is the log
 * of the median of a round's samples; delta = y(arm) - y(b) with b the
 * baseline the analysis compares the arm with (campaign.reference, or the
 * worst of every baseline), or y(arm) - y(of) for a control.  With m_p paired
 * rounds in process p and n_d processes in direction d:
 *   var_delta = sum (delta - D_p)^2 / (sum m_p - A)
 *   var_D     = sum_d sum_{p in d} (D_p - theta_d)^2 / (A - 2)
 *   E var_D   = var_process + h var_delta,
 *     h = sum_d ((n_d - 1) / n_d) sum_{p in d} (1 / m_p) / (A - 2)
 * since D_p is an unweighted mean of m_p rounds (h = 1/R when balanced).
 *
 * No I/O; the report functions append to a buffer or build JSON. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "kgate/evidence.h"
#include "kgate/varcomp.h"
#include "base/util.h"

#define PI 3.14159265358979323846

/* ---- the table: samples of (case, process, arm, round) together ---- */

typedef struct vtab {
    int ncases, nproc, narms, nrounds;
    size_t ncells;
    size_t *off;     /* ncells + 1 */
    double *ns;      /* sample times */
    double *y;       /* per cell: log of the median, NAN when empty */
    int *pdir;       /* per process: direction, -1 without rows */
} vtab;

static size_t vcell(const vtab *t, int c, int p, int a, int r)
{
    return (((size_t)c * (size_t)t->nproc + (size_t)p) * (size_t)t->narms + (size_t)a) * (size_t)t->nrounds
           + (size_t)r;
}

static void vtab_free(vtab *t)
{
    free(t->off);
    free(t->ns);
    free(t->y);
    free(t->pdir);
    memset(t, 0, sizeof *t);
}

static int vtab_build(const kg_analysis_in *in, vtab *t, kg_err *err)
{
    const kg_plan *plan = in->plan;
    size_t *fill = NULL;
    int rc = KG_OK, maxround = -1;
    size_t nkept = 0;
    memset(t, 0, sizeof *t);
    t->ncases = plan->ncases;
    t->narms = plan->narms;
    t->nproc = in->nproc;
    t->pdir = malloc(((size_t)in->nproc + 1) * sizeof *t->pdir);
    if (t->pdir == NULL) { rc = kg_errorf(err, KG_ENOMEM, "variance components: out of memory"); goto done; }
    for (int p = 0; p < in->nproc; p++) t->pdir[p] = -1;
    for (size_t i = 0; i < in->nrows; i++) {
        const kg_row *w = &in->rows[i];
        if (w->proc < 0 || w->proc >= in->nproc) {
            rc = kg_errorf(err, KG_EINPUT, "variance components: row %zu: process %d is not in 0..%d", i, w->proc,
                           in->nproc - 1);
            goto done;
        }
        if (!in->accepted[w->proc]) continue;
        if (w->kase < 0 || w->kase >= plan->ncases || w->arm < 0 || w->arm >= plan->narms || w->round < 0
            || (w->dir != KG_DIR_FWD && w->dir != KG_DIR_REV) || !(isfinite(w->ns) && w->ns > 0.0)) {
            rc = kg_errorf(err, KG_EINPUT, "variance components: row %zu: case, arm, round, direction or time "
                           "outside the plan", i);
            goto done;
        }
        if (t->pdir[w->proc] < 0) t->pdir[w->proc] = w->dir;
        else if (t->pdir[w->proc] != w->dir) {
            rc = kg_errorf(err, KG_EINPUT, "variance components: row %zu: process %d has rows in both directions",
                           i, w->proc);
            goto done;
        }
        if (w->round > maxround) maxround = w->round;
        nkept++;
    }
    t->nrounds = maxround + 1;
    t->ncells = (size_t)t->ncases * (size_t)t->nproc * (size_t)t->narms * (size_t)t->nrounds;
    t->off = calloc(t->ncells + 1, sizeof *t->off);
    t->ns = malloc((nkept + 1) * sizeof *t->ns);
    t->y = malloc((t->ncells + 1) * sizeof *t->y);
    fill = malloc((t->ncells + 1) * sizeof *fill);
    if (t->off == NULL || t->ns == NULL || t->y == NULL || fill == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "variance components: out of memory for %zu cells", t->ncells);
        goto done;
    }
    for (size_t i = 0; i < in->nrows; i++) {
        const kg_row *w = &in->rows[i];
        if (in->accepted[w->proc]) t->off[vcell(t, w->kase, w->proc, w->arm, w->round) + 1]++;
    }
    for (size_t k = 0; k < t->ncells; k++) t->off[k + 1] += t->off[k];
    memcpy(fill, t->off, t->ncells * sizeof *fill);
    for (size_t i = 0; i < in->nrows; i++) {
        const kg_row *w = &in->rows[i];
        if (in->accepted[w->proc]) t->ns[fill[vcell(t, w->kase, w->proc, w->arm, w->round)]++] = w->ns;
    }
    for (size_t k = 0; k < t->ncells; k++) {
        size_t n = t->off[k + 1] - t->off[k];
        t->y[k] = n > 0 ? log(kg_median(t->ns + t->off[k], n)) : (double)NAN;
    }
done:
    free(fill);
    if (rc != KG_OK) vtab_free(t);
    return rc;
}

/* ---- one arm: the nested analysis of variance ---- */

static void arm_blank(kg_vc_arm *v)
{
    memset(v, 0, sizeof *v);
    v->samples_per_round = (double)NAN;
    v->ms_sample = v->ms_round = v->ms_process = (double)NAN;
    v->k1 = v->k2 = v->k3 = (double)NAN;
    v->raw_round = v->raw_process = (double)NAN;
    v->var_sample = v->var_round = v->var_process = (double)NAN;
}

/* ybar_p, n_p: scratch of nproc entries. */
static void arm_components(const vtab *t, int c, int a, kg_vc_arm *v, double *ybar_p, double *n_p)
{
    double N = 0.0, ss_s = 0.0, ss_r = 0.0, ss_p = 0.0, sum_n2pr_np = 0.0;
    double Nd[2] = { 0, 0 }, sum_yd[2] = { 0, 0 }, n2pr_np_d[2] = { 0, 0 }, n2pr_d[2] = { 0, 0 }, n2p_d[2] = { 0, 0 };
    long B = 0;
    int A = 0, has_d[2] = { 0, 0 };
    for (int p = 0; p < t->nproc; p++) {
        n_p[p] = 0.0;
        int d = t->pdir[p];
        if (d < 0) continue;
        double sum_p = 0.0, n2pr = 0.0;
        for (int r = 0; r < t->nrounds; r++) {
            size_t k = vcell(t, c, p, a, r), n = t->off[k + 1] - t->off[k];
            if (n == 0) continue;
            double m = 0.0;
            for (size_t i = t->off[k]; i < t->off[k + 1]; i++) m += log(t->ns[i]);
            m /= (double)n;
            for (size_t i = t->off[k]; i < t->off[k + 1]; i++) {
                double e = log(t->ns[i]) - m;
                ss_s += e * e;
            }
            sum_p += m * (double)n;
            n_p[p] += (double)n;
            n2pr += (double)n * (double)n;
            B++;
        }
        if (n_p[p] == 0.0) continue;
        ybar_p[p] = sum_p / n_p[p];
        /* the rounds around their process mean */
        for (int r = 0; r < t->nrounds; r++) {
            size_t k = vcell(t, c, p, a, r), n = t->off[k + 1] - t->off[k];
            if (n == 0) continue;
            double m = 0.0;
            for (size_t i = t->off[k]; i < t->off[k + 1]; i++) m += log(t->ns[i]);
            m /= (double)n;
            ss_r += (double)n * (m - ybar_p[p]) * (m - ybar_p[p]);
        }
        A++;
        has_d[d] = 1;
        N += n_p[p];
        Nd[d] += n_p[p];
        sum_yd[d] += ybar_p[p] * n_p[p];
        sum_n2pr_np += n2pr / n_p[p];
        n2pr_np_d[d] += n2pr / n_p[p];
        n2pr_d[d] += n2pr;
        n2p_d[d] += n_p[p] * n_p[p];
    }
    if (A == 0) return;
    v->present = 1;
    v->nproc = A;
    v->ndir = has_d[0] + has_d[1];
    v->nrounds = B;
    v->nsamples = (long)N;
    v->samples_per_round = N / (double)B;
    double ybar_d[2];
    for (int d = 0; d < 2; d++) ybar_d[d] = Nd[d] > 0 ? sum_yd[d] / Nd[d] : 0.0;
    for (int p = 0; p < t->nproc; p++)
        if (t->pdir[p] >= 0 && n_p[p] > 0.0) {
            double e = ybar_p[p] - ybar_d[t->pdir[p]];
            ss_p += n_p[p] * e * e;
        }
    v->df_sample = (int)(N - (double)B);
    v->df_round = (int)(B - A);
    v->df_process = A - v->ndir;
    if (v->df_sample < 1) return;
    v->ms_sample = ss_s / v->df_sample;
    v->var_sample = v->ms_sample;
    if (v->df_round < 1) return;
    v->ms_round = ss_r / v->df_round;
    v->k1 = (N - sum_n2pr_np) / v->df_round;
    v->raw_round = (v->ms_round - v->ms_sample) / v->k1;
    v->trunc_round = v->raw_round < 0.0;
    v->var_round = v->trunc_round ? 0.0 : v->raw_round;
    if (v->df_process < 1) return;
    double k2 = 0.0, k3 = 0.0;
    for (int d = 0; d < 2; d++) {
        if (Nd[d] <= 0) continue;
        k2 += n2pr_np_d[d] - n2pr_d[d] / Nd[d];
        k3 += Nd[d] - n2p_d[d] / Nd[d];
    }
    v->k2 = k2 / v->df_process;
    v->k3 = k3 / v->df_process;
    v->ms_process = ss_p / v->df_process;
    v->raw_process = (v->ms_process - v->ms_sample - v->k2 * v->raw_round) / v->k3;
    v->trunc_process = v->raw_process < 0.0;
    v->var_process = v->trunc_process ? 0.0 : v->raw_process;
}

/* ---- one contrast: delta and D ---- */

static int is_base(const kg_analysis_in *in, int c, int b)
{
    return b >= 0 && b < in->plan->narms && in->plan->arms[b].role == KG_ROLE_BASELINE
           && in->state[(size_t)c * (size_t)in->plan->narms + (size_t)b] == KG_ARM_OK;
}

static void contrast_blank(kg_vc_contrast *v)
{
    memset(v, 0, sizeof *v);
    v->ref_arm = v->sample_ref = -1;   /* set to the analysis' baseline before contrast_components */
    v->var_D = v->var_delta = v->h = v->raw_process = v->var_process = (double)NAN;
    v->rounds_per_process = (double)NAN;
}

/* D and m: scratch of nproc entries; wins: narms entries. */
static void contrast_components(const kg_analysis_in *in, const vtab *t, int c, int a, kg_vc_contrast *v,
                                double *D, double *m, long *wins)
{
    const kg_plan *plan = in->plan;
    if (plan->arms[a].role == KG_ROLE_CONTROL) v->ref_arm = kg_plan_find_arm(plan, plan->arms[a].of);
    /* otherwise the caller set ref_arm to the analysis' baseline (-1: none) */
    double ss_w = 0.0;
    long nr_all = 0;
    int A = 0;
    for (int b = 0; b < t->narms; b++) wins[b] = 0;
    for (int p = 0; p < t->nproc; p++) {
        m[p] = 0.0;
        if (t->pdir[p] < 0) continue;
        double sum = 0.0;
        for (int r = 0; r < t->nrounds; r++) {
            double ya = t->y[vcell(t, c, p, a, r)], yb = (double)NAN;
            int bb = -1;
            if (v->ref_arm >= 0) {
                if (is_base(in, c, v->ref_arm)) { yb = t->y[vcell(t, c, p, v->ref_arm, r)]; bb = v->ref_arm; }
            } else {
                for (int b = 0; b < t->narms; b++) {
                    if (!is_base(in, c, b)) continue;
                    double y = t->y[vcell(t, c, p, b, r)];
                    if (!isnan(y) && (isnan(yb) || y < yb)) { yb = y; bb = b; }
                }
            }
            if (isnan(ya) || isnan(yb)) continue;
            sum += ya - yb;
            m[p] += 1.0;
            wins[bb]++;
        }
        if (m[p] == 0.0) continue;
        D[p] = sum / m[p];
        for (int r = 0; r < t->nrounds; r++) {
            double ya = t->y[vcell(t, c, p, a, r)], yb = (double)NAN;
            if (v->ref_arm >= 0) {
                if (is_base(in, c, v->ref_arm)) yb = t->y[vcell(t, c, p, v->ref_arm, r)];
            } else {
                for (int b = 0; b < t->narms; b++) {
                    if (!is_base(in, c, b)) continue;
                    double y = t->y[vcell(t, c, p, b, r)];
                    if (!isnan(y) && (isnan(yb) || y < yb)) yb = y;
                }
            }
            if (isnan(ya) || isnan(yb)) continue;
            double e = ya - yb - D[p];
            ss_w += e * e;
        }
        v->n[t->pdir[p]]++;
        nr_all += (long)m[p];
        A++;
    }
    v->sample_ref = v->ref_arm;
    if (v->ref_arm < 0)
        for (int b = 0; b < t->narms; b++)
            if (wins[b] > 0 && (v->sample_ref < 0 || wins[b] > wins[v->sample_ref])) v->sample_ref = b;
    if (v->n[0] == 0 || v->n[1] == 0) return;
    v->present = 1;
    v->nrounds = nr_all;
    v->rounds_per_process = (double)nr_all / (double)A;
    v->df_delta = (int)(nr_all - A);
    v->df_D = A - 2;
    if (v->df_delta >= 1) v->var_delta = ss_w / v->df_delta;
    if (v->df_D < 1) return;
    double theta[2] = { 0, 0 }, inv_m[2] = { 0, 0 }, ss_b = 0.0;
    for (int p = 0; p < t->nproc; p++)
        if (t->pdir[p] >= 0 && m[p] > 0.0) {
            theta[t->pdir[p]] += D[p];
            inv_m[t->pdir[p]] += 1.0 / m[p];
        }
    for (int d = 0; d < 2; d++) theta[d] /= v->n[d];
    for (int p = 0; p < t->nproc; p++)
        if (t->pdir[p] >= 0 && m[p] > 0.0) {
            double e = D[p] - theta[t->pdir[p]];
            ss_b += e * e;
        }
    v->var_D = ss_b / v->df_D;
    double h = 0.0;
    for (int d = 0; d < 2; d++) h += (v->n[d] - 1.0) / v->n[d] * inv_m[d];
    v->h = h / v->df_D;
    if (isnan(v->var_delta)) return;
    v->raw_process = v->var_D - v->h * v->var_delta;
    v->trunc_process = v->raw_process < 0.0;
    v->var_process = v->trunc_process ? 0.0 : v->raw_process;
}

int kg_varcomp_compute(const kg_analysis_in *in, kg_varcomp *out, kg_err *err)
{
    vtab t;
    int rc;
    memset(out, 0, sizeof *out);
    if (in == NULL || in->plan == NULL || in->state == NULL || in->nproc < 0
        || (in->nproc > 0 && in->accepted == NULL) || (in->nrows > 0 && in->rows == NULL))
        return kg_errorf(err, KG_EINTERNAL, "variance components: incomplete input");
    if ((rc = vtab_build(in, &t, err)) != KG_OK) return rc;
    const kg_plan *plan = in->plan;
    size_t ncell = (size_t)plan->ncases * (size_t)plan->narms, np = (size_t)t.nproc + 1;
    out->ncases = plan->ncases;
    out->narms = plan->narms;
    out->arm = calloc(ncell + 1, sizeof *out->arm);
    out->con = calloc(ncell + 1, sizeof *out->con);
    double *s1 = malloc(np * sizeof *s1), *s2 = malloc(np * sizeof *s2);
    long *wins = malloc(((size_t)plan->narms + 1) * sizeof *wins);
    if (out->arm == NULL || out->con == NULL || s1 == NULL || s2 == NULL || wins == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "variance components: out of memory");
        goto done;
    }
    /* each contrast against the baseline the analysis compares it with
     * (campaign.reference, or the worst of every baseline) */
    kg_analysis an;
    if ((rc = kg_analyse(in, &an, err)) != KG_OK) goto done;
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            size_t i = (size_t)c * (size_t)plan->narms + (size_t)a;
            arm_blank(&out->arm[i]);
            contrast_blank(&out->con[i]);
            if (in->state[i] != KG_ARM_OK || t.nrounds == 0) continue;
            arm_components(&t, c, a, &out->arm[i], s1, s2);
            if (plan->arms[a].role != KG_ROLE_BASELINE) {
                out->con[i].ref_arm = an.res[i].contrast_arm;
                contrast_components(in, &t, c, a, &out->con[i], s1, s2, wins);
            }
        }
    kg_analysis_free(&an);
done:
    free(s1);
    free(s2);
    free(wins);
    vtab_free(&t);
    if (rc != KG_OK) kg_varcomp_free(out);
    return rc;
}

void kg_varcomp_free(kg_varcomp *vc)
{
    if (vc == NULL) return;
    free(vc->arm);
    free(vc->con);
    memset(vc, 0, sizeof *vc);
}

/* ---- the median of normal samples ---- */

static double log_pdf(double x)
{
    return -0.5 * x * x - 0.91893853320467274178; /* log sqrt(2 pi) */
}

static double simpson_w(int i, int n)
{
    return (i == 0 || i == n) ? 1.0 : (i % 2) ? 4.0 : 2.0;
}

double kg_median_kappa(int S)
{
    if (S < 1) return (double)NAN;
    if (S <= 2) return 1.0;
    if (S > 100000) return PI / 2.0;
    /* the median's spread is about sqrt(pi / (2 S)): 12 of those on
     * each side leave out nothing a double holds */
    double sc = sqrt(PI / (2.0 * S)), L = 12.0 * sc;
    if (S % 2 == 1) {
        /* density of the (k+1)-th of S = 2k + 1 values:
         * S! / (k!)^2 Phi^k (1 - Phi)^k phi */
        int k = (S - 1) / 2, n = 4000;
        double lc = lgamma(S + 1.0) - 2.0 * lgamma(k + 1.0), h = 2.0 * L / n, sum = 0.0;
        for (int i = 0; i <= n; i++) {
            double x = -L + h * i;
            double f = exp(lc + k * (log(gsl_cdf_ugaussian_P(x)) + log(gsl_cdf_ugaussian_Q(x))) + log_pdf(x));
            sum += simpson_w(i, n) * x * x * f;
        }
        return S * sum * h / 3.0;
    }
    /* S = 2k: the mean of the k-th and (k+1)-th values, whose joint
     * density at (x, y = x + g), g > 0, is
     * S! / ((k-1)!)^2 Phi(x)^(k-1) (1 - Phi(y))^(k-1) phi(x) phi(y);
     * the gap g is of order 1 / (S phi(0)) */
    int k = S / 2, nx = 600, ng = 600;
    double lc = lgamma(S + 1.0) - 2.0 * lgamma((double)k), G = fmin(L, 60.0 * 2.5066282746310002 / S);
    double hx = 2.0 * L / nx, hg = G / ng, sum = 0.0;
    for (int i = 0; i <= nx; i++) {
        double x = -L + hx * i, lx = (k - 1) * log(gsl_cdf_ugaussian_P(x)) + log_pdf(x), inner = 0.0;
        for (int j = 0; j <= ng; j++) {
            double g = hg * j, y = x + g, mid = x + 0.5 * g;
            double q = gsl_cdf_ugaussian_Q(y);
            if (q <= 0.0) continue;
            inner += simpson_w(j, ng) * mid * mid * exp(lc + lx + (k - 1) * log(q) + log_pdf(y));
        }
        sum += simpson_w(i, nx) * inner * hg / 3.0;
    }
    return S * sum * hx / 3.0;
}

/* ---- designs ---- */

int kg_design_var_of(const kg_vc_contrast *c, const kg_vc_arm *arm, const kg_vc_arm *ref, kg_design_var *out,
                     kg_err *err)
{
    if (c == NULL || !c->present || isnan(c->var_process) || isnan(c->var_delta))
        return kg_errorf(err, KG_EINPUT, "the pilot has too few processes or rounds for the contrast's "
                         "components (at least 3 processes with one in each direction, and 2 rounds)");
    if (arm == NULL || ref == NULL || isnan(arm->var_sample) || isnan(ref->var_sample))
        return kg_errorf(err, KG_EINPUT, "the pilot has too few samples per round for the sample variance "
                         "(at least 2 samples in a round)");
    int sa = (int)lround(arm->samples_per_round), sb = (int)lround(ref->samples_per_round);
    double samp = kg_median_kappa(sa) / sa * arm->var_sample + kg_median_kappa(sb) / sb * ref->var_sample;
    out->var_process = c->var_process;
    out->trunc_round = c->var_delta < samp;
    out->var_round_net = out->trunc_round ? 0.0 : c->var_delta - samp;
    out->var_sample_sum = arm->var_sample + ref->var_sample;
    return KG_OK;
}

double kg_design_var_D(const kg_design_var *v, int R, int S, double kappa)
{
    if (R < 1 || S < 1) return (double)NAN;
    return v->var_process + (v->var_round_net + kappa / S * v->var_sample_sum) / R;
}

/* ---- reports ---- */

static int vc_of_evidence(const kg_evidence *ev, kg_varcomp *vc, kg_err *err)
{
    kg_analysis_in in = { .plan = ev->plan, .rows = ev->rows, .nrows = ev->nrows, .accepted = ev->accepted,
                          .nproc = ev->nproc, .state = ev->state, .limits = NULL };
    return kg_varcomp_compute(&in, vc, err);
}

/* "1.234%", "0*" for a truncated estimate, "–" where none */
static void sd_md(kg_sb *sb, double var, int trunc, int *ntrunc)
{
    if (isnan(var)) kg_sb_puts(sb, "–");
    else if (trunc) { kg_sb_puts(sb, "0*"); (*ntrunc)++; }
    else kg_sb_printf(sb, "%.3f%%", 100.0 * sqrt(var));
}

void kg_varcomp_md(kg_sb *sb, const kg_evidence *ev)
{
    const kg_plan *plan = ev->plan;
    kg_varcomp vc;
    kg_err err = { 0 };
    kg_sb_puts(sb, "\n## Variance components\n\n");
    if (vc_of_evidence(ev, &vc, &err) != KG_OK) {
        kg_sb_printf(sb, "Not computed: %s.\n", err.msg);
        return;
    }
    kg_sb_puts(sb, "Standard deviations of log time in percent, by the method of moments of the nested analysis of "
                   "variance (Kalibera & Jones 2013) over the samples of accepted processes, directions as strata: "
                   "sample (within a round), round (between the rounds of a process) and process (between "
                   "processes). A process effect every arm shares counts in each arm's process SD and cancels in "
                   "the contrast. The contrast columns are those of the paired round contrast delta the interval "
                   "uses: process is the SD of D(p) between processes net of its rounds, round the SD of delta "
                   "within a process. `kgate size PLAN DIR` turns them into a design.\n\n");
    kg_sb_puts(sb, "| case | arm | role | processes | rounds | samples | sample SD | round SD | process SD | "
                   "contrast process SD | contrast round SD |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    int ntrunc = 0;
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            size_t i = (size_t)c * (size_t)plan->narms + (size_t)a;
            const kg_vc_arm *v = &vc.arm[i];
            const kg_vc_contrast *k = &vc.con[i];
            if (!v->present) continue;
            kg_sb_printf(sb, "| %s | %s | %s | %d | %ld | %ld | ", plan->cases[c].name, plan->arms[a].name,
                         kg_role_name(plan->arms[a].role), v->nproc, v->nrounds, v->nsamples);
            sd_md(sb, v->var_sample, 0, &ntrunc);
            kg_sb_puts(sb, " | ");
            sd_md(sb, v->var_round, v->trunc_round, &ntrunc);
            kg_sb_puts(sb, " | ");
            sd_md(sb, v->var_process, v->trunc_process, &ntrunc);
            kg_sb_puts(sb, " | ");
            if (k->present) {
                sd_md(sb, k->var_process, k->trunc_process, &ntrunc);
                kg_sb_puts(sb, " | ");
                sd_md(sb, k->var_delta, 0, &ntrunc);
                kg_sb_puts(sb, " |\n");
            } else {
                kg_sb_puts(sb, " | |\n");
            }
        }
    if (ntrunc > 0)
        kg_sb_printf(sb, "\n0*: %d estimate%s negative and set to 0 (the component is too small to tell from the "
                         "level below it).\n", ntrunc, ntrunc == 1 ? " was" : "s were");
    kg_varcomp_free(&vc);
}

static json_t *jvar(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jsd(double v)
{
    return isfinite(v) && v >= 0.0 ? json_real(sqrt(v)) : json_null();
}

json_t *kg_varcomp_json(const kg_evidence *ev)
{
    const kg_plan *plan = ev->plan;
    kg_varcomp vc;
    kg_err err = { 0 };
    json_t *arr = json_array();
    if (arr == NULL || vc_of_evidence(ev, &vc, &err) != KG_OK) return arr;
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            size_t i = (size_t)c * (size_t)plan->narms + (size_t)a;
            const kg_vc_arm *v = &vc.arm[i];
            const kg_vc_contrast *k = &vc.con[i];
            if (!v->present) continue;
            json_t *o = json_object();
            json_object_set_new(o, "case", json_string(plan->cases[c].name));
            json_object_set_new(o, "arm", json_string(plan->arms[a].name));
            json_object_set_new(o, "role", json_string(kg_role_name(plan->arms[a].role)));
            json_object_set_new(o, "processes", json_integer(v->nproc));
            json_object_set_new(o, "rounds", json_integer(v->nrounds));
            json_object_set_new(o, "samples", json_integer(v->nsamples));
            json_object_set_new(o, "sd_sample", jsd(v->var_sample));
            json_object_set_new(o, "sd_round", jsd(v->var_round));
            json_object_set_new(o, "sd_process", jsd(v->var_process));
            json_object_set_new(o, "var_round_raw", jvar(v->raw_round));
            json_object_set_new(o, "var_process_raw", jvar(v->raw_process));
            json_object_set_new(o, "df_sample", json_integer(v->df_sample));
            json_object_set_new(o, "df_round", json_integer(v->df_round));
            json_object_set_new(o, "df_process", json_integer(v->df_process));
            if (k->present) {
                json_t *e = json_object();
                json_object_set_new(e, "reference",
                                    json_string(k->ref_arm >= 0 ? plan->arms[k->ref_arm].name : "fastest baseline"));
                json_object_set_new(e, "processes_fwd", json_integer(k->n[0]));
                json_object_set_new(e, "processes_rev", json_integer(k->n[1]));
                json_object_set_new(e, "rounds", json_integer(k->nrounds));
                json_object_set_new(e, "sd_process", jsd(k->var_process));
                json_object_set_new(e, "sd_round", jsd(k->var_delta));
                json_object_set_new(e, "sd_D", jsd(k->var_D));
                json_object_set_new(e, "var_process_raw", jvar(k->raw_process));
                json_object_set_new(e, "h", jvar(k->h));
                json_object_set_new(e, "df_D", json_integer(k->df_D));
                json_object_set_new(e, "df_delta", json_integer(k->df_delta));
                json_object_set_new(o, "contrast", e);
            }
            json_array_append_new(arr, o);
        }
    kg_varcomp_free(&vc);
    return arr;
}
