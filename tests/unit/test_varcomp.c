/* test_varcomp.c: unit tests of the variance components and the design
 * power (src/analysis/varcomp.c).
 *
 * Campaigns are generated in memory from a model with known components
 * (counter-based normal noise: Philox4x32-10 and Box-Muller, fixed keys),
 * so every run sees the same numbers:
 *   log t = log 1000 + theta_arm + off_arm,dir + u_p + P_pa + w_pr + R_par + e_pars
 * with u_p and w_pr shared by the arms (they cancel in the contrast).
 * Over many seeds the mean estimate of each component must lie within
 * 4 standard errors (from the spread over seeds) of the truth, and the
 * naive estimators a wrong implementation would compute (variance of the
 * round means, of the process means, D's variance not net of its rounds)
 * must lie outside that bound, so the test can fail.  kappa is checked
 * against simulated medians, the contrast against kg_analyse's own s, and
 * the design power against the FASTER rate of simulated campaigns. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "check.h"
#include "kgate/philox.h"
#include "kgate/stats.h"
#include "kgate/varcomp.h"

/* ---- normal noise from a counter ---- */

typedef struct gen {
    uint64_t seed, next;
} gen;

static double gnormal(gen *g)
{
    uint64_t i = g->next++;
    uint32_t ctr[4] = { (uint32_t)i, (uint32_t)(i >> 32), 0x76617263u, 0x6b676174u };
    uint32_t key[2] = { (uint32_t)g->seed, (uint32_t)(g->seed >> 32) }, r[4];
    kg_philox4x32(ctr, key, r);
    double u1 = ((double)r[0] + 0.5) / 4294967296.0, u2 = ((double)r[1] + 0.5) / 4294967296.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* a whole number in [lo, hi] */
static int gint(gen *g, int lo, int hi)
{
    double z = gnormal(g);
    double u = gsl_cdf_ugaussian_P(z);
    int v = lo + (int)(u * (hi - lo + 1));
    return v > hi ? hi : v;
}

/* ---- an in-memory campaign: case 0, arms base (baseline) and cand ---- */

typedef struct model {
    int P, R, S;                 /* processes per direction, rounds, samples (balanced) */
    int unbalanced;              /* 1: rounds per process in [2, R], samples per round in [2, S] */
    double sd_shared_proc, sd_shared_round;
    double sd_proc[2], sd_round[2], sd_sample[2];
    double theta_cand;           /* log ratio cand / base */
    double off_rev[2];           /* per arm: log offset of reverse processes */
} model;

typedef struct camp {
    kg_plan plan;
    kg_case kase;
    kg_arm arms[2];
    kg_arm_state state[2];
    int accepted[256];
    int nproc;
    kg_row *rows;
    size_t nrows, cap;
} camp;

static void camp_row(camp *c, int p, int d, int r, int a, int s, double ns)
{
    if (c->nrows == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        kg_row *w = realloc(c->rows, c->cap * sizeof *w);
        if (w == NULL) { fprintf(stderr, "out of memory\n"); exit(2); }
        c->rows = w;
    }
    c->rows[c->nrows++] = (kg_row){ p, d, r, a, 0, s, ns, -1, -1 };
}

static void camp_make(camp *c, const model *m, uint64_t seed, double alpha, double margin)
{
    kg_row *keep = c->rows;
    size_t cap = c->cap;
    memset(c, 0, sizeof *c);
    c->rows = keep;
    c->cap = cap;
    c->plan.cases = &c->kase;
    c->plan.ncases = 1;
    c->plan.arms = c->arms;
    c->plan.narms = 2;
    snprintf(c->kase.name, KG_NAME_MAX, "small");
    c->kase.primary = 1;
    snprintf(c->arms[0].name, KG_NAME_MAX, "base");
    c->arms[0].role = KG_ROLE_BASELINE;
    snprintf(c->arms[1].name, KG_NAME_MAX, "cand");
    c->arms[1].role = KG_ROLE_CANDIDATE;
    kg_campaign *cp = &c->plan.campaign;
    cp->alpha = alpha;
    cp->margin = margin;
    cp->equivalence = 0.001;
    cp->control_margin = 0.01;
    cp->order_min = 0.0025;
    cp->rounds = 0;
    cp->samples = m->S;
    c->plan.gate.rule = KG_GATE_INTERVAL;
    c->plan.gate.min_reduction = margin;
    c->nproc = 2 * m->P;
    for (int p = 0; p < c->nproc; p++) c->accepted[p] = 1;
    gen g = { seed, 0 };
    for (int p = 0; p < c->nproc; p++) {
        int d = p % 2, R = m->unbalanced ? gint(&g, 2, m->R) : m->R;
        double u = m->sd_shared_proc * gnormal(&g), pa[2];
        for (int a = 0; a < 2; a++) pa[a] = m->sd_proc[a] * gnormal(&g);
        for (int r = 0; r < R; r++) {
            double w = m->sd_shared_round * gnormal(&g);
            for (int a = 0; a < 2; a++) {
                double ra = m->sd_round[a] * gnormal(&g);
                int S = m->unbalanced ? gint(&g, 2, m->S) : m->S;
                double mu = log(1000.0) + (a == 1 ? m->theta_cand : 0.0) + (d == 1 ? m->off_rev[a] : 0.0) + u
                            + pa[a] + w + ra;
                for (int s = 0; s < S; s++) camp_row(c, p, d, r, a, s, exp(mu + m->sd_sample[a] * gnormal(&g)));
            }
        }
    }
}

static kg_analysis_in camp_in(const camp *c)
{
    kg_analysis_in in = { .plan = &c->plan, .rows = c->rows, .nrows = c->nrows, .accepted = c->accepted,
                          .nproc = c->nproc, .state = c->state };
    return in;
}

/* running mean and variance */
typedef struct acc {
    double n, mean, m2;
} acc;

static void acc_add(acc *a, double x)
{
    a->n += 1.0;
    double d = x - a->mean;
    a->mean += d / a->n;
    a->m2 += d * (x - a->mean);
}

static double acc_se(const acc *a)
{
    return sqrt(a->m2 / (a->n - 1.0) / a->n);
}

/* The mean over seeds lies within 4 SE of truth; the naive estimate
 * (when given) lies outside. */
static void check_recovers(const char *what, const acc *est, double truth, const acc *naive)
{
    double se = acc_se(est), bound = 4.0 * se;
    fprintf(stderr, "  %-34s truth %.4e  mean %.4e  (SE %.1e)%s", what, truth, est->mean, se,
            naive != NULL ? "" : "\n");
    if (naive != NULL) fprintf(stderr, "  naive %.4e\n", naive->mean);
    CHECK_MSG(fabs(est->mean - truth) <= bound, "%s: mean estimate %.6e, truth %.6e, 4 SE = %.2e", what, est->mean,
              truth, bound);
    if (naive != NULL)
        CHECK_MSG(fabs(naive->mean - truth) > bound, "%s: the naive estimate %.6e is within 4 SE of the truth: the "
                  "test cannot tell them apart", what, naive->mean);
}

/* ---- kappa ---- */

static void test_kappa(void)
{
    CHECK_NEAR(kg_median_kappa(1), 1.0, 0, 0);
    CHECK_NEAR(kg_median_kappa(2), 1.0, 0, 0);
    CHECK(isnan(kg_median_kappa(0)));
    /* against simulated medians: 200000 medians each; the variance's
     * relative SE is about sqrt(2 / 200000) = 0.3% (a little more for
     * the median's tails) */
    const int sizes[] = { 3, 4, 5, 8, 10, 11, 40 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int S = sizes[i], n = 200000;
        gen g = { 99 + (uint64_t)S, 0 };
        double v[64], ss = 0.0;
        for (int k = 0; k < n; k++) {
            for (int s = 0; s < S; s++) v[s] = gnormal(&g);
            double med = kg_median(v, (size_t)S);
            ss += med * med;
        }
        double sim = S * ss / n, q = kg_median_kappa(S);
        fprintf(stderr, "  kappa(%d) = %.5f, simulated %.5f\n", S, q, sim);
        CHECK_MSG(fabs(q - sim) <= 0.015 * sim, "kappa(%d) = %.5f, simulated %.5f", S, q, sim);
    }
    /* known values: the median of 3 normals has variance 0.4487 */
    CHECK_NEAR(kg_median_kappa(3) / 3.0, 0.4487, 2e-4, 0);
    CHECK_NEAR(kg_median_kappa(100001), 3.14159265358979 / 2.0, 1e-12, 0);
    CHECK(fabs(kg_median_kappa(9999) - 3.14159265358979 / 2.0) < 0.01);
}

/* ---- recovery ---- */

static void test_recovery(int unbalanced)
{
    model m = { .P = 4, .R = 6, .S = 8, .unbalanced = unbalanced,
                .sd_shared_proc = 0.003, .sd_shared_round = 0.003,
                .sd_proc = { 0.004, 0.004 }, .sd_round = { 0.005, 0.005 }, .sd_sample = { 0.02, 0.02 },
                .theta_cand = -0.03, .off_rev = { 0.0, 0.03 } };
    fprintf(stderr, "recovery, %s design, 400 seeds:\n", unbalanced ? "unbalanced" : "balanced");
    camp c;
    memset(&c, 0, sizeof c);
    acc vs = { 0 }, vr = { 0 }, vp = { 0 }, naive_r = { 0 }, naive_p = { 0 };
    acc cp = { 0 }, cd = { 0 }, naive_cp = { 0 };
    int nseeds = 400, s_equal = 1;
    for (int k = 0; k < nseeds; k++) {
        camp_make(&c, &m, 1000 + (uint64_t)k, 0.05, 0.0);
        kg_analysis_in in = camp_in(&c);
        kg_varcomp vc;
        kg_err err = { 0 };
        CHECK(kg_varcomp_compute(&in, &vc, &err) == KG_OK);
        if (vc.arm == NULL) return;
        const kg_vc_arm *a = &vc.arm[1];
        const kg_vc_contrast *q = &vc.con[1];
        CHECK(a->present && q->present && !vc.con[0].present);
        acc_add(&vs, a->var_sample);
        acc_add(&vr, a->raw_round);
        acc_add(&vp, a->raw_process);
        acc_add(&cp, q->raw_process);
        acc_add(&cd, q->var_delta);
        acc_add(&naive_cp, q->var_D);
        if (!unbalanced) {
            CHECK_NEAR(a->k1, m.S, 1e-9, 0);
            CHECK_NEAR(a->k2, m.S, 1e-9, 0);
            CHECK_NEAR(a->k3, m.R * m.S, 1e-9, 0);
            CHECK_NEAR(q->h, 1.0 / m.R, 1e-12, 0);
            /* the naive estimators: variance of the round means within a
             * process, of the process means within a direction */
            double rm[64][16], pm[64], ss_r = 0.0, th[2] = { 0, 0 };
            for (size_t i = 0; i < c.nrows; i++) rm[c.rows[i].proc][c.rows[i].round] = 0.0;
            for (size_t i = 0; i < c.nrows; i++)
                if (c.rows[i].arm == 1) rm[c.rows[i].proc][c.rows[i].round] += log(c.rows[i].ns) / m.S;
            for (int p = 0; p < c.nproc; p++) {
                pm[p] = 0.0;
                for (int r = 0; r < m.R; r++) pm[p] += rm[p][r] / m.R;
                for (int r = 0; r < m.R; r++) ss_r += (rm[p][r] - pm[p]) * (rm[p][r] - pm[p]);
                th[p % 2] += pm[p] / m.P;
            }
            double ss_p = 0.0;
            for (int p = 0; p < c.nproc; p++) ss_p += (pm[p] - th[p % 2]) * (pm[p] - th[p % 2]);
            acc_add(&naive_r, ss_r / (c.nproc * (m.R - 1)));
            acc_add(&naive_p, ss_p / (c.nproc - 2));
        }
        /* the contrast's var_D is the s^2 of the analysis' interval */
        kg_analysis an;
        CHECK(kg_analyse(&in, &an, &err) == KG_OK);
        if (an.res != NULL && an.res[1].has_effect && an.res[1].eff.has_interval) {
            double s2 = an.res[1].eff.s * an.res[1].eff.s;
            if (!(fabs(q->var_D - s2) <= 1e-12 * s2)) s_equal = 0;
        } else {
            s_equal = 0;
        }
        kg_analysis_free(&an);
        kg_varcomp_free(&vc);
    }
    free(c.rows);
    CHECK_MSG(s_equal, "the contrast's var_D differs from the analysis' s^2");
    double var_s = m.sd_sample[1] * m.sd_sample[1];
    double var_r = m.sd_round[1] * m.sd_round[1] + m.sd_shared_round * m.sd_shared_round;
    double var_p = m.sd_proc[1] * m.sd_proc[1] + m.sd_shared_proc * m.sd_shared_proc;
    check_recovers("arm sample variance", &vs, var_s, NULL);
    check_recovers("arm round variance", &vr, var_r, unbalanced ? NULL : &naive_r);
    check_recovers("arm process variance", &vp, var_p, unbalanced ? NULL : &naive_p);
    check_recovers("contrast process variance", &cp, m.sd_proc[0] * m.sd_proc[0] + m.sd_proc[1] * m.sd_proc[1],
                   unbalanced ? NULL : &naive_cp);
    if (!unbalanced) {
        /* var_delta: the arms' own round effects and their medians' variance */
        double kap = kg_median_kappa(m.S) / m.S;
        double truth = m.sd_round[0] * m.sd_round[0] + m.sd_round[1] * m.sd_round[1]
                       + kap * (m.sd_sample[0] * m.sd_sample[0] + m.sd_sample[1] * m.sd_sample[1]);
        check_recovers("contrast round variance (delta)", &cd, truth, NULL);
    }
}

/* The shared process effect is in each arm's process component and out
 * of the contrast's. */
static void test_shared_cancels(void)
{
    model m = { .P = 4, .R = 6, .S = 8, .sd_shared_proc = 0.03, .sd_shared_round = 0.02,
                .sd_proc = { 0.004, 0.004 }, .sd_round = { 0.0, 0.0 }, .sd_sample = { 0.01, 0.01 } };
    camp c;
    memset(&c, 0, sizeof c);
    acc cp = { 0 }, ap = { 0 };
    fprintf(stderr, "shared process effect 3%%, 200 seeds:\n");
    for (int k = 0; k < 200; k++) {
        camp_make(&c, &m, 5000 + (uint64_t)k, 0.05, 0.0);
        kg_analysis_in in = camp_in(&c);
        kg_varcomp vc;
        kg_err err = { 0 };
        CHECK(kg_varcomp_compute(&in, &vc, &err) == KG_OK);
        if (vc.arm == NULL) return;
        acc_add(&cp, vc.con[1].raw_process);
        acc_add(&ap, vc.arm[0].raw_process);
        kg_varcomp_free(&vc);
    }
    free(c.rows);
    check_recovers("arm process variance", &ap, 0.03 * 0.03 + 0.004 * 0.004, NULL);
    check_recovers("contrast process variance", &cp, 2 * 0.004 * 0.004, NULL);
}

/* States and edge cases: an INCORRECT arm gets no components; one
 * process per direction gives no process component. */
static void test_edges(void)
{
    model m = { .P = 1, .R = 3, .S = 4, .sd_proc = { 0.01, 0.01 }, .sd_round = { 0.01, 0.01 },
                .sd_sample = { 0.01, 0.01 } };
    camp c;
    memset(&c, 0, sizeof c);
    camp_make(&c, &m, 7, 0.05, 0.0);
    kg_analysis_in in = camp_in(&c);
    kg_varcomp vc;
    kg_err err = { 0 };
    CHECK(kg_varcomp_compute(&in, &vc, &err) == KG_OK);
    if (vc.arm != NULL) {
        CHECK(vc.arm[1].present && !isnan(vc.arm[1].var_round) && isnan(vc.arm[1].var_process));
        CHECK(vc.con[1].present && isnan(vc.con[1].var_process));
        kg_design_var dv;
        CHECK(kg_design_var_of(&vc.con[1], &vc.arm[1], &vc.arm[0], &dv, &err) == KG_EINPUT);
    }
    kg_varcomp_free(&vc);
    c.state[1] = KG_ARM_INCORRECT;
    CHECK(kg_varcomp_compute(&in, &vc, &err) == KG_OK);
    if (vc.arm != NULL) CHECK(!vc.arm[1].present && !vc.con[1].present && vc.arm[0].present);
    kg_varcomp_free(&vc);
    c.rows[0].arm = 5;
    CHECK(kg_varcomp_compute(&in, &vc, &err) == KG_EINPUT);
    free(c.rows);
}

/* ---- the design's power ---- */

static void test_power(void)
{
    kg_design_eval e;
    /* lambda = 0 (true effect at the margin): the power is alpha */
    for (int P = 2; P <= 40; P += 7) {
        double pw = kg_design_power(1e-4, P, 0.05, 0.01, 0.01, &e);
        CHECK_NEAR(pw, 0.05, 1e-6, 0);
    }
    /* many processes: the z test, Phi(lambda - z) */
    double pw = kg_design_power(1e-4, 4000, 0.05, 0.0, 0.0005, &e);
    CHECK_NEAR(pw, gsl_cdf_ugaussian_P(e.lambda - gsl_cdf_ugaussian_Pinv(0.95)), 2e-3, 0);
    /* the smallest P: power(P) >= target > power(P - 1) */
    int P = kg_design_min_P(4e-4, 0.05, 0.005, 0.02, 0.95, 100000, &e);
    CHECK(P > 2);
    CHECK(e.power >= 0.95 && kg_design_power(4e-4, P - 1, 0.05, 0.005, 0.02, NULL) < 0.95);
    CHECK(kg_design_min_P(0.0, 0.05, 0.005, 0.02, 0.95, 100, &e) == 2);
    CHECK(kg_design_min_P(1.0, 0.05, 0.005, 0.006, 0.95, 50, &e) == -1);

    /* against simulated campaigns: the FASTER rate of kg_analyse at a
     * design whose predicted power is near 0.6 */
    model m = { .P = 3, .R = 4, .S = 5, .sd_shared_proc = 0.02, .sd_shared_round = 0.005,
                .sd_proc = { 0.003, 0.003 }, .sd_round = { 0.002, 0.002 }, .sd_sample = { 0.01, 0.01 } };
    double margin = 0.005, alpha = 0.05;
    kg_design_var dv = { .var_process = 2 * 0.003 * 0.003, .var_round_net = 2 * 0.002 * 0.002,
                         .var_sample_sum = 2 * 0.01 * 0.01 };
    double varD = kg_design_var_D(&dv, m.R, m.S, kg_median_kappa(m.S));
    double lo = margin, hi = 0.2;
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (kg_design_power(varD, m.P, alpha, margin, mid, NULL) < 0.6) lo = mid;
        else hi = mid;
    }
    double mde = hi, pred = kg_design_power(varD, m.P, alpha, margin, mde, &e);
    /* the approximation 1 - T_df(tq - lambda), for comparison */
    double approx = 1.0 - gsl_cdf_tdist_P(e.tq - e.lambda, e.df);
    m.theta_cand = log1p(-mde);
    camp c;
    memset(&c, 0, sizeof c);
    int n = 3000, faster = 0;
    for (int k = 0; k < n; k++) {
        camp_make(&c, &m, 90000 + (uint64_t)k, alpha, margin);
        kg_analysis_in in = camp_in(&c);
        kg_analysis an;
        kg_err err = { 0 };
        if (kg_analyse(&in, &an, &err) == KG_OK && an.res[1].verdict == KG_VERDICT_FASTER) faster++;
        kg_analysis_free(&an);
    }
    free(c.rows);
    double rate = (double)faster / n, se = sqrt(pred * (1 - pred) / n);
    fprintf(stderr, "power at P %d, R %d, S %d, true reduction %.3f%%, margin %.2f%%: predicted %.4f "
            "(shifted-t approximation %.4f), simulated %.4f (%d/%d, SE %.4f)\n", m.P, m.R, m.S, 100 * mde,
            100 * margin, pred, approx, rate, faster, n, se);
    CHECK_MSG(fabs(rate - pred) <= 4 * se, "simulated power %.4f, predicted %.4f", rate, pred);
    /* a design rule off by a factor of 2 in SE^2 would be far away */
    double wrong = kg_design_power(2 * varD, m.P, alpha, margin, mde, NULL);
    CHECK_MSG(fabs(rate - wrong) > 4 * se, "SE^2 doubled predicts %.4f, too close to %.4f", wrong, rate);
}

