/* report.c: what every printer shares (the state names, a case's
 * variables) and the analysis of a loaded folder (kg_report_analyse: the
 * physics limits from its peaks.json and the op facts, the process
 * records, the telemetry and the host watch's log go in as data).  The
 * printer table and the rendering are render.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "report/report.h"
#include "base/util.h"

const char *kg_report_state_name(kg_arm_state s)
{
    switch (s) {
    case KG_ARM_OK: return "ok";
    case KG_ARM_INADMISSIBLE: return "inadmissible";
    case KG_ARM_INCORRECT: return "incorrect";
    case KG_ARM_WEAK: return "weak case";
    default: return "absent";
    }
}

void kg_report_case_vars(kg_sb *sb, const kg_evidence *ev, int c)
{
    const kg_case *k = &ev->plan->cases[c];
    const kg_case_facts *f = ev->facts != NULL ? &ev->facts[c] : NULL;
    int n = 0;
    const struct { const char *name; int64_t v; } fixed[] = { { "M", k->M }, { "N", k->N }, { "K", k->K },
                                                            { "splits", k->splits } };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i].v >= 0) kg_sb_printf(sb, "%s%s = %lld", n++ ? ", " : "", fixed[i].name, (long long)fixed[i].v);
    if (f != NULL && strstr(f->scalars, "eps") != NULL)
        kg_sb_printf(sb, "%seps = %g", n++ ? ", " : "", k->eps);
    if (k->scale != 1.0) kg_sb_printf(sb, "%sscale = %g", n++ ? ", " : "", k->scale);
    int order[KG_CASE_VARS];
    kg_case_var_order(k, order);
    for (int j = 0; j < k->nvars; j++)
        kg_sb_printf(sb, "%s%s = %s", n++ ? ", " : "", k->vars[order[j]].name, k->vars[order[j]].text);
    /* an op declared in Python: the bound its verdicts are checked against */
    if (f != NULL && f->contract[0] != '\0') kg_sb_printf(sb, "%schecked against: %s", n++ ? "; " : "", f->contract);
}

/* The physics limit of every case: the op's minimal bytes and flops
 * (ops.json) and the peaks of the folder's peaks.json for that working set and dtype
 * (flops: float32 FMA rate for f32 cases, the matrix-unit rate for
 * 16-bit cases and for arms with a reduced contract, each only where
 * measured).  NULL when the folder has no
 * measured peaks. */
static kg_case_limit *case_limits(const kg_evidence *ev)
{
    if (!ev->has_peaks || !ev->peaks.measured || ev->plan->ncases <= 0 || ev->facts == NULL) return NULL;
    kg_case_limit *l = calloc((size_t)ev->plan->ncases, sizeof *l);
    if (l == NULL) return NULL;
    for (int c = 0; c < ev->plan->ncases; c++) {
        const kg_case *kc = &ev->plan->cases[c];
        l[c].bytes = ev->facts[c].min_bytes;
        l[c].flops = ev->facts[c].flops;
        l[c].bw = kg_peaks_bw(&ev->peaks, l[c].bytes);
        l[c].flop_rate = kc->dtype == KG_DT_F32 ? ev->peaks.flops_f32 : ev->peaks.flops_mma16;
        l[c].flop_rate_mma = ev->peaks.flops_mma16;
    }
    return l;
}

int kg_report_analyse(const kg_evidence *ev, kg_analysis *an, kg_err *err)
{
    memset(an, 0, sizeof *an);
    kg_case_limit *limits = case_limits(ev);
    if (ev->has_peaks && ev->peaks.measured && ev->facts != NULL && limits == NULL)
        return kg_errorf(err, KG_ENOMEM, "out of memory (physics limits)");
    kg_analysis_in in = { .plan = ev->plan, .rows = ev->rows, .nrows = ev->nrows, .accepted = ev->accepted,
                          .nproc = ev->nproc, .state = ev->state, .limits = limits, .procs = ev->procs,
                          .tel = ev->tel, .ntel = ev->ntel, .watch = ev->watch, .nwatch = ev->nwatch };
    int rc = kg_analyse(&in, an, err);
    free(limits);
    return rc;
}
