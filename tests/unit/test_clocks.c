/* test_clocks.c: unit tests of the clock-aware confirmation of the
 * analysis (src/analysis/analysis.c, docs/statistics.md "Clocks").
 *
 * Campaigns are built in memory as in test_analysis.c: one case, a
 * baseline and a candidate, 4 processes per direction, 4 rounds of 3
 * samples whose median is known, and telemetry rows with one SM clock per
 * sample.  The clock is constant within a round's arm, so the cycle
 * contrast of a round is the time contrast plus log(clock ratio) exactly:
 *   (a) equal clocks: the cycle effect equals the time effect, no round
 *       is clock-mismatched, FASTER stays FASTER;
 *   (b) the candidate 3% faster in time at a 3% higher clock: FASTER in
 *       time at margin 1%, not in cycles: INCONCLUSIVE, every round
 *       flagged, the gate fails on the cycle bound;
 *   (c) no telemetry, or telemetry without clocks (the cpu backend's -1):
 *       nothing changes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kgate/stats.h"

#define NPROC 8
#define NROUNDS 4
#define BASE_MHZ 1980
#define FAST_MHZ 2039   /* 1980 x 1.03, as NVML reports it: whole MHz */

/* ---- an in-memory campaign (the pattern of test_analysis.c) ---------- */

typedef struct scenario {
    kg_plan plan;
    kg_case cases[1];
    kg_arm arms[2];
    kg_arm_state state[2];
    int accepted[NPROC];
    int nproc;
    kg_row *rows;
    size_t nrows, cap;
    kg_tel_rec *tel;
    size_t ntel, tcap;
} scenario;

static void sc_init(scenario *s)
{
    memset(s, 0, sizeof *s);
    s->plan.cases = s->cases;
    s->plan.arms = s->arms;
    s->plan.ncases = 1;
    s->plan.narms = 2;
    kg_campaign *c = &s->plan.campaign;
    c->alpha = 0.05; c->margin = 0.01; c->equivalence = 0.01;
    c->control_margin = 0.0025; c->order_min = 0.0025; c->rounds = NROUNDS; c->samples = 3;
    s->plan.gate.rule = KG_GATE_INTERVAL;
    s->plan.gate.min_reduction = 0.01;
    s->plan.gate.require_order = 1;
    s->plan.gate.require_control = 1;
    snprintf(s->cases[0].name, KG_NAME_MAX, "small");
    s->cases[0].primary = 1;
    snprintf(s->arms[0].name, KG_NAME_MAX, "base");
    s->arms[0].role = KG_ROLE_BASELINE;
    snprintf(s->arms[1].name, KG_NAME_MAX, "cand");
    s->arms[1].role = KG_ROLE_CANDIDATE;
    s->nproc = NPROC;
    for (int p = 0; p < NPROC; p++) s->accepted[p] = 1;
}

static void sc_free(scenario *s)
{
    free(s->rows);
    free(s->tel);
}

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return v;
    *cap = *cap ? 2 * *cap : 256;
    void *w = realloc(v, *cap * size);
    if (w == NULL) { fprintf(stderr, "out of memory\n"); exit(2); }
    return w;
}

/* One sample and, with mhz != 0, its telemetry row. */
static void sc_sample(scenario *s, int proc, int round, int arm, int sample, double ns, int mhz)
{
    s->rows = grow(s->rows, &s->cap, s->nrows, sizeof *s->rows);
    s->rows[s->nrows++] = (kg_row){proc, proc % 2, round, arm, 0, sample, ns, -1, -1};
    if (mhz == 0) return;
    s->tel = grow(s->tel, &s->tcap, s->ntel, sizeof *s->tel);
    s->tel[s->ntel++] = (kg_tel_rec){ .proc = proc, .kase = 0, .round = round, .arm = arm, .sample = sample,
                                      .sm_mhz = mhz, .mem_mhz = mhz < 0 ? -1 : 2619, .power_w = 300.0,
                                      .temp_c = 40, .event_ns = ns, .host_ns = ns };
}

/* Three samples whose median is exactly ns, each with the clock mhz. */
static void sc_round(scenario *s, int proc, int round, int arm, double ns, int mhz)
{
    sc_sample(s, proc, round, arm, 0, ns * 1.002, mhz);
    sc_sample(s, proc, round, arm, 1, ns, mhz);
    sc_sample(s, proc, round, arm, 2, ns * 0.997, mhz);
}

