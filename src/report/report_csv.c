/* report_csv.c: results.csv, one row per (case, arm) of the analysis,
 * and raw/samples.csv; their columns are declared once, in the tables
 * below (the header lines and schema.json come from them).  Formats
 * only. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "kgate/evidence.h"
#include "report/report.h"
#include "base/util.h"

static void csv_num(kg_sb *sb, double v)
{
    if (isfinite(v)) kg_sb_printf(sb, ",%.9g", v);
    else kg_sb_puts(sb, ",");
}

/* The vocabularies of results.csv and raw/samples.csv, by their owners' names. */
static const char *role_value(int i)
{
    return i >= 0 && i <= KG_ROLE_REFERENCE ? kg_role_name((kg_role)i) : NULL;
}

static const char *state_value(int i)
{
    return i >= 0 && i <= KG_ARM_WEAK ? kg_report_state_name((kg_arm_state)i) : NULL;
}

/* the verdicts, then the words of the rows that have none (kg_result_word) */
static const char *verdict_value(int i)
{
    if (i >= 0 && i <= KG_VERDICT_INVALID) return kg_verdict_name((kg_verdict)i);
    return i == KG_VERDICT_INVALID + 1 ? "BASELINE" : i == KG_VERDICT_INVALID + 2 ? "CONTROL"
         : i == KG_VERDICT_INVALID + 3 ? "SMOKE" : NULL;
}

static const char *dtype_value(int i)
{
    return i >= 0 && i < KG_DT_COUNT ? kg_dtype_name((kg_dtype)i) : NULL;
}

/* results.csv: one row per (case, arm) of the analysis, in plan order. */
static const kg_col results_cols[] = {
    { "case", KG_COL_CASE, 0, NULL, NULL, "the case" },
    { "arm", KG_COL_ARM, 0, NULL, NULL, "the arm" },
    { "role", KG_COL_ENUM, 0, NULL, role_value, "the arm's role" },
    { "state", KG_COL_ENUM, 0, NULL, state_value, "its admission on the case, from the checks" },
    { "verdict", KG_COL_ENUM, 0, NULL, verdict_value, "its verdict on the case (BASELINE and CONTROL for those roles, "
                                                       "SMOKE for a smoke run's candidate)" },
    { "contract", KG_COL_TEXT, 0, NULL, NULL, "its precision contract on the case (docs/plan-format.md)" },
    { "median_ns_fwd", KG_COL_REAL, 1, NULL, NULL, "median over forward processes of the process medians, ns" },
    { "median_ns_rev", KG_COL_REAL, 1, NULL, NULL, "the same over reverse processes, ns" },
    { "process_reduction_fwd", KG_COL_REAL, 1, NULL, NULL, "1 - median_ns_fwd / its baseline's, forward" },
    { "process_reduction_rev", KG_COL_REAL, 1, NULL, NULL, "the same, reverse" },
    { "round_reduction_fwd", KG_COL_REAL, 1, NULL, NULL, "median over forward rounds of 1 - exp(paired log contrast)" },
    { "round_reduction_rev", KG_COL_REAL, 1, NULL, NULL, "the same, reverse" },
    { "round_reduction_min", KG_COL_REAL, 1, NULL, NULL, "the smallest paired-round reduction" },
    { "round_reduction_max", KG_COL_REAL, 1, NULL, NULL, "the largest paired-round reduction" },
    { "wins_fwd", KG_COL_INT, 0, NULL, NULL, "forward rounds the arm won against its baseline" },
    { "rounds_fwd", KG_COL_INT, 0, NULL, NULL, "forward paired rounds" },
    { "wins_rev", KG_COL_INT, 0, NULL, NULL, "reverse rounds won" },
    { "rounds_rev", KG_COL_INT, 0, NULL, NULL, "reverse paired rounds" },
    { "reduction", KG_COL_REAL, 1, NULL, NULL, "the reduction 1 - exp(theta) (positive: faster)" },
    { "reduction_lower", KG_COL_REAL, 1, NULL, NULL, "its one-sided (1 - alpha) lower bound" },
    { "reduction_upper", KG_COL_REAL, 1, NULL, NULL, "its one-sided (1 - alpha) upper bound" },
    { "order_diff", KG_COL_REAL, 1, NULL, NULL, "forward minus reverse mean log ratio" },
    { "order_sensitive", KG_COL_FLAG, 1, NULL, NULL, "1: the order check flagged the contrast" },
    { "drift", KG_COL_REAL, 1, NULL, NULL, "median over processes of the arm's change from its first to last round" },
    { "fastest_ns", KG_COL_REAL, 1, NULL, NULL, "the smallest process median, ns" },
    { "peak_fraction", KG_COL_REAL, 1, NULL, NULL, "the fastest time's share of the device's measured peak" },
    { "physics", KG_COL_ENUM, 1, "ok,impossible", NULL, "impossible: faster than the measured peak (INVALID)" },
    { "p_value", KG_COL_REAL, 1, NULL, NULL, "one-sided p of reduction <= margin (the family's members)" },
    { "p_adjusted", KG_COL_REAL, 1, NULL, NULL, "p adjusted for the family (Holm or max-T)" },
    { "reduction_lower_adjusted", KG_COL_REAL, 1, NULL, NULL, "the lower bound at the family's level" },
    { "baseline", KG_COL_ARM, 1, NULL, NULL, "the baseline the arm is contrasted with" },
    { "reduction_lower_cycles", KG_COL_REAL, 1, NULL, NULL, "the lower bound of the reduction in cycles (clocks on "
                                                            "every sample)" },
    { "clock_mismatched_rounds", KG_COL_INT, 1, NULL, NULL, "the case's rounds whose arms' median SM clocks differ "
                                                           "by more than 1% (empty: no clocks)" },
};

