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
#include "kgate/evidence.h" /* kg_row, kg_tel_rec, kg_arm_state, the process and watch records */
#include "kgate/peaks.h"   /* KG_PHYSICS_MARGIN */
#include "kgate/plan.h"

/* ---- primitives ---------------------------------------------------- */

/* Median of n values (n >= 1); v is not modified.  Even n: mean of the
 * two middle values.  Returns NAN for n == 0. */
double kg_median(const double *v, size_t n);
/* Sorts v ascending in place, in the order qsort with the comparison
 * (a > b) - (a < b) gives under glibc (its merge sort, NaN included),
 * without a call per comparison (qsort itself when no buffer of n
 * doubles can be had). */
void kg_sort_doubles(double *v, size_t n);
double kg_mean(const double *v, size_t n);
/* Huber's M-estimate of the location of n values: k = 1.345 robust SDs
 * (the MAD x 1.4826 about the median), iteratively reweighted from the
 * median until it moves by less than 1e-12 of itself (at most 50 steps);
 * the mean when the MAD is 0 (more than half the values equal) and for
 * n <= 2; NAN for n == 0.  work: n doubles of scratch. */
double kg_huber(const double *v, size_t n, double *work);
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
    /* The physics limit (kg_case_limit).  fastest_ns: the smallest process
     * median; peak_frac: the larger of (minimal bytes / fastest) / peak
     * bandwidth and (flops / fastest) / peak flop rate, NAN where no limit
     * applies; impossible: peak_frac exceeds KG_PHYSICS_MARGIN
     * (kgate/peaks.h), the verdict is INVALID and physics says why
     * ("impossible: 3.2x the measured bandwidth"). */
    double fastest_ns;
    double peak_frac;
    int impossible;
    char physics[96];
    /* The contrast's drift: mean over processes of delta(last counted
     * round) - delta(first), its SE over the ndrift_proc processes (n >= 2),
     * the test's critical value in SE (KG_DRIFT_ALPHA; 0 where the arm was
     * not tested) and whether a control fails it. */
    double contrast_drift, contrast_drift_se;
    int ndrift_proc;
    int drift_fails;
    double drift_crit;
    /* The family: candidates with an interval on the gated cases.
     * p_value: one-sided p of H0 "reduction <= margin"; p_adj: Holm's
     * step-down adjusted p, or the max-T one; rho_lo_adj: the lower bound
     * at the family's level (Bonferroni alpha/m for Holm, the max-T
     * critical value for maxt).  A FASTER verdict needs p_adj < alpha.
     * NAN outside the family. */
    int in_family;
    double p_value, p_adj, rho_lo_adj;
    /* Clocks (telemetry sm_mhz > 0; docs/statistics.md, "Clocks").
     * has_cycles: every sample of the arm and of contrast_arm has a clock,
     * so the contrast is also analysed in cycles (ns x MHz x 1e-3 per
     * sample, log median per round, D(p), kg_effect_compute) and the
     * confirmation applies; has_cycle_effect and eff_cycles: that effect
     * over the cycle_nrounds rounds where both arms have clocks;
     * verdict_cycles: the cycle effect's own verdict (kg_verdict_of, where
     * has_cycle_effect); cycles_confirmed: the final verdict is FASTER and
     * so is verdict_cycles; clock_rounds and clock_rounds_flagged: the
     * case's rounds with clocks and those whose arms' median clocks differ
     * by more than KG_CLOCK_MISMATCH (the same for every arm of the case;
     * -1 without clocks); clock_demoted: a FASTER in time that cycles did
     * not confirm (now INCONCLUSIVE, the reason in clock_reason). */
    int has_cycles;
    int has_cycle_effect;
    kg_effect eff_cycles;
    kg_verdict verdict_cycles;
    int cycles_confirmed;
    int cycle_nrounds;
    int clock_rounds, clock_rounds_flagged;
    int clock_demoted;
    char clock_reason[96];
    /* The robust check (docs/statistics.md, item 7): the contrast again,
     * with D(p) Huber's M-estimate of the process's deltas (kg_huber) in
     * place of their mean.  has_robust: that effect has an interval, with
     * robust_lo/robust_hi its reduction bounds; robust_demoted: a FASTER or
     * SLOWER of the mean that the robust estimate does not give, now
     * INCONCLUSIVE (a few rounds carry the mean). */
    int has_robust;
    double robust_lo, robust_hi;
    int robust_demoted;
    /* the two effects lie more than KG_ROBUST_SHIFT SEs apart: the
     * interval gate then also needs robust_lo >= min_reduction */
    int robust_shifted;
    /* The gate's test of this pair (gated: a candidate on a gated case);
     * gate_why: why it fails the gate, "" when it passes (the
     * campaign-wide conditions, order and control, are the analysis'
     * gate_reason). */
    int gated;
    char gate_why[KG_TEXT_MAX];
    /* The arm's own level, for comparing campaigns (kgate compare,
     * docs/compare.md): per process L(p) = mean over its rounds of the log
     * median of the arm's samples in the round; level = kg_effect_compute
     * over the L(p) with the processes' directions (theta the stratified
     * mean log time in ns, s the pooled within-direction SD, se and df as
     * for a contrast).  has_level is 0 without a process in each direction
     * (and for an arm that is not ok). */
    int has_level;
    kg_effect level;
    /* samples of the arm in accepted processes that ran on another CPU
     * than their process's (kg_row_contaminated): recorded, left out of
     * every number above */
    int ncontaminated;
    /* What a control's row says instead of a verdict (kg_result_label):
     * "control: EQUIVALENT within +-m", "control: reaches 0.70%, past the
     * gate's 0.50%", ...; "" for every other role. */
    char label[96];
    /* 1: a candidate of a smoke run (plan key smoke, kg_plan_smoke) that
     * passed its checks: its word is SMOKE, not a verdict */
    int smoke;
} kg_arm_result;

