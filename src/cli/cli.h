/* cli.h: the subcommands of the kgate command line.  Each returns the
 * process exit status: 0 gate passed (or check passed), 1 gate failed or
 * inconclusive (or a check failed), 2 usage or input error, 3 invalid
 * campaign (control failed, no usable process). */
#ifndef KGATE_CLI_H
#define KGATE_CLI_H

#include "kgate/settings.h"

enum { KG_EXIT_PASS = 0, KG_EXIT_FAIL = 1, KG_EXIT_USAGE = 2, KG_EXIT_INVALID = 3 };

int kg_cmd_run(int argc, char **argv);
int kg_cmd_check(int argc, char **argv);
int kg_cmd_report(int argc, char **argv);
int kg_cmd_list(int argc, char **argv);
int kg_cmd_worker(int argc, char **argv);

/* Prints "kgate: <message>" on stderr and returns the exit status for
 * library code rc. */
int kg_cli_fail(int rc, const char *msg);

/* 1 when arg is -h or --help. */
int kg_cli_is_help(const char *arg);

/* The environment kgate honours, read on the first call (which also sets
 * the fault-injection hook, KGATE_FAULT_WRITE_AFTER); settings_env.c. */
const kg_settings *kg_cli_settings(void);

#endif
