/* test_analysis.c: unit tests of the campaign analysis and the gate
 * (src/analysis/analysis.c).
 *
 * Full scenarios come from tests/fixtures/stats/analysis_*.txt, whose
 * expected values were computed by tools/stats_fixtures.py with an
 * independent numpy implementation of the definitions.  Hand-made rows
 * (every round's samples have a known median) pin the rules: states that
 * propagate, lost rounds under the classic gate, the interval gate at its
 * threshold, an invalid control, rejected processes, bad rows.  Plans are
 * built in memory, without the plan parser. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kgate/stats.h"

#define FIX "tests/fixtures/stats/"
#define RTOL 1e-12
#define ATOL 1e-14

#define CHECK_VAL(actual, expected, what) do { double a_ = (actual), e_ = (expected); \
    if (isnan(e_)) CHECK_MSG(isnan(a_), "%s: expected nan, got %.17g", (what), a_); \
    else CHECK_MSG(fabs(a_ - e_) <= ATOL + RTOL * fabs(e_), "%s: got %.17g, expected %.17g", \
                   (what), a_, e_); } while (0)

/* ---- an in-memory campaign ------------------------------------------ */

typedef struct scenario {
    kg_plan plan;
    kg_case cases[4];
    kg_arm arms[8];
    kg_arm_state state[32];
    int accepted[16];
    int nproc;
    kg_row *rows;
    size_t nrows, cap;
    const kg_case_limit *limits;   /* NULL: no physics limit */
} scenario;

static void sc_init(scenario *s, int ncases, int narms, int nproc)
{
    memset(s, 0, sizeof *s);
    s->plan.cases = s->cases;
    s->plan.arms = s->arms;
    s->plan.ncases = ncases;
    s->plan.narms = narms;
    kg_campaign *c = &s->plan.campaign;
    c->alpha = 0.05; c->margin = 0.02; c->equivalence = 0.01;
    c->control_margin = 0.0025; c->order_min = 0.0025; c->rounds = 0; c->samples = 3;
    s->plan.gate.rule = KG_GATE_INTERVAL;
    s->plan.gate.min_reduction = 0.10;
    s->plan.gate.require_order = 1;
    s->plan.gate.require_control = 1;
    for (int k = 0; k < ncases; k++) {
        snprintf(s->cases[k].name, KG_NAME_MAX, "case%d", k);
        s->cases[k].primary = 1;
    }
    s->nproc = nproc;
    for (int p = 0; p < nproc; p++) s->accepted[p] = 1;
}

static void sc_arm(scenario *s, int a, const char *name, kg_role role, const char *of)
{
    snprintf(s->arms[a].name, KG_NAME_MAX, "%s", name);
    s->arms[a].role = role;
    snprintf(s->arms[a].of, KG_NAME_MAX, "%s", of ? of : "");
}

static void sc_row(scenario *s, int proc, int dir, int round, int arm, int kase, int sample,
                   double ns)
{
    if (s->nrows == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        kg_row *r = realloc(s->rows, s->cap * sizeof *r);
        if (r == NULL) { fprintf(stderr, "out of memory\n"); exit(2); }
        s->rows = r;
    }
    s->rows[s->nrows++] = (kg_row){proc, dir, round, arm, kase, sample, ns, -1, -1};
}

/* Three samples whose median is exactly ns. */
static void sc_round(scenario *s, int proc, int dir, int round, int arm, int kase, double ns)
{
    sc_row(s, proc, dir, round, arm, kase, 0, ns * 1.002);
    sc_row(s, proc, dir, round, arm, kase, 1, ns);
    sc_row(s, proc, dir, round, arm, kase, 2, ns * 0.997);
}

static int sc_run(scenario *s, kg_analysis *out, kg_err *err)
{
    kg_analysis_in in = { .plan = &s->plan, .rows = s->rows, .nrows = s->nrows, .accepted = s->accepted,
                          .nproc = s->nproc, .state = s->state, .limits = s->limits };
    kg_err_clear(err);
    return kg_analyse(&in, out, err);
}

static const kg_arm_result *res_of(const kg_analysis *an, int c, int a)
{
    return &an->res[c * an->narms + a];
}

/* ---- fixtures -------------------------------------------------------- */

