/* cli.h: the subcommands of the kgate command line and the services they
 * share (cli.c): the option tables that parse a command line and print
 * its --help, and library errors as exit statuses.
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

#include <stdio.h>
#include "kgate/err.h"
#include "kgate/settings.h"

enum { KG_EXIT_PASS = 0, KG_EXIT_FAIL = 1, KG_EXIT_USAGE = 2, KG_EXIT_INVALID = 3, KG_EXIT_WORKER = 4 };

/* The exit statuses above, as the text `kgate --help` ends with. */
extern const char kg_cli_exit_text[];

/* The commands; each returns the process exit status.  env is the
 * environment, read once by main (kg_cli_settings_from_env); the commands
 * that run campaigns or workers hand it down in their options. */
int kg_cmd_run(int argc, char **argv, const kg_settings *env);
int kg_cmd_merge(int argc, char **argv, const kg_settings *env);
#define KG_SHARD_ARGS_MAX 4096
/* kgate merge's body (cmd_merge.c), also the end of run --devices and of
 * a Slurm campaign's merge job: an exit status */
int kg_cli_merge_into(const char *out, const char *const *dirs, int n, const char *key, const char *pub,
                      const char *ledger, int argc, char **argv, const kg_settings *env, int quiet);
int kg_cmd_slurm(int argc, char **argv, const kg_settings *env);
/* kgate run --devices LIST (run_devices.c): one `kgate run --shard I/N
 * --device D` child per device, in parallel, then the merge into out_dir */
int kg_cli_run_devices(int argc, char **argv, const kg_settings *env, const char *plan, const char *out_dir,
                       const char *devices, const char *key, int quiet, int json);
int kg_cmd_check(int argc, char **argv, const kg_settings *env);
int kg_cmd_report(int argc, char **argv, const kg_settings *env);
int kg_cmd_verify(int argc, char **argv, const kg_settings *env);
int kg_cmd_freeze(int argc, char **argv, const kg_settings *env);
int kg_cmd_size(int argc, char **argv, const kg_settings *env);
int kg_cmd_compare(int argc, char **argv, const kg_settings *env);
int kg_cmd_screen(int argc, char **argv, const kg_settings *env);
int kg_cmd_new(int argc, char **argv, const kg_settings *env);
int kg_cmd_import(int argc, char **argv, const kg_settings *env);
int kg_cmd_list(int argc, char **argv, const kg_settings *env);
int kg_cmd_key(int argc, char **argv, const kg_settings *env);
int kg_cmd_worker(int argc, char **argv, const kg_settings *env);
int kg_cmd_armhost(int argc, char **argv, const kg_settings *env);   /* hidden: started by a worker */
int kg_cmd_opserver(int argc, char **argv, const kg_settings *env);  /* hidden: started by kgate verify */

/* ---- the environment (env.c) ---- */

/* Fills s from every environment variable kgate honours (the list is in
 * kgate/settings.h); an unset or empty variable is NULL, except
 * KGATE_FORBID (set and empty: no names) and CUDA_VISIBLE_DEVICES (quoted
 * as it is).  The numeric ones are checked: KGATE_NEGATIVE 0 or 1,
 * KGATE_FAKE_SLEEP_MS a number of milliseconds in [0, 1e6],
 * KGATE_FAULT_WRITE_AFTER a whole number >= 0, KGATE_FAKE_CRASH_CLOSE 0 or
 * 1; a malformed value is
 * KG_EUSAGE naming the variable.  The strings are the environment's own
 * (getenv); glibc never frees those, so a later setenv leaves them
 * valid. */
int kg_cli_settings_from_env(kg_settings *s, kg_err *err);


/* Prints "kgate: <message>" on stderr and returns the exit status for
 * library code rc (the list above). */
int kg_cli_fail(int rc, const char *msg);

/* Copies dir/report.md to stdout (nothing when it is missing). */
void kg_cli_print_report(const char *dir);

struct kg_analysis;
/* "kgate: gate PASS|FAIL[ (campaign INVALID)]: reason" on stderr; returns
 * the campaign's exit status (0 passed, 1 failed, 3 invalid). */
int kg_cli_gate_line(const struct kg_analysis *an);