/* The control's design (kg_design_control_P): at the P it returns, an A/A
 * control (true difference 0) whose process means have variance var_D
 * keeps its interval within +-g (rho_lo >= -g and rho_hi <= g, the
 * gate's control rule, on kg_effect_compute's interval) in at least the
 * target share of simulated campaigns, within Monte Carlo error; at half
 * that P it does so clearly less often. */
static double control_within(double varD, int P, double alpha, double g, int reps, uint64_t seed)
{
    gen G = { seed, 0 };
    int n = 2 * P, ok = 0;
    double *D = malloc((size_t)n * sizeof *D);
    int *dir = malloc((size_t)n * sizeof *dir);
    if (D == NULL || dir == NULL) {
        free(D);
        free(dir);
        return (double)NAN;
    }
    for (int k = 0; k < reps; k++) {
        for (int p = 0; p < n; p++) {
            dir[p] = p % 2;
            D[p] = sqrt(varD) * gnormal(&G);
        }
        kg_effect e;
        kg_err err = { 0 };
        if (kg_effect_compute(D, dir, n, alpha, 0.0025, &e, &err) == KG_OK && e.has_interval)
            ok += e.rho_lo >= -g && e.rho_hi <= g;
    }
    free(D);
    free(dir);
    return (double)ok / reps;
}

