/* kgate/stats.h: the statistics of a campaign (statistics-anchors.md §3).
 *
 * Work in log time.  For each round, y(arm) is the log of the median of
 * the arm's samples in that round, and the paired contrast of an arm is
 * delta = y(arm) - min over baseline arms of y(baseline) (the fastest
 * baseline of that round; a control arm is contrasted with the baseline
 * it replicates).  Per process D = mean of delta over rounds; per
 * direction theta_d = mean of D over processes; overall
 * theta = (theta_fwd + theta_rev) / 2.  The interval is a t-interval on
 * the process means with the direction as a stratum (pooled
 * within-direction variance, 2P - 2 degrees of freedom), mapped to a
 * reduction rho = 1 - exp(theta).
 *
 * This module does no I/O; kg_analyse() works on rows already read. */
#ifndef KGATE_STATS_H
#define KGATE_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"
#include "kgate/evidence.h"   /* the rows: kg_row, kg_tel_rec, kg_arm_state, KG_DIR_* */
#include "kgate/peaks.h"   /* KG_PHYSICS_MARGIN */
#include "kgate/plan.h"

/* ---- primitives ---------------------------------------------------- */

/* Median of n values (n >= 1); v is not modified.  Even n: mean of the
 * two middle values.  Returns NAN for n == 0. */
double kg_median(const double *v, size_t n);
double kg_mean(const double *v, size_t n);
/* Sample standard deviation (n - 1 denominator); 0 for n < 2. */
double kg_sd(const double *v, size_t n);
/* Quantile p of Student's t with df degrees of freedom (GSL). */
double kg_t_quantile(double p, double df);

/* ---- the paired effect --------------------------------------------- */

typedef struct kg_effect {
    int n[2];              /* processes per direction that contributed */
    double theta_dir[2];   /* mean log ratio per direction */
    double theta;          /* (theta_fwd + theta_rev) / 2 */
    int has_interval;      /* 0 when a direction has fewer than 2 processes */
    double s;              /* pooled within-direction SD of process means */
    double se;             /* s * sqrt(1/(4 n_fwd) + 1/(4 n_rev)) */
    double df;             /* n_fwd + n_rev - 2 */
    double tq;             /* t quantile (1 - alpha, df) */
    double lo, hi;         /* theta -/+ tq * se: the one-sided (1 - alpha) bounds */
    double rho;            /* 1 - exp(theta): the reduction (positive = faster) */
    double rho_lo, rho_hi; /* 1 - exp(hi), 1 - exp(lo) */
    double order_diff;     /* theta_fwd - theta_rev */
    double order_se;       /* s * sqrt(1/n_fwd + 1/n_rev) */
    double order_tq;       /* t quantile (1 - alpha / 2, df): the order check's threshold in SE */
    int order_flag;        /* |order_diff| > order_tq order_se and > order_min (statistics-anchors.md §3.4's
                            * "2.5 SE and 0.25%", with the t quantile in place of 2.5) */
    /* each direction on its own: theta_dir[d] + tq s / sqrt(n_d), and the
     * reduction bound it gives; the worse direction is the one with the
     * smaller bound (the order rule, kg_verdict_of) */
    double rho_lo_dir[2], rho_hi_dir[2];
} kg_effect;

/* A control's contrast that moves from the first to the last round by
 * more than max(t SE, KG_DRIFT_MIN) (log scale) fails the control check;
 * t is the two-sided quantile of level KG_DRIFT_ALPHA / m at n - 1
 * degrees of freedom, m the controls tested in the campaign, n the
 * control's processes (kg_arm_result.drift_crit). */
#define KG_DRIFT_ALPHA 0.01
#define KG_DRIFT_MIN 0.0025

/* Computes the effect from n process means D[i] with directions dir[i]
 * (KG_DIR_FWD or KG_DIR_REV).  alpha is one-sided.  order_min is the
 * smallest log-ratio difference flagged as an order effect.  Always fills
 * the point estimates; has_interval is 0 (and bounds NAN) when either
 * direction has fewer than 2 processes.  Returns KG_OK, or KG_EINPUT when
 * a direction has no process at all. */
int kg_effect_compute(const double *D, const int *dir, int n, double alpha,
                      double order_min, kg_effect *out, kg_err *err);

typedef enum {
    KG_VERDICT_FASTER = 0,
    KG_VERDICT_SLOWER,
    KG_VERDICT_EQUIVALENT,
    KG_VERDICT_INCONCLUSIVE,
    KG_VERDICT_INCORRECT,    /* failed a correctness check: never timed as valid */
    KG_VERDICT_INADMISSIBLE, /* the case violates the arm's or op's contract */
    KG_VERDICT_NODATA,       /* no accepted process produced samples */
    KG_VERDICT_WEAK,         /* the case cannot tell a wrong kernel from a right one */
    KG_VERDICT_INVALID       /* its timing implies more than the device's measured peak (physics) */
} kg_verdict;

