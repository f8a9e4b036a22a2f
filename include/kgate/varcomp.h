/* kgate/varcomp.h: variance components of a campaign's timings, and the
 * size of a design that reaches a minimal detectable effect.
 *
 * Per case and arm, on the log of every timed sample y(p, r, s) of the
 * accepted processes (process p, round r, sample s), the nested random
 * model
 *     y(p, r, s) = mu_d + P_p + R_pr + e_prs
 * with the process's direction d as a fixed stratum, P ~ (0, var_process),
 * R ~ (0, var_round), e ~ (0, var_sample), is estimated by the
 * method of moments of the nested analysis of variance (Kalibera & Jones,
 * "Rigorous benchmarking in reasonable time", ISMM 2013, for the balanced
 * design; here its unbalanced generalisation, with the expected mean
 * squares of the two-stage nested classification in Searle, Casella &
 * McCulloch, "Variance Components", 1992, so that processes may have
 * different numbers of rounds and rounds different numbers of samples).  Negative estimates are set to 0 and flagged.
 *
 * Per contrasted arm (candidate, reference, control), on the paired round
 * contrast of the analysis (kgate/stats.h: delta(p, r) = log median of the
 * arm's samples in round r minus that of its reference, D(p) = mean of
 * delta over the rounds of p):
 *     var_delta   the within-process variance of delta (one-way ANOVA,
 *                 processes as groups);
 *     var_D       the pooled within-direction variance of D(p), the s^2
 *                 the analysis' interval is built on;
 *     var_process var_D - h var_delta, the between-process variance of the
 *                 contrast net of its rounds (h = 1/R when balanced).
 *
 * A design of P processes per direction, R rounds and S samples then has
 *     Var D = var_process + var_delta(S) / R,
 *     var_delta(S) = var_round_net + kappa(S) / S (var_sample(arm) + var_sample(ref)),
 *     SE^2 = Var D / (2 P),  df = 2 P - 2,
 * where kappa(S) / S is the variance of the median of S independent
 * standard normal values and var_round_net = var_delta - kappa(S0) / S0
 * (var_sample(arm) + var_sample(ref)) at the pilot's S0 (truncated at 0).
 * docs/statistics.md derives it.  Nothing here reads files or prints. */
#ifndef KGATE_VARCOMP_H
#define KGATE_VARCOMP_H

#include "kgate/err.h"
#include "kgate/plan.h"
#include "kgate/stats.h"

struct kg_sb;
struct json_t;
struct kg_evidence;

/* One arm's nested components on one case.  A component that cannot be
 * estimated (too few processes, rounds or samples) is NAN. */
typedef struct kg_vc_arm {
    int present;                 /* state OK and at least one sample */
    int nproc;                   /* accepted processes with samples */
    int ndir;                    /* directions (strata) with samples: 1 or 2 */
    long nrounds;                /* rounds with samples, over every process */
    long nsamples;
    double samples_per_round;    /* mean number of samples in a round */
    int df_sample, df_round, df_process;   /* N - B, B - nproc, nproc - ndir */
    double ms_sample, ms_round, ms_process;/* mean squares */
    double k1, k2, k3;           /* E[ms_round] = var_sample + k1 var_round;
                                  * E[ms_process] = var_sample + k2 var_round + k3 var_process */
    double raw_round, raw_process;         /* the estimates before truncation */
    double var_sample, var_round, var_process; /* truncated at 0 */
    int trunc_round, trunc_process;        /* 1: the estimate was negative, set to 0 */
} kg_vc_arm;

/* One contrasted arm's paired contrast on one case. */
typedef struct kg_vc_contrast {
    int present;                 /* a contrasted arm with paired rounds in both directions */
    int ref_arm;                 /* the reference: -1 the fastest baseline of each round,
                                  * else the baseline a control replicates */
    int sample_ref;              /* the baseline whose var_sample stands for the
                                  * reference's: `of`, or the baseline that was the
                                  * fastest in most rounds */
    int n[2];                    /* processes per direction */
    long nrounds;                /* paired rounds */
    int df_D, df_delta;          /* n_fwd + n_rev - 2, nrounds - processes */
    double var_D;                /* pooled within-direction variance of D(p) */
    double var_delta;            /* within-process variance of delta */
    double h;                    /* E[var_D] = var_process + h var_delta */
    double raw_process;          /* var_D - h var_delta */
    double var_process;          /* truncated at 0 */
    int trunc_process;
    double rounds_per_process;   /* mean paired rounds per process */
} kg_vc_contrast;