/* raw/samples.csv: every timed sample of the accepted processes. */
static const kg_col samples_cols[] = {
    { "process", KG_COL_INT, 0, NULL, NULL, "the process index" },
    { "slot", KG_COL_INT, 0, NULL, NULL, "the schedule slot it filled" },
    { "direction", KG_COL_ENUM, 0, "fwd,rev", NULL, "the process's direction" },
    { "round", KG_COL_INT, 0, NULL, NULL, "the round" },
    { "case", KG_COL_CASE, 0, NULL, NULL, "the case" },
    { "op", KG_COL_NAME, 0, NULL, NULL, "the case's op" },
    { "dtype", KG_COL_ENUM, 0, NULL, dtype_value, "the case's dtype" },
    { "arm", KG_COL_ARM, 0, NULL, NULL, "the arm" },
    { "role", KG_COL_ENUM, 0, NULL, role_value, "the arm's role" },
    { "sample", KG_COL_INT, 0, NULL, NULL, "the timed sample within the round" },
    { "ns", KG_COL_REAL, 0, NULL, NULL, "the time of one operation, ns" },
};

#define NCOLS(t) ((int)(sizeof t / sizeof t[0]))
static const kg_rows_def tables[] = {
    { "results", "results.csv", "one row per (case, arm) the arm runs on, in plan order", results_cols,
      NCOLS(results_cols) },
    { "samples", "raw/samples.csv", "every timed sample of the accepted processes the analysis uses (contaminated "
      "samples are in raw/proc-NNN.csv only), in its order",
      samples_cols, NCOLS(samples_cols) },
};

const kg_rows_def *kg_report_tables(int *n)
{
    *n = NCOLS(tables);
    return tables;
}