/* FASTER when rho_lo > margin; SLOWER when rho_hi < -margin; EQUIVALENT
 * when -equivalence < rho_lo and rho_hi < equivalence; else
 * INCONCLUSIVE (also when there is no interval). */
/* kg_verdict_of: with the order flag up, FASTER also needs the worse
 * direction's own lower bound above the margin (and SLOWER the better
 * direction's upper bound below -margin); otherwise the verdict is
 * INCONCLUSIVE.  kg_verdict_label adds " (order-sensitive)" to a FASTER
 * or SLOWER of a flagged effect, for the reports. */
kg_verdict kg_verdict_of(const kg_effect *e, double margin, double equivalence);
const char *kg_verdict_name(kg_verdict v);
const char *kg_verdict_label(kg_verdict v, int order_flag);

/* ---- campaigns compared (kgate compare, docs/compare.md) ------------- */

/* The change of one quantity between two campaigns, treated as unpaired:
 * a and b are two kg_effect of the same quantity (an arm's level, or a
 * contrast) from independent campaigns A and B, each from its processes'
 * means with the directions as strata (theta, se, df as kg_effect_compute
 * gives them).  diff = theta_b - theta_a; se = sqrt(se_a^2 + se_b^2);
 * df by Welch-Satterthwaite, (se_a^2 + se_b^2)^2 / (se_a^4 / df_a +
 * se_b^4 / df_b) (df_a + df_b when both se are 0); the two-sided
 * (1 - alpha) interval diff -/+ t(1 - alpha/2, df) se; ratio = exp(diff)
 * (B over A: above 1 = B takes longer) and change = ratio - 1, with their
 * bounds.  has_interval is 0 (bounds NAN) when either effect has none. */
typedef struct kg_change {
    int has_interval;
    double diff;                 /* theta_b - theta_a, log scale */
    double se, df, tq;           /* tq = t(1 - alpha/2, df) */
    double lo, hi;               /* diff -/+ tq se */
    double ratio, ratio_lo, ratio_hi;
    double change, change_lo, change_hi;   /* ratio - 1: + is B slower */
} kg_change;

/* Fills out from a and b (either may lack an interval: then only the
 * point estimates).  alpha in (0, 1) two-sided.  KG_EINPUT for a bad
 * alpha. */
int kg_change_compute(const kg_effect *a, const kg_effect *b, double alpha, kg_change *out, kg_err *err);

/* The verdict on B against A, kgate's rule (kg_verdict_of) with the
 * reduction 1 - ratio and equivalence = margin: FASTER when ratio_hi <
 * 1 - margin; SLOWER when ratio_lo > 1 + margin; EQUIVALENT when 1 -
 * margin < ratio_lo and ratio_hi < 1 + margin; else INCONCLUSIVE (also
 * without an interval). */
kg_verdict kg_change_verdict(const kg_change *c, double margin);

/* ---- multiplicity ---------------------------------------------------- */

/* The upper tail P(T > x) of Student's t with df degrees of freedom, and
 * the z with the same upper tail: Phi^-1(1 - p). */
double kg_t_sf(double x, double df);
double kg_z_of_p(double p);

/* draws of the max-T simulation (reproducible: seeded from the plan) */
#define KG_MAXT_DRAWS 20000

/* Holm's step-down adjusted p-values of p[0..m) into padj (Holm 1979):
 * sorted ascending, padj_(i) = max over j <= i of min(1, (m - j) p_(j))
 * (0-based j).  padj may alias p. */
void kg_holm(const double *p, int m, double *padj);

/* One-sided max-T over m t statistics with correlation matrix R (m x m,
 * row-major) and df degrees of freedom (Dunnett 1955, by simulation):
 * draws n samples of max_i Z_i / sqrt(chi2_df / df), Z ~ N(0, R), from a
 * generator seeded with seed; *crit gets the (1 - alpha) quantile and
 * padj[i] (may be NULL) the fraction of draws whose maximum exceeds t[i].
 * A matrix that is not positive definite is repaired by shrinking it
 * toward the identity until it is.  Returns KG_OK, or an error on bad
 * input or no memory. */
int kg_maxt(const double *R, int m, double df, double alpha, uint64_t seed, int n, const double *t,
            double *crit, double *padj, kg_err *err);

/* ---- group-sequential designs ---------------------------------------- */

