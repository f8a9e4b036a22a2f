/* main.c: `kgate`, the command line.  Dispatches to one subcommand and
 * turns library return codes into exit statuses; nothing else. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "kgate/err.h"

int kg_cmd_verify(int argc, char **argv);   /* cmd_verify.c */
int kg_cmd_freeze(int argc, char **argv);   /* cmd_freeze.c */

static const char usage[] =
    "usage: kgate COMMAND [options]\n"
    "\n"
    "Decides, with evidence, whether a candidate kernel is correct and faster than its baseline.\n"
    "\n"
    "commands:\n"
    "  run PLAN [-o DIR]      run a campaign: checks, timed rounds in fresh processes, verdict, evidence\n"
    "  check PLAN             correctness (admission) checks only; --negative ARM for the numerical negative\n"
    "  report DIR             regenerate report.md, results.json and results.csv from an evidence folder\n"
    "  verify DIR             check an evidence folder: hashes, recomputed reports, replayed outputs\n"
    "  freeze PLAN [-o FILE]  write the canonical plan and its SHA-256, for run --frozen\n"
    "  list                   the ops and backends this kgate knows\n"
    "  --version              print the version\n"
    "\n"
    "`kgate COMMAND --help` describes a command.  Exit status: 0 gate passed, 1 gate failed or\n"
    "inconclusive, 2 usage or input error, 3 invalid campaign (control failed or no usable process).\n";

int kg_cli_fail(int rc, const char *msg)
{
    fprintf(stderr, "kgate: %s\n", msg);
    return rc == KG_EUSAGE || rc == KG_EINPUT || rc == KG_EIO || rc == KG_EBACKEND || rc == KG_EUNSUPPORTED
               ? KG_EXIT_USAGE
               : KG_EXIT_INVALID;
}

int kg_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int main(int argc, char **argv)
{
    (void)kg_cli_settings();   /* the environment, read once */
    if (argc < 2) {
        fputs(usage, stderr);
        return KG_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (kg_cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("kgate %s (git %s)\n", KG_VERSION, KG_GIT_SHA);
        return 0;
    }
    if (strcmp(cmd, "run") == 0) return kg_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return kg_cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0) return kg_cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "verify") == 0) return kg_cmd_verify(argc - 1, argv + 1);
    if (strcmp(cmd, "freeze") == 0) return kg_cmd_freeze(argc - 1, argv + 1);
    if (strcmp(cmd, "list") == 0) return kg_cmd_list(argc - 1, argv + 1);
    if (strcmp(cmd, "worker") == 0) return kg_cmd_worker(argc - 1, argv + 1);
    fprintf(stderr, "kgate: unknown command '%s' (try kgate --help)\n", cmd);
    return KG_EXIT_USAGE;
}
