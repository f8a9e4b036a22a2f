/* report_md.c: report.md, the report a person reads: the run header,
 * the gate, results, controls and drift, the order check, correctness,
 * processes, the hardware sections (report_hw.c), admission and the
 * variance components (varcomp.c).
 *
 * Formats what the evidence and the analysis hold; decides nothing and
 * reads no file.  Nothing in it depends on the clock, the machine or the
 * current directory, so a regenerated report is byte-identical. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "kgate/varcomp.h"
#include "report/report.h"
#include "report/screening.h"
#include "report/report_hw.h"
#include "base/util.h"

int kg_report_cpu_text(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an)
{
    if (!an->pinned) return 0;
    kg_sb_puts(sb, "one CPU per process, its worker's and every arm host's; by process:");
    int last = -1, shown = 0;
    for (size_t i = 0; i < ev->nrows; i++) {
        const kg_row *r = &ev->rows[i];
        if (r->proc == last || r->proc < 0 || r->proc >= ev->nproc || !ev->accepted[r->proc]) continue;
        last = r->proc;
        if (shown++ < 64) kg_sb_printf(sb, " %d:%d", r->proc, r->pin_cpu);
    }
    if (shown > 64) kg_sb_printf(sb, " (and %d more)", shown - 64);
    kg_sb_printf(sb, "; %d contaminated sample%s (ran on another CPU: left out of the analysis)", an->ncontaminated,
                 an->ncontaminated == 1 ? "" : "s");
    const kg_plan *plan = ev->plan;
    int first = 1;
    for (int c = 0; c < an->ncases; c++)
        for (int a = 0; a < an->narms; a++) {
            int n = an->res[c * an->narms + a].ncontaminated;
            if (n == 0) continue;
            kg_sb_printf(sb, "%s%s on %s %d", first ? ": " : ", ", plan->arms[a].name, plan->cases[c].name, n);
            first = 0;
        }
    return 1;
}

void kg_report_pct(kg_sb *sb, double frac)
{
    if (isfinite(frac)) kg_sb_printf(sb, "%+.2f%%", 100.0 * frac);
    else kg_sb_puts(sb, "–");
}

void kg_report_us(kg_sb *sb, double ns)
{
    if (isfinite(ns)) kg_sb_printf(sb, "%.3f", ns / 1000.0);
    else kg_sb_puts(sb, "–");
}

#define pct kg_report_pct
#define us kg_report_us

static const char *meta_str(json_t *meta, const char *key)
{
    json_t *v = json_object_get(meta, key);
    return json_is_string(v) ? json_string_value(v) : "unknown";
}

/* Fastest baseline median of case c in direction d (or all, d = 2). */
/* The baseline an arm is compared with: its contrast baseline (the
 * declared reference, the worst of every baseline, or a control's own),
 * else the fastest one (a baseline's own row). */
static double base_ns(const kg_plan *plan, const kg_analysis *an, int c, int a0, int d)
{
    const kg_arm_result *r0 = &an->res[c * an->narms + a0];
    if (r0->contrast_arm >= 0) {
        const kg_arm_result *rb = &an->res[c * an->narms + r0->contrast_arm];
        return d < 2 ? rb->med_ns[d] : rb->med_ns_all;
    }
    double best = NAN;
    for (int a = 0; a < plan->narms; a++) {
        const kg_arm_result *r = &an->res[c * an->narms + a];
        if (r->role != KG_ROLE_BASELINE || r->state != KG_ARM_OK) continue;
        double v = d < 2 ? r->med_ns[d] : r->med_ns_all;
        if (isfinite(v) && (!isfinite(best) || v < best)) best = v;
    }
    return best;
}

/* "## Clocks": the clock-mismatched rounds per case and each contrast in
 * time and in cycles (analysis.c decides; this prints). */
static void clocks_md(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    kg_sb_puts(sb, "\n## Clocks\n\n");
    if (!an->any_clocks) {
        kg_sb_puts(sb, "Clocks were not recorded (no telemetry with an SM clock): the verdicts are in time alone, "
                       "none is confirmed in cycles.\n");
        return;
    }
    kg_sb_printf(sb, "Per round, each arm's median SM clock over its samples (telemetry/proc-NNN.csv); a round is "
                     "clock-mismatched when its arms' median clocks differ by more than %.0f%%. Each contrast is "
                     "analysed again in cycles (ns x MHz x 1e-3 per sample, the same paired analysis against the "
                     "same baseline): a FASTER in time stays FASTER only if it is FASTER in cycles.\n\n",
                 100.0 * KG_CLOCK_MISMATCH);
    kg_sb_puts(sb, "| case | rounds with clocks | clock-mismatched rounds |\n|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++) {
        const kg_arm_result *r0 = &an->res[c * an->narms];
        if (an->narms == 0) continue;
        if (r0->clock_rounds >= 0)
            kg_sb_printf(sb, "| %s | %d | %d |\n", plan->cases[c].name, r0->clock_rounds, r0->clock_rounds_flagged);
        else
            kg_sb_printf(sb, "| %s | not recorded | – |\n", plan->cases[c].name);
    }
    kg_sb_puts(sb, "\n| case | arm | baseline | reduction in time [lower, upper] | reduction in cycles [lower, upper] | "
                   "rounds in cycles | in cycles |\n|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->clock_rounds < 0 || r->state != KG_ARM_OK || r->role == KG_ROLE_BASELINE || r->contrast_arm < 0)
                continue;
            kg_sb_printf(sb, "| %s | %s | %s | ", plan->cases[c].name, plan->arms[a].name,
                         r->contrast_arm >= 0 ? plan->arms[r->contrast_arm].name : "");
            const kg_effect *e[2] = { r->has_effect ? &r->eff : NULL, r->has_cycle_effect ? &r->eff_cycles : NULL };
            for (int k = 0; k < 2; k++) {
                if (e[k] == NULL) {
                    kg_sb_puts(sb, "– | ");
                    continue;
                }
                pct(sb, e[k]->rho);
                if (e[k]->has_interval) {
                    kg_sb_puts(sb, " ["); pct(sb, e[k]->rho_lo); kg_sb_puts(sb, ", "); pct(sb, e[k]->rho_hi);
                    kg_sb_puts(sb, "]");
                }
                kg_sb_puts(sb, " | ");
            }
            kg_sb_printf(sb, "%d | ", r->cycle_nrounds);
            if (r->clock_demoted) kg_sb_printf(sb, "%s |\n", r->clock_reason);
            else if (!r->has_cycles)
                kg_sb_printf(sb, "clocks on part of the samples only (%d of %d paired rounds): the verdict is in time |\n",
                             r->cycle_nrounds, r->nrounds[0] + r->nrounds[1]);
            else if (!r->has_cycle_effect) kg_sb_puts(sb, "no cycle effect |\n");
            else
                kg_sb_printf(sb, "%s%s |\n",
                             kg_verdict_label(r->verdict_cycles, r->eff_cycles.has_interval && r->eff_cycles.order_flag),
                             r->cycles_confirmed ? ": FASTER confirmed" : "");
        }
}

