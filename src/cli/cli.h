/* cli.h: the subcommands of the kgate command line and the services they
 * share (cli.c): library errors as exit statuses, --help.
 *
 * Exit statuses, the one list of them (main.c prints it under
 * `kgate --help`, from kg_cli_exit_text):
 *   0  gate passed; for check and verify: every check passed, verified
 *   1  gate failed or inconclusive; a check failed; verify found a mismatch
 *   2  usage or input error: bad command line, bad environment variable,
 *      malformed plan, missing file, an arm that does not compile or load
 *      (KG_EUSAGE, KG_EINPUT, KG_EIO, KG_EUNSUPPORTED and KG_EBACKEND:
 *      the backend errors a plan can cause are its kernels failing to
 *      compile or load, and tests/cli/cli_errors.sh pins them at 2)
 *   3  invalid campaign: control failed, no usable process, or any other
 *      library error (KG_ENOMEM, KG_ECHECK, KG_EINADMISSIBLE, KG_EINTERNAL)
 *   4  (kgate worker only) the worker process failed; the supervisor
 *      records it */
#ifndef KGATE_CLI_H
#define KGATE_CLI_H

enum { KG_EXIT_PASS = 0, KG_EXIT_FAIL = 1, KG_EXIT_USAGE = 2, KG_EXIT_INVALID = 3, KG_EXIT_WORKER = 4 };

/* The exit statuses above, as the text `kgate --help` ends with. */
extern const char kg_cli_exit_text[];

/* The commands; each returns the process exit status. */
int kg_cmd_run(int argc, char **argv);
int kg_cmd_check(int argc, char **argv);
int kg_cmd_report(int argc, char **argv);
int kg_cmd_verify(int argc, char **argv);
int kg_cmd_freeze(int argc, char **argv);
int kg_cmd_list(int argc, char **argv);
int kg_cmd_worker(int argc, char **argv);

/* Prints "kgate: <message>" on stderr and returns the exit status for
 * library code rc (the list above). */
int kg_cli_fail(int rc, const char *msg);

/* 1 when arg is -h or --help. */
int kg_cli_is_help(const char *arg);

#endif
