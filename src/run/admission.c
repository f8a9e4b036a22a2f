/* admission.c: kgate check's campaign read back as a table
 * (admission.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run/admission.h"
#include "kgate/evidence.h"

/* Runs the check campaign again under compute-sanitizer --tool tool.
 * Returns 1 when the tool reported errors (or could not run), 0 when
 * clean, and writes a one-line detail. */
static int sanitize_pass(const kg_run_opts *base, const char *dir, const char *tool, char *detail, size_t cap)
{
    char wrap[256], sdir[1100], log[1200];
    snprintf(wrap, sizeof wrap, "compute-sanitizer --tool %s --error-exitcode 86 --print-limit 20", tool);
    snprintf(sdir, sizeof sdir, "%s-%s", dir, tool);
    kg_settings s = *base->settings;
    s.worker_wrapper = wrap;
    kg_run_opts o = *base;
    o.out_dir = sdir;
    o.settings = &s;
    kg_analysis an;
    kg_err err = { 0 };
    int rc = kg_campaign_run(&o, sdir, sizeof sdir, &an, &err);
    if (rc != KG_OK) {
        snprintf(detail, cap, "could not run: %s", err.msg);
        return 1;
    }
    kg_analysis_free(&an);
    snprintf(log, sizeof log, "%s/logs/proc-000.log", sdir);
    char *text = NULL;
    const char *summary = NULL;
    int clean = 0;
    if (kg_read_file(log, &text, NULL, NULL) == KG_OK) {
        /* racecheck ends "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)",
         * the other tools "ERROR SUMMARY: E errors" */
        if ((summary = strstr(text, "ERROR SUMMARY:")) != NULL)
            clean = strncmp(summary, "ERROR SUMMARY: 0 errors", 23) == 0;
        else if ((summary = strstr(text, "RACECHECK SUMMARY:")) != NULL)
            clean = strstr(summary, "(0 errors") != NULL && strcspn(summary, "\n") > (size_t)(strstr(summary, "(0 errors") - summary);
    }
    if (summary != NULL) {
        size_t len = strcspn(summary, "\n");
        snprintf(detail, cap, "%.*s (log: %s)", (int)len, summary, log);
    } else {
        snprintf(detail, cap, "no sanitizer summary: is compute-sanitizer on PATH? (log: %s)", log);
    }
    free(text);
    return !clean;
}

void kg_admission_sanitize(kg_admission *a, const kg_run_opts *base, const char *dir, const char *tools)
{
    char list[256];
    snprintf(list, sizeof list, "%s", tools);
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        char detail[1400];
        int bad = sanitize_pass(base, dir, t, detail, sizeof detail);
        a->total++;
        a->failed += bad;
        kg_sb_printf(&a->table, "| (all) | (all) | sanitize | %s | %s | – | – | – | %s |\n", t, bad ? "FAIL" : "pass",
                     detail);
    }
}

/* One check into the table, counted; its result names why it failed
 * where the check says (INADMISSIBLE, WEAK), with a note. */