static void host_watch(kg_sb *sb, const kg_evidence *ev);

/* report.h */
int kg_report_first_variant(const kg_plan *plan, int is_arm, int i, size_t *b)
{
    const char *nm = is_arm ? plan->arms[i].name : plan->cases[i].name;
    const char *prev = i > 0 ? (is_arm ? plan->arms[i - 1].name : plan->cases[i - 1].name) : NULL;
    *b = kg_plan_name_base(nm);
    return *b > 0 && !(prev != NULL && kg_plan_name_base(prev) == *b && strncmp(prev, nm, *b) == 0);
}

/* The plan's axes, a line per case or arm with axes (its variants are
 * named BASE[AXIS=VALUE] and their rows stay together, in the order of
 * the expansion); nothing for a plan without axes. */
static void axes_md(kg_sb *sb, const kg_plan *plan)
{
    int any = 0;
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? plan->narms : plan->ncases;
        for (int i = 0; i < n; i++) {
            const char *nm = pass ? plan->arms[i].name : plan->cases[i].name;
            size_t b;
            if (!kg_report_first_variant(plan, pass, i, &b)) continue;
            char axes[KG_TEXT_MAX];
            int nv = kg_plan_axes_text(plan, pass, i, axes, sizeof axes);
            if (!any++)
                kg_sb_puts(sb, "Axes: a case or arm with axes is expanded into variants named BASE[AXIS=VALUE], "
                               "whose rows stay together in the order of the expansion (first axis slowest).\n\n");
            kg_sb_printf(sb, "- %s `%.*s`: %s (%d variant%s)\n", pass ? "arm" : "case", (int)b, nm, axes, nv,
                         nv == 1 ? "" : "s");
        }
    }
    if (any) kg_sb_puts(sb, "\n");
}

/* One cell of a sweep table: arm a on case c, its reduction with the
 * interval and its verdict; a baseline's median time; "–" where the arm
 * does not run on the case. */
static void sweep_cell(kg_sb *sb, const kg_analysis *an, int c, int a)
{
    const kg_arm_result *r = &an->res[c * an->narms + a];
    if (r->state == KG_ARM_ABSENT) {
        kg_sb_puts(sb, "–");
        return;
    }
    if (r->role == KG_ROLE_BASELINE) {
        us(sb, r->med_ns_all);
        kg_sb_puts(sb, " µs (baseline)");
        return;
    }
    if (r->has_effect) {
        pct(sb, r->eff.rho);
        if (r->eff.has_interval) {
            kg_sb_puts(sb, " [");
            pct(sb, r->eff.rho_lo);
            kg_sb_puts(sb, ", ");
            pct(sb, r->eff.rho_hi);
            kg_sb_puts(sb, "]");
        }
        kg_sb_puts(sb, " ");
    }
    kg_sb_puts(sb, kg_result_label(r));
}

/* report.h */
int kg_report_variants(const kg_plan *plan, int is_arm, int i, int *idx)
{
    int n = is_arm ? plan->narms : plan->ncases, nv = 0;
    const char *nm = is_arm ? plan->arms[i].name : plan->cases[i].name;
    size_t b = kg_plan_name_base(nm);
    for (int k = 0; k < n; k++) {
        const char *nk = is_arm ? plan->arms[k].name : plan->cases[k].name;
        if (kg_plan_name_base(nk) == b && strncmp(nk, nm, b) == 0) idx[nv++] = k;
    }
    return nv;
}

/* The header cells of a variant's axes, or its values. */
static void sweep_axes(kg_sb *sb, const char *name, int values)
{
    const char *ax, *val;
    size_t axl, vall;
    for (int j = 0; kg_plan_name_axis(name, j, &ax, &axl, &val, &vall); j++) {
        if (values) kg_sb_printf(sb, "| %.*s ", (int)vall, val);
        else kg_sb_printf(sb, "| %.*s ", (int)axl, ax);
    }
}

/* Column k of a sweep table (a case of an arm's variants idx[0..nv), or
 * an arm of a case's variants): 1 when some variant runs there. */
static int sweep_column(const kg_analysis *an, int is_arm, const int *idx, int nv, int k)
{
    for (int v = 0; v < nv; v++) {
        int c = is_arm ? k : idx[v], a = is_arm ? idx[v] : k;
        if (an->res[c * an->narms + a].state != KG_ARM_ABSENT) return 1;
    }
    return 0;
}

