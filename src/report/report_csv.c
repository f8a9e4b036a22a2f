/* report_csv.c: results.csv, one row per (case, arm) of the analysis,
 * and the samples table (kgate report DIR --samples FILE); their columns are declared once, in the tables
 * below (the header lines and schema.json come from them).  Formats
 * only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "report/report.h"
#include "base/util.h"

static void csv_num(kg_sb *sb, double v)
{
    if (isfinite(v)) kg_sb_printf(sb, ",%.9g", v);
    else kg_sb_puts(sb, ",");
}

/* The vocabularies of results.csv and the samples table, by their owners' names. */
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
    { "reduction_lower_robust", KG_COL_REAL, 1, NULL, NULL, "the lower bound with D(p) Huber's estimate of the "
                                                          "process's deltas (the robust check)" },
    { "robust_demoted", KG_COL_FLAG, 1, NULL, NULL, "1: a FASTER or SLOWER of the mean that the robust check "
                                                    "made INCONCLUSIVE" },
};

/* the samples table: every timed sample of the accepted processes. */
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
    /* not a file of the folder: made on demand (kgate report DIR --samples FILE) */
    { "samples", "", "every timed sample of the accepted processes the analysis uses (contaminated "
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
            if (r->clock_rounds >= 0) kg_sb_printf(sb, ",%d", r->clock_rounds_flagged);
            else kg_sb_puts(sb, ",");
            /* the robust check: empty without its interval */
            csv_num(sb, r->has_robust ? r->robust_lo : (double)NAN);
            if (r->has_robust) kg_sb_printf(sb, ",%d\n", r->robust_demoted);
            else kg_sb_puts(sb, ",\n");
        }
}

int kg_report_csv(kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    (void)err;
    results_csv(out, ev, an);
    return KG_OK;
}

/* The samples table (kgate report DIR --samples FILE): every timed sample
 * of the accepted processes in one tidy table (the per-process
 * raw/proc-NNN.csv files, joined with the processes' slots and the cases'
 * ops and dtypes), so that one read loads a campaign.  The rows are the
 * analysis' input, in its order: a contaminated sample
 * (kg_row_contaminated) is not one.  A million rows: the fields are put
 * together by hand (kg_fmt_int, kg_fmt_f3: printf's bytes), each case's
 * and arm's fields once. */
int kg_report_samples(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    (void)an;
    const kg_plan *plan = ev->plan;
    kg_cols_header(sb, samples_cols, NCOLS(samples_cols));
    char **ctext = calloc((size_t)plan->ncases + 1, sizeof *ctext);
    char **atext = calloc((size_t)plan->narms + 1, sizeof *atext);
    int rc = ctext == NULL || atext == NULL ? KG_ENOMEM : KG_OK;
    char q1[KG_CSV_NAME_CAP], q2[KG_CSV_NAME_CAP];
    for (int c = 0; c < plan->ncases && rc == KG_OK; c++) {
        const kg_case *kc = &plan->cases[c];
        kg_sb t = { 0 };
        kg_sb_printf(&t, ",%s,%s,%s,", kg_csv_name(kc->name, q1), kg_csv_name(kc->op, q2), kg_dtype_name(kc->dtype));
        if (t.oom) rc = KG_ENOMEM;
        ctext[c] = t.buf;
    }
    for (int a = 0; a < plan->narms && rc == KG_OK; a++) {
        kg_sb t = { 0 };
        kg_sb_printf(&t, "%s,%s,", kg_csv_name(plan->arms[a].name, q1), kg_role_name(plan->arms[a].role));
        if (t.oom) rc = KG_ENOMEM;
        atext[a] = t.buf;
    }
    char line[4 * KG_FMT_CAP];
    for (size_t i = 0; i < ev->nrows && rc == KG_OK; i++) {
        const kg_row *r = &ev->rows[i];
        if (r->kase < 0 || r->kase >= plan->ncases || r->arm < 0 || r->arm >= plan->narms) continue;
        if (kg_row_contaminated(r)) continue;   /* recorded in raw/proc-NNN.csv, not analysed */
        int slot = r->proc >= 0 && r->proc < ev->nproc ? ev->procs[r->proc].slot : r->proc;
        size_t k = kg_fmt_int(line, r->proc);
        line[k++] = ',';
        k += kg_fmt_int(line + k, slot);
        memcpy(line + k, r->dir == KG_DIR_FWD ? ",fwd," : ",rev,", 5);
        k += 5;
        k += kg_fmt_int(line + k, r->round);
        kg_sb_putn(sb, line, k);
        kg_sb_puts(sb, ctext[r->kase]);
        kg_sb_puts(sb, atext[r->arm]);
        k = kg_fmt_int(line, r->sample);
        line[k++] = ',';
        k += kg_fmt_f3(line + k, r->ns);
        line[k++] = '\n';
        kg_sb_putn(sb, line, k);
    }
    for (int c = 0; ctext != NULL && c < plan->ncases; c++) free(ctext[c]);
    for (int a = 0; atext != NULL && a < plan->narms; a++) free(atext[a]);
    free(ctext);
    free(atext);
    if (rc == KG_OK && sb->oom) rc = KG_ENOMEM;
    return rc == KG_OK ? KG_OK : kg_errorf(err, rc, "out of memory writing the samples table");
}
