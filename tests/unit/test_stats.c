/* test_stats.c: unit tests of the statistical primitives, the paired
 * effect and the verdicts (src/analysis/stats.c).
 *
 * Reference values come from tests/fixtures/stats/ (written by
 * tools/stats_fixtures.py with numpy and scipy); hand-made cases pin the
 * boundaries; a Monte Carlo run checks that the interval keeps its
 * one-sided error rate under the null.  No GPU, no files written. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "check.h"
#include "kgate/stats.h"

#define FIX "tests/fixtures/stats/"
#define RTOL 1e-12
#define ATOL 1e-15

/* Expected (double)NAN matches only (double)NAN; anything else is compared near. */
#define CHECK_VAL(actual, expected, what) do { double a_ = (actual), e_ = (expected); \
    if (isnan(e_)) CHECK_MSG(isnan(a_), "%s: expected nan, got %.17g", (what), a_); \
    else CHECK_MSG(fabs(a_ - e_) <= ATOL + RTOL * fabs(e_), "%s: got %.17g, expected %.17g", \
                   (what), a_, e_); } while (0)

static int effect_field(const kg_effect *e, const char *key, double *v)
{
    static const struct { const char *name; size_t off; int is_int; } f[] = {
        {"theta_fwd", offsetof(kg_effect, theta_dir), 0},
        {"theta_rev", offsetof(kg_effect, theta_dir) + sizeof(double), 0},
        {"theta", offsetof(kg_effect, theta), 0},
        {"has_interval", offsetof(kg_effect, has_interval), 1},
        {"s", offsetof(kg_effect, s), 0},
        {"se", offsetof(kg_effect, se), 0},
        {"df", offsetof(kg_effect, df), 0},
        {"tq", offsetof(kg_effect, tq), 0},
        {"lo", offsetof(kg_effect, lo), 0},
        {"hi", offsetof(kg_effect, hi), 0},
        {"rho", offsetof(kg_effect, rho), 0},
        {"rho_lo", offsetof(kg_effect, rho_lo), 0},
        {"rho_hi", offsetof(kg_effect, rho_hi), 0},
        {"order_diff", offsetof(kg_effect, order_diff), 0},
        {"order_se", offsetof(kg_effect, order_se), 0},
        {"order_flag", offsetof(kg_effect, order_flag), 1},
        {"order_tq", offsetof(kg_effect, order_tq), 0},
        {"rho_lo_fwd", offsetof(kg_effect, rho_lo_dir), 0},
        {"rho_lo_rev", offsetof(kg_effect, rho_lo_dir) + sizeof(double), 0},
        {"rho_hi_fwd", offsetof(kg_effect, rho_hi_dir), 0},
        {"rho_hi_rev", offsetof(kg_effect, rho_hi_dir) + sizeof(double), 0},
        {"n_fwd", offsetof(kg_effect, n), 1},
        {"n_rev", offsetof(kg_effect, n) + sizeof(int), 1},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (strcmp(f[i].name, key) != 0) continue;
        const char *base = (const char *)e + f[i].off;
        if (f[i].is_int) { int x; memcpy(&x, base, sizeof x); *v = x; }
        else memcpy(v, base, sizeof *v);
        return 1;
    }
    return 0;
}

static void test_effect_fixture(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, FIX "%s", name);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s (run the tests from the repository root)", path);
    if (f == NULL) return;
    double alpha = 0, order_min = 0;
    int n = 0, nexp = 0;
    double D[64];
    int dir[64];
    char key[64];
    CHECK(fscanf(f, "alpha %lf order_min %lf n %d", &alpha, &order_min, &n) == 3);
    CHECK(n > 0 && n <= 64);
    for (int i = 0; i < n && i < 64; i++) CHECK(fscanf(f, " D %d %lf", &dir[i], &D[i]) == 2);
    kg_effect e;
    kg_err err = {0, ""};
    CHECK_MSG(kg_effect_compute(D, dir, n, alpha, order_min, &e, &err) == KG_OK, "%s", err.msg);
    while (fscanf(f, "%63s", key) == 1 && strcmp(key, "end") != 0) {
        double want, got = (double)NAN;
        CHECK(fscanf(f, "%lf", &want) == 1);
        CHECK_MSG(effect_field(&e, key, &got), "unknown key %s", key);
        char what[128];
        snprintf(what, sizeof what, "%s %s", name, key);
        CHECK_VAL(got, want, what);
        nexp++;
    }
    CHECK_MSG(nexp == 23, "%s: %d expectations", name, nexp);
    fclose(f);
}