/* The verdict of r as the reports print it: a baseline's "baseline" (or
 * its verdict when it has no timing or an impossible one), else the
 * verdict with " (order-sensitive)" where the effect is order-flagged. */
const char *kg_result_label(const kg_arm_result *r);

/* The verdict word of r in results.json, results.csv and --json: a
 * baseline's "BASELINE" and a control's "CONTROL" (their rows have no
 * verdict of their own: kg_result_label says what they are), a smoke
 * run's candidate's "SMOKE" (the run decides nothing), else
 * kg_verdict_name, as for an arm that failed its checks and for a folder
 * without timing (NO DATA: kgate check). */
const char *kg_result_word(const kg_arm_result *r);

/* A round is clock-mismatched when max/min - 1 of its arms' median SM
 * clocks exceeds this. */
#define KG_CLOCK_MISMATCH 0.01

/* A clock-mismatched round: its process, case and round, and the lowest
 * and highest of its arms' median SM clocks (MHz). */
typedef struct kg_clock_round {
    int proc, kase, round;
    double lo_mhz, hi_mhz;
} kg_clock_round;

typedef struct kg_analysis {
    const kg_plan *plan;     /* the plan analysed: its cases' and arms' names, its gate (borrowed
                              * from the input, or owned: kg_analysis_own_plan) */
    int nproc_accepted;
    int nproc_rejected;
    kg_arm_result *res;      /* one per (case, arm) in plan order: res[c * narms + a] */
    int ncases, narms;
    int control_valid;       /* every control arm's interval overlaps +-control_margin, none drifted */
    int order_ok;            /* no candidate's contrast is order-sensitive where it could change the gate */
    double *control_reach;   /* per case, the largest |bound| of a control's interval on it (0 with
                              * none): a gated claim below it is unsupported */
    int family_size;         /* the family's size (the plan's gate.multiplicity shares alpha) */
    double maxt_crit;        /* the max-T critical value (NAN unless maxt) */
    /* A sequential design (campaign.looks > 1): the looks, the look that
     * decided (0: none yet), why ("efficacy", "futility", "final", ""
     * when undecided), the boundaries, and the processes per direction
     * the decision used out of those planned. */
    int seq_looks, seq_look;
    char seq_stop[16];
    double seq_bound[KG_PLAN_MAX_LOOKS];
    int seq_procs_used, seq_procs_planned;
    int gate_pass;
    char gate_reason[KG_TEXT_MAX]; /* first reason the gate failed, or "passed" */
    int invalid;             /* a control failed, no usable process, or the host never became quiet: exit 3 */
    char invalid_why[KG_TEXT_MAX]; /* why it is INVALID: the control's or the host's reason; "" when it is
                                    * not, or when no process was accepted */
    int any_clocks;          /* some case has clock readings */
    int nclock_rounds;       /* the rounds (process, case, round) with clocks, over every case */
    kg_clock_round *mismatched; int nmismatched;  /* the clock-mismatched ones, in the telemetry's order */
    kg_plan *own_plan;       /* the plan freed with the analysis (NULL: plan is borrowed) */
    /* One CPU per process (cpu backend): pinned is 1 when an accepted
     * process's rows record the CPU it was pinned to; ncontaminated, the
     * accepted samples that ran on another CPU (contaminated samples:
     * left out) */
    int pinned;
    int ncontaminated;
} kg_analysis;