/* Sweeps: the rows of a plan's axes grouped by axis, one table per case
 * or arm with axes.  An arm's table has a row per variant (its axis
 * values) and a column per case it runs on; a case's table a row per
 * variant and a column per arm.  Each cell is the reduction against the
 * arm's baseline with its interval and the verdict, as in Results.  The
 * table describes; the best variant is chosen and confirmed in a campaign
 * of its own (kgate screen). */
static void sweeps_md(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    int any = 0;
    int *idx = malloc((size_t)(plan->narms > plan->ncases ? plan->narms : plan->ncases) * sizeof *idx);
    if (idx == NULL) return;
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? plan->narms : plan->ncases;
        for (int i = 0; i < n; i++) {
            const char *nm = pass ? plan->arms[i].name : plan->cases[i].name;
            size_t b;
            if (!kg_report_first_variant(plan, pass, i, &b)) continue;
            int nv = kg_report_variants(plan, pass, i, idx);
            if (nv < 2) continue;
            if (!any++)
                kg_sb_puts(sb, "\n## Sweeps\n\nThe rows of each case or arm with axes, grouped by axis: a row per "
                               "variant, with its reduction against its baseline [interval] and verdict, as in Results "
                               "(a baseline's cell is its median time). The table describes this campaign; picking "
                               "the best variant from it is a choice made after the fact, so `kgate screen` ranks the "
                               "variants and confirms the best in a campaign of its own (docs/plan-format.md, "
                               "\"Axes\").\n");
            kg_sb_printf(sb, "\n%s `%.*s`:\n\n", pass ? "Arm" : "Case", (int)b, nm);
            sweep_axes(sb, nm, 0);
            int ncol = 0, ncols = pass ? plan->ncases : plan->narms;
            for (int k = 0; k < ncols; k++) {
                if (!sweep_column(an, pass, idx, nv, k)) continue;
                kg_sb_printf(sb, "| %s ", pass ? plan->cases[k].name : plan->arms[k].name);
                ncol++;
            }
            kg_sb_puts(sb, "|\n");
            const char *ax, *val;
            size_t axl, vall;
            for (int j = 0; kg_plan_name_axis(nm, j, &ax, &axl, &val, &vall); j++) kg_sb_puts(sb, "|---");
            for (int k = 0; k < ncol; k++) kg_sb_puts(sb, "|---");
            kg_sb_puts(sb, "|\n");
            for (int v = 0; v < nv; v++) {
                sweep_axes(sb, pass ? plan->arms[idx[v]].name : plan->cases[idx[v]].name, 1);
                for (int k = 0; k < ncols; k++) {
                    if (!sweep_column(an, pass, idx, nv, k)) continue;
                    kg_sb_puts(sb, "| ");
                    if (pass) sweep_cell(sb, an, k, idx[v]);
                    else sweep_cell(sb, an, idx[v], k);
                    kg_sb_puts(sb, " ");
                }
                kg_sb_puts(sb, "|\n");
            }
        }
    }
    free(idx);
}

/* The cases by their variables (kg_report_case_vars). */
static void cases_md(kg_sb *sb, const kg_evidence *ev)
{
    const kg_plan *plan = ev->plan;
    kg_sb_puts(sb, "| case | op | dtype | variables |\n|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++) {
        const kg_case *k = &plan->cases[c];
        kg_sb_printf(sb, "| %s | %s | %s | ", k->name, k->op, kg_dtype_name(k->dtype));
        kg_report_case_vars(sb, ev, c);
        kg_sb_puts(sb, " |\n");
    }
    kg_sb_puts(sb, "\n");
}

/* A shard's cases, or a merged folder's shards (docs/scale-out.md). */
static void case_list(kg_sb *sb, json_t *cases)
{
    for (size_t i = 0; i < json_array_size(cases); i++)
        kg_sb_printf(sb, "%s%s", i ? ", " : "", json_string_value(json_array_get(cases, i)) ? json_string_value(json_array_get(cases, i)) : "?");
}

/* A by-process shard's processes: its slots, the schedule's process indices. */
static void slot_list(kg_sb *sb, json_t *slots)
{
    for (size_t i = 0; i < json_array_size(slots); i++)
        kg_sb_printf(sb, "%s%lld", i ? ", " : "", (long long)json_integer_value(json_array_get(slots, i)));
}