static void test_primitive_fixture(void)
{
    FILE *f = fopen(FIX "primitives.txt", "r");
    CHECK_MSG(f != NULL, "cannot open primitives.txt");
    if (f == NULL) return;
    char key[16], what[64];
    int nt = 0, nm = 0;
    while (fscanf(f, "%15s", key) == 1 && strcmp(key, "end") != 0) {
        if (strcmp(key, "t") == 0) {
            double p, df, want;
            CHECK(fscanf(f, "%lf %lf %lf", &p, &df, &want) == 3);
            snprintf(what, sizeof what, "t(%g, %g)", p, df);
            CHECK_VAL(kg_t_quantile(p, df), want, what);
            nt++;
            continue;
        }
        int n = 0;
        double want;
        CHECK(fscanf(f, "%d %lf", &n, &want) == 2);
        double *v = malloc((size_t)n * sizeof *v), *copy = malloc((size_t)n * sizeof *v);
        if (v == NULL || copy == NULL) { free(v); free(copy); break; }
        for (int i = 0; i < n; i++) CHECK(fscanf(f, "%lf", &v[i]) == 1);
        memcpy(copy, v, (size_t)n * sizeof *v);
        double got = strcmp(key, "median") == 0 ? kg_median(v, (size_t)n)
                   : strcmp(key, "mean") == 0 ? kg_mean(v, (size_t)n) : kg_sd(v, (size_t)n);
        snprintf(what, sizeof what, "%s of %d", key, n);
        CHECK_VAL(got, want, what);
        CHECK_MSG(memcmp(copy, v, (size_t)n * sizeof *v) == 0, "%s modified its input", key);
        free(v);
        free(copy);
        nm++;
    }
    CHECK(nt == 99 && nm == 27);
    fclose(f);
}

static void test_primitives_by_hand(void)
{
    double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};
    CHECK(kg_median(odd, 3) == 3.0);
    CHECK(kg_median(even, 4) == 2.5);
    CHECK(kg_median(one, 1) == 7.0);
    CHECK(isnan(kg_median(odd, 0)));
    CHECK(odd[0] == 5 && odd[1] == 1 && odd[2] == 3);
    CHECK(kg_mean(even, 4) == 2.5);
    CHECK(isnan(kg_mean(even, 0)));
    CHECK(kg_sd(one, 1) == 0.0);
    CHECK_NEAR(kg_sd(even, 4), sqrt(5.0 / 3.0), 0, 1e-15);
    CHECK_NEAR(kg_t_quantile(0.975, 1), 12.706204736174694, 0, 1e-12);
    CHECK_NEAR(kg_t_quantile(0.05, 3), -2.353363434801824, 0, 1e-12);
    /* out of domain: (double)NAN, never an abort from GSL's error handler */
    CHECK(isnan(kg_t_quantile(1.5, 3)));
    CHECK(isnan(kg_t_quantile(0.9, 0)));
    CHECK(isnan(kg_t_quantile((double)NAN, 3)));
}