static int result_field(const kg_arm_result *r, const char *key, double *v)
{
    static const struct { const char *name; size_t off; int is_int; } f[] = {
        {"state", offsetof(kg_arm_result, state), 2},
        {"has_effect", offsetof(kg_arm_result, has_effect), 1},
        {"verdict", offsetof(kg_arm_result, verdict), 3},
        {"contrast_arm", offsetof(kg_arm_result, contrast_arm), 1},
        {"med_ns0", offsetof(kg_arm_result, med_ns), 0},
        {"med_ns1", offsetof(kg_arm_result, med_ns) + sizeof(double), 0},
        {"med_ns_all", offsetof(kg_arm_result, med_ns_all), 0},
        {"proc_red0", offsetof(kg_arm_result, proc_red), 0},
        {"proc_red1", offsetof(kg_arm_result, proc_red) + sizeof(double), 0},
        {"round_red0", offsetof(kg_arm_result, round_red), 0},
        {"round_red1", offsetof(kg_arm_result, round_red) + sizeof(double), 0},
        {"round_red_all", offsetof(kg_arm_result, round_red_all), 0},
        {"round_red_min", offsetof(kg_arm_result, round_red_min), 0},
        {"round_red_max", offsetof(kg_arm_result, round_red_max), 0},
        {"wins0", offsetof(kg_arm_result, wins), 1},
        {"wins1", offsetof(kg_arm_result, wins) + sizeof(int), 1},
        {"nrounds0", offsetof(kg_arm_result, nrounds), 1},
        {"nrounds1", offsetof(kg_arm_result, nrounds) + sizeof(int), 1},
        {"drift", offsetof(kg_arm_result, drift), 0},
        {"contrast_drift", offsetof(kg_arm_result, contrast_drift), 0},
        {"drift_fails", offsetof(kg_arm_result, drift_fails), 1},
        {"eff.n_fwd", offsetof(kg_arm_result, eff.n), 1},
        {"eff.n_rev", offsetof(kg_arm_result, eff.n) + sizeof(int), 1},
        {"eff.theta_fwd", offsetof(kg_arm_result, eff.theta_dir), 0},
        {"eff.theta_rev", offsetof(kg_arm_result, eff.theta_dir) + sizeof(double), 0},
        {"eff.theta", offsetof(kg_arm_result, eff.theta), 0},
        {"eff.has_interval", offsetof(kg_arm_result, eff.has_interval), 1},
        {"eff.s", offsetof(kg_arm_result, eff.s), 0},
        {"eff.se", offsetof(kg_arm_result, eff.se), 0},
        {"eff.df", offsetof(kg_arm_result, eff.df), 0},
        {"eff.tq", offsetof(kg_arm_result, eff.tq), 0},
        {"eff.lo", offsetof(kg_arm_result, eff.lo), 0},
        {"eff.hi", offsetof(kg_arm_result, eff.hi), 0},
        {"eff.rho", offsetof(kg_arm_result, eff.rho), 0},
        {"eff.rho_lo", offsetof(kg_arm_result, eff.rho_lo), 0},
        {"eff.rho_hi", offsetof(kg_arm_result, eff.rho_hi), 0},
        {"eff.order_diff", offsetof(kg_arm_result, eff.order_diff), 0},
        {"eff.order_se", offsetof(kg_arm_result, eff.order_se), 0},
        {"eff.order_flag", offsetof(kg_arm_result, eff.order_flag), 1},
        {"eff.order_tq", offsetof(kg_arm_result, eff.order_tq), 0},
        {"eff.rho_lo_fwd", offsetof(kg_arm_result, eff.rho_lo_dir), 0},
        {"eff.rho_lo_rev", offsetof(kg_arm_result, eff.rho_lo_dir) + sizeof(double), 0},
        {"eff.rho_hi_fwd", offsetof(kg_arm_result, eff.rho_hi_dir), 0},
        {"eff.rho_hi_rev", offsetof(kg_arm_result, eff.rho_hi_dir) + sizeof(double), 0},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (strcmp(f[i].name, key) != 0) continue;
        const char *base = (const char *)r + f[i].off;
        if (f[i].is_int == 0) memcpy(v, base, sizeof *v);
        else if (f[i].is_int == 1) { int x; memcpy(&x, base, sizeof x); *v = x; }
        else if (f[i].is_int == 2) { kg_arm_state x; memcpy(&x, base, sizeof x); *v = (double)x; }
        else { kg_verdict x; memcpy(&x, base, sizeof x); *v = (double)x; }
        return 1;
    }
    return 0;
}

static double global_field(const kg_analysis *an, const char *key)
{
    if (strcmp(key, "nproc_accepted") == 0) return an->nproc_accepted;
    if (strcmp(key, "nproc_rejected") == 0) return an->nproc_rejected;
    if (strcmp(key, "order_ok") == 0) return an->order_ok;
    if (strcmp(key, "control_valid") == 0) return an->control_valid;
    if (strcmp(key, "invalid") == 0) return an->invalid;
    if (strcmp(key, "gate_pass") == 0) return an->gate_pass;
    return (double)NAN;
}

/* Reads the scenario part of a fixture, runs the analysis, then checks
 * every expectation that follows. */