/* The physics limit of one case (from the evidence's peaks.json and the
 * op's minimal bytes and flops; report.c builds it).  A peak of 0 means
 * not measured: that part of the limit does not apply. */
typedef struct kg_case_limit {
    double bytes;         /* the op's minimal bytes of one operation */
    double flops;         /* the op's flops of one operation */
    double bw;            /* peak bytes/s for a working set of `bytes` */
    double flop_rate;     /* peak flop/s for the case dtype under its default contract */
    double flop_rate_mma; /* peak flop/s of the matrix unit, which an arm with a reduced contract on an
                           * f32 case may use (TF32, or 16-bit inputs); 0: not measured, and then no
                           * flops limit applies to such an arm */
} kg_case_limit;

/* What the analysis reads, all of it data from the evidence folder.
 * state[c * narms + a]: the admission state of each (case, arm) (from the
 * check records); accepted[p] is 1 for processes whose rows count (rows
 * of the others are ignored). */
typedef struct kg_analysis_in {
    const kg_plan *plan;
    const kg_row *rows; size_t nrows;
    const int *accepted; int nproc;
    const kg_arm_state *state;
    const kg_case_limit *limits;   /* per case, the physics limit; NULL: no limit applies */
    /* The processes' records (processes.csv), nproc of them: the schedule
     * slot each filled (the looks of a sequential design) and its status.
     * NULL: process p filled slot p, and the host watch excluded none. */
    const kg_proc_rec *procs;
    /* The telemetry rows, joined to rows by (process, case, round, arm,
     * sample); NULL/0: no clocks, the analysis is that of time alone. */
    const kg_tel_rec *tel; size_t ntel;
    /* The host watch's log (watch.csv).  A slot whose every process the
     * watch excluded (status contaminated), with a never-quiet row (the
     * watch gave the slot up), makes the campaign INVALID: no verdict of
     * it stands.  A resumed run that completes the slot lifts it. */
    const kg_watch_rec *watch; size_t nwatch;
} kg_analysis_in;

int kg_analyse(const kg_analysis_in *in, kg_analysis *out, kg_err *err);
/* The analysis takes ownership of plan (its plan must be plan): freed by
 * kg_analysis_free, so that the analysis outlives the evidence it came
 * from (the CLI's summary reads names from it). */
void kg_analysis_own_plan(kg_analysis *a, kg_plan *plan);
void kg_analysis_free(kg_analysis *a);

#endif
