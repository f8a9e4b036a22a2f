/* report_json.c: results.json, the analysis for programs: one object
 * per (case, arm) with its state, medians, reductions, effect and
 * verdict, and the gate; then the variance components (varcomp.c).
 * Formats only. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "kgate/varcomp.h"
#include "report/report.h"
#include "base/util.h"

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The paired contrast (and, for the family's members, the adjusted p). */
static json_t *effect_json(const kg_arm_result *r)
{
    json_t *e = json_object();
    json_object_set_new(e, "theta_fwd", jnum(r->eff.theta_dir[0]));
    json_object_set_new(e, "theta_rev", jnum(r->eff.theta_dir[1]));
    json_object_set_new(e, "theta", jnum(r->eff.theta));
    json_object_set_new(e, "processes_fwd", json_integer(r->eff.n[0]));
    json_object_set_new(e, "processes_rev", json_integer(r->eff.n[1]));
    json_object_set_new(e, "s", jnum(r->eff.s));
    json_object_set_new(e, "se", jnum(r->eff.se));
    json_object_set_new(e, "df", jnum(r->eff.df));
    json_object_set_new(e, "reduction", jnum(r->eff.rho));
    json_object_set_new(e, "reduction_lower", jnum(r->eff.rho_lo));
    json_object_set_new(e, "reduction_upper", jnum(r->eff.rho_hi));
    json_object_set_new(e, "order_diff", jnum(r->eff.order_diff));
    json_object_set_new(e, "order_se", jnum(r->eff.order_se));
    json_object_set_new(e, "order_sensitive", json_boolean(r->eff.order_flag));
    json_object_set_new(e, "order_t", jnum(r->eff.order_tq));
    json_object_set_new(e, "reduction_lower_fwd", jnum(r->eff.rho_lo_dir[0]));
    json_object_set_new(e, "reduction_lower_rev", jnum(r->eff.rho_lo_dir[1]));
    if (r->has_robust) {
        /* the robust check (docs/statistics.md, item 7) */
        json_t *rb = json_object();
        json_object_set_new(rb, "reduction_lower", jnum(r->robust_lo));
        json_object_set_new(rb, "reduction_upper", jnum(r->robust_hi));
        json_object_set_new(rb, "demoted", json_boolean(r->robust_demoted));
        json_object_set_new(e, "robust", rb);
    }
    if (r->in_family) {
        json_object_set_new(e, "p_value", jnum(r->p_value));
        json_object_set_new(e, "p_adjusted", jnum(r->p_adj));
        json_object_set_new(e, "reduction_lower_adjusted", jnum(r->rho_lo_adj));
    }
    return e;
}

/* Clocks: the case's rounds and the contrast in cycles. */
static json_t *clocks_json(const kg_arm_result *r)
{
    json_t *ck = json_object();
    json_object_set_new(ck, "recorded", json_boolean(r->clock_rounds >= 0));
    if (r->clock_rounds < 0) return ck;
    json_object_set_new(ck, "rounds", json_integer(r->clock_rounds));
    json_object_set_new(ck, "mismatched_rounds", json_integer(r->clock_rounds_flagged));
    if (r->state != KG_ARM_OK || r->role == KG_ROLE_BASELINE || r->contrast_arm < 0) return ck;
    /* complete: every paired round counted in time has clocks, so the confirmation applies */
    json_object_set_new(ck, "complete", json_boolean(r->has_cycles));
    json_object_set_new(ck, "cycle_rounds", json_integer(r->cycle_nrounds));
    if (r->has_cycle_effect) {
        const kg_effect *c = &r->eff_cycles;
        json_t *e = json_object();
        json_object_set_new(e, "theta", jnum(c->theta));
        json_object_set_new(e, "processes_fwd", json_integer(c->n[0]));
        json_object_set_new(e, "processes_rev", json_integer(c->n[1]));
        json_object_set_new(e, "s", jnum(c->s));
        json_object_set_new(e, "se", jnum(c->se));
        json_object_set_new(e, "df", jnum(c->df));
        json_object_set_new(e, "reduction", jnum(c->rho));
        json_object_set_new(e, "reduction_lower", jnum(c->rho_lo));
        json_object_set_new(e, "reduction_upper", jnum(c->rho_hi));
        json_object_set_new(e, "order_sensitive", json_boolean(c->order_flag));
        json_object_set_new(ck, "cycles", e);
    }
    json_object_set_new(ck, "demoted", json_boolean(r->clock_demoted));
    json_object_set_new(ck, "reason", json_string(r->clock_reason));
    return ck;
}