/* The campaign: the baseline at 1000 ns with a process effect both arms
 * share, the candidate 3% faster with an effect of its own per process
 * and round (so that s > 0).  base_mhz and cand_mhz: the arms' clocks (0:
 * no telemetry rows). */
static void sc_campaign(scenario *s, int base_mhz, int cand_mhz)
{
    sc_init(s);
    for (int p = 0; p < NPROC; p++)
        for (int r = 0; r < NROUNDS; r++) {
            double base = 1000.0 * (1.0 + 0.01 * p);
            double own = 1.0 + 0.001 * (double)((p * 7 + r * 3) % 5 - 2);
            sc_round(s, p, r, 0, base, base_mhz);
            sc_round(s, p, r, 1, base * 0.97 * own, cand_mhz);
        }
}

static int sc_run(scenario *s, int with_tel, kg_analysis *out)
{
    kg_analysis_in in = { .plan = &s->plan, .rows = s->rows, .nrows = s->nrows, .accepted = s->accepted,
                          .nproc = s->nproc, .state = s->state, .tel = with_tel ? s->tel : NULL,
                          .ntel = with_tel ? s->ntel : 0 };
    kg_err err;
    kg_err_clear(&err);
    int rc = kg_analyse(&in, out, &err);
    CHECK_MSG(rc == KG_OK, "kg_analyse: %s", err.msg);
    return rc;
}

static const kg_arm_result *cand_of(const kg_analysis *an)
{
    return &an->res[1];
}

/* The time analysis of two results is the same. */
static void check_same_time(const kg_arm_result *x, const kg_arm_result *y)
{
    CHECK(x->verdict == y->verdict || x->clock_demoted || y->clock_demoted);
    CHECK(x->has_effect && y->has_effect);
    CHECK_NEAR(x->eff.theta, y->eff.theta, 0, 0);
    CHECK_NEAR(x->eff.s, y->eff.s, 0, 0);
    CHECK_NEAR(x->eff.rho_lo, y->eff.rho_lo, 0, 0);
    CHECK_NEAR(x->eff.rho_hi, y->eff.rho_hi, 0, 0);
    CHECK(x->contrast_arm == y->contrast_arm);
}

/* (c) no telemetry: the analysis of time alone, nothing of clocks. */
static void test_no_telemetry(kg_analysis *ref)
{
    scenario s;
    sc_campaign(&s, 0, 0);
    CHECK(s.ntel == 0);
    if (sc_run(&s, 1, ref) != KG_OK) { sc_free(&s); return; }
    const kg_arm_result *r = cand_of(ref);
    CHECK(ref->any_clocks == 0);
    CHECK(r->verdict == KG_VERDICT_FASTER);
    CHECK(r->has_effect && r->eff.has_interval);
    /* theta is the mean of log(0.97 x own) over the rounds: about -3.05% */
    CHECK_NEAR(r->eff.rho, 0.03, 0.002, 0);
    CHECK(r->eff.rho_lo > 0.01);
    CHECK(r->has_cycles == 0);
    CHECK(r->has_cycle_effect == 0);
    CHECK(r->clock_rounds == -1);
    CHECK(r->clock_rounds_flagged == -1);
    CHECK(r->clock_demoted == 0);
    CHECK(r->clock_reason[0] == '\0');
    CHECK(ref->gate_pass == 1);
    sc_free(&s);
}

/* (c) telemetry rows without clocks (the cpu backend writes -1): the same
 * as none. */
static void test_no_clocks(const kg_analysis *ref)
{
    scenario s;
    kg_analysis an;
    sc_campaign(&s, -1, -1);
    CHECK(s.ntel == (size_t)NPROC * NROUNDS * 2 * 3);
    if (sc_run(&s, 1, &an) != KG_OK) { sc_free(&s); return; }
    const kg_arm_result *r = cand_of(&an);
    check_same_time(r, cand_of(ref));
    CHECK(r->verdict == KG_VERDICT_FASTER);
    CHECK(an.any_clocks == 0);
    CHECK(r->has_cycles == 0);
    CHECK(r->clock_rounds == -1);
    CHECK(an.gate_pass == 1);
    kg_analysis_free(&an);
    sc_free(&s);
}