static void results_csv(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an)
{
    const kg_plan *plan = ev->plan;
    kg_cols_header(sb, results_cols, NCOLS(results_cols));
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state == KG_ARM_ABSENT) continue;
            char ct[48];
            kg_contract_text(&plan->arms[a].contract, plan->cases[c].dtype, ct, sizeof ct);
            char qa[KG_CSV_NAME_CAP], qc[KG_CSV_NAME_CAP], qb[KG_CSV_NAME_CAP];
            kg_sb_printf(sb, "%s,%s,%s,%s,%s,%s", kg_csv_name(plan->cases[c].name, qc), kg_csv_name(plan->arms[a].name, qa),
                         kg_role_name(r->role),
                         kg_report_state_name(r->state), kg_result_word(r), ct);
            csv_num(sb, r->med_ns[0]); csv_num(sb, r->med_ns[1]);
            csv_num(sb, r->proc_red[0]); csv_num(sb, r->proc_red[1]);
            csv_num(sb, r->round_red[0]); csv_num(sb, r->round_red[1]);
            csv_num(sb, r->round_red_min); csv_num(sb, r->round_red_max);
            kg_sb_printf(sb, ",%d,%d,%d,%d", r->wins[0], r->nrounds[0], r->wins[1], r->nrounds[1]);
            if (r->has_effect) {
                csv_num(sb, r->eff.rho); csv_num(sb, r->eff.rho_lo); csv_num(sb, r->eff.rho_hi);
                csv_num(sb, r->eff.order_diff);
                kg_sb_printf(sb, ",%d", r->eff.order_flag);
            } else {
                kg_sb_puts(sb, ",,,,,");
            }
            csv_num(sb, r->drift);
            csv_num(sb, r->fastest_ns);
            csv_num(sb, r->peak_frac);
            kg_sb_printf(sb, ",%s", r->impossible ? "impossible" : isfinite(r->peak_frac) ? "ok" : "");
            csv_num(sb, r->p_value);
            csv_num(sb, r->p_adj);
            csv_num(sb, r->rho_lo_adj);
            kg_sb_printf(sb, ",%s", r->role != KG_ROLE_BASELINE && r->contrast_arm >= 0 ? kg_csv_name(plan->arms[r->contrast_arm].name, qb) : "");
            /* clocks: empty where the case has none */
            csv_num(sb, r->has_cycles && r->has_cycle_effect && r->eff_cycles.has_interval ? r->eff_cycles.rho_lo
                                                                                         : (double)NAN);
            if (r->clock_rounds >= 0) kg_sb_printf(sb, ",%d\n", r->clock_rounds_flagged);
            else kg_sb_puts(sb, ",\n");
        }
}

int kg_report_csv(kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    (void)err;
    results_csv(out, ev, an);
    return KG_OK;
}

/* raw/samples.csv: every timed sample of the accepted processes in one
 * tidy table (the per-process raw/proc-NNN.csv files, joined with the
 * processes' slots and the cases' ops and dtypes), so that one read loads
 * a campaign.  The rows are the analysis' input, in its order: a
 * contaminated sample (kg_row_contaminated) is not one. */
int kg_report_samples(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    (void)an;
    (void)err;
    const kg_plan *plan = ev->plan;
    kg_cols_header(sb, samples_cols, NCOLS(samples_cols));
    for (size_t i = 0; i < ev->nrows; i++) {
        const kg_row *r = &ev->rows[i];
        if (r->kase < 0 || r->kase >= plan->ncases || r->arm < 0 || r->arm >= plan->narms) continue;
        if (kg_row_contaminated(r)) continue;   /* recorded in raw/proc-NNN.csv, not analysed */
        const kg_case *kc = &plan->cases[r->kase];
        const kg_arm *ka = &plan->arms[r->arm];
        int slot = r->proc >= 0 && r->proc < ev->nproc ? ev->procs[r->proc].slot : r->proc;
        char qc[KG_CSV_NAME_CAP], qa[KG_CSV_NAME_CAP], qo[KG_CSV_NAME_CAP];
        kg_sb_printf(sb, "%d,%d,%s,%d,%s,%s,%s,%s,%s,%d,%.3f\n", r->proc, slot, r->dir == KG_DIR_FWD ? "fwd" : "rev",
                     r->round, kg_csv_name(kc->name, qc), kg_csv_name(kc->op, qo), kg_dtype_name(kc->dtype),
                     kg_csv_name(ka->name, qa), kg_role_name(ka->role), r->sample, r->ns);
    }
    return KG_OK;
}