/* One-sided efficacy boundaries on the z scale for K equally spaced looks
 * (information fractions k / K) of a level-alpha test, with the Lan-DeMets
 * spending function of O'Brien-Fleming type, alpha(t) = 2 - 2 Phi(z_(1 -
 * alpha/2) / sqrt(t)) (Lan & DeMets 1983): c[k] such that the probability
 * of crossing first at look k is alpha(t_k) - alpha(t_(k-1)) under the
 * null.  Computed by simulation of the looks' z statistics (independent
 * increments) with a fixed seed, so the table is a function of (K,
 * alpha) alone.  K in [1, KG_PLAN_MAX_LOOKS]; K = 1 gives z_(1 - alpha). */
int kg_seq_bounds(int K, double alpha, double *c, kg_err *err);

/* ---- rows and the analysis of a campaign ----------------------------- */

/* A control arm's A/A contrast against the control margin. */
typedef enum {
    KG_CONTROL_NONE = 0,  /* not a control, or no interval */
    KG_CONTROL_VALID,     /* the interval lies within +-control_margin */
    KG_CONTROL_WIDE,      /* valid, but the interval reaches past the margin: claims below it are unsupported */
    KG_CONTROL_INVALID    /* the interval lies outside +-control_margin: the campaign is invalid */
} kg_control_status;

typedef struct kg_arm_result {
    int arm, kase;
    kg_role role;
    kg_arm_state state;
    int contrast_arm;        /* baseline it is compared with: a control's own; a candidate's or
                              * reference's: campaign.reference, or the baseline of its worst
                              * contrast (intersection-union); -1 before the analysis */
    double med_ns[2];        /* per direction: median over processes of the process medians */
    double med_ns_all;       /* median over all accepted processes of the process medians */
    double proc_red[2];      /* 1 - med_ns[d] / fastest baseline med_ns[d] */
    double round_red[2];     /* median over rounds of 1 - exp(delta), per direction */
    double round_red_all;    /* same over both directions */
    double round_red_min, round_red_max; /* range of the per-round reductions */
    int wins[2], nrounds[2]; /* rounds with delta < 0, per direction */
    double drift;            /* exp(y(last round) - y(first round)) - 1, median over processes */
    int has_effect;
    kg_effect eff;
    kg_verdict verdict;
    kg_control_status control;  /* control arms: the A/A contrast's status */
    /* appended: the physics limit (kg_case_limit).  fastest_ns is the
     * smallest process median; peak_frac the largest of (minimal bytes /
     * fastest) / peak bandwidth and (flops / fastest) / peak flop rate,
     * NAN where no limit applies; impossible when peak_frac exceeds
     * KG_PHYSICS_MARGIN (kgate/peaks.h): the verdict is then INVALID and
     * physics says why ("impossible: 3.2x the measured bandwidth") */
    double fastest_ns;
    double peak_frac;
    int impossible;
    char physics[96];
    /* appended: drift of the contrast, mean over processes of delta(last
     * counted round) - delta(first), its SE over processes (n >= 2), and
     * whether the drift check fails (controls: |mean| > max(3 SE, 0.25%)) */
    double contrast_drift, contrast_drift_se;
    int ndrift_proc;
    int drift_fails;
    /* appended: the family (candidates with an interval on the gated
     * cases).  p_value: one-sided p of H0 "reduction <= margin";
     * p_adj: Holm's step-down adjusted p, or the max-T one; rho_lo_adj:
     * the lower bound at the family's level (Bonferroni alpha/m for Holm,
     * the max-T critical value for maxt); a FASTER verdict needs
     * p_adj < alpha.  NAN outside the family. */
    int in_family;
    double p_value, p_adj, rho_lo_adj;
    /* appended: clocks (telemetry sm_mhz > 0; docs/statistics.md,
     * "Clocks").  has_cycles: the case has clock readings in accepted
     * processes, so the arm's contrast is also analysed in cycles
     * (ns x MHz x 1e-3 per sample, log median per round, against
     * contrast_arm, D(p), kg_effect_compute); has_cycle_effect and
     * eff_cycles: that effect (a round counts when every sample of both
     * arms has a clock; cycle_nrounds of them); clock_rounds and
     * clock_rounds_flagged: the case's rounds with clocks and those whose
     * arms' median clocks differ by more than KG_CLOCK_MISMATCH (the same
     * for every arm of the case; -1 without clocks); clock_demoted: a
     * FASTER in time that cycles did not confirm (now INCONCLUSIVE, the
     * reason in clock_reason) */
    int has_cycles;
    int has_cycle_effect;
    kg_effect eff_cycles;
    int cycle_nrounds;
    int clock_rounds, clock_rounds_flagged;
    int clock_demoted;
    char clock_reason[96];
    /* appended: the drift test's critical value in SE (KG_DRIFT_ALPHA);
     * 0 where the arm was not tested */
    double drift_crit;
    /* appended: the gate's test of this (case, arm) pair (gated: a
     * candidate on a gated case); gate_why: why it fails the gate, "" when
     * it passes (the campaign-wide conditions, order and control, are the
     * analysis' gate_reason) */
    int gated;
    char gate_why[KG_TEXT_MAX];
    /* appended: the arm's own level, for comparing campaigns (kgate
     * compare, docs/compare.md): per process L(p) = mean over its rounds
     * of y(p, r, arm), the log median of the arm's samples in the round;
     * level = kg_effect_compute over the L(p) with the processes'
     * directions (theta the stratified mean log time in ns, s the pooled
     * within-direction SD, se and df as for a contrast).  has_level is 0
     * without a process in each direction (and for an arm that is not ok) */
    int has_level;
    kg_effect level;
} kg_arm_result;