static void test_fixture(const char *name)
{
    char path[256], key[64], nm[KG_NAME_MAX], of[KG_NAME_MAX];
    snprintf(path, sizeof path, FIX "%s", name);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s (run the tests from the repository root)", path);
    if (f == NULL) return;
    scenario s;
    int ncases = 0, narms = 0, nproc = 0, nexp = 0, nglob = 0, ok = 1;
    kg_campaign cp;
    kg_gate gt;
    memset(&cp, 0, sizeof cp);
    memset(&gt, 0, sizeof gt);
    int rule = 0;
    ok &= fscanf(f, " campaign %lf %lf %lf %lf %lf %d %d", &cp.alpha, &cp.margin,
                 &cp.equivalence, &cp.control_margin, &cp.order_min, &cp.rounds,
                 &cp.samples) == 7;
    ok &= fscanf(f, " gate %d %lf %d %d %d", &rule, &gt.min_reduction, &gt.all_cases,
                 &gt.require_order, &gt.require_control) == 5;
    gt.rule = rule == 1 ? KG_GATE_CLASSIC : KG_GATE_INTERVAL;
    ok &= fscanf(f, " cases %d", &ncases) == 1 && ncases > 0 && ncases <= 4;
    CHECK_MSG(ok, "%s: bad header", name);
    if (!ok) { fclose(f); return; }
    int prim[4];
    char cname[4][KG_NAME_MAX];
    for (int c = 0; c < ncases; c++) ok &= fscanf(f, " case %63s %d", cname[c], &prim[c]) == 2;
    ok &= fscanf(f, " arms %d", &narms) == 1 && narms > 0 && narms <= 8;
    CHECK_MSG(ok, "%s: bad cases", name);
    if (!ok) { fclose(f); return; }
    int roles[8];
    char anames[8][KG_NAME_MAX], aof[8][KG_NAME_MAX];
    for (int a = 0; a < narms; a++) {
        ok &= fscanf(f, " arm %63s %d %63s", nm, &roles[a], of) == 3;
        snprintf(anames[a], KG_NAME_MAX, "%s", nm);
        snprintf(aof[a], KG_NAME_MAX, "%s", strcmp(of, "-") == 0 ? "" : of);
    }
    ok &= fscanf(f, " nproc %d", &nproc) == 1 && nproc > 0 && nproc <= 16;
    CHECK_MSG(ok, "%s: bad arms", name);
    if (!ok) { fclose(f); return; }
    sc_init(&s, ncases, narms, nproc);
    s.plan.campaign = cp;
    s.plan.gate = gt;
    for (int c = 0; c < ncases; c++) {
        snprintf(s.cases[c].name, KG_NAME_MAX, "%s", cname[c]);
        s.cases[c].primary = prim[c];
    }
    for (int a = 0; a < narms; a++) sc_arm(&s, a, anames[a], (kg_role)roles[a], aof[a]);
    ok &= fscanf(f, " accepted") == 0;
    for (int p = 0; p < nproc; p++) ok &= fscanf(f, "%d", &s.accepted[p]) == 1;
    for (int k = 0; k < ncases * narms; k++) {
        int c, a, st;
        ok &= fscanf(f, " state %d %d %d", &c, &a, &st) == 3;
        if (ok && c >= 0 && c < ncases && a >= 0 && a < narms) s.state[c * narms + a] = (kg_arm_state)st;
    }
    size_t nrows = 0;
    ok &= fscanf(f, " rows %zu", &nrows) == 1;
    for (size_t i = 0; i < nrows && ok; i++) {
        kg_row w;
        ok &= fscanf(f, " row %d %d %d %d %d %d %lf", &w.proc, &w.dir, &w.round, &w.arm,
                     &w.kase, &w.sample, &w.ns) == 7;
        sc_row(&s, w.proc, w.dir, w.round, w.arm, w.kase, w.sample, w.ns);
    }
    CHECK_MSG(ok && s.nrows == nrows, "%s: bad rows", name);
    kg_analysis an;
    kg_err err = {0, ""};
    int rc = sc_run(&s, &an, &err);
    CHECK_MSG(rc == KG_OK, "%s: %s", name, err.msg);
    while (ok && rc == KG_OK && fscanf(f, "%63s", key) == 1 && strcmp(key, "end") != 0) {
        char what[160];
        if (strcmp(key, "expect") == 0) {
            int c, a;
            double want, got = (double)NAN;
            ok &= fscanf(f, "%d %d %63s %lf", &c, &a, nm, &want) == 4;
            if (!ok || c < 0 || c >= ncases || a < 0 || a >= narms) break;
            CHECK_MSG(result_field(res_of(&an, c, a), nm, &got), "unknown key %s", nm);
            snprintf(what, sizeof what, "%s case %d arm %d %s", name, c, a, nm);
            CHECK_VAL(got, want, what);
            nexp++;
        } else if (strcmp(key, "global") == 0) {
            double want;
            ok &= fscanf(f, "%63s %lf", nm, &want) == 2;
            snprintf(what, sizeof what, "%s %s", name, nm);
            CHECK_VAL(global_field(&an, nm), want, what);
            nglob++;
        } else if (strcmp(key, "reason") == 0) {
            ok &= fscanf(f, "%63s", nm) == 1;
            for (char *q = nm; *q; q++) if (*q == '~') *q = ' ';
            CHECK_STR_CONTAINS(an.gate_reason, nm);
        } else {
            CHECK_MSG(0, "%s: unknown line %s", name, key);
            break;
        }
    }
    CHECK_MSG(ok, "%s: parse error", name);
    CHECK_MSG(nexp >= ncases * narms * 19 && nglob == 6, "%s: %d expectations, %d globals",
              name, nexp, nglob);
    kg_analysis_free(&an);
    free(s.rows);
    fclose(f);
}

/* ---- hand-made scenarios --------------------------------------------- */

/* Baseline "dev" (arm 0), candidate "cand" (arm 1), control "ctl" of dev
 * (arm 2), one case; P processes per direction, R rounds.  Every round's
 * median is known: dev 1000 ns scaled by a per-process factor, the
 * candidate at ratio cand_ratio (with a small per-process wobble so the
 * interval has width), the control at ctl_ratio. */
static void build_basic(scenario *s, int P, int R, double cand_ratio, double ctl_ratio)
{
    sc_init(s, 1, 3, 2 * P);
    sc_arm(s, 0, "dev", KG_ROLE_BASELINE, NULL);
    sc_arm(s, 1, "cand", KG_ROLE_CANDIDATE, NULL);
    sc_arm(s, 2, "ctl", KG_ROLE_CONTROL, "dev");
    snprintf(s->cases[0].name, KG_NAME_MAX, "gemm_f32");
    for (int p = 0; p < 2 * P; p++) {
        int dir = p % 2;
        double scale = 1.0 + 0.01 * p;
        double wob = 1.0 + 0.001 * ((p * 7) % 5 - 2);
        for (int r = 0; r < R; r++) {
            double rs = 1.0 + 0.002 * r;
            sc_round(s, p, dir, r, 0, 0, 1000.0 * scale * rs);
            sc_round(s, p, dir, r, 1, 0, 1000.0 * scale * rs * cand_ratio * wob);
            sc_round(s, p, dir, r, 2, 0, 1000.0 * scale * rs * ctl_ratio * (2.0 - wob));
        }
    }
}