static void test_effect_by_hand(void)
{
    /* fwd {-0.1, -0.3}, rev {-0.2, -0.2}: theta -0.2, s 0.1, se 0.05, df 2 */
    double D[] = {-0.1, -0.2, -0.3, -0.2};
    int dir[] = {0, 1, 0, 1};
    kg_effect e;
    kg_err err = {0, ""};
    CHECK(kg_effect_compute(D, dir, 4, 0.05, 0.0025, &e, &err) == KG_OK);
    CHECK(e.n[0] == 2 && e.n[1] == 2 && e.has_interval);
    CHECK_NEAR(e.theta, -0.2, 1e-15, 0);
    CHECK_NEAR(e.s, 0.1, 0, 1e-14);
    CHECK_NEAR(e.se, 0.05, 0, 1e-14);
    CHECK(e.df == 2.0);
    double tq = 2.9199855803537242; /* t(0.95, 2) */
    CHECK_NEAR(e.tq, tq, 0, 1e-12);
    CHECK_NEAR(e.lo, -0.2 - tq * 0.05, 0, 1e-13);
    CHECK_NEAR(e.rho_lo, 1 - exp(-0.2 + tq * 0.05), 0, 1e-13);
    CHECK_NEAR(e.rho_hi, 1 - exp(-0.2 - tq * 0.05), 0, 1e-13);
    CHECK(e.rho_lo < e.rho && e.rho < e.rho_hi);
    CHECK_NEAR(e.order_diff, 0.0, 1e-15, 0);
    CHECK_NEAR(e.order_se, 0.1, 0, 1e-14);
    CHECK(!e.order_flag);

    /* one process in a direction: point estimates but no interval */
    int dir1[] = {0, 1, 1, 1};
    CHECK(kg_effect_compute(D, dir1, 4, 0.05, 0.0025, &e, &err) == KG_OK);
    CHECK(!e.has_interval && isnan(e.lo) && isnan(e.hi) && isnan(e.rho_lo) && isnan(e.rho_hi));
    CHECK_NEAR(e.theta, 0.5 * (-0.1 + (-0.2 - 0.3 - 0.2) / 3), 1e-15, 0);
    CHECK(kg_verdict_of(&e, 0.0, 0.01) == KG_VERDICT_INCONCLUSIVE);

    /* a direction with no process at all is an input error */
    int dir0[] = {1, 1, 1, 1};
    CHECK(kg_effect_compute(D, dir0, 4, 0.05, 0.0025, &e, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "forward");
    kg_err_clear(&err);
    int dirbad[] = {0, 1, 2, 1};
    CHECK(kg_effect_compute(D, dirbad, 4, 0.05, 0.0025, &e, &err) == KG_EINPUT);
    kg_err_clear(&err);
    CHECK(kg_effect_compute(D, dir, 4, 0.0, 0.0025, &e, &err) == KG_EINPUT);
    kg_err_clear(&err);
    double Dnan[] = {-0.1, (double)NAN, -0.3, -0.2};
    CHECK(kg_effect_compute(Dnan, dir, 4, 0.05, 0.0025, &e, &err) == KG_EINPUT);
    kg_err_clear(&err);

    /* order: forward 0.02 faster with small spread is flagged; the same
     * difference under order_min is not */
    double Do[] = {-0.12, -0.10, -0.121, -0.101, -0.119, -0.099};
    int diro[] = {0, 1, 0, 1, 0, 1};
    CHECK(kg_effect_compute(Do, diro, 6, 0.05, 0.0025, &e, &err) == KG_OK);
    CHECK(e.order_flag);
    CHECK_NEAR(e.order_diff, -0.02, 1e-15, 1e-12);
    CHECK(kg_effect_compute(Do, diro, 6, 0.05, 0.05, &e, &err) == KG_OK);
    CHECK(!e.order_flag);
}

static void test_verdicts(void)
{
    kg_effect e;
    memset(&e, 0, sizeof e);
    e.has_interval = 1;
    const double m = 0.02, q = 0.01;
    e.rho_lo = 0.03; e.rho_hi = 0.05;
    CHECK(kg_verdict_of(&e, m, q) == KG_VERDICT_FASTER);
    e.rho_lo = m;   /* the bound must exceed the margin strictly */
    CHECK(kg_verdict_of(&e, m, q) == KG_VERDICT_INCONCLUSIVE);
    e.rho_lo = nextafter(m, 1.0);
    CHECK(kg_verdict_of(&e, m, q) == KG_VERDICT_FASTER);
    e.rho_lo = -0.05; e.rho_hi = -m;
    CHECK(kg_verdict_of(&e, m, q) == KG_VERDICT_INCONCLUSIVE);
    e.rho_hi = nextafter(-m, -1.0);
    CHECK(kg_verdict_of(&e, m, q) == KG_VERDICT_SLOWER);
    e.rho_lo = -0.009; e.rho_hi = 0.009;
    CHECK(kg_verdict_of(&e, m, q) == KG_VERDICT_EQUIVALENT);
    e.rho_lo = -q;
    CHECK(kg_verdict_of(&e, m, q) == KG_VERDICT_INCONCLUSIVE);
    e.rho_lo = -0.009; e.rho_hi = q;
    CHECK(kg_verdict_of(&e, m, q) == KG_VERDICT_INCONCLUSIVE);
    /* zero margin: any interval wholly above zero is FASTER */
    e.rho_lo = 1e-9; e.rho_hi = 0.001;
    CHECK(kg_verdict_of(&e, 0.0, q) == KG_VERDICT_FASTER);
    e.has_interval = 0;
    CHECK(kg_verdict_of(&e, 0.0, q) == KG_VERDICT_INCONCLUSIVE);
    CHECK(kg_verdict_of(NULL, 0.0, q) == KG_VERDICT_INCONCLUSIVE);

    CHECK(strcmp(kg_verdict_name(KG_VERDICT_FASTER), "FASTER") == 0);
    CHECK(strcmp(kg_verdict_name(KG_VERDICT_SLOWER), "SLOWER") == 0);
    CHECK(strcmp(kg_verdict_name(KG_VERDICT_EQUIVALENT), "EQUIVALENT") == 0);
    CHECK(strcmp(kg_verdict_name(KG_VERDICT_INCONCLUSIVE), "INCONCLUSIVE") == 0);
    CHECK(strcmp(kg_verdict_name(KG_VERDICT_INCORRECT), "INCORRECT") == 0);
    CHECK(strcmp(kg_verdict_name(KG_VERDICT_INADMISSIBLE), "INADMISSIBLE") == 0);
    CHECK(strcmp(kg_verdict_name(KG_VERDICT_NODATA), "NO DATA") == 0);
}

/* A deterministic generator, so that the Monte Carlo result never moves. */
static uint64_t lcg_state = 0x9e3779b97f4a7c15u;

static double lcg_uniform(void)
{
    lcg_state = lcg_state * 6364136223846793005u + 1442695040888963407u;
    return ((double)(lcg_state >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
}

static double lcg_normal(void)
{
    double u1 = lcg_uniform(), u2 = lcg_uniform();
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Under the null (no effect, no order effect) the one-sided bound must be
 * exceeded at rate alpha, and the order flag (with order_min 0) at the
 * two-sided |t(2P-2)| > 2.5 rate. */
static void test_null_error_rate(void)
{
    const int N = 4000, P = 3;
    const double alpha = 0.05, sigma = 0.003;
    int faster = 0, flagged = 0, failed = 0;
    double D[2 * 3];
    int dir[2 * 3];
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 2 * P; k++) {
            dir[k] = k % 2;
            D[k] = sigma * lcg_normal();
        }
        kg_effect e;
        kg_err err = {0, ""};
        if (kg_effect_compute(D, dir, 2 * P, alpha, 0.0, &e, &err) != KG_OK || !e.has_interval) {
            failed++;
            continue;
        }
        faster += e.rho_lo > 0.0;
        flagged += e.order_flag;
    }
    CHECK(failed == 0);
    double rate = (double)faster / N, sd = sqrt(alpha * (1 - alpha) / N);
    CHECK_MSG(fabs(rate - alpha) <= 4 * sd, "false-FASTER rate %.4f, alpha %.3f +- %.4f",
              rate, alpha, 4 * sd);
    double pflag = 2.0 * gsl_cdf_tdist_Q(2.5, 2.0 * P - 2.0);
    double rflag = (double)flagged / N, sdf = sqrt(pflag * (1 - pflag) / N);
    CHECK_MSG(fabs(rflag - pflag) <= 4 * sdf, "order flag rate %.4f, expected %.4f +- %.4f",
              rflag, pflag, 4 * sdf);
    fprintf(stderr, "null study: %d experiments, false FASTER %.4f, order flag %.4f (%.4f)\n",
            N, rate, rflag, pflag);
}

/* Holm by hand, and max-T against closed forms: one statistic is a t,
 * independent ones the max of m normals (df large), identical ones one
 * normal; the simulation error of a 20000-draw quantile is about 0.02. */
static void test_multiplicity(void)
{
    double p[4] = { 0.01, 0.04, 0.03, 0.005 }, q[4];
    kg_holm(p, 4, q);
    CHECK_NEAR(q[0], 0.03, 1e-15, 0);
    CHECK_NEAR(q[1], 0.06, 1e-15, 0);
    CHECK_NEAR(q[2], 0.06, 1e-15, 0);
    CHECK_NEAR(q[3], 0.02, 1e-15, 0);
    double one = 1.0, crit = 0, t1 = 2.0, pa = 0;
    kg_err err = { 0 };
    CHECK(kg_maxt(&one, 1, 4.0, 0.05, 7, KG_MAXT_DRAWS, &t1, &crit, &pa, &err) == KG_OK);
    CHECK_NEAR(crit, kg_t_quantile(0.95, 4.0), 0.06, 0);
    CHECK_NEAR(pa, kg_t_sf(2.0, 4.0), 0.01, 0);
    double R[64], Rall[64];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            R[i * 8 + j] = i == j;
            Rall[i * 8 + j] = 1.0;
        }
    CHECK(kg_maxt(R, 8, 1e6, 0.05, 11, KG_MAXT_DRAWS, NULL, &crit, NULL, &err) == KG_OK);
    CHECK_NEAR(crit, 2.4907, 0.05, 0);   /* Phi^-1(0.95^(1/8)) */
    CHECK(kg_maxt(Rall, 8, 1e6, 0.05, 11, KG_MAXT_DRAWS, NULL, &crit, NULL, &err) == KG_OK);
    CHECK_NEAR(crit, 1.6449, 0.05, 0);   /* perfectly correlated: one normal */
    CHECK(kg_maxt(R, 0, 4.0, 0.05, 1, KG_MAXT_DRAWS, NULL, &crit, NULL, &err) != KG_OK);
}

static int qcmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static uint64_t sort_state = 12345;

static double sort_value(int kind)
{
    sort_state = sort_state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t r = sort_state >> 33;
    switch (kind) {
    case 0: return 1000.0 + (double)(r % 1000000) / 1000.0;            /* times, few ties */
    case 1: return (double)(r % 7);                                    /* many ties, zeros */
    case 2: return (r % 5 == 0) ? -0.0 : (r % 5 == 1) ? 0.0 : (double)(r % 3) - 1.0;   /* signed zeros */
    default: {                                                         /* NaN, infinities */
        static const double odd[] = { NAN, INFINITY, -INFINITY, 1.5, -2.0, 0.0, -0.0 };
        return odd[r % 7];
    }
    }
}

/* kg_sort_doubles and kg_median give qsort's bits (glibc's merge sort),
 * ties, signed zeros and NaN included: every median the reports print is
 * the one they printed when they sorted with qsort. */
static void test_sort_like_qsort(void)
{
    static double a[6000], b[6000];
    int bad = 0;
    for (int kind = 0; kind < 4; kind++)
        for (int t = 0; t < 400; t++) {
            size_t n = t < 300 ? (size_t)t : (size_t)(300 + (t - 300) * 57);
            for (size_t i = 0; i < n; i++) a[i] = b[i] = sort_value(kind);
            double med = kg_median(a, n);
            qsort(b, n, sizeof *b, qcmp);
            double want = n == 0 ? (double)NAN : n % 2 ? b[n / 2] : 0.5 * (b[n / 2 - 1] + b[n / 2]);
            if (memcmp(&med, &want, sizeof med) != 0 && !(isnan(med) && isnan(want))) bad++;
            kg_sort_doubles(a, n);
            if (n > 0 && memcmp(a, b, n * sizeof *a) != 0) bad++;
        }
    CHECK_MSG(bad == 0, "%d arrays sorted or halved unlike qsort", bad);
}

/* kg_huber: the estimating equation at its result, the outlier's bounded
 * pull, the mean where the MAD is 0 or n <= 2, location and scale
 * equivariance, the input untouched. */
static void test_huber(void)
{
    double w[16];
    double two[] = {1, 4}, same[] = {2, 2, 2, 5, 2}, sym[] = {-2, -1, 0, 1, 2};
    CHECK(isnan(kg_huber(two, 0, w)));
    CHECK(kg_huber(two, 2, w) == 2.5);
    CHECK(kg_huber(same, 5, w) == kg_mean(same, 5));   /* MAD 0 */
    CHECK_NEAR(kg_huber(sym, 5, w), 0.0, 1e-15, 0);
    double x[] = {1, 2, 3, 4, 100}, x0[5];
    memcpy(x0, x, sizeof x);
    double mu = kg_huber(x, 5, w);
    CHECK(memcmp(x, x0, sizeof x) == 0);
    /* median 3, MAD 1: k = 1.345 x 1.4826; sum of clipped residuals 0 at mu */
    double k = 1.345 * 1.4826, psi = 0;
    for (int i = 0; i < 5; i++) psi += fmax(-k, fmin(k, x[i] - mu));
    CHECK_NEAR(psi, 0.0, 1e-9, 0);
    CHECK(mu > 2.5 && mu < 3.6);         /* the mean is 22 */
    double shifted[5], scaled[5];
    for (int i = 0; i < 5; i++) {
        shifted[i] = x[i] - 7.25;
        scaled[i] = 0.01 * x[i];
    }
    CHECK_NEAR(kg_huber(shifted, 5, w), mu - 7.25, 1e-9, 0);
    CHECK_NEAR(kg_huber(scaled, 5, w), 0.01 * mu, 1e-11, 0);
}

int main(void)
{
    test_sort_like_qsort();
    test_huber();
    test_multiplicity();
    test_primitives_by_hand();
    test_primitive_fixture();
    test_effect_by_hand();
    static const char *const fixtures[] = {
        "effect_balanced.txt", "effect_unequal.txt", "effect_order.txt",
        "effect_order_small.txt", "effect_slower.txt", "effect_single.txt", "effect_many.txt",
    };
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
        test_effect_fixture(fixtures[i]);
    test_verdicts();
    test_null_error_rate();
    return kg_test_finish("test_stats");
}
