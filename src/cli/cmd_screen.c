/* cmd_screen.c: `kgate screen PLAN`: an exploration campaign over many
 * candidates, an honest ranking, and a frozen confirmation plan.  The
 * screen is an ordinary campaign of PLAN (its evidence folder is complete
 * and verifiable); the ranking and the confirmation plan are
 * run/screen.h's.  The command parses its options, runs the campaign and
 * prints. */
#include <stdio.h>
#include "run/screen.h"
#include "run/supervisor.h"
#include "cli.h"

static const char about[] =
    "Runs PLAN as an exploration campaign (evidence as `kgate run` writes it), ranks its candidates by\n"
    "their lower bounds adjusted over the family (the candidates on the gated cases; [gate]\n"
    "multiplicity), and writes a confirmation plan with the best --select candidates, a fresh seed and\n"
    "the family it was selected from, plus its frozen form.  The claim is the confirmation run:\n"
    "  kgate run --frozen CONFIRM.frozen CONFIRM\n"
    "Screening mode (the default; --full turns it off): a candidate is dropped from the later\n"
    "processes once a check of it failed (INCORRECT) or once the upper bound of its reduction is below\n"
    "the margin (futile; docs/statistics.md), and each candidate's device and wall seconds are\n"
    "recorded and reported.  Every check still runs on every candidate a process runs.\n";

static const char footer[] =
    "Exit status: 0 a confirmation plan was written, 1 no candidate is FASTER after adjustment,\n"
    "2 usage or input error, 3 invalid campaign.\n";

int kg_cmd_screen(int argc, char **argv, const kg_settings *env)
{
    kg_run_opts o = { 0 };
    o.progress = 0;
    o.argc = argc;
    o.argv = argv;
    o.settings = env;
    int select = 1, full = 0;
    const char *confirm = NULL;
    const kg_cli_opt opts[] = {
        { .name = "out", .short_name = 'o', .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.out_dir,
          .help = "the screen's evidence folder (must not hold a campaign already)" },
        { .name = "backend", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &o.backend,
          .help = "override the plan's backend: auto, cpu, fake, cuda" },
        { .name = "progress", .kind = KG_CLI_FLAG, .dst = &o.progress, .value = 1, .help = "progress line on stderr" },
        { .name = "quiet-window", .arg = "S", .kind = KG_CLI_REAL, .dst = &o.quiet_s, .min = 0, .max = 1e9,
          .seen = &o.has_quiet, .help = "quiet window before each process, s (default: the plan's quiet key)" },
        { .name = "select", .arg = "K", .kind = KG_CLI_INT, .dst = &select, .min = 1, .max = 1000,
          .help = "candidates to confirm (default 1: the best)" },
        { .name = "full", .kind = KG_CLI_FLAG, .dst = &full, .value = 1,
          .help = "no screening mode: every candidate timed in every process, as kgate run does" },
        { .name = "confirm", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &confirm,
          .help = "the confirmation plan (default: next to PLAN, NAME-confirm.kg; FILE.frozen beside it)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "screen", .args = "PLAN", .about = about, .opts = opts, .footer = footer,
                               .quiet_help = "no ranking on stdout: the one line on stderr that says what is left to confirm" };
    int parsed = kg_cli_parse(&spec, argc, argv, &o.plan_path);
    if (parsed != KG_CLI_GO) return parsed;
    o.screen = full ? 2 : 1;

    char dir[1024] = "";
    kg_analysis an;
    kg_err err = { 0 };
    int rc = kg_campaign_run(&o, dir, sizeof dir, &an, &err);
    if (rc != KG_OK) {
        int st = kg_cli_fail(rc, err.msg);
        if (dir[0] != '\0') fprintf(stderr, "kgate: evidence so far is in %s\n", dir);
        return st;
    }
    kg_plan *plan = NULL;
    kg_screen sc = { 0 };
    kg_screening scr = { 0 };
    kg_evidence ev = { 0 };
    char cpath[1100], frozen[1100];
    int status = KG_EXIT_PASS;
    if ((rc = kg_plan_load(o.plan_path, &plan, &err)) != KG_OK || (rc = kg_evidence_load(dir, &ev, &err)) != KG_OK ||
        (rc = kg_screening_derive(&ev, &scr, &err)) != KG_OK ||
        (rc = kg_screen_rank_arms(plan, &an, &scr, dir, select, &sc, &err)) != KG_OK) {
        status = kg_cli_fail(rc, err.msg);
        goto done;
    }
    if (!kg_cli_quiet) fputs(sc.table.buf, stdout);
    if (sc.chosen == 0) {
        if (!kg_cli_quiet) printf("\nNo candidate is FASTER after the family's adjustment: nothing to confirm.\n");
        fprintf(stderr, "kgate: screen: no candidate to confirm\nkgate: evidence in %s\n", dir);
        status = KG_EXIT_FAIL;
        goto done;
    }
    if ((rc = kg_screen_write_confirm(plan, &sc, dir, o.plan_path, confirm, cpath, frozen, sizeof cpath, &err)) !=
        KG_OK) {
        status = kg_cli_fail(rc, err.msg);
        goto done;
    }
    if (!kg_cli_quiet) printf("\nConfirmation plan: %s (frozen: %s), with %s and a fresh seed. The claim is its run:\n\n"
           "    kgate run --frozen %s %s\n", cpath, frozen, sc.chosen_names, frozen, cpath);
    fprintf(stderr, "kgate: screen: %d of %d candidate%s to confirm; evidence in %s\n", sc.chosen, sc.nr,
            sc.nr == 1 ? "" : "s", dir);
done:
    kg_screen_free(&sc);
    kg_screening_free(&scr);
    kg_evidence_free(&ev);
    kg_plan_free(plan);
    kg_analysis_free(&an);
    return status;
}