static void test_basic_numbers(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 3, 4, 0.8, 1.0);
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    const kg_arm_result *c = res_of(&an, 0, 1), *b = res_of(&an, 0, 0), *k = res_of(&an, 0, 2);
    CHECK(an.nproc_accepted == 6 && an.nproc_rejected == 0);
    CHECK(c->has_effect && c->eff.has_interval && c->eff.n[0] == 3 && c->eff.n[1] == 3);
    CHECK(c->contrast_arm == 0 && k->contrast_arm == 0);
    /* theta = log 0.8 + mean of log(wobble) over the six processes */
    double sum = 0;
    for (int p = 0; p < 6; p++) sum += log(1.0 + 0.001 * ((p * 7) % 5 - 2));
    CHECK_NEAR(c->eff.theta, log(0.8) + sum / 6, 1e-14, 1e-12);
    CHECK(c->verdict == KG_VERDICT_FASTER);
    CHECK(c->wins[0] == 12 && c->nrounds[0] == 12 && c->wins[1] == 12 && c->nrounds[1] == 12);
    CHECK(c->round_red[0] > 0.19 && c->round_red[0] < 0.21);
    CHECK(c->proc_red[0] > 0.19 && c->proc_red[1] < 0.21);
    /* baseline: medians and drift, no effect */
    CHECK(!b->has_effect && b->verdict == KG_VERDICT_INCONCLUSIVE);
    CHECK_NEAR(b->proc_red[0], 0.0, 1e-15, 0);
    /* forward processes 0, 2, 4: medians 1000*(1+0.01p)*(~1.003) */
    CHECK(b->med_ns[0] > 1020 && b->med_ns[0] < 1025);
    CHECK_NEAR(b->drift, 1.006 / 1.0 - 1.0, 1e-12, 1e-9);
    CHECK(isnan(b->round_red_all) && b->nrounds[0] == 0);
    CHECK(an.gate_pass);
    CHECK(strcmp(an.gate_reason, "passed") == 0);
    CHECK(an.control_valid && !an.invalid && an.order_ok);
    CHECK(k->has_effect && k->verdict == KG_VERDICT_EQUIVALENT);
    kg_analysis_free(&an);
    kg_analysis_free(&an); /* idempotent */
    free(s.rows);
}

/* The arm's own level (kgate compare): per process the mean over rounds
 * of the log round medians, per direction the mean over processes, the
 * directions averaged, with the pooled within-direction spread.  In
 * build_basic the baseline's round median is 1000 (1 + 0.01 p)
 * (1 + 0.002 r) exactly. */
static void test_level(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 3, 4, 0.8, 1.0);
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    const kg_arm_result *b = res_of(&an, 0, 0), *c = res_of(&an, 0, 1);
    double L[6], rr = 0;
    for (int r = 0; r < 4; r++) rr += log(1.0 + 0.002 * r) / 4;
    for (int p = 0; p < 6; p++) L[p] = log(1000.0) + log(1.0 + 0.01 * p) + rr;
    double tf = (L[0] + L[2] + L[4]) / 3, tr = (L[1] + L[3] + L[5]) / 3, ss = 0;
    for (int p = 0; p < 6; p++) ss += (L[p] - (p % 2 ? tr : tf)) * (L[p] - (p % 2 ? tr : tf));
    double sd = sqrt(ss / 4);
    CHECK(b->has_level && b->level.has_interval && b->level.n[0] == 3 && b->level.n[1] == 3);
    CHECK_NEAR(b->level.theta_dir[0], tf, 1e-14, 1e-12);
    CHECK_NEAR(b->level.theta, (tf + tr) / 2, 1e-14, 1e-12);
    CHECK_NEAR(b->level.s, sd, 1e-14, 1e-10);
    CHECK_NEAR(b->level.se, sd * sqrt(1.0 / 12 + 1.0 / 12), 1e-14, 1e-10);
    CHECK_NEAR(b->level.df, 4.0, 0, 0);
    /* the candidate's level is the baseline's times 0.8 and its wobble */
    double w = 0;
    for (int p = 0; p < 6; p++) w += log(1.0 + 0.001 * ((p * 7) % 5 - 2)) / 6;
    CHECK(c->has_level);
    CHECK_NEAR(c->level.theta, b->level.theta + log(0.8) + w, 1e-13, 1e-12);
    kg_analysis_free(&an);
    free(s.rows);
}

static void test_states_propagate(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 2, 3, 0.8, 1.0);
    s.state[1] = KG_ARM_INCORRECT;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    const kg_arm_result *c = res_of(&an, 0, 1);
    CHECK(c->verdict == KG_VERDICT_INCORRECT && !c->has_effect && c->state == KG_ARM_INCORRECT);
    CHECK(isnan(c->med_ns_all) && c->nrounds[0] == 0);
    CHECK(!an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "case gemm_f32, arm cand: INCORRECT");
    kg_analysis_free(&an);

    s.state[1] = KG_ARM_INADMISSIBLE;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(res_of(&an, 0, 1)->verdict == KG_VERDICT_INADMISSIBLE);
    CHECK_STR_CONTAINS(an.gate_reason, "INADMISSIBLE");
    kg_analysis_free(&an);

    /* an incorrect baseline is no reference: the candidate has nothing to
     * be compared with */
    s.state[1] = KG_ARM_OK;
    s.state[0] = KG_ARM_INCORRECT;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(res_of(&an, 0, 0)->verdict == KG_VERDICT_INCORRECT);
    CHECK(res_of(&an, 0, 1)->verdict == KG_VERDICT_NODATA && !res_of(&an, 0, 1)->has_effect);
    CHECK(res_of(&an, 0, 2)->verdict == KG_VERDICT_NODATA);
    CHECK(!an.gate_pass);
    kg_analysis_free(&an);

    /* absent arms: NO DATA, and a candidate absent everywhere gates nothing */
    s.state[0] = KG_ARM_OK;
    s.state[1] = KG_ARM_ABSENT;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(res_of(&an, 0, 1)->verdict == KG_VERDICT_NODATA);
    CHECK(!an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "no candidate arm");
    kg_analysis_free(&an);
    free(s.rows);
}