/* One (case, arm) pair: state, medians, reductions, effect, verdict. */
static json_t *pair_json(const kg_plan *plan, const kg_arm_result *r)
{
    const kg_arm *arm = &plan->arms[r->arm];
    json_t *o = json_object();
    json_object_set_new(o, "case", json_string(plan->cases[r->kase].name));
    json_object_set_new(o, "arm", json_string(arm->name));
    json_object_set_new(o, "role", json_string(kg_role_name(r->role)));
    json_object_set_new(o, "state", json_string(kg_report_state_name(r->state)));
    json_object_set_new(o, "verdict", json_string(kg_result_word(r)));
    json_object_set_new(o, "label", json_string(kg_result_label(r)));
    char ct[48];
    kg_contract_text(&arm->contract, plan->cases[r->kase].dtype, ct, sizeof ct);
    json_object_set_new(o, "contract", json_string(ct));
    /* a precompiled arm: kgate cannot rebuild it as the numerical negative */
    if (kg_arm_is_image(arm)) json_object_set_new(o, "negative", json_string("not applicable (precompiled image)"));
    json_object_set_new(o, "fastest_ns", jnum(r->fastest_ns));
    json_object_set_new(o, "peak_fraction", jnum(r->peak_frac));
    json_object_set_new(o, "physics", json_string(r->impossible ? r->physics : isfinite(r->peak_frac) ? "ok" : ""));
    json_object_set_new(o, "median_ns_fwd", jnum(r->med_ns[0]));
    json_object_set_new(o, "median_ns_rev", jnum(r->med_ns[1]));
    json_object_set_new(o, "median_ns", jnum(r->med_ns_all));
    json_object_set_new(o, "process_reduction_fwd", jnum(r->proc_red[0]));
    json_object_set_new(o, "process_reduction_rev", jnum(r->proc_red[1]));
    json_object_set_new(o, "round_reduction_fwd", jnum(r->round_red[0]));
    json_object_set_new(o, "round_reduction_rev", jnum(r->round_red[1]));
    json_object_set_new(o, "round_reduction", jnum(r->round_red_all));
    json_object_set_new(o, "round_reduction_min", jnum(r->round_red_min));
    json_object_set_new(o, "round_reduction_max", jnum(r->round_red_max));
    json_object_set_new(o, "wins_fwd", json_integer(r->wins[0]));
    json_object_set_new(o, "rounds_fwd", json_integer(r->nrounds[0]));
    json_object_set_new(o, "wins_rev", json_integer(r->wins[1]));
    json_object_set_new(o, "rounds_rev", json_integer(r->nrounds[1]));
    json_object_set_new(o, "drift", jnum(r->drift));
    /* the gate's test of this pair: why it fails, null when it passes */
    json_object_set_new(o, "gated", json_boolean(r->gated));
    if (r->gated) json_object_set_new(o, "gate_fail", r->gate_why[0] ? json_string(r->gate_why) : json_null());
    if (r->role != KG_ROLE_BASELINE && r->contrast_arm >= 0)
        json_object_set_new(o, "baseline", json_string(plan->arms[r->contrast_arm].name));
    if (r->has_effect) json_object_set_new(o, "effect", effect_json(r));
    json_object_set_new(o, "clocks", clocks_json(r));
    return o;
}

static json_t *results_json(const kg_evidence *ev, const kg_analysis *an)
{
    const kg_plan *plan = ev->plan;
    json_t *j = json_object();
    json_object_set_new(j, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(j, "plan_sha256", json_string(plan->hash));
    json_object_set_new(j, "gate_pass", json_boolean(an->gate_pass));
    json_object_set_new(j, "gate_reason", json_string(an->gate_reason));
    json_object_set_new(j, "invalid", json_boolean(an->invalid));
    /* why the campaign is INVALID: the control's or the host's reason ("" otherwise) */
    json_object_set_new(j, "invalid_host", json_string(an->invalid_why));
    json_object_set_new(j, "control_valid", json_boolean(an->control_valid));
    json_object_set_new(j, "order_ok", json_boolean(an->order_ok));
    json_object_set_new(j, "processes_accepted", json_integer(an->nproc_accepted));
    json_object_set_new(j, "processes_excluded", json_integer(an->nproc_rejected));
    json_object_set_new(j, "clocks_recorded", json_boolean(an->any_clocks));
    json_t *arr = json_array();
    for (int i = 0; i < an->ncases * an->narms; i++)
        if (an->res[i].state != KG_ARM_ABSENT) json_array_append_new(arr, pair_json(plan, &an->res[i]));
    json_t *fam = json_object();
    json_object_set_new(fam, "size", json_integer(an->family_size));
    json_object_set_new(fam, "method", json_string(plan->gate.multiplicity == KG_MULT_MAXT ? "maxt"
                                                   : plan->gate.multiplicity == KG_MULT_NONE ? "none" : "holm"));
    if (plan->gate.multiplicity == KG_MULT_MAXT) json_object_set_new(fam, "maxt_critical", jnum(an->maxt_crit));
    json_object_set_new(j, "family", fam);
    json_object_set_new(j, "results", arr);
    json_object_set_new(j, "variance_components", kg_varcomp_json(ev));
    return j;
}

int kg_report_json(kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    json_t *res = results_json(ev, an);
    char *js = res != NULL ? json_dumps(res, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) : NULL;
    json_decref(res);
    if (js == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory writing results.json");
    kg_sb_printf(out, "%s\n", js);
    free(js);
    return KG_OK;
}