/* 1 when arg is -h or --help. */
int kg_cli_is_help(const char *arg);

/* ---- option tables ----
 *
 * Each command declares its options once, as a table of kg_cli_opt; the
 * same table drives the parser (getopt_long underneath) and prints the
 * command's --help, so the two cannot disagree.  `--name=value` and
 * `--name value` are both accepted; long names must be given in full
 * (no abbreviations); -h and --help are always there, and so are -q and
 * --quiet (kg_cli_spec.quiet_help). */

typedef enum kg_cli_kind {
    KG_CLI_FLAG,   /* no value: *(int *)dst = value */
    KG_CLI_STRING, /* *(const char **)dst = the value, as given */
    KG_CLI_INT,    /* a whole number (decimal) in [min, max]: *(int *)dst */
    KG_CLI_REAL    /* a finite real number, read whole, in [min, max]: *(double *)dst */
} kg_cli_kind;

typedef struct kg_cli_opt {
    const char *name;  /* long name without "--"; NULL ends the table */
    char short_name;   /* 0: none ('h' is taken by --help) */
    const char *arg;   /* the value's name in the help ("DIR"); NULL for a flag */
    kg_cli_kind kind;
    void *dst;         /* where the value goes */
    int value;         /* KG_CLI_FLAG: what it stores */
    double min, max;   /* KG_CLI_INT, KG_CLI_REAL: the accepted range */
    int *seen;         /* when not NULL: set to 1 when the option is given */
    const char *help;  /* one sentence or more; the help printer wraps it */
} kg_cli_opt;

typedef struct kg_cli_spec {
    const char *cmd;        /* "run" */
    const char *args;       /* the one positional argument ("PLAN"); NULL: none */
    const char *about;      /* what the command does: printed after the usage line */
    const kg_cli_opt *opts; /* the table */
    const char *footer;     /* printed after the options; NULL: nothing */
    /* a command of several positional arguments (kgate merge OUT
     * DIR...): they go to rest[0..*nrest), at most rest_cap of them, and
     * positional receives the first */
    const char **rest;
    int *nrest, rest_cap;
    /* -q, --quiet, which every command takes: a table without an entry of
     * its own for it gets one that sets kg_cli_quiet, with this help
     * (NULL: KG_CLI_QUIET_HELP) */
    const char *quiet_help;
} kg_cli_spec;

/* 1 once -q or --quiet was given to a command whose table has no entry
 * of its own for it: the command prints less (its quiet_help says what). */
extern int kg_cli_quiet;
#define KG_CLI_QUIET_HELP "less output: nothing on stdout; errors on stderr, the answer in the exit status"

/* Whole numbers (decimal, no leading space, no fraction) and finite
 * reals read whole, in [min, max]: KG_OK with *out, else KG_EUSAGE. */
int kg_cli_read_int(const char *s, long long min, long long max, long long *out);
int kg_cli_read_real(const char *s, double min, double max, double *out);

/* kg_cli_parse's "go on": no exit status yet. */
enum { KG_CLI_GO = -1 };

/* Parses argv[1..argc) (argv[0] is the command's name) against spec's
 * table, filling the destinations.  argv itself is left as it is (its
 * order is recorded in meta.json).  Returns KG_CLI_GO with *positional the
 * positional argument (NULL when spec->args is NULL); KG_EXIT_PASS after
 * printing the help on stdout (-h, --help); KG_EXIT_USAGE after a one-line
 * error on stderr (unknown option, missing or malformed value, extra
 * argument) or, when the positional argument is missing, the help on
 * stderr. */
int kg_cli_parse(const kg_cli_spec *spec, int argc, char **argv, const char **positional);

/* The same for a command of several positional arguments (kgate
 * compare DIR...): up to cap of them into positional[0 .. *npos), at
 * least one (none: the help on stderr, KG_EXIT_USAGE); more than cap is
 * a one-line error. */
int kg_cli_parse_args(const kg_cli_spec *spec, int argc, char **argv, const char **positional, int cap, int *npos);

/* Prints spec's help: the usage line made from the table, about, the
 * options with their help, footer. */
void kg_cli_help(const kg_cli_spec *spec, FILE *fp);

#endif