static void test_classic_gate(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 2, 5, 0.8, 1.0);
    s.plan.gate.rule = KG_GATE_CLASSIC;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK_MSG(an.gate_pass, "%s", an.gate_reason);
    kg_analysis_free(&an);

    /* lose one round in the reverse direction (process 3, round 2) */
    for (size_t i = 0; i < s.nrows; i++)
        if (s.rows[i].proc == 3 && s.rows[i].round == 2 && s.rows[i].arm == 1)
            s.rows[i].ns *= 1.5;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    const kg_arm_result *c = res_of(&an, 0, 1);
    CHECK(c->wins[1] == 9 && c->nrounds[1] == 10 && c->wins[0] == 10);
    CHECK(c->round_red_min < 0.0);
    CHECK(!an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "case gemm_f32, arm cand: won 9/10 rounds (reverse)");
    kg_analysis_free(&an);

    /* the interval rule does not require every round */
    s.plan.gate.rule = KG_GATE_INTERVAL;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK_MSG(an.gate_pass, "%s", an.gate_reason);
    kg_analysis_free(&an);

    /* classic threshold on the reductions */
    s.plan.gate.rule = KG_GATE_CLASSIC;
    s.plan.gate.min_reduction = 0.25;
    for (size_t i = 0; i < s.nrows; i++)
        if (s.rows[i].proc == 3 && s.rows[i].round == 2 && s.rows[i].arm == 1)
            s.rows[i].ns /= 1.5;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(!an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "process-median reduction (forward)");
    CHECK_STR_CONTAINS(an.gate_reason, "< 25.00%");
    kg_analysis_free(&an);
    free(s.rows);
}

static void test_interval_threshold(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 3, 3, 0.9, 1.0);
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    double lo = res_of(&an, 0, 1)->eff.rho_lo;
    CHECK(lo > 0.09 && lo < 0.1);
    kg_analysis_free(&an);

    s.plan.gate.min_reduction = lo;   /* >= passes at equality */
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK_MSG(an.gate_pass, "%s", an.gate_reason);
    kg_analysis_free(&an);

    s.plan.gate.min_reduction = nextafter(lo, 1.0);
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(!an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "case gemm_f32, arm cand: lower bound of reduction");
    kg_analysis_free(&an);

    /* non-primary cases are not gated unless all_cases */
    s.cases[0].primary = 0;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(!an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "no candidate arm runs on a primary case");
    kg_analysis_free(&an);
    s.plan.gate.all_cases = 1;
    s.plan.gate.min_reduction = 0.05;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK_MSG(an.gate_pass, "%s", an.gate_reason);
    kg_analysis_free(&an);
    free(s.rows);

    /* one process per direction: no interval, the interval gate fails */
    build_basic(&s, 1, 3, 0.5, 1.0);
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(res_of(&an, 0, 1)->has_effect && !res_of(&an, 0, 1)->eff.has_interval);
    CHECK(res_of(&an, 0, 1)->verdict == KG_VERDICT_INCONCLUSIVE);
    CHECK(!an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "no confidence interval");
    kg_analysis_free(&an);
    free(s.rows);
}

static void test_control(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 3, 3, 0.8, 1.01);   /* control 1% slower than its baseline */
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    const kg_arm_result *k = res_of(&an, 0, 2);
    CHECK(k->has_effect && k->eff.rho_hi < -0.0025);
    CHECK(k->control == KG_CONTROL_INVALID);
    CHECK(res_of(&an, 0, 1)->control == KG_CONTROL_NONE);   /* not a control */
    CHECK(!an.control_valid && an.invalid && !an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "control invalid: case gemm_f32, arm ctl");
    kg_analysis_free(&an);

    s.plan.gate.require_control = 0;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(an.gate_pass && an.invalid);
    kg_analysis_free(&an);

    /* a control straddling the margin is valid */
    free(s.rows);
    build_basic(&s, 3, 3, 0.8, 1.0005);
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(an.control_valid && !an.invalid);
    k = res_of(&an, 0, 2);
    CHECK(k->control == KG_CONTROL_VALID || k->control == KG_CONTROL_WIDE);
    CHECK((k->control == KG_CONTROL_WIDE) ==
          (k->eff.rho_lo < -s.plan.campaign.control_margin || k->eff.rho_hi > s.plan.campaign.control_margin));
    kg_analysis_free(&an);
    free(s.rows);
}

static void test_order(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 3, 3, 0.8, 1.0);
    for (size_t i = 0; i < s.nrows; i++)
        if (s.rows[i].arm == 1 && s.rows[i].dir == KG_DIR_FWD) s.rows[i].ns *= 0.95;
    /* 24% forward, 20% reverse: flagged, but the worse direction clears
     * the 10% gate, so the flag cannot change the decision */
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(res_of(&an, 0, 1)->eff.order_flag && an.order_ok && an.gate_pass);
    kg_analysis_free(&an);
    /* with a 21% gate the reverse direction alone falls short: it decides */
    s.plan.gate.min_reduction = 0.21;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(res_of(&an, 0, 1)->eff.order_flag && !an.order_ok && !an.gate_pass);
    CHECK_STR_CONTAINS(an.gate_reason, "order check failed: case gemm_f32, arm cand");
    kg_analysis_free(&an);
    s.plan.gate.require_order = 0;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(an.gate_pass && !an.order_ok);
    kg_analysis_free(&an);
    free(s.rows);
}