static void test_control_power(void)
{
    double varD = 1e-4, g = 0.005, alpha = 0.05;
    kg_design_eval e;
    int P = kg_design_control_P(varD, alpha, g, 0.95, 100000, &e);
    CHECK(P > 2 && e.power >= 0.95 && kg_design_control_power(varD, P - 1, alpha, g, NULL) < 0.95);
    int reps = 4000;
    double at = control_within(varD, P, alpha, g, reps, 11), half = control_within(varD, P / 2, alpha, g, reps, 12);
    double se = sqrt(0.95 * 0.05 / reps);
    fprintf(stderr, "control within +-%.2f%% at P %d (predicted %.4f): %.4f of %d simulated A/A campaigns; at P %d: "
            "%.4f\n", 100 * g, P, e.power, at, reps, P / 2, half);
    CHECK_MSG(at >= 0.95 - 4 * se, "at P %d the control stayed within g in %.4f of the campaigns", P, at);
    CHECK_MSG(half < 0.95 - 4 * se, "at P %d the control stayed within g in %.4f: P is not the smallest", P / 2, half);
    /* no spread: 2 processes suffice; none too many: -1 */
    CHECK(kg_design_control_P(0.0, alpha, g, 0.95, 100, NULL) == 2);
    CHECK(kg_design_control_P(1.0, alpha, g, 0.95, 50, NULL) == -1);
}

int main(void)
{
    test_kappa();
    test_recovery(0);
    test_recovery(1);
    test_shared_cancels();
    test_edges();
    test_power();
    test_control_power();
    return kg_test_finish("test_varcomp");
}