static void shard_lines(kg_sb *sb, json_t *meta)
{
    json_t *sh = json_object_get(meta, "shard"), *mg = json_object_get(meta, "merged");
    json_t *slots = json_object_get(sh, "slots");
    if (sh != NULL && slots != NULL) {
        kg_sb_printf(sb, "| shard | %lld of %lld (from 0) by process, device %lld; its processes (the schedule's "
                     "slots, each with every case and arm): ",
                     (long long)json_integer_value(json_object_get(sh, "index")),
                     (long long)json_integer_value(json_object_get(sh, "count")),
                     (long long)json_integer_value(json_object_get(meta, "device_index")));
        slot_list(sb, slots);
        kg_sb_puts(sb, "; the others run in their own shards (kgate merge) |\n");
    } else if (sh != NULL) {
        kg_sb_printf(sb, "| shard | %lld of %lld (from 0), device %lld; its cases: ",
                     (long long)json_integer_value(json_object_get(sh, "index")),
                     (long long)json_integer_value(json_object_get(sh, "count")),
                     (long long)json_integer_value(json_object_get(meta, "device_index")));
        case_list(sb, json_object_get(sh, "cases"));
        kg_sb_puts(sb, "; the others are absent here and run in their own shards (kgate merge) |\n");
    }
    json_t *cp = json_object_get(meta, "campaign");
    if (sh != NULL && cp != NULL)
        kg_sb_printf(sb, "| campaign | %s, attempt %lld of this shard (ledger %s) |\n", meta_str(cp, "id"),
                     (long long)json_integer_value(json_object_get(cp, "attempt")), meta_str(cp, "ledger"));
    if (mg != NULL && cp != NULL)
        kg_sb_printf(sb, "| campaign | %s; the verdict takes %s; ledger: %s |\n", meta_str(cp, "id"),
                     meta_str(cp, "verdict_from"),
                     json_is_string(json_object_get(cp, "ledger")) ? "checked, kept as ledger"
                                                                   : "the shards' own records (no ledger file)");
    json_t *list = json_object_get(mg, "list");
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *x = json_array_get(list, i);
        kg_sb_printf(sb, "| shard %zu | shards/%zu: ", i, i);
        if (json_object_get(x, "slots") != NULL) {
            kg_sb_puts(sb, "processes ");
            slot_list(sb, json_object_get(x, "slots"));
        } else {
            case_list(sb, json_object_get(x, "cases"));
        }
        kg_sb_printf(sb, " on %s (device %lld, host %s) |\n", meta_str(x, "device"),
                     (long long)json_integer_value(json_object_get(x, "device_index")), meta_str(x, "host"));
    }
    json_t *att = json_object_get(mg, "attempts");
    for (size_t i = 0; i < json_array_size(att); i++) {
        json_t *x = json_array_get(att, i);
        kg_sb_printf(sb, "| shard %lld attempt %lld | %s, %s: started %s on %s; its own verdicts: %s |\n",
                     (long long)json_integer_value(json_object_get(x, "index")),
                     (long long)json_integer_value(json_object_get(x, "attempt")), meta_str(x, "folder"),
                     json_is_true(json_object_get(x, "used")) ? "in the verdict" : "not in the verdict (a later attempt)",
                     meta_str(x, "started_utc"), meta_str(x, "host"), meta_str(x, "verdicts"));
    }
}

/* The run: plan, kgate, backend, host, shards, processes, protocol, decision, notes. */
static void header_md(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an, json_t *meta)
{
    const kg_plan *plan = ev->plan;
    const kg_campaign *cp = &plan->campaign;
    kg_sb_printf(sb, "# kgate report: %s\n\n", cp->name);
    kg_sb_puts(sb, "| | |\n|---|---|\n");
    kg_sb_printf(sb, "| plan | `%s`, sha256 `%s` |\n", meta_str(meta, "plan_path"), plan->hash);
    kg_sb_printf(sb, "| kgate | %s (git %s) |\n", meta_str(meta, "kgate_version"), meta_str(meta, "kgate_git_sha"));
    kg_sb_printf(sb, "| backend | %s: %s |\n", meta_str(meta, "backend"), meta_str(meta, "device"));
    kg_sb_printf(sb, "| host | %s (%s) |\n", meta_str(meta, "host"), meta_str(meta, "os"));
    kg_sb_printf(sb, "| started | %s |\n", meta_str(meta, "started_utc"));
    shard_lines(sb, meta);
    kg_sb_printf(sb, "| processes | %d per direction planned; %d accepted, %d excluded |\n", cp->processes,
                 an->nproc_accepted, an->nproc_rejected);
    if (an->pinned) {
        kg_sb_puts(sb, "| CPU placement | ");
        kg_report_cpu_text(sb, ev, an);
        kg_sb_puts(sb, " |\n");
    }
    kg_sb_printf(sb, "| protocol | %d rounds x %d samples (%d warmup) per arm, pack %d, interleave %s, l2 %s, inputs %s, "
                     "rotate %d input set%s |\n",
                 cp->rounds, cp->samples, cp->warmup, cp->pack,
                 cp->interleave == KG_INTERLEAVE_SAMPLE ? "sample" : "block", cp->l2 == KG_L2_COLD ? "cold" : "warm",
                 cp->inputs == KG_INPUTS_FRESH ? "fresh" : "resident", cp->rotate, cp->rotate == 1 ? "" : "s");
    kg_sb_printf(sb, "| decision | alpha %.3g one-sided; margin %.2f%%; equivalence +-%.2f%%; control +-%.2f%% |\n",
                 cp->alpha, 100 * cp->margin, 100 * cp->equivalence, 100 * cp->control_margin);
    if (cp->selected_from[0] != '\0') kg_sb_printf(sb, "| selection | %s |\n", cp->selected_from);
    if (ev->compile_cache != NULL)
        kg_sb_printf(sb, "| compile cache | %s: from the compile cache, not compiled in this campaign "
                         "(environment.json, compile_cache) |\n", ev->compile_cache);
    for (int i = 0; i < plan->nnotes; i++) kg_sb_printf(sb, "| note | %s |\n", plan->notes[i]);
    kg_sb_puts(sb, "\n");
}

