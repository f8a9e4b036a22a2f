/* report.c: the printer table, and the reports of an evidence folder.
 *
 * kg_report_build reads the folder (evidence.c), analyses it (analysis.c)
 * and writes one file per printer of the table; kg_report_render does the
 * same in memory (verify compares the stored files with it).  The
 * supervisor and `kgate report DIR` both come here, so a regenerated
 * report is byte-identical.  A printer formats; it neither reads files
 * nor decides anything (report_md.c, report_json.c, report_csv.c,
 * report_html.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "kgate/op.h"
#include "report/report.h"
#include "base/util.h"

static const kg_report_fmt formats[] = {
    { "report.md", kg_report_md },
    { "results.csv", kg_report_csv },
    { "results.json", kg_report_json },
    { "report.html", kg_report_html },
    { "raw/samples.csv", kg_report_samples },
    { "schema.json", kg_report_schema },
};
#define NFORMATS ((int)(sizeof formats / sizeof formats[0]))
_Static_assert(NFORMATS <= KG_REPORT_MAX, "raise KG_REPORT_MAX");

const kg_report_fmt *kg_report_formats(int *n)
{
    *n = NFORMATS;
    return formats;
}

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

void kg_report_case_vars(kg_sb *sb, const kg_case *k)
{
    const kg_op *op = kg_op_find(k->op);
    int n = 0;
    const struct { const char *name; int64_t v; } fixed[] = { { "M", k->M }, { "N", k->N }, { "K", k->K },
                                                            { "splits", k->splits } };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i].v >= 0) kg_sb_printf(sb, "%s%s = %lld", n++ ? ", " : "", fixed[i].name, (long long)fixed[i].v);
    if (op != NULL && op->scalars != NULL && strstr(op->scalars, "eps") != NULL)
        kg_sb_printf(sb, "%seps = %g", n++ ? ", " : "", k->eps);
    if (k->scale != 1.0) kg_sb_printf(sb, "%sscale = %g", n++ ? ", " : "", k->scale);
    int order[KG_CASE_VARS];
    kg_case_var_order(k, order);
    for (int j = 0; j < k->nvars; j++)
        kg_sb_printf(sb, "%s%s = %s", n++ ? ", " : "", k->vars[order[j]].name, k->vars[order[j]].text);
}

void kg_report_texts_free(char *text[KG_REPORT_MAX])
{
    for (int i = 0; i < KG_REPORT_MAX; i++) {
        free(text[i]);
        text[i] = NULL;
    }
}

/* The physics limit of every case: the op's minimal bytes and flops and
 * the peaks of the folder's peaks.json for that working set and dtype
 * (flops: float32 FMA rate for f32 cases, the matrix-unit rate for
 * 16-bit cases and for arms with a reduced contract, each only where
 * measured).  NULL when the folder has no
 * measured peaks. */
static kg_case_limit *case_limits(const kg_evidence *ev)
{
    if (!ev->has_peaks || !ev->peaks.measured || ev->plan->ncases <= 0) return NULL;
    kg_case_limit *l = calloc((size_t)ev->plan->ncases, sizeof *l);
    if (l == NULL) return NULL;
    for (int c = 0; c < ev->plan->ncases; c++) {
        const kg_case *kc = &ev->plan->cases[c];
        const kg_op *op = kg_op_find(kc->op);
        if (op == NULL) continue;
        l[c].bytes = op->min_bytes != NULL ? op->min_bytes(kc) : 0.0;
        l[c].flops = op->flops != NULL ? op->flops(kc) : 0.0;
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
    if (ev->has_peaks && ev->peaks.measured && limits == NULL)
        return kg_errorf(err, KG_ENOMEM, "out of memory (physics limits)");
    kg_analysis_in in = { .plan = ev->plan, .rows = ev->rows, .nrows = ev->nrows, .accepted = ev->accepted,
                          .nproc = ev->nproc, .state = ev->state, .limits = limits, .procs = ev->procs,
                          .tel = ev->tel, .ntel = ev->ntel, .watch = ev->watch, .nwatch = ev->nwatch };
    int rc = kg_analyse(&in, an, err);
    free(limits);
    return rc;
}

int kg_report_render(const char *dir, kg_analysis *an_out, char *text[KG_REPORT_MAX], kg_err *err)
{
    kg_evidence ev;
    kg_analysis an_local, *an = an_out != NULL ? an_out : &an_local;
    int rc;
    memset(an, 0, sizeof *an);
    for (int i = 0; i < KG_REPORT_MAX; i++) text[i] = NULL;
    if ((rc = kg_evidence_load(dir, &ev, err)) != KG_OK) return rc;
    if ((rc = kg_report_analyse(&ev, an, err)) != KG_OK) goto done;
    for (int i = 0; i < NFORMATS; i++) {
        kg_sb sb = { 0 };
        if ((rc = formats[i].render(&sb, &ev, an, err)) != KG_OK || sb.oom || sb.buf == NULL) {
            kg_sb_free(&sb);
            if (rc == KG_OK) rc = kg_errorf(err, KG_ENOMEM, "out of memory writing %s", formats[i].file);
            goto done;
        }
        text[i] = sb.buf;
    }
done:
    if (rc != KG_OK) kg_report_texts_free(text);
    if (rc != KG_OK || an_out == NULL) {
        kg_analysis_free(an);
    } else {
        /* the analysis outlives the evidence: it keeps the plan it names */
        kg_analysis_own_plan(an, ev.plan);
        ev.plan = NULL;
    }
    kg_evidence_free(&ev);
    return rc;
}

int kg_report_build(const char *dir, kg_analysis *an, char **md_out, kg_err *err)
{
    char *text[KG_REPORT_MAX], path[KG_PATH_MAX + 32];
    if (md_out != NULL) *md_out = NULL;
    int rc = kg_report_render(dir, an, text, err);
    if (rc != KG_OK) return rc;
    for (int i = 0; i < NFORMATS && rc == KG_OK; i++) {
        /* raw/samples.csv: raw/ is missing when no process recorded rows */
        const char *slash = strchr(formats[i].file, '/');
        if (slash != NULL) {
            snprintf(path, sizeof path, "%s/%.*s", dir, (int)(slash - formats[i].file), formats[i].file);
            rc = kg_mkdir_p(path, err);
            if (rc != KG_OK) break;
        }
        snprintf(path, sizeof path, "%s/%s", dir, formats[i].file);
        rc = kg_write_atomic(path, text[i], strlen(text[i]), err);
    }
    if (rc == KG_OK && md_out != NULL) {
        *md_out = text[0];   /* report.md */
        text[0] = NULL;
    }
    if (rc != KG_OK) kg_analysis_free(an);
    kg_report_texts_free(text);
    return rc;
}
