/* annotations.c: `kgate run --github`: the campaign's outcome as GitHub
 * Actions workflow commands (::error, ::warning, ::notice), which a
 * workflow's log shows as annotations on the plan file, and the verdict
 * table appended to the job's summary, $GITHUB_STEP_SUMMARY (docs/ci.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/plan.h"
#include "report/report.h"
#include "annotations.h"

/* A command's message: '%', CR and LF escaped, so that a multi-line
 * message (a compiler's diagnostics) stays one command. */
static void put_message(FILE *fp, const char *s)
{
    for (; s != NULL && *s; s++) {
        if (*s == '%') fputs("%25", fp);
        else if (*s == '\r') fputs("%0D", fp);
        else if (*s == '\n') fputs("%0A", fp);
        else fputc(*s, fp);
    }
}

/* A property's value: the message's escapes, and ':' and ',' too. */
static void put_property(FILE *fp, const char *s)
{
    for (; s != NULL && *s; s++) {
        if (*s == ':') fputs("%3A", fp);
        else if (*s == ',') fputs("%2C", fp);
        else if (*s == '%') fputs("%25", fp);
        else if (*s == '\r') fputs("%0D", fp);
        else if (*s == '\n') fputs("%0A", fp);
        else fputc(*s, fp);
    }
}

/* ::LEVEL file=PLAN[,line=N],title=TITLE::MESSAGE */
static void command(FILE *fp, const char *level, const char *file, int line, const char *title, const char *msg)
{
    fprintf(fp, "::%s ", level);
    if (file != NULL && file[0] != '\0') {
        fputs("file=", fp);
        put_property(fp, file);
        if (line > 0) fprintf(fp, ",line=%d", line);
        fputc(',', fp);
    }
    fputs("title=", fp);
    put_property(fp, title);
    fputs("::", fp);
    put_message(fp, msg);
    fputc('\n', fp);
}

/* The line of arm `name`'s section in the plan as the user wrote it (the
 * analysis holds the folder's canonical plan, whose lines are its own);
 * 0 when it cannot be told. */
static int arm_line(const kg_plan *own, const char *name)
{
    for (int a = 0; own != NULL && a < own->narms; a++)
        if (strcmp(own->arms[a].name, name) == 0) return own->arms[a].line;
    return 0;
}

/* One line per arm that failed its checks on a case, an error at the
 * arm's line; one per gated pair that fails the gate otherwise, and per
 * control that does not hold, a warning.  Returns the errors printed. */
static int pair_commands(FILE *fp, const kg_summary_in *in)
{
    const kg_analysis *an = in->an;
    const kg_plan *plan = an->plan;
    kg_plan *own = NULL;
    kg_err err = { 0 };
    if (kg_plan_load(in->plan_path, &own, &err) != KG_OK) own = NULL;
    char title[256], msg[2 * KG_TEXT_MAX];
    int errors = 0;
    for (int c = 0; c < an->ncases; c++)
        for (int a = 0; a < an->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            const char *cn = plan->cases[c].name, *arm = plan->arms[a].name;
            int line = arm_line(own, arm);
            if (r->state == KG_ARM_INCORRECT || r->verdict == KG_VERDICT_INCORRECT) {
                snprintf(title, sizeof title, "kgate arm %s is INCORRECT on case %s", arm, cn);
                snprintf(msg, sizeof msg, "case %s, arm %s (%s): a correctness check failed; the failing checks "
                         "are in %s/checks/ (kgate check %s lists them)", cn, arm, kg_role_name(r->role),
                         in->dir != NULL ? in->dir : "the evidence folder", in->plan_path);
                command(fp, "error", in->plan_path, line, title, msg);
                errors++;
            } else if (r->gated && r->gate_why[0] != '\0') {
                snprintf(title, sizeof title, "kgate arm %s fails the gate on case %s", arm, cn);
                command(fp, "warning", in->plan_path, line, title, r->gate_why);
            } else if (r->role == KG_ROLE_CONTROL && r->control != KG_CONTROL_VALID && r->label[0] != '\0') {
                snprintf(title, sizeof title, "kgate control %s on case %s", arm, cn);
                command(fp, "warning", in->plan_path, line, title, r->label);
            }
        }
    kg_plan_free(own);
    return errors;
}

/* A reduction in percent, or nothing where the row has none. */
static void put_pct(FILE *fp, int has, double x)
{
    if (has && isfinite(x)) fprintf(fp, "%+.1f%%", 100 * x);
}

/* The job summary: a markdown table, one row per candidate, reference
 * and control on each case, then the gate and its reason. */
static void step_summary(FILE *fp, const kg_summary_in *in)
{
    const kg_analysis *an = in->an;
    const kg_plan *plan = an->plan;
    fprintf(fp, "### kgate: %s: gate %s%s\n\n", plan->campaign.name, an->gate_pass ? "PASS" : "FAIL",
            an->invalid ? " (campaign INVALID)" : "");
    fputs("| case | arm | role | verdict | reduction | interval |\n|---|---|---|---|---|---|\n", fp);
    for (int c = 0; c < an->ncases; c++)
        for (int a = 0; a < an->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state == KG_ARM_ABSENT || r->role == KG_ROLE_BASELINE) continue;
            fprintf(fp, "| %s | %s | %s | %s | ", plan->cases[c].name, plan->arms[a].name, kg_role_name(r->role),
                    kg_result_label(r));
            put_pct(fp, r->has_effect, r->eff.rho);
            fputs(" | ", fp);
            if (r->has_effect && r->eff.has_interval) {
                fputc('[', fp);
                put_pct(fp, 1, r->eff.rho_lo);
                fputs(", ", fp);
                put_pct(fp, 1, r->eff.rho_hi);
                fputc(']', fp);
            }
            fputs(" |\n", fp);
        }
    fprintf(fp, "\n%s: %s (plan %s, evidence %s)\n\n", an->gate_pass ? "Gate PASS" : "Gate FAIL", an->gate_reason,
            in->plan_path, in->dir != NULL && in->dir[0] != '\0' ? in->dir : "none");
}

/* $GITHUB_STEP_SUMMARY, when the job sets it: the table appended; a file
 * that cannot be written is said on stderr and changes no exit status. */
static void append_step_summary(const kg_summary_in *in)
{
    const char *path = getenv("GITHUB_STEP_SUMMARY");
    if (path == NULL || path[0] == '\0' || in->an == NULL) return;
    FILE *fp = fopen(path, "a");
    if (fp == NULL) {
        fprintf(stderr, "kgate run --github: cannot append to $GITHUB_STEP_SUMMARY (%s)\n", path);
        return;
    }
    step_summary(fp, in);
    if (fclose(fp) != 0) fprintf(stderr, "kgate run --github: cannot write $GITHUB_STEP_SUMMARY (%s)\n", path);
}

void kg_cli_github(FILE *fp, const kg_summary_in *in)
{
    append_step_summary(in);
    if (in->error != NULL || in->an == NULL) {
        command(fp, "error", in->plan_path, 0, "kgate stopped before a verdict",
                in->error != NULL ? in->error : "no analysis");
        fflush(fp);
        return;
    }
    const kg_analysis *an = in->an;
    pair_commands(fp, in);
    if (an->invalid)
        command(fp, "error", in->plan_path, 0, "kgate campaign INVALID",
                an->invalid_why[0] != '\0' ? an->invalid_why : an->gate_reason);
    if (!an->gate_pass)
        command(fp, "error", in->plan_path, 0, "kgate gate FAIL", an->gate_reason);
    else
        command(fp, "notice", in->plan_path, 0, "kgate gate PASS", an->gate_reason);
    fflush(fp);
}