static void test_rejected_ignored(void)
{
    scenario s;
    kg_analysis a1, a2;
    kg_err err = {0, ""};
    build_basic(&s, 3, 3, 0.85, 1.0);
    CHECK(sc_run(&s, &a1, &err) == KG_OK);
    /* a seventh process, rejected, with absurd and even invalid times */
    s.nproc = 7;
    s.accepted[6] = 0;
    for (int r = 0; r < 3; r++) {
        sc_round(&s, 6, 0, r, 0, 0, 10.0);
        sc_round(&s, 6, 0, r, 1, 0, 1e9);
        sc_row(&s, 6, 5, r, 2, 0, 0, -1.0);
    }
    CHECK_MSG(sc_run(&s, &a2, &err) == KG_OK, "%s", err.msg);
    CHECK(a2.nproc_accepted == 6 && a2.nproc_rejected == 1);
    for (int a = 0; a < 3; a++) {
        const kg_arm_result *x = res_of(&a1, 0, a), *y = res_of(&a2, 0, a);
        CHECK(x->verdict == y->verdict && x->has_effect == y->has_effect);
        CHECK(x->med_ns_all == y->med_ns_all && x->med_ns[0] == y->med_ns[0]);
        CHECK(x->nrounds[0] == y->nrounds[0] && x->wins[0] == y->wins[0]);
        if (x->has_effect)
            CHECK(x->eff.theta == y->eff.theta && x->eff.rho_lo == y->eff.rho_lo
                  && x->eff.n[0] == y->eff.n[0]);
    }
    kg_analysis_free(&a1);
    kg_analysis_free(&a2);

    /* reject everything: NO DATA everywhere, invalid, gate fails */
    for (int p = 0; p < 7; p++) s.accepted[p] = 0;
    CHECK(sc_run(&s, &a2, &err) == KG_OK);
    CHECK(a2.nproc_accepted == 0 && a2.invalid && !a2.gate_pass);
    CHECK_STR_CONTAINS(a2.gate_reason, "no accepted process");
    for (int a = 0; a < 3; a++) CHECK(res_of(&a2, 0, a)->verdict == KG_VERDICT_NODATA);
    kg_analysis_free(&a2);
    free(s.rows);
}

/* Two baselines, dev about 10% faster than dev2; the candidate 5% faster
 * than dev with a per-process wobble.  Without a reference the candidate
 * is compared with every baseline and its effect is the worst contrast
 * (against dev: FASTER than every baseline needs FASTER than dev); with
 * campaign.reference = dev2 it is compared with dev2 alone.  The fastest
 * baseline of each round is no longer used. */
static void build_two_baselines(scenario *s, double *sum_dev, double *sum_dev2)
{
    sc_init(s, 1, 3, 4);
    sc_arm(s, 0, "dev2", KG_ROLE_BASELINE, NULL);
    sc_arm(s, 1, "dev", KG_ROLE_BASELINE, NULL);
    sc_arm(s, 2, "cand", KG_ROLE_CANDIDATE, NULL);
    *sum_dev = *sum_dev2 = 0;
    for (int p = 0; p < 4; p++) {
        double d1 = 0, d2 = 0;
        for (int r = 0; r < 2; r++) {
            double b2 = 1100.0 + 3.0 * r, b1 = 1000.0 + p, cn = (950.0 + 2.0 * p) * (1.0 + 0.001 * r);
            sc_round(s, p, p % 2, r, 0, 0, b2);
            sc_round(s, p, p % 2, r, 1, 0, b1);
            sc_round(s, p, p % 2, r, 2, 0, cn);
            d1 += log(cn) - log(b1);
            d2 += log(cn) - log(b2);
        }
        *sum_dev += d1 / 2;
        *sum_dev2 += d2 / 2;
    }
}

static void test_every_baseline(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    double sum_dev, sum_dev2;
    build_two_baselines(&s, &sum_dev, &sum_dev2);
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    const kg_arm_result *c = res_of(&an, 0, 2);
    CHECK(c->has_effect && c->contrast_arm == 1);
    CHECK_NEAR(c->eff.theta, sum_dev / 4, 1e-14, 1e-12); /* 2 per direction: plain mean */
    CHECK(!res_of(&an, 0, 0)->has_effect && !res_of(&an, 0, 1)->has_effect);
    /* the process-median reduction is against the same baseline */
    CHECK(c->proc_red[0] < 0.06 && c->proc_red[0] > 0.04);
    kg_analysis_free(&an);
    free(s.rows);

    build_two_baselines(&s, &sum_dev, &sum_dev2);
    snprintf(s.plan.campaign.reference, KG_NAME_MAX, "dev2");
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    c = res_of(&an, 0, 2);
    CHECK(c->has_effect && c->contrast_arm == 0);
    CHECK_NEAR(c->eff.theta, sum_dev2 / 4, 1e-14, 1e-12);
    CHECK(c->proc_red[0] > 0.1);
    kg_analysis_free(&an);
    free(s.rows);
}

static void test_single_round(void)
{
    /* one round per process: contrasts exist, drift does not */
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 2, 1, 0.8, 1.0);
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    for (int a = 0; a < 3; a++) CHECK(isnan(res_of(&an, 0, a)->drift));
    CHECK(res_of(&an, 0, 1)->nrounds[0] == 2 && res_of(&an, 0, 1)->eff.has_interval);
    kg_analysis_free(&an);
    free(s.rows);
}