typedef struct kg_varcomp {
    int ncases, narms;
    kg_vc_arm *arm;              /* [c * narms + a] */
    kg_vc_contrast *con;         /* [c * narms + a]; present only for contrasted arms */
} kg_varcomp;

/* The components of every (case, arm) whose state is KG_ARM_OK, from the
 * rows of accepted processes (in->limits is not used).  Returns KG_OK,
 * KG_EINPUT for a row outside the plan, or KG_ENOMEM. */
int kg_varcomp_compute(const kg_analysis_in *in, kg_varcomp *out, kg_err *err);
void kg_varcomp_free(kg_varcomp *vc);

/* kappa(S) = S Var(median of S independent N(0, 1) values), the median
 * being the mean of the two middle values for even S: 1 for S = 1 and 2,
 * 1.346 for 3, tending to pi/2.  By quadrature over the order statistics'
 * densities; NAN for S < 1. */
double kg_median_kappa(int S);

/* ---- designs ---- */

/* The contrast's components as a design sees them. */
typedef struct kg_design_var {
    double var_process;          /* between processes, net of rounds */
    double var_round_net;        /* per round, net of the samples' part */
    double var_sample_sum;       /* var_sample(arm) + var_sample(reference) */
    int trunc_round;             /* 1: var_delta was below the samples' part; var_round_net set to 0 */
} kg_design_var;

/* From a contrast and the two arms' components (kappa at the pilot's
 * samples per round); KG_EINPUT when the pilot cannot give them. */
int kg_design_var_of(const kg_vc_contrast *c, const kg_vc_arm *arm, const kg_vc_arm *ref,
                     kg_design_var *out, kg_err *err);

/* Var D for R rounds of S samples: var_process + (var_round_net +
 * kappa / S var_sample_sum) / R, kappa = kg_median_kappa(S) (passed in:
 * it costs a quadrature). */
double kg_design_var_D(const kg_design_var *v, int R, int S, double kappa);

/* The one-sided FASTER test of a design: FASTER when the lower bound of
 * the reduction exceeds margin (kgate/stats.h).  Under the normal model,
 * with a true reduction mde, P processes per direction and Var D = var_D:
 *   SE = sqrt(var_D / (2 P)), df = 2 P - 2, tq = t(1 - alpha, df),
 *   lambda = (log(1 - margin) - log(1 - mde)) / SE,
 *   power = E[Phi(lambda - tq W)], W = sqrt(chi2(df) / df),
 * the exact power of the t test (a noncentral t), by quadrature over W. */
typedef struct kg_design_eval {
    int P;
    double var_D, se, df, tq, lambda, power;
} kg_design_eval;

double kg_design_power(double var_D, int P, double alpha, double margin, double mde, kg_design_eval *out);

/* The smallest P >= 2 whose power reaches `power`, at most pmax; -1 when
 * even pmax falls short (out then describes pmax). */
int kg_design_min_P(double var_D, double alpha, double margin, double mde, double power, int pmax,
                    kg_design_eval *out);

/* kgate size's defaults: the power a design must reach, and the most
 * processes per direction it considers. */
#define KG_DESIGN_POWER 0.95
#define KG_DESIGN_PMAX 100000

/* An A/A control under the gate's control rule (docs/statistics.md, "The
 * gate"): its interval must not reach past g, i.e. rho_lo >= -g and
 * rho_hi <= g.  With the truth 0, P processes per direction and Var D =
 * var_D, the probability that it does not is at least
 *   power(margin -g) + power(margin -g / (1 - g)) - 1
 * (each side a kg_design_power at mde 0: rho_lo >= -g is the FASTER test
 * at margin -g, and rho_hi <= g, mirrored, the one at the margin whose
 * log(1 - margin) is -log(1 - g)).  out describes the first side, with
 * that joint power. */
double kg_design_control_power(double var_D, int P, double alpha, double g, kg_design_eval *out);

/* The smallest P >= 2 at which the control's interval stays within +-g
 * with probability `power`, at most pmax; -1 when pmax falls short. */
int kg_design_control_P(double var_D, double alpha, double g, double power, int pmax, kg_design_eval *out);

/* ---- reports ---- */

/* "## Variance components" of report.md for an evidence folder (computed
 * here from ev's rows). */
void kg_varcomp_md(struct kg_sb *sb, const struct kg_evidence *ev);
/* The same as results.json's "variance_components" array. */
struct json_t *kg_varcomp_json(const struct kg_evidence *ev);

#endif