/* (a) equal clocks: the cycle effect is the time effect. */
static void test_equal_clocks(const kg_analysis *ref)
{
    scenario s;
    kg_analysis an;
    sc_campaign(&s, BASE_MHZ, BASE_MHZ);
    if (sc_run(&s, 1, &an) != KG_OK) { sc_free(&s); return; }
    const kg_arm_result *r = cand_of(&an);
    check_same_time(r, cand_of(ref));
    CHECK(an.any_clocks == 1);
    CHECK(r->has_cycles == 1);
    CHECK(r->has_cycle_effect == 1 && r->eff_cycles.has_interval);
    CHECK(r->cycle_nrounds == NPROC * NROUNDS);
    CHECK(r->nrounds[0] + r->nrounds[1] == NPROC * NROUNDS);
    CHECK(r->eff_cycles.n[0] == 4 && r->eff_cycles.n[1] == 4);
    CHECK_NEAR(r->eff_cycles.theta, r->eff.theta, 1e-13, 0);
    CHECK_NEAR(r->eff_cycles.s, r->eff.s, 1e-13, 1e-9);
    CHECK_NEAR(r->eff_cycles.rho_lo, r->eff.rho_lo, 1e-13, 0);
    CHECK_NEAR(r->eff_cycles.rho_hi, r->eff.rho_hi, 1e-13, 0);
    CHECK(r->clock_rounds == NPROC * NROUNDS);
    CHECK(r->clock_rounds_flagged == 0);
    CHECK(an.res[0].clock_rounds == NPROC * NROUNDS && an.res[0].clock_rounds_flagged == 0);
    CHECK(r->verdict == KG_VERDICT_FASTER);
    CHECK(r->clock_demoted == 0);
    /* the analysis carries the cycle verdict and the confirmation (report.md prints them) */
    CHECK(r->verdict_cycles == KG_VERDICT_FASTER && r->cycles_confirmed == 1);
    CHECK(an.nclock_rounds == NPROC * NROUNDS && an.nmismatched == 0);
    CHECK(an.gate_pass == 1);
    kg_analysis_free(&an);
    sc_free(&s);
}

/* (b) the candidate's rounds at a 3% higher clock: 3% faster in time,
 * 0.11% in cycles. */
static void test_faster_clock(const kg_analysis *ref)
{
    scenario s;
    kg_analysis an;
    sc_campaign(&s, BASE_MHZ, FAST_MHZ);
    if (sc_run(&s, 1, &an) != KG_OK) { sc_free(&s); return; }
    const kg_arm_result *r = cand_of(&an);
    check_same_time(r, cand_of(ref));
    CHECK(cand_of(ref)->verdict == KG_VERDICT_FASTER);   /* in time, at margin 1% */
    CHECK(r->eff.rho_lo > 0.01);
    CHECK(r->has_cycles == 1 && r->has_cycle_effect == 1 && r->eff_cycles.has_interval);
    /* every round's cycle contrast is its time contrast + log(2039/1980) */
    CHECK_NEAR(r->eff_cycles.theta, r->eff.theta + log((double)FAST_MHZ / BASE_MHZ), 1e-13, 0);
    CHECK_NEAR(r->eff_cycles.s, r->eff.s, 1e-13, 1e-9);
    CHECK_NEAR(r->eff_cycles.se, r->eff.se, 1e-13, 1e-9);
    CHECK_NEAR(r->eff_cycles.rho, 1.0 - exp(r->eff.theta) * FAST_MHZ / BASE_MHZ, 1e-13, 0);
    CHECK_NEAR(r->eff_cycles.rho, 0.0011, 0.002, 0);
    CHECK(r->eff_cycles.rho_lo < 0.01);
    CHECK(kg_verdict_of(&r->eff_cycles, 0.01, 0.01) != KG_VERDICT_FASTER);
    CHECK(r->verdict_cycles == kg_verdict_of(&r->eff_cycles, 0.01, 0.01) && r->cycles_confirmed == 0);
    CHECK(r->verdict == KG_VERDICT_INCONCLUSIVE);
    CHECK(r->clock_demoted == 1);
    CHECK_STR_CONTAINS(r->clock_reason, "FASTER in time but not in cycles: the clocks differed");
    CHECK(r->clock_rounds == NPROC * NROUNDS);
    CHECK(r->clock_rounds_flagged == NPROC * NROUNDS);
    CHECK(an.res[0].clock_rounds_flagged == NPROC * NROUNDS);
    /* the rounds the report's telemetry section lists, with their clocks */
    CHECK(an.nclock_rounds == NPROC * NROUNDS && an.nmismatched == NPROC * NROUNDS);
    CHECK(an.mismatched != NULL && an.mismatched[0].lo_mhz == BASE_MHZ && an.mismatched[0].hi_mhz == FAST_MHZ);
    CHECK(an.gate_pass == 0);
    CHECK_STR_CONTAINS(an.gate_reason, "lower bound of reduction in cycles");
    CHECK_STR_CONTAINS(an.gate_reason, "32 of 32 rounds clock-mismatched");
    kg_analysis_free(&an);

    /* the same campaign without its telemetry: FASTER, as in time */
    if (sc_run(&s, 0, &an) == KG_OK) {
        CHECK(cand_of(&an)->verdict == KG_VERDICT_FASTER);
        CHECK(cand_of(&an)->has_cycles == 0);
        CHECK(an.gate_pass == 1);
        kg_analysis_free(&an);
    }
    sc_free(&s);
}