/* A round is clock-mismatched when max/min - 1 of its arms' median SM
 * clocks exceeds this. */
#define KG_CLOCK_MISMATCH 0.01

typedef struct kg_analysis {
    int nproc_accepted;
    int nproc_rejected;
    kg_arm_result *res;      /* one per (case, arm) in plan order: res[c * narms + a] */
    int ncases, narms;
    int control_valid;       /* every control arm's interval overlaps +-control_margin */
    int order_ok;            /* no candidate's contrast is order-sensitive */
    /* appended: per case, the largest |bound| of a control's interval on it
     * (0 with none): a gated claim below it is unsupported */
    double *control_reach;
    /* appended: the family's size and how alpha was shared (the plan's
     * gate.multiplicity); maxt_crit: the max-T critical value (NAN unless
     * maxt) */
    int family_size;
    double maxt_crit;
    /* appended: a sequential design (campaign.looks > 1): the looks, the
     * look that decided (0: none yet), why ("efficacy", "futility",
     * "final", "" when undecided), the boundaries, and the processes per
     * direction the decision used out of those planned */
    int seq_looks, seq_look;
    char seq_stop[16];
    double seq_bound[KG_PLAN_MAX_LOOKS];
    int seq_procs_used, seq_procs_planned;
    int gate_pass;
    char gate_reason[KG_TEXT_MAX]; /* first reason the gate failed, or "passed" */
    int invalid;             /* control failed or no usable process: exit 3 */
    /* appended: clocks; any_clocks: some case has clock readings */
    int any_clocks;
    /* appended: why the campaign is INVALID ("" when it is not, or only
     * for the reasons above): the host never became quiet */
    char invalid_why[KG_TEXT_MAX];
} kg_analysis;

/* The physics limit of one case (from the evidence's peaks.json and the
 * op's minimal bytes and flops; report.c builds it).  A peak of 0 means
 * not measured: that part of the limit does not apply. */
typedef struct kg_case_limit {
    double bytes;      /* the op's minimal bytes of one operation */
    double flops;      /* the op's flops of one operation */
    double bw;         /* peak bytes/s for a working set of `bytes` */
    double flop_rate;  /* peak flop/s for the case dtype under its default contract */
    /* appended: peak flop/s of the matrix unit, which an arm with a reduced
     * contract on an f32 case may use (TF32, or 16-bit inputs); 0: not
     * measured, and then no flops limit applies to such an arm */
    double flop_rate_mma;
} kg_case_limit;

/* Per (case, arm) admission state known before analysis (from the check
 * records); state[c * narms + a].  accepted[p] is 1 for processes whose
 * rows count.  Rows of rejected processes are ignored. */
typedef struct kg_analysis_in {
    const kg_plan *plan;
    const kg_row *rows; size_t nrows;
    const int *accepted; int nproc;
    const kg_arm_state *state;
    /* appended: per case, the physics limit; NULL: no limit applies */
    const kg_case_limit *limits;
    /* appended: per process, the schedule slot it filled (NULL: its
     * index), for the looks of a sequential design */
    const int *slot;
    /* appended: the telemetry rows, joined to rows by (process, case,
     * round, arm, sample); NULL/0: no clocks, and the analysis is that of
     * time alone */
    const kg_tel_rec *tel; size_t ntel;
    /* appended: not NULL when the host never let a slot run (the host
     * watch gave it up and no process of it was clean): why, and then no
     * verdict of the campaign stands (INVALID) */
    const char *host_invalid;
} kg_analysis_in;

int kg_analyse(const kg_analysis_in *in, kg_analysis *out, kg_err *err);
void kg_analysis_free(kg_analysis *a);

#endif
