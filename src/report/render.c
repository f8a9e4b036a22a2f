/* render.c: the printer table, and the reports of an evidence folder.
 *
 * kg_report_build reads the folder (evidence.c), analyses it
 * (kg_report_analyse) and writes one file per printer of the table;
 * kg_report_render does the same in memory (verify compares the stored
 * files with it).  The supervisor and `kgate report DIR` both come here,
 * so a regenerated report is byte-identical.  A printer formats; it
 * neither reads files nor decides anything (report_md.c, report_json.c,
 * report_csv.c, report_html.c, report_schema.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "report/report.h"
#include "base/util.h"

static const kg_report_fmt formats[] = {
    { "report.md", kg_report_md },
    { "results.csv", kg_report_csv },
    { "results.json", kg_report_json },
    { "report.html", kg_report_html },
    { "schema.json", kg_report_schema },
};
#define NFORMATS ((int)(sizeof formats / sizeof formats[0]))
_Static_assert(NFORMATS <= KG_REPORT_MAX, "raise KG_REPORT_MAX");

const kg_report_fmt *kg_report_formats(int *n)
{
    *n = NFORMATS;
    return formats;
}

void kg_report_texts_free(char *text[KG_REPORT_MAX])
{
    for (int i = 0; i < KG_REPORT_MAX; i++) {
        free(text[i]);
        text[i] = NULL;
    }
}

int kg_report_render_ev(const char *dir, kg_evidence *ev_out, kg_analysis *an_out, char *text[KG_REPORT_MAX],
                        kg_err *err)
{
    kg_evidence ev_local, *evp = ev_out != NULL ? ev_out : &ev_local;
    kg_analysis an_local, *an = an_out != NULL ? an_out : &an_local;
    int rc;
    memset(an, 0, sizeof *an);
    for (int i = 0; i < KG_REPORT_MAX; i++) text[i] = NULL;
    if ((rc = kg_evidence_load(dir, evp, err)) != KG_OK) return rc;
    if ((rc = kg_report_analyse(evp, an, err)) != KG_OK) goto done;
    for (int i = 0; i < NFORMATS; i++) {
        kg_sb sb = { 0 };
        if ((rc = formats[i].render(&sb, evp, an, err)) != KG_OK || sb.oom || sb.buf == NULL) {
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
    } else if (ev_out == NULL) {
        /* the analysis outlives the evidence: it keeps the plan it names */
        kg_analysis_own_plan(an, evp->plan);
        evp->plan = NULL;
    }
    if (rc != KG_OK || ev_out == NULL) kg_evidence_free(evp);
    return rc;
}

int kg_report_render(const char *dir, kg_analysis *an, char *text[KG_REPORT_MAX], kg_err *err)
{
    return kg_report_render_ev(dir, NULL, an, text, err);
}

int kg_report_samples_file(const char *dir, FILE *out, kg_err *err)
{
    kg_evidence ev;
    int rc = kg_evidence_load(dir, &ev, err);
    if (rc != KG_OK) return rc;
    kg_sb sb = { 0 };
    rc = kg_report_samples(&sb, &ev, NULL, err);
    if (rc == KG_OK && (fwrite(sb.buf, 1, sb.len, out) != sb.len || fflush(out) != 0))
        rc = kg_errorf(err, KG_EIO, "cannot write the samples table: %s", strerror(errno));
    kg_sb_free(&sb);
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
        /* a file in a sub-folder: the folder may be missing */
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