/* "## Gate": the rule, the result (and why the campaign is INVALID), precompiled arms, the looks. */
static void gate_md(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    const kg_campaign *cp = &plan->campaign;
    kg_sb_printf(sb, "## Gate: %s\n\n", an->gate_pass ? "PASS" : "FAIL");
    if (plan->gate.rule == KG_GATE_INTERVAL)
        kg_sb_printf(sb, "Rule (declared before the first sample): lower %.0f%% bound of the reduction >= %.2f%% on every %s case",
                     100 * (1 - cp->alpha), 100 * plan->gate.min_reduction, plan->gate.all_cases ? "" : "primary");
    else
        kg_sb_printf(sb, "Rule (declared before the first sample): process and paired-round reduction >= %.2f%% in both directions and every round won, on every %s case",
                     100 * plan->gate.min_reduction, plan->gate.all_cases ? "" : "primary");
    kg_sb_printf(sb, "%s%s%s.\n\n", plan->gate.require_order ? ", order check passes" : "",
                 plan->gate.require_control ? ", control valid" : "",
                 plan->gate.require_negative ? ", every gated candidate a source arm (its numerical negative can be "
                                               "built: require_negative = yes)" : "");
    if (!an->invalid)
        kg_sb_printf(sb, "Result: %s.\n\n", an->gate_reason);
    else if (an->invalid_why[0] != '\0')
        kg_sb_printf(sb, "Result: %s. The campaign is INVALID (%s).\n\n", an->gate_reason, an->invalid_why);
    else
        kg_sb_printf(sb, "Result: %s. The campaign is INVALID (no usable process).\n\n", an->gate_reason);

    /* precompiled arms: the numerical negative cannot be rebuilt from an image */
    for (int a = 0; a < plan->narms; a++)
        if (kg_arm_is_image(&plan->arms[a]))
            kg_sb_printf(sb, "Arm `%s` (%s): negative: not applicable (precompiled image `%s`).\n\n", plan->arms[a].name,
                         kg_role_name(plan->arms[a].role), plan->arms[a].image);

    if (an->seq_looks > 1) {
        kg_sb_printf(sb, "Sequential design: %d looks after %d, ..., %d processes per direction; one-sided O'Brien-Fleming "
                         "boundaries on the z scale of each gated candidate's p (reduction <= %.2f%%):",
                     an->seq_looks, cp->processes / an->seq_looks, cp->processes, 100 * plan->gate.min_reduction);
        for (int k = 0; k < an->seq_looks; k++) kg_sb_printf(sb, " %.3f", an->seq_bound[k]);
        if (an->seq_look > 0)
            kg_sb_printf(sb, ". Decided at look %d (%s) with %d of %d processes per direction%s.\n\n", an->seq_look,
                         an->seq_stop, an->seq_procs_used, an->seq_procs_planned,
                         an->seq_procs_used < an->seq_procs_planned ? ": the remaining processes were not run" : "");
        else
            kg_sb_puts(sb, ". No look decided.\n\n");
    }
}

/* "## Results": the cases, the axes, one row per (case, arm). */
static void results_md(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an)
{
    const kg_plan *plan = ev->plan;
    kg_sb_puts(sb, "## Results\n\n");
    kg_sb_puts(sb, "Times are medians over processes of per-process medians, in µs. Reductions are 1 - arm/baseline "
                   "(positive = faster) against the arm's baseline (the plan's reference, or with several "
                   "baselines the one it gains least on: FASTER than every baseline; a control against its "
                   "own); the interval is the one-sided "
                   "(1 - alpha) bound on each side, from process means with directions as strata.\n\n");
    cases_md(sb, ev);
    axes_md(sb, plan);
    kg_sb_puts(sb, "| case | arm | role | fwd µs base → arm | rev µs base → arm | process red. fwd / rev | "
                   "paired-round red. [range] | round wins fwd / rev | reduction [lower, upper] | verdict |\n");
    kg_sb_puts(sb, "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++) {
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state == KG_ARM_ABSENT) continue;
            kg_sb_printf(sb, "| %s%s | %s | %s | ", plan->cases[c].name, plan->cases[c].primary ? "" : " (secondary)",
                         plan->arms[a].name, kg_role_name(r->role));
            for (int d = 0; d < 2; d++) {
                us(sb, base_ns(plan, an, c, a, d));
                kg_sb_puts(sb, " → ");
                us(sb, r->med_ns[d]);
                kg_sb_puts(sb, " | ");
            }
            /* the contract next to the verdict, where it is not the case dtype's */
            char ct[64] = "", cts[48];
            if (!kg_contract_is_default(&plan->arms[a].contract)) {
                kg_contract_text(&plan->arms[a].contract, plan->cases[c].dtype, cts, sizeof cts);
                snprintf(ct, sizeof ct, " (contract %s)", cts);
            }
            if (r->role == KG_ROLE_BASELINE) {
                kg_sb_printf(sb, "| | | | %s%s%s%s%s |\n", kg_result_label(r),
                             r->impossible ? " (" : "", r->impossible ? r->physics : "", r->impossible ? ")" : "", ct);
                continue;
            }
            pct(sb, r->proc_red[0]); kg_sb_puts(sb, " / "); pct(sb, r->proc_red[1]); kg_sb_puts(sb, " | ");
            pct(sb, r->round_red_all); kg_sb_puts(sb, " ["); pct(sb, r->round_red_min); kg_sb_puts(sb, ", ");
            pct(sb, r->round_red_max); kg_sb_puts(sb, "] | ");
            kg_sb_printf(sb, "%d/%d / %d/%d | ", r->wins[0], r->nrounds[0], r->wins[1], r->nrounds[1]);
            if (r->has_effect) {
                pct(sb, r->eff.rho);
                if (r->eff.has_interval) {
                    kg_sb_puts(sb, " ["); pct(sb, r->eff.rho_lo); kg_sb_puts(sb, ", "); pct(sb, r->eff.rho_hi);
                    kg_sb_puts(sb, "]");
                } else {
                    kg_sb_puts(sb, " (no interval: fewer than 2 processes in a direction)");
                }
            }
            kg_sb_printf(sb, " | %s%s%s%s%s |\n", kg_result_label(r),
                         r->impossible ? " (" : "", r->impossible ? r->physics : "", r->impossible ? ")" : "", ct);
        }
    }
}

