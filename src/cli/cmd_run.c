/* cmd_run.c: `kgate run PLAN [-o DIR]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "campaign.h"
#include "cli.h"

static const char help[] =
    "usage: kgate run PLAN [-o DIR] [--backend NAME] [--progress | --no-progress] [--frozen FILE]\n"
    "                 [--resume DIR] [--lock-timeout S] [--quiet S] [--forbid NAMES] [--max-load L]\n"
    "                 [--repeats N] [--archive]\n"
    "\n"
    "Runs the campaign PLAN declares: every arm is checked for correctness before and after timing\n"
    "in every process; rounds of interleaved samples run in 2 x processes fresh worker processes,\n"
    "directions alternating (forward, then case and arm order reversed).  Writes the evidence folder\n"
    "(default kgate-out/NAME-UTCTIME), prints report.md on stdout and the verdict on stderr.\n"
    "\n"
    "  -o, --out DIR      evidence folder (must not hold a campaign already)\n"
    "  --backend NAME     override the plan's backend: auto, cpu, fake, cuda\n"
    "  --progress         progress line on stderr even when it is not a terminal\n"
    "  --no-progress      no progress line\n"
    "  --frozen FILE      refuse PLAN unless its canonical hash is FILE's (kgate freeze); lists what changed\n"
    "  --resume DIR       continue the campaign in DIR (after a crash or kill): PLAN must be its plan;\n"
    "                     completed processes are kept, the interrupted one is run again\n"
    "  --lock-timeout S   give up (exit 2) when the device is still locked by another campaign after S s\n"
    "                     (default: wait as long as it takes)\n"
    "  --quiet S          quiet window before each process, s (default: the plan's quiet key)\n"
    "  --forbid NAMES     comma-separated process names that must not run during a campaign (default:\n"
    "                     $KGATE_FORBID, else " KG_QUIET_DEFAULT_FORBID " when a quiet window\n"
    "                     is declared; none on the fake backend)\n"
    "  --max-load L       1-minute load average bound (default: none)\n"
    "  --repeats N        runs again a contaminated process up to N times (default 3)\n"
    "  --archive          also write DIR.tar.gz next to the folder (needs libarchive.so.13)\n"
    "\n"
    "Exit status: 0 gate passed, 1 gate failed or inconclusive, 2 usage or input error,\n"
    "3 invalid campaign (control failed or no usable process).\n";

int kg_cmd_run(int argc, char **argv)
{
    kg_run_opts o = { 0 };
    o.settings = kg_cli_settings();
    o.progress = isatty(2);
    o.argc = argc;
    o.argv = argv;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (kg_cli_is_help(a)) { fputs(help, stdout); return 0; }
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) && i + 1 < argc) o.out_dir = argv[++i];
        else if (strcmp(a, "--backend") == 0 && i + 1 < argc) o.backend = argv[++i];
        else if (strcmp(a, "--progress") == 0) o.progress = 1;
        else if (strcmp(a, "--no-progress") == 0) o.progress = 0;
        else if (strcmp(a, "--frozen") == 0 && i + 1 < argc) o.frozen_path = argv[++i];
        else if (strcmp(a, "--resume") == 0 && i + 1 < argc) { o.resume = 1; o.out_dir = argv[++i]; }
        else if (strcmp(a, "--forbid") == 0 && i + 1 < argc) o.forbid = argv[++i];
        else if (strcmp(a, "--archive") == 0) o.archive = 1;
        else if ((strcmp(a, "--lock-timeout") == 0 || strcmp(a, "--quiet") == 0 || strcmp(a, "--max-load") == 0 ||
                  strcmp(a, "--repeats") == 0) && i + 1 < argc) {
            char *end;
            double v = strtod(argv[++i], &end);
            if (*end != '\0' || end == argv[i] || !(v >= 0) || v > 1e9) {
                fprintf(stderr, "kgate run: %s needs a number >= 0, not '%s'\n", a, argv[i]);
                return KG_EXIT_USAGE;
            }
            if (strcmp(a, "--lock-timeout") == 0) { o.has_lock_timeout = 1; o.lock_timeout_s = v; }
            else if (strcmp(a, "--quiet") == 0) { o.has_quiet = 1; o.quiet_s = v; }
            else if (strcmp(a, "--max-load") == 0) o.max_load = v;
            else o.max_repeats = v == 0 ? -1 : (int)v;
        }
        else if (a[0] == '-') { fprintf(stderr, "kgate run: unknown option '%s'\n%s", a, help); return KG_EXIT_USAGE; }
        else if (o.plan_path == NULL) o.plan_path = a;
        else { fprintf(stderr, "kgate run: one plan at a time ('%s')\n", a); return KG_EXIT_USAGE; }
    }
    if (o.plan_path == NULL) { fputs(help, stderr); return KG_EXIT_USAGE; }
    char dir[1024] = "";
    kg_analysis an;
    kg_err err = { 0 };
    int rc = kg_campaign_run(&o, dir, sizeof dir, &an, &err);
    if (rc != KG_OK) {
        int st = kg_cli_fail(rc, err.msg);
        if (dir[0] != '\0') fprintf(stderr, "kgate: evidence so far is in %s\n", dir);
        return st;
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/report.md", dir);
    FILE *fp = fopen(path, "r");
    if (fp != NULL) {
        char buf[8192];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, fp)) > 0) fwrite(buf, 1, n, stdout);
        fclose(fp);
    }
    fflush(stdout);
    int status = an.invalid ? KG_EXIT_INVALID : an.gate_pass ? KG_EXIT_PASS : KG_EXIT_FAIL;
    fprintf(stderr, "kgate: gate %s%s: %s\nkgate: evidence in %s\n", an.gate_pass ? "PASS" : "FAIL",
            an.invalid ? " (campaign INVALID)" : "", an.gate_reason, dir);
    kg_analysis_free(&an);
    return status;
}
