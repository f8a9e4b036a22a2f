/* cmd_check.c: `kgate check PLAN [--negative ARM]`: admission checks
 * only, in one fresh worker process, printed as a table per arm and case.
 * With --negative ARM the arm is rebuilt with KGATE_NEGATIVE=1 (its
 * KGATE_STORE stores zero) and every output check of it must fail.
 *
 * The table and its notes are run/admission.h's; the command parses its
 * options, runs the campaign and prints. */
#include <stdio.h>
#include <stdlib.h>
#include "run/admission.h"
#include "cli.h"
#include "brief.h"

static const char about[] =
    "Runs the admission checks of every arm on every case, in one fresh worker process, and prints\n"
    "a table: each check, pass or fail, the largest error relative to its bound, and why.  Nothing\n"
    "is timed.  Exit status 0 when every check passed, 1 otherwise, 2 on a usage or input error.\n";

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
    const kg_cli_spec spec = { .cmd = "check", .args = "PLAN", .about = about, .opts = opts,
                               .quiet_help = "no table: the summary line (and the negative's) alone, on stderr" };
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
        char image[KG_PATH_MAX];
        if (kg_admission_image_arm(o.plan_path, neg, image, sizeof image)) {
            fprintf(stderr, "kgate check: --negative %s: negative: not applicable (precompiled image %s): kgate "
                    "cannot rebuild an image with KGATE_NEGATIVE=1; build the negative yourself (the kernel "
                    "compiled with -DKGATE_NEGATIVE=1) and check it as an arm of its own, which every output "
                    "check must fail\n", neg, image);
            return KG_EXIT_USAGE;
        }
    }
    char dir[1024] = "";
    kg_analysis an;
    kg_err err = { 0 };
    int rc = kg_campaign_run(&o, dir, sizeof dir, &an, &err);
    if (rc != KG_OK) return kg_cli_fail(rc, err.msg);
    /* the ops declared in Python: the bound their checks use */
    char bounds[2048] = "";
    size_t bl = 0;
    char (*ct)[96] = an.plan != NULL ? calloc((size_t)(an.plan->ncases > 0 ? an.plan->ncases : 1), sizeof *ct) : NULL;
    if (ct != NULL && kg_cli_contracts(an.plan, dir, ct))
        for (int c = 0; c < an.plan->ncases && bl < sizeof bounds; c++) {
            if (ct[c][0] == '\0') continue;
            int w = snprintf(bounds + bl, sizeof bounds - bl, "case %s: op %s, declared in Python, checked against %s\n",
                             an.plan->cases[c].name, an.plan->cases[c].op, ct[c]);
            if (w > 0) bl += (size_t)w;
        }
    free(ct);
    kg_analysis_free(&an);
    kg_admission a;
    if ((rc = kg_admission_read(dir, neg, &a, &err)) != KG_OK) {
        kg_admission_free(&a);
        return kg_cli_fail(rc, err.msg);
    }
    if (!a.complete) {
        fprintf(stderr, "kgate check: the check process did not complete: %s\n", a.why);
        kg_admission_free(&a);
        return KG_EXIT_INVALID;
    }
    /* the sanitizer passes fold into the same table */
    if (sanitize != NULL) kg_admission_sanitize(&a, &o, dir, sanitize);
    /* -q: the summary lines alone, on stderr */
    FILE *sum = kg_cli_quiet ? stderr : stdout;
    if (!kg_cli_quiet) {
        fputs(a.table.buf, stdout);
        if (a.notes.len > 0) printf("\n%s", a.notes.buf);
        if (bounds[0] != '\0') printf("\n%s", bounds);
    }
    fprintf(sum, "%s%d checks, %d failed (%d inadmissible, %d weak).  Evidence: %s\n", kg_cli_quiet ? "" : "\n", a.total, a.failed, a.inadmissible,
           a.weak, dir);
    int status = a.failed == 0 ? KG_EXIT_PASS : KG_EXIT_FAIL;
    if (neg != NULL && !a.neg_found) {
        fprintf(stderr, "kgate check: --negative %s: no such arm ran (see kgate list and the plan)\n", neg);
        status = KG_EXIT_USAGE;
    } else if (neg != NULL) {
        int ok = kg_admission_negative_rejected(&a);
        fprintf(sum, "negative %s: %d of %d output checks failed: %s\n", neg, a.neg_failed, a.neg_checks,
               ok ? "the checks reject the negative, as required" : "SOME CHECKS PASS THE NEGATIVE: they prove nothing");
        status = ok ? KG_EXIT_PASS : KG_EXIT_FAIL;
    }
    kg_admission_free(&a);
    return status;
}