/* "## Family": the candidates of the gated cases and their adjusted p. */
static void family_md(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    const kg_campaign *cp = &plan->campaign;
    if (an->family_size <= 0) return;
    const char *how = plan->gate.multiplicity == KG_MULT_MAXT ? "max-T over the candidates' joint t statistics (Dunnett)"
                      : plan->gate.multiplicity == KG_MULT_NONE ? "none (each verdict at alpha)"
                                                                : "Holm's step-down";
    kg_sb_printf(sb, "\n## Family\n\n%d candidate%s on the gated cases: alpha %.3g shared by %s. A FASTER verdict "
                     "needs its adjusted p below alpha; the adjusted bound is at the family's level",
                 an->family_size, an->family_size == 1 ? "" : "s", cp->alpha, how);
    if (plan->gate.multiplicity == KG_MULT_MAXT && isfinite(an->maxt_crit))
        kg_sb_printf(sb, " (critical t %.3f, %d draws seeded by the plan)", an->maxt_crit, KG_MAXT_DRAWS);
    kg_sb_puts(sb, ".\n\n| case | arm | baseline | p (reduction > margin) | adjusted p | adjusted lower bound |\n"
                   "|---|---|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (!r->in_family) continue;
            kg_sb_printf(sb, "| %s | %s | %s | %.4g | %.4g | ", plan->cases[c].name, plan->arms[a].name,
                         r->contrast_arm >= 0 ? plan->arms[r->contrast_arm].name : "", r->p_value, r->p_adj);
            pct(sb, r->rho_lo_adj);
            kg_sb_puts(sb, " |\n");
        }
}

/* "## Controls (A/A) and drift": every arm's drift, each control's contrast and status. */
static void controls_md(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    kg_sb_puts(sb, "\n## Controls (A/A) and drift\n\n");
    kg_sb_puts(sb, "| case | arm | role | drift first → last round | contrast [lower, upper] | status |\n|---|---|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++) {
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state != KG_ARM_OK) continue;
            kg_sb_printf(sb, "| %s | %s | %s | ", plan->cases[c].name, plan->arms[a].name, kg_role_name(r->role));
            pct(sb, r->drift);
            kg_sb_puts(sb, " | ");
            if (r->role == KG_ROLE_CONTROL && r->has_effect && r->eff.has_interval) {
                pct(sb, r->eff.rho); kg_sb_puts(sb, " ["); pct(sb, r->eff.rho_lo); kg_sb_puts(sb, ", ");
                pct(sb, r->eff.rho_hi); kg_sb_puts(sb, "]");
                char dr[160] = "";
                if (r->ndrift_proc >= 2)
                    snprintf(dr, sizeof dr, "; contrast drift %+.3f%% (SE %.3f%%, limit max(%.2f SE, 0.25%%))%s",
                             100.0 * r->contrast_drift, 100.0 * r->contrast_drift_se, r->drift_crit,
                             r->drift_fails ? ": DRIFTED" : "");
                kg_sb_printf(sb, " | %s%s |\n", r->control == KG_CONTROL_INVALID
                                                    ? "INVALID: control differs from its baseline"
                                                : r->drift_fails ? "INVALID"
                                                : r->control == KG_CONTROL_WIDE
                                                    ? "valid, wider than the control margin: the gate refuses claims below its reach"
                                                    : "valid", dr);
            } else {
                kg_sb_puts(sb, " | |\n");
            }
        }
    }
}

/* "## Robust check": the arms whose FASTER or SLOWER of the mean the
 * robust check made INCONCLUSIVE; nothing when there is none. */
static void robust_md(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    int any = 0;
    for (int i = 0; i < an->ncases * an->narms; i++) any |= an->res[i].robust_demoted;
    if (!any) return;
    kg_sb_puts(sb, "\n## Robust check\n\n");
    kg_sb_puts(sb, "Each contrast is analysed again with each process's Huber estimate of its paired rounds in place "
                   "of their mean. A FASTER or SLOWER of the mean is INCONCLUSIVE where the robust estimate does not "
                   "give it and lies more than one standard error away: a few rounds (a host that descheduled one "
                   "arm's rounds, for instance) carry the claim (docs/statistics.md, item 7).\n\n");
    kg_sb_puts(sb, "| case | arm | reduction (mean) | interval (mean) | interval (robust) | verdict |\n"
                   "|---|---|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (!r->robust_demoted) continue;
            kg_sb_printf(sb, "| %s | %s | %+.2f%% | [%+.2f%%, %+.2f%%] | [%+.2f%%, %+.2f%%] | INCONCLUSIVE |\n",
                         plan->cases[c].name, plan->arms[a].name, 100 * r->eff.rho, 100 * r->eff.rho_lo,
                         100 * r->eff.rho_hi, 100 * r->robust_lo, 100 * r->robust_hi);
        }
}

/* "## Order check": each contrast forward against reverse. */
static void order_md(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    kg_sb_puts(sb, "\n## Order check (forward vs reverse)\n\n");
    kg_sb_puts(sb, "The difference is tested two-sided at alpha with the analysis' degrees of freedom: "
                   "it is flagged above t(1 - alpha/2, df) SE and above order_min. A flagged FASTER or SLOWER "
                   "needs each direction's own bound to support it.\n\n");
    kg_sb_puts(sb, "| case | arm | log ratio fwd | log ratio rev | difference | t SE | order-sensitive |\n"
                   "|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++) {
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (!r->has_effect) continue;
            kg_sb_printf(sb, "| %s | %s | %+.5f | %+.5f | %+.5f | ", plan->cases[c].name, plan->arms[a].name,
                         r->eff.theta_dir[0], r->eff.theta_dir[1], r->eff.order_diff);
            if (r->eff.has_interval) kg_sb_printf(sb, "%.5f (t %.2f)", r->eff.order_tq * r->eff.order_se, r->eff.order_tq);
            else kg_sb_puts(sb, "–");
            kg_sb_printf(sb, " | %s |\n", r->eff.order_flag ? "YES" : "no");
        }
    }
}

