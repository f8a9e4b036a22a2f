/* report_csv.c: results.csv, one row per (case, arm) of the analysis.
 * Formats only. */
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

static void results_csv(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an)
{
    const kg_plan *plan = ev->plan;
    kg_sb_puts(sb, "case,arm,role,state,verdict,contract,median_ns_fwd,median_ns_rev,process_reduction_fwd,"
                   "process_reduction_rev,round_reduction_fwd,round_reduction_rev,round_reduction_min,"
                   "round_reduction_max,wins_fwd,rounds_fwd,wins_rev,rounds_rev,reduction,reduction_lower,"
                   "reduction_upper,order_diff,order_sensitive,drift,fastest_ns,peak_fraction,physics,p_value,p_adjusted,"
                   "reduction_lower_adjusted,baseline,reduction_lower_cycles,clock_mismatched_rounds\n");
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state == KG_ARM_ABSENT) continue;
            char ct[48];
            kg_contract_text(&plan->arms[a].contract, plan->cases[c].dtype, ct, sizeof ct);
            char qa[KG_CSV_NAME_CAP], qc[KG_CSV_NAME_CAP], qb[KG_CSV_NAME_CAP];
            kg_sb_printf(sb, "%s,%s,%s,%s,%s,%s", kg_csv_name(plan->cases[c].name, qc), kg_csv_name(plan->arms[a].name, qa),
                         kg_role_name(r->role),
                         kg_report_state_name(r->state), kg_verdict_name(r->verdict), ct);
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
 * a campaign.  The rows are the analysis' input, in its order. */
int kg_report_samples(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    (void)an;
    (void)err;
    const kg_plan *plan = ev->plan;
    kg_sb_puts(sb, "process,slot,direction,round,case,op,dtype,arm,role,sample,ns\n");
    for (size_t i = 0; i < ev->nrows; i++) {
        const kg_row *r = &ev->rows[i];
        if (r->kase < 0 || r->kase >= plan->ncases || r->arm < 0 || r->arm >= plan->narms) continue;
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