static void test_bad_rows(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 2, 2, 0.8, 1.0);
    s.rows[3].ns = 0.0;
    CHECK(sc_run(&s, &an, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "row 3");
    CHECK(an.res == NULL);
    s.rows[3].ns = 1000.0;
    s.rows[4].arm = 9;
    CHECK(sc_run(&s, &an, &err) == KG_EINPUT);
    s.rows[4].arm = 1;
    s.rows[5].dir = 1 - s.rows[5].dir;
    CHECK(sc_run(&s, &an, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "both directions");
    s.rows[5].dir = 1 - s.rows[5].dir;
    s.rows[6].proc = 40;
    CHECK(sc_run(&s, &an, &err) == KG_EINPUT);
    s.rows[6].proc = s.rows[7].proc;
    s.plan.campaign.rounds = 1;
    CHECK(sc_run(&s, &an, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "round 1");
    s.plan.campaign.rounds = 2;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    kg_analysis_free(&an);
    kg_err_clear(&err);
    CHECK(kg_analyse(NULL, &an, &err) == KG_EINTERNAL);
    free(s.rows);
}

/* The physics limit: the candidate's fastest process median (~801 ns)
 * implies 3.5x the peak flop rate, the baseline's (~1003 ns) 2.8x: the
 * candidate is INVALID and the gate fails; a bandwidth limit that the
 * baseline exceeds fails the gate naming the baseline; no limit, no
 * physics numbers. */
static void test_physics(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 3, 4, 0.8, 1.0);
    kg_case_limit lim = { .bytes = 0.0, .flops = 2800.0, .bw = 0.0, .flop_rate = 1e9 };
    s.limits = &lim;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    const kg_arm_result *c = res_of(&an, 0, 1), *b = res_of(&an, 0, 0);
    CHECK_NEAR(c->fastest_ns, 800.0 * 0.998 * 1.003, 1e-9, 1e-3);
    CHECK(c->impossible && c->verdict == KG_VERDICT_INVALID);
    CHECK(c->peak_frac > 3.4 && c->peak_frac < 3.6);
    CHECK(strstr(c->physics, "impossible: 3.5x the measured FMA rate") != NULL);
    CHECK(!b->impossible && b->peak_frac > 2.7 && b->peak_frac < 2.9);
    CHECK(!an.gate_pass && strstr(an.gate_reason, "arm cand: INVALID (impossible") != NULL);
    kg_analysis_free(&an);
    /* a byte limit every arm exceeds: the baseline is named */
    lim = (kg_case_limit){ .bytes = 1e6, .flops = 0.0, .bw = 1e11, .flop_rate = 0.0 };
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(res_of(&an, 0, 0)->impossible && strstr(res_of(&an, 0, 0)->physics, "bandwidth") != NULL);
    CHECK(!an.gate_pass && strstr(an.gate_reason, "baseline dev: INVALID") != NULL);
    kg_analysis_free(&an);
    /* within the margin: no effect on the verdict */
    lim = (kg_case_limit){ .bytes = 0.0, .flops = 1000.0, .bw = 0.0, .flop_rate = 1e9 };
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(!res_of(&an, 0, 1)->impossible && res_of(&an, 0, 1)->verdict == KG_VERDICT_FASTER && an.gate_pass);
    kg_analysis_free(&an);
    s.limits = NULL;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(isnan(res_of(&an, 0, 1)->peak_frac) && an.gate_pass);
    kg_analysis_free(&an);
    free(s.rows);
}

/* same_precision: a candidate whose contract is weaker than the
 * baseline's fails the gate; declared acceptable, it passes. */
static void test_same_precision(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 3, 4, 0.8, 1.0);
    s.arms[1].contract.precision = KG_PREC_TF32;
    s.plan.gate.same_precision = 1;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(res_of(&an, 0, 1)->verdict == KG_VERDICT_FASTER);
    CHECK(!an.gate_pass && strstr(an.gate_reason, "contract tf32 is weaker than f32 of baseline dev") != NULL);
    kg_analysis_free(&an);
    s.plan.gate.same_precision = 0;
    CHECK(sc_run(&s, &an, &err) == KG_OK);
    CHECK(an.gate_pass);
    kg_analysis_free(&an);
    /* the order of contracts */
    kg_contract f32 = { KG_PREC_DTYPE, 0.0 }, tf = { KG_PREC_TF32, 0.0 }, h = { KG_PREC_F16ACC, 0.0 },
                bh = { KG_PREC_BF16ACC, 0.0 }, t4 = { KG_PREC_DTYPE, 1e-4 }, t3 = { KG_PREC_DTYPE, 1e-3 };
    CHECK(kg_contract_weaker(&tf, &f32, KG_DT_F32, NULL, 0) && !kg_contract_weaker(&f32, &tf, KG_DT_F32, NULL, 0));
    CHECK(!kg_contract_weaker(&tf, &f32, KG_DT_BF16, NULL, 0)); /* bf16 inputs are exact in tf32 */
    CHECK(kg_contract_weaker(&bh, &h, KG_DT_F32, NULL, 0) && !kg_contract_weaker(&h, &bh, KG_DT_F32, NULL, 0));
    CHECK(kg_contract_weaker(&t4, &f32, KG_DT_F32, NULL, 0) && !kg_contract_weaker(&f32, &t4, KG_DT_F32, NULL, 0));
    CHECK(kg_contract_weaker(&t3, &t4, KG_DT_F32, NULL, 0) && !kg_contract_weaker(&t4, &t3, KG_DT_F32, NULL, 0));
    CHECK(!kg_contract_weaker(&f32, &f32, KG_DT_F32, NULL, 0));
    free(s.rows);
}

/* The host watch (kg_analysis_in.procs, .watch): a slot whose every
 * process the watch excluded (contaminated), with a never-quiet row in its
 * log, makes the campaign INVALID and fails the gate with the watch's
 * reason; without the never-quiet row, or once a later process completes
 * the slot (a resumed run), the campaign stands on its processes. */