/* "## Correctness", "## Processes" and the folder's size. */
static void correctness_md(kg_sb *sb, const kg_evidence *ev)
{
    const kg_plan *plan = ev->plan;
    kg_sb_puts(sb, "\n## Correctness\n\n");
    kg_sb_printf(sb, "%d checks in accepted processes, %d failed (checks/proc-NNN.csv).\n\n", ev->nchecks, ev->nchecks_failed);
    kg_sb_puts(sb, "| case | arm | admission |\n|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            kg_arm_state s = ev->state[c * plan->narms + a];
            if (s != KG_ARM_ABSENT)
                kg_sb_printf(sb, "| %s | %s | %s |\n", plan->cases[c].name, plan->arms[a].name, kg_report_state_name(s));
        }
    kg_sb_puts(sb, "\n## Processes\n\n| process | direction | status | reason |\n|---|---|---|---|\n");
    for (int p = 0; p < ev->nproc; p++)
        kg_sb_printf(sb, "| %d | %s | %s | %s |\n", p, ev->procs[p].dir == 0 ? "fwd" : "rev", ev->procs[p].status,
                     ev->procs[p].reason);
    static const char *const keep[] = { "replay", "failing", "all" };
    int km = ev->plan->campaign.keep_outputs;
    kg_sb_printf(sb, "\nEvidence folder: %d files, %.2f MB before the reports and the signature. Saved outputs "
                 "(keep_outputs = %s): %lld kept, %lld of them sharing an identical output's bytes; %.2f MB of "
                 "outputs stored in %.2f MB (outputs/, docs/evidence.md).\n", ev->folder_files,
                 (double)ev->folder_bytes / 1e6, km >= 0 && km <= 2 ? keep[km] : "?", ev->out_rows, ev->out_shared,
                 (double)ev->out_logical / 1e6, (double)ev->out_stored / 1e6);
}

/* report.md up to the hardware sections, section by section. */
static void write_md(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an, json_t *meta)
{
    const kg_plan *plan = ev->plan;
    header_md(sb, ev, an, meta);
    gate_md(sb, plan, an);
    results_md(sb, ev, an);
    sweeps_md(sb, plan, an);
    family_md(sb, plan, an);
    controls_md(sb, plan, an);
    order_md(sb, plan, an);
    robust_md(sb, plan, an);
    clocks_md(sb, plan, an);
    correctness_md(sb, ev);
    host_watch(sb, ev);
}

/* "## Host watch": the watch's settings, where the campaign's wall time
 * went (the duty cycle: time inside timed phases over wall time), and
 * every row of watch.csv, with its time.  Folders without watch.csv (an
 * older kgate) get a line saying so. */
static void host_watch(kg_sb *sb, const kg_evidence *ev)
{
    kg_sb_puts(sb, "\n## Host watch\n\n");
    if (ev->nwatch == 0) {
        kg_sb_puts(sb, "No watch.csv: the folder predates the host watch's log.\n");
        return;
    }
    double wall = 0, build = 0, wait = 0, setup = 0, checks = 0, timed = 0, start = 0;
    int runs = 0, ended = 0, known = 1;
    /* a worker started beside the one before it: that time of its own,
     * by state, is counted once, as the earlier worker's */
    double ov_start = 0, ov_setup = 0, ov_checks = 0, ov_wait = 0, ov_all = 0;
    int noverlap = 0;
    for (size_t i = 0; i < ev->nwatch; i++) {
        const kg_watch_rec *w = &ev->watch[i];
        if (strcmp(w->event, "session") == 0) runs++;
        else if (strcmp(w->event, "end") == 0) { wall += w->seconds; ended++; }
        else if (strcmp(w->event, "build") == 0) build += w->seconds;
        else if (strcmp(w->event, "overlap") == 0) {
            const char *at = strstr(w->detail, ": start ");
            double a, b, c, d;
            if (at == NULL || sscanf(at, ": start %lf s, set-up %lf s, checks %lf s, ready and waiting %lf s", &a, &b,
                                     &c, &d) != 4 || !(a >= 0 && b >= 0 && c >= 0 && d >= 0)) {
                known = 0;
                continue;
            }
            ov_start += a;
            ov_setup += b;
            ov_checks += c;
            ov_wait += d;
            ov_all += w->seconds;
            noverlap++;
        }
    }
    for (int p = 0; p < ev->nproc; p++) {
        const kg_proc_rec *r = &ev->procs[p];
        if (r->wait_s < 0 || r->timed_s < 0) { known = 0; continue; }
        wait += r->wait_s;
        setup += r->setup_s;
        checks += r->checks_s;
        timed += r->timed_s;
        /* a worker waits for the quiet host inside its own time, ready to time */
        double rest = r->seconds - r->wait_s - r->setup_s - r->checks_s - r->timed_s;
        if (rest > 0) start += rest;
    }
    /* the overlapped time leaves the later worker's states */
    wait -= ov_wait;
    setup -= ov_setup;
    checks -= ov_checks;
    start -= ov_start;
    if (wait < 0) wait = 0;
    if (setup < 0) setup = 0;
    if (checks < 0) checks = 0;
    if (start < 0) start = 0;
    kg_sb_printf(sb, "Settings: %s.\n\n", ev->watch[0].detail);
    if (ended == runs && wall > 0 && known) {
        double other = wall - build - wait - setup - checks - timed - start;
        if (other < 0) other = 0;
        kg_sb_printf(sb, "Duty cycle: %.1f%% of the campaign's %.1f s of wall time (%d run%s) was inside timed phases, "
                     "%.1f%% in timing and checks (processes.csv: timed_s, checks_s; watch.csv: end).\n\n",
                     100 * timed / wall, wall, runs, runs == 1 ? "" : "s", 100 * (timed + checks) / wall);
        if (noverlap > 0)
            kg_sb_printf(sb, "%d worker(s) started beside the one before them, after its last timed phase: %.3f s of "
                         "their start, set-up, checks and waiting ran while it ran its last checks, and is counted "
                         "once, as the earlier worker's (watch.csv: overlap; plan key overlap).\n\n", noverlap, ov_all);
        kg_sb_puts(sb, "| where the time went | seconds | share |\n|---|---|---|\n");
        const char *what[] = { "timed phases", "checks before and after timing (their float64 references included)",
                               "worker set-up (load, compile, bind)", "process start and records",
                               "quiet waits (a worker ready to time, waiting)", "arm builds and device peaks",
                               "supervisor between processes" };
        double v[] = { timed, checks, setup, start, wait, build, other };
        for (int i = 0; i < 7; i++) kg_sb_printf(sb, "| %s | %.3f | %.1f%% |\n", what[i], v[i], 100 * v[i] / wall);
        kg_sb_puts(sb, "\n");
    } else {
        kg_sb_puts(sb, "Duty cycle: not known (a run of this campaign was stopped before its end, or processes.csv "
                       "predates the durations).\n\n");
    }
    kg_sb_puts(sb, "| time (UTC) | process | event | seconds | detail |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < ev->nwatch; i++) {
        const kg_watch_rec *w = &ev->watch[i];
        char pr[16] = "";
        if (w->proc >= 0) snprintf(pr, sizeof pr, "%d", w->proc);
        kg_sb_printf(sb, "| %s | %s | %s | %.3f | ", w->utc, pr, w->event, w->seconds);
        for (const char *c = w->detail; *c; c++) kg_sb_printf(sb, "%s", *c == '|' ? "\\|" : (char[2]){ *c, 0 });
        kg_sb_puts(sb, " |\n");
    }
}