static void add_check(kg_admission *a, const kg_plan *plan, const kg_check_rec *k, const char *neg)
{
    const char *cname = plan->cases[k->kase].name, *aname = k->arm >= 0 ? plan->arms[k->arm].name : "";
    int is_output = strchr(k->check, ':') != NULL && strstr(k->check, ":guard:") == NULL &&
                    strstr(k->check, ":input:") == NULL && !kg_check_is_bound(k->check);
    a->total++;
    a->failed += !k->pass;
    if (neg != NULL && strcmp(aname, neg) == 0) {
        a->neg_found = 1;
        if (is_output) {
            a->neg_checks++;
            a->neg_failed += !k->pass;
        }
    }
    const char *result = k->pass ? "pass" : "FAIL";
    if (!k->pass && strcmp(k->check, KG_CHECK_ADMISSIBLE) == 0) {
        result = "INADMISSIBLE";
        a->inadmissible++;
        kg_sb_printf(&a->notes, "inadmissible: case %s, arm %s: %s\n", cname, aname, k->detail);
    } else if (!k->pass && kg_check_is_bound(k->check)) {
        result = "WEAK-BOUNDED";
        char key[2 * KG_NAME_MAX + 64];
        snprintf(key, sizeof key, "weak-bounded op %s on case %s ", plan->cases[k->kase].op, cname);
        a->weak++;
        if (a->notes.buf == NULL || strstr(a->notes.buf, key) == NULL)
            kg_sb_printf(&a->notes, "%s(cannot be gated on without bound_audit = off): %s\n", key, k->detail);
    } else if (!k->pass && strcmp(k->check, KG_CHECK_WEAK) == 0) {
        result = "WEAK";
        char key[KG_NAME_MAX + 16];
        snprintf(key, sizeof key, "weak case %s ", cname);
        a->weak++;
        if (a->notes.buf == NULL || strstr(a->notes.buf, key) == NULL)
            kg_sb_printf(&a->notes, "%s(cannot be primary; its arms fail): %s\n", key, k->detail);
    }
    char mabs[40] = "–", mrel[40] = "–", worst[40] = "–";
    if (k->has_cmp) {
        snprintf(mabs, sizeof mabs, "%.6g", k->max_abs);
        snprintf(mrel, sizeof mrel, "%.6g", k->max_rel);
        if (k->worst != -1) snprintf(worst, sizeof worst, "%lld", k->worst);
    }
    kg_sb_printf(&a->table, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cname, aname, kg_phase_name(k->phase),
                 k->check, result, mabs, mrel, worst, k->detail);
}

int kg_admission_read(const char *dir, const char *neg, kg_admission *a, kg_err *err)
{
    memset(a, 0, sizeof *a);
    char path[1100], plan_path[1100];
    snprintf(path, sizeof path, "%s/checks/proc-000.csv", dir);
    if (!kg_path_exists(path)) {
        char last[512], log[1100];
        snprintf(log, sizeof log, "%s/logs/proc-000.log", dir);
        kg_file_last_line(log, last, sizeof last);
        snprintf(a->why, sizeof a->why, "%s (see %s/processes.csv and %s/logs/)", last[0] ? last : "no message", dir,
                 dir);
        return KG_OK;
    }
    a->complete = 1;
    kg_plan *plan = NULL;
    kg_check_rec *recs = NULL;
    size_t nrecs = 0;
    snprintf(plan_path, sizeof plan_path, "%s/plan.kg", dir);
    int rc = kg_plan_load(plan_path, &plan, err);
    if (rc == KG_OK) rc = kg_rows_read_checks(path, plan, 0, &recs, &nrecs, err);
    if (rc == KG_OK) {
        kg_sb_printf(&a->table, "| case | arm | phase | check | result | max abs | max err/bound | worst | detail |\n"
                                "|---|---|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < nrecs; i++) add_check(a, plan, &recs[i], neg);
        /* precompiled arms: kgate cannot rebuild them as the negative */
        for (int i = 0; i < plan->narms; i++)
            if (kg_arm_is_image(&plan->arms[i]))
                kg_sb_printf(&a->notes, "arm %s: negative: not applicable (precompiled image %s)\n",
                             plan->arms[i].name, plan->arms[i].image);
    }
    free(recs);
    kg_plan_free(plan);
    return rc;
}

int kg_admission_image_arm(const char *plan_path, const char *arm, char *image, size_t cap)
{
    kg_plan *pl = NULL;
    kg_err perr = { 0 };
    int is_image = 0;
    if (kg_plan_load(plan_path, &pl, &perr) == KG_OK) {
        int a = kg_plan_find_arm(pl, arm);
        is_image = a >= 0 && kg_arm_is_image(&pl->arms[a]);
        if (is_image) snprintf(image, cap, "%s", pl->arms[a].image);
    }
    kg_plan_free(pl);
    return is_image;
}

int kg_admission_negative_rejected(const kg_admission *a)
{
    return a->neg_checks > 0 && a->neg_failed == a->neg_checks;
}

void kg_admission_free(kg_admission *a)
{
    kg_sb_free(&a->table);
    kg_sb_free(&a->notes);
}
