/* cmd_check.c: `kgate check PLAN [--negative ARM]`: admission checks
 * only, in one fresh worker process, printed as a table per arm and case.
 * With --negative ARM the arm is rebuilt with KGATE_NEGATIVE=1 (its
 * KGATE_STORE stores zero) and every output check of it must fail.
 *
 * The table has one row per check: result (pass, FAIL, INADMISSIBLE with
 * the violated precondition, WEAK with the shortcut that passes), the
 * largest absolute error, the largest error relative to its bound, the
 * worst element and the detail; inadmissible and weak cases are listed
 * again under the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "run/supervisor.h"
#include "kgate/evidence.h"
#include "cli.h"
#include "base/util.h"

static const char about[] =
    "Runs the admission checks of every arm on every case, in one fresh worker process, and prints\n"
    "a table: each check, pass or fail, the largest error relative to its bound, and why.  Nothing\n"
    "is timed.  Exit status 0 when every check passed, 1 otherwise, 2 on a usage or input error.\n";

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

int kg_cmd_check(int argc, char **argv, const kg_settings *env)
{
    kg_run_opts o = { 0 };
    o.check_only = 1;
    o.argc = argc;
    o.argv = argv;
    const char *neg = NULL, *sanitize = NULL;
    int no_cache = 0;
    const kg_cli_opt opts[] = {
        { .name = "out", .short_name = 'o', .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.out_dir,
          .help = "evidence folder (must not hold a campaign already; default kgate-out/NAME-UTCTIME)" },
        { .name = "backend", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &o.backend,
          .help = "override the plan's backend: auto, cpu, fake, cuda" },
        { .name = "negative", .arg = "ARM", .kind = KG_CLI_STRING, .dst = &neg,
          .help = "rebuild ARM with KGATE_NEGATIVE=1 (every KGATE_STORE stores zero) and require every output "
                  "check of ARM to fail: a suite that passes the negative proves nothing" },
        { .name = "no-cache", .kind = KG_CLI_FLAG, .dst = &no_cache, .value = 1,
          .help = "compile every cpu arm, neither reading nor writing the compile cache (KGATE_CACHE=0)" },
        { .name = "sanitize", .arg = "TOOLS", .kind = KG_CLI_STRING, .dst = &sanitize,
          .help = "also run the checks under compute-sanitizer, once per tool (memcheck, racecheck, synccheck, "
                  "initcheck; comma-separated), each in its own folder DIR-TOOL; a tool that reports an error "
                  "fails the check" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "check", .args = "PLAN", .about = about, .opts = opts };
    int parsed = kg_cli_parse(&spec, argc, argv, &o.plan_path);
    if (parsed != KG_CLI_GO) return parsed;
    /* the campaign's own copy of the settings */
    kg_settings s = *env;
    s.no_cache |= no_cache;
    o.settings = &s;
    if (neg != NULL) {
        o.negative = s.negative = 1;
        o.negative_arm = s.negative_arm = neg;
        /* a precompiled arm cannot be rebuilt with KGATE_NEGATIVE=1 */
        kg_plan *pl = NULL;
        kg_err perr = { 0 };
        if (kg_plan_load(o.plan_path, &pl, &perr) == KG_OK) {
            int a = kg_plan_find_arm(pl, neg);
            if (a >= 0 && kg_arm_is_image(&pl->arms[a])) {
                fprintf(stderr, "kgate check: --negative %s: negative: not applicable (precompiled image %s): kgate "
                        "cannot rebuild an image with KGATE_NEGATIVE=1; build the negative yourself (the kernel "
                        "compiled with -DKGATE_NEGATIVE=1) and check it as an arm of its own, which every output "
                        "check must fail\n", neg, pl->arms[a].image);
                kg_plan_free(pl);
                return KG_EXIT_USAGE;
            }
        }
        kg_plan_free(pl);
    }
    char dir[1024] = "";
    kg_analysis an;
    kg_err err = { 0 };
    int rc = kg_campaign_run(&o, dir, sizeof dir, &an, &err);
    if (rc != KG_OK) return kg_cli_fail(rc, err.msg);
    kg_analysis_free(&an);

    char path[1100];
    kg_plan *plan = NULL;
    kg_check_rec *recs = NULL;
    size_t nrecs = 0;
    snprintf(path, sizeof path, "%s/checks/proc-000.csv", dir);
    if (!kg_path_exists(path)) {
        char procs[1100];
        snprintf(procs, sizeof procs, "%s/processes.csv", dir);
        char last[512];
        snprintf(path, sizeof path, "%s/logs/proc-000.log", dir);
        kg_file_last_line(path, last, sizeof last);
        fprintf(stderr, "kgate check: the check process did not complete: %s (see %s and %s/logs/)\n",
                last[0] ? last : "no message", procs, dir);
        return KG_EXIT_INVALID;
    }
    char plan_path[1100];
    snprintf(plan_path, sizeof plan_path, "%s/plan.kg", dir);
    if ((rc = kg_plan_load(plan_path, &plan, &err)) != KG_OK ||
        (rc = kg_rows_read_checks(path, plan, 0, &recs, &nrecs, &err)) != KG_OK) {
        kg_plan_free(plan);
        free(recs);
        return kg_cli_fail(rc, err.msg);
    }
    int total = 0, failed = 0, neg_checks = 0, neg_failed = 0, neg_found = 0, nweak = 0, ninadm = 0;
    kg_sb notes = { 0 };
    printf("| case | arm | phase | check | result | max abs | max err/bound | worst | detail |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < nrecs; i++) {
        const kg_check_rec *k = &recs[i];
        const char *cname = plan->cases[k->kase].name, *aname = k->arm >= 0 ? plan->arms[k->arm].name : "";
        int pass = k->pass;
        int is_output = strchr(k->check, ':') != NULL && strstr(k->check, ":guard:") == NULL &&
                        strstr(k->check, ":input:") == NULL;
        total++;
        failed += !pass;
        if (neg != NULL && strcmp(aname, neg) == 0) {
            neg_found = 1;
            if (is_output) { neg_checks++; neg_failed += !pass; }
        }
        const char *result = pass ? "pass" : "FAIL";
        if (!pass && strcmp(k->check, KG_CHECK_ADMISSIBLE) == 0) {
            result = "INADMISSIBLE";
            ninadm++;
            kg_sb_printf(&notes, "inadmissible: case %s, arm %s: %s\n", cname, aname, k->detail);
        } else if (!pass && strcmp(k->check, KG_CHECK_WEAK) == 0) {
            result = "WEAK";
            char key[KG_NAME_MAX + 16];
            snprintf(key, sizeof key, "weak case %s ", cname);
            nweak++;
            if (notes.buf == NULL || strstr(notes.buf, key) == NULL)
                kg_sb_printf(&notes, "%s(cannot be primary; its arms fail): %s\n", key, k->detail);
        }
        char mabs[40] = "–", mrel[40] = "–", worst[40] = "–";
        if (k->has_cmp) {
            snprintf(mabs, sizeof mabs, "%.6g", k->max_abs);
            snprintf(mrel, sizeof mrel, "%.6g", k->max_rel);
            if (k->worst != -1) snprintf(worst, sizeof worst, "%lld", k->worst);
        }
        printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cname, aname, kg_phase_name(k->phase), k->check,
               result, mabs, mrel, worst, k->detail);
    }
    free(recs);
    /* precompiled arms: kgate cannot rebuild them as the negative */
    for (int a = 0; a < plan->narms; a++)
        if (kg_arm_is_image(&plan->arms[a]))
            kg_sb_printf(&notes, "arm %s: negative: not applicable (precompiled image %s)\n", plan->arms[a].name,
                         plan->arms[a].image);
    kg_plan_free(plan);
    /* The sanitizer passes fold into the same table. */
    if (sanitize != NULL) {
        char tools[256];
        snprintf(tools, sizeof tools, "%s", sanitize);
        kg_run_opts so = o;
        so.argc = argc;
        for (char *save = NULL, *t = strtok_r(tools, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
            char detail[1400];
            int bad = sanitize_pass(&so, dir, t, detail, sizeof detail);
            total++;
            failed += bad;
            printf("| (all) | (all) | sanitize | %s | %s | – | – | – | %s |\n", t, bad ? "FAIL" : "pass", detail);
        }
    }
    if (notes.len > 0) printf("\n%s", notes.buf);
    kg_sb_free(&notes);
    printf("\n%d checks, %d failed (%d inadmissible, %d weak).  Evidence: %s\n", total, failed, ninadm,
           nweak, dir);
    if (neg != NULL) {
        if (!neg_found) {
            fprintf(stderr, "kgate check: --negative %s: no such arm ran (see kgate list and the plan)\n", neg);
            return KG_EXIT_USAGE;
        }
        int ok = neg_checks > 0 && neg_failed == neg_checks;
        printf("negative %s: %d of %d output checks failed: %s\n", neg, neg_failed, neg_checks,
               ok ? "the checks reject the negative, as required" : "SOME CHECKS PASS THE NEGATIVE: they prove nothing");
        return ok ? KG_EXIT_PASS : KG_EXIT_FAIL;
    }
    return failed == 0 ? KG_EXIT_PASS : KG_EXIT_FAIL;
}