/* "## Admission": from the check records of every process, the weak
 * cases, inadmissible cases, the numerical negative, parity, and every
 * failed check (the first 50), in process order so that a regenerated
 * report is identical. */
static void admission_md(kg_sb *sb, const kg_evidence *ev)
{
    const kg_plan *plan = ev->plan;
    kg_sb weak = { 0 }, other = { 0 };
    int nfail = 0, nrows = 0;
    kg_sb_puts(sb, "\n## Admission\n\n");
    for (size_t i = 0; i < ev->nchecks_all; i++) {
        const kg_check_rec *k = &ev->checks[i];
        const char *cname = plan->cases[k->kase].name, *aname = k->arm >= 0 ? plan->arms[k->arm].name : "";
        nrows++;
        if ((strcmp(k->check, KG_CHECK_WEAK) == 0 || kg_check_is_bound(k->check)) && !k->pass) {
            char key[KG_NAME_MAX + 8];
            snprintf(key, sizeof key, "| %s |", cname);
            if (weak.buf == NULL || strstr(weak.buf, key) == NULL)
                kg_sb_printf(&weak, "| %s | %s |\n", cname, k->detail);
        } else if (strcmp(k->check, KG_CHECK_NEGATIVE) == 0) {
            kg_sb_printf(&other, "| %d | %s | %s | %s | %s | %s |\n", k->proc, cname, aname, k->check,
                         k->pass ? "rejected (as required)" : "NOT REJECTED", k->detail);
        } else if (!k->pass && nfail++ < 50) {
            char rel[40] = "";
            if (k->has_cmp) snprintf(rel, sizeof rel, "%.6g", k->max_rel);
            kg_sb_printf(&other, "| %d | %s | %s | %s:%s | FAIL | %s%s%s%s |\n", k->proc, cname, aname,
                         kg_phase_name(k->phase), k->check, rel[0] ? "max err/bound " : "", rel, rel[0] ? "; " : "",
                         k->detail);
        }
    }
    kg_sb_printf(sb, "%d check records; %d failed.\n\n", nrows, nfail);
    if (weak.len > 0) {
        kg_sb_puts(sb, "Weak cases (a shortcut passes their check, or their op's bound admits errors no correct "
                       "kernel makes; they cannot be primary and their arms fail):\n\n"
                       "| case | shortcut that passes, or the bound audit |\n|---|---|\n");
        kg_sb_puts(sb, weak.buf);
        kg_sb_puts(sb, "\n");
    }
    if (other.len > 0) {
        kg_sb_puts(sb, "| process | case | arm | check | result | detail |\n|---|---|---|---|---|---|\n");
        kg_sb_puts(sb, other.buf);
        if (nfail > 50) kg_sb_printf(sb, "\n(%d more failed checks in checks/proc-NNN.csv)\n", nfail - 50);
    }
    kg_sb_free(&weak);
    kg_sb_free(&other);
}

int kg_report_md(kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    json_t *meta = json_loads(ev->meta_json, 0, NULL);
    if (meta == NULL) return kg_errorf(err, KG_EINPUT, "meta.json: not valid JSON (restore it from the campaign)");
    write_md(out, ev, an, meta);
    if (ev->screen) {
        kg_screening sc;
        int rc = kg_screening_derive(ev, &sc, err);
        if (rc != KG_OK) {
            json_decref(meta);
            return rc;
        }
        kg_screening_md(out, ev, &sc);
        kg_screening_free(&sc);
    }
    kg_report_hw_md(out, ev, an);
    admission_md(out, ev);
    kg_varcomp_md(out, ev);
    json_decref(meta);
    return KG_OK;
}