/* A clock 1% apart is not a mismatch; 1980 vs 2000 (1.01%) is. */
static void test_threshold(void)
{
    scenario s;
    kg_analysis an;
    sc_campaign(&s, 1980, 1999);   /* +0.96% */
    if (sc_run(&s, 1, &an) == KG_OK) {
        CHECK(cand_of(&an)->clock_rounds_flagged == 0);
        kg_analysis_free(&an);
    }
    sc_free(&s);
    sc_campaign(&s, 1980, 2000);   /* +1.01% */
    if (sc_run(&s, 1, &an) == KG_OK) {
        CHECK(cand_of(&an)->clock_rounds_flagged == NPROC * NROUNDS);
        kg_analysis_free(&an);
    }
    sc_free(&s);
}

/* One process without telemetry: its rounds have no cycle value, the
 * cycle effect comes from the other seven processes and is reported, and
 * the verdict is that of time (the confirmation needs every sample's
 * clock); the candidate at a higher clock stays FASTER then. */
static void test_partial(void)
{
    scenario s;
    kg_analysis an;
    sc_campaign(&s, BASE_MHZ, FAST_MHZ);
    size_t w = 0;
    for (size_t i = 0; i < s.ntel; i++)
        if (s.tel[i].proc != 3) s.tel[w++] = s.tel[i];
    s.ntel = w;
    if (sc_run(&s, 1, &an) == KG_OK) {
        const kg_arm_result *r = cand_of(&an);
        CHECK(an.any_clocks == 1);
        CHECK(r->has_cycles == 0 && r->has_cycle_effect == 1);
        CHECK(r->cycle_nrounds == (NPROC - 1) * NROUNDS);
        CHECK(r->eff_cycles.n[0] == 4 && r->eff_cycles.n[1] == 3);
        CHECK(r->eff_cycles.rho_lo < 0.01);
        CHECK(r->clock_rounds == (NPROC - 1) * NROUNDS);
        CHECK(r->clock_rounds_flagged == (NPROC - 1) * NROUNDS);
        CHECK(r->eff.n[1] == 4);
        CHECK(r->verdict == KG_VERDICT_FASTER);
        CHECK(r->clock_demoted == 0);
        /* part of the samples only: the cycle verdict is reported, it confirms nothing */
        CHECK(r->verdict_cycles != KG_VERDICT_FASTER && r->cycles_confirmed == 0);
        CHECK(an.gate_pass == 1);
        kg_analysis_free(&an);
    }
    sc_free(&s);
}

int main(void)
{
    kg_analysis ref;
    memset(&ref, 0, sizeof ref);
    test_no_telemetry(&ref);
    if (ref.res != NULL) {
        test_no_clocks(&ref);
        test_equal_clocks(&ref);
        test_faster_clock(&ref);
    }
    test_threshold();
    test_partial();
    kg_analysis_free(&ref);
    return kg_test_finish("test_clocks");
}