static void test_host_never_quiet(void)
{
    scenario s;
    kg_analysis an;
    kg_err err = {0, ""};
    build_basic(&s, 3, 3, 0.8, 1.0);
    kg_proc_rec procs[8];
    memset(procs, 0, sizeof procs);
    for (int p = 0; p < 8; p++) {
        procs[p].slot = p < 7 ? p : 6;
        procs[p].dir = p % 2;
        snprintf(procs[p].status, sizeof procs[p].status, "ok");
    }
    snprintf(procs[6].status, sizeof procs[6].status, "contaminated");
    kg_watch_rec watch[2];
    memset(watch, 0, sizeof watch);
    snprintf(watch[0].event, sizeof watch[0].event, "session");
    snprintf(watch[1].event, sizeof watch[1].event, "never-quiet");
    snprintf(watch[1].detail, sizeof watch[1].detail, "slot 6 given up after 4 attempts: cc1 ran");
    s.nproc = 7;
    s.accepted[6] = 0;
    kg_analysis_in in = { .plan = &s.plan, .rows = s.rows, .nrows = s.nrows, .accepted = s.accepted,
                          .nproc = 6, .state = s.state, .procs = procs, .watch = watch, .nwatch = 2 };
    /* every slot clean: the campaign stands */
    CHECK(kg_analyse(&in, &an, &err) == KG_OK);
    CHECK(an.gate_pass && !an.invalid && an.invalid_why[0] == '\0');
    kg_analysis_free(&an);
    /* slot 6 never ran clean and the watch gave it up */
    in.nproc = 7;
    CHECK_MSG(kg_analyse(&in, &an, &err) == KG_OK, "%s", err.msg);
    CHECK(an.invalid && !an.gate_pass);
    CHECK_STR_CONTAINS(an.invalid_why, "the device never became quiet: slot 6 given up after 4 attempts");
    CHECK(strcmp(an.gate_reason, an.invalid_why) == 0);
    CHECK(res_of(&an, 0, 1)->verdict == KG_VERDICT_FASTER);   /* the verdicts are computed, none stands */
    kg_analysis_free(&an);
    /* no never-quiet row: an excluded process alone does not invalidate */
    in.nwatch = 1;
    CHECK(kg_analyse(&in, &an, &err) == KG_OK);
    CHECK(an.gate_pass && !an.invalid);
    kg_analysis_free(&an);
    /* a resumed run completed slot 6 */
    in.nwatch = 2;
    in.nproc = 8;
    s.accepted[7] = 1;
    CHECK(kg_analyse(&in, &an, &err) == KG_OK);
    CHECK(an.gate_pass && !an.invalid);
    kg_analysis_free(&an);
    free(s.rows);
}

/* Contaminated samples (one CPU per process): a sample whose process was
 * pinned to one CPU and that ran on another is left out of every number
 * and counted.  Pinned rows that all ran where they should give the
 * unpinned analysis; extra contaminated samples of absurd time change
 * nothing; a cell of contaminated samples only loses its round. */
static void test_contaminated(void)
{
    scenario s;
    kg_analysis a0, a1, a2;
    kg_err err = {0, ""};
    build_basic(&s, 3, 4, 0.8, 1.0);
    CHECK(sc_run(&s, &a0, &err) == KG_OK);
    CHECK(!a0.pinned && a0.ncontaminated == 0);
    for (size_t i = 0; i < s.nrows; i++) s.rows[i].cpu = s.rows[i].pin_cpu = s.rows[i].proc % 2;
    CHECK(sc_run(&s, &a1, &err) == KG_OK);
    CHECK(a1.pinned && a1.ncontaminated == 0);
    /* every round of the candidate gets a fourth sample, a thousand times
     * slower, that ran on the other CPU: it would move every median */
    size_t clean = s.nrows;
    for (int p = 0; p < 6; p++)
        for (int r = 0; r < 4; r++) {
            sc_row(&s, p, p % 2, r, 1, 0, 3, 1e6);
            s.rows[s.nrows - 1].pin_cpu = p % 2;
            s.rows[s.nrows - 1].cpu = 1 - p % 2;
        }
    CHECK(kg_row_contaminated(&s.rows[s.nrows - 1]) && !kg_row_contaminated(&s.rows[0]));
    CHECK_MSG(sc_run(&s, &a2, &err) == KG_OK, "%s", err.msg);
    CHECK(a2.pinned && a2.ncontaminated == 24);
    CHECK(res_of(&a2, 0, 1)->ncontaminated == 24 && res_of(&a2, 0, 0)->ncontaminated == 0);
    for (int a = 0; a < 3; a++) {
        const kg_arm_result *x = res_of(&a0, 0, a), *y = res_of(&a2, 0, a);
        CHECK(x->verdict == y->verdict && x->has_effect == y->has_effect);
        CHECK(x->med_ns_all == y->med_ns_all && x->med_ns[0] == y->med_ns[0]);
        CHECK(x->nrounds[0] == y->nrounds[0] && x->wins[0] == y->wins[0]);
        if (x->has_effect) CHECK(x->eff.theta == y->eff.theta && x->eff.rho_lo == y->eff.rho_lo);
    }
    kg_analysis_free(&a2);
    /* the same sample with its CPU unknown (-1) is contaminated too */
    s.rows[s.nrows - 1].cpu = -1;
    CHECK(kg_row_contaminated(&s.rows[s.nrows - 1]));
    /* process 0's round 0 of the candidate ran elsewhere entirely: that
     * round no longer counts */
    s.nrows = clean;
    for (size_t i = 0; i < s.nrows; i++)
        if (s.rows[i].proc == 0 && s.rows[i].round == 0 && s.rows[i].arm == 1) s.rows[i].cpu = 1;
    CHECK_MSG(sc_run(&s, &a2, &err) == KG_OK, "%s", err.msg);
    CHECK(a2.ncontaminated == 3 && res_of(&a2, 0, 1)->ncontaminated == 3);
    CHECK_MSG(res_of(&a2, 0, 1)->nrounds[0] == res_of(&a1, 0, 1)->nrounds[0] - 1, "rounds %d, %d",
              res_of(&a2, 0, 1)->nrounds[0], res_of(&a1, 0, 1)->nrounds[0]);
    CHECK(res_of(&a2, 0, 1)->verdict == KG_VERDICT_FASTER);
    kg_analysis_free(&a0);
    kg_analysis_free(&a1);
    kg_analysis_free(&a2);
    free(s.rows);
}

int main(void)
{
    test_fixture("analysis_interval.txt");
    test_fixture("analysis_classic.txt");
    test_fixture("analysis_order.txt");
    test_basic_numbers();
    test_level();
    test_states_propagate();
    test_classic_gate();
    test_interval_threshold();
    test_control();
    test_order();
    test_rejected_ignored();
    test_every_baseline();
    test_single_round();
    test_bad_rows();
    test_physics();
    test_same_precision();
    test_host_never_quiet();
    test_contaminated();
    return kg_test_finish("test_analysis");
}
