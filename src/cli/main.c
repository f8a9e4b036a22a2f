/* main.c: `kgate`, the command line.  Reads the environment once, then
 * dispatches to one subcommand through the command table, which also
 * prints the usage text; nothing else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "base/util.h"

/* OpenBLAS, linked into kgate for the float64 references, starts a pool of
 * threads in its constructor, and each of them spins (sched_yield) for about
 * 2^28 cycles after the library starts and after every call before it
 * sleeps: a tenth of a second of a core in every kgate process (supervisor,
 * worker, op server), beside the arms being timed.  OPENBLAS_THREAD_TIMEOUT=4
 * (2^4 cycles, the least OpenBLAS takes) puts them to sleep at once; a call
 * still wakes them.  OpenBLAS reads it in its constructor.  In the static
 * build (make portable) this runs from .preinit_array, after the C library
 * has started and before any constructor, so it holds for this process too;
 * where OpenBLAS is a shared library its constructor runs first, and the
 * C library's start resets the environment after .preinit_array, so main()
 * sets it again for the processes kgate starts (workers, op servers; an arm
 * host runs with OPENBLAS_NUM_THREADS=1).  A value the user set is kept. */
static void quiet_blas_threads(void)
{
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
}
static void preinit_quiet_blas_threads(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    quiet_blas_threads();
}
__attribute__((used, section(".preinit_array"))) static void (*const kg_preinit_blas)(int, char **, char **) =
    preinit_quiet_blas_threads;

typedef struct kg_cli_cmd {
    const char *name;
    const char *args;    /* what follows the name in the usage text */
    int (*fn)(int argc, char **argv, const kg_settings *env);
    const char *summary; /* one line; NULL: hidden from the usage text */
} kg_cli_cmd;

static const kg_cli_cmd commands[] = {
    { "run", "PLAN [-o DIR]", kg_cmd_run,
      "run a campaign: checks, timed rounds in fresh processes, verdict, evidence" },
    { "merge", "OUT SHARD_DIR...", kg_cmd_merge,
      "merge the shards of a campaign (run --shard I/N) into one signed evidence folder" },
    { "slurm", "PLAN --shards N", kg_cmd_slurm,
      "write (or --submit) a Slurm job array of shards and its dependent merge job" },
    { "check", "PLAN", kg_cmd_check,
      "correctness (admission) checks only; --negative ARM for the numerical negative" },
    { "report", "DIR", kg_cmd_report,
      "regenerate report.md, report.html, results.json and results.csv from an evidence folder" },
    { "verify", "DIR", kg_cmd_verify,
      "check an evidence folder: hashes, recomputed reports, replayed outputs" },
    { "compare", "A B [C ...]", kg_cmd_compare,
      "compare the campaigns of evidence folders: per case and arm the change, a verdict, a trend" },
    { "size", "PLAN EVIDENCE", kg_cmd_size,
      "processes, rounds and samples for an effect, from a pilot's evidence" },
    { "screen", "PLAN", kg_cmd_screen,
      "an exploration campaign over many candidates: an adjusted ranking and a frozen confirmation plan" },
    { "freeze", "PLAN [-o FILE]", kg_cmd_freeze, "write the canonical plan and its SHA-256, for run --frozen" },
    { "new", "plan [--op OP]", kg_cmd_new, "print a commented plan template to start from (--backend cpu or cuda)" },
    { "new", "op NAME", kg_cmd_new, "print an op module for a plan's [op NAME] to start from (docs/ops.md)" },
    { "import", "kernelbench PROBLEM.py", kg_cmd_import,
      "a KernelBench-style problem (and --candidate FILE) as a plan (docs/kernelbench.md)" },
    { "list", "", kg_cmd_list, "the ops and backends this kgate knows" },
    { "key", "init [--out DIR]", kg_cmd_key, "make an Ed25519 key pair that signs evidence folders (run --key)" },
    { "worker", "", kg_cmd_worker, "one process of a campaign (started by kgate run, not by hand)" },
    { "armhost", "", kg_cmd_armhost, NULL },   /* an untrusted CPU arm's process, started by a worker */
    { "opserver", "", kg_cmd_opserver, NULL }, /* an evidence folder's op code, started by kgate verify */
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *fp)
{
    fputs("usage: kgate COMMAND [options]\n"
          "\n"
          "Decides, with evidence, whether a candidate kernel is correct and faster than its baseline.\n"
          "\n"
          "commands:\n",
          fp);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (commands[i].summary == NULL) continue;
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", commands[i].name, commands[i].args[0] ? " " : "", commands[i].args);
        fprintf(fp, "  %-22s %s\n", head, commands[i].summary);
    }
    fprintf(fp, "  %-22s %s\n", "--version", "print the version");
    fprintf(fp, "\n`kgate help COMMAND` (or `kgate COMMAND --help`) describes a command; -q makes any command\n"
                "print less.\n%s", kg_cli_exit_text);
}

int main(int argc, char **argv)
{
    quiet_blas_threads();
    kg_settings env;
    kg_err err = { 0 };
    if (kg_cli_settings_from_env(&env, &err) != KG_OK) {
        fprintf(stderr, "kgate: %s\n", err.msg);
        return KG_EXIT_USAGE;
    }
    /* the crash-safety tests' full-disk fault, for this process's writes */
    kg_fault_write_after(env.fault_write_after);
    if (argc < 2) {
        usage(stderr);
        return KG_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 && argc >= 3) {
        /* kgate help COMMAND: that command's --help */
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (strcmp(argv[2], commands[i].name) == 0) {
                char *av[] = { argv[2], (char *)"--help", NULL };
                if (argc >= 4 && strcmp(argv[2], "new") == 0 && strcmp(argv[3], "op") == 0) {
                    char *avop[] = { argv[2], argv[3], (char *)"--help", NULL };
                    return commands[i].fn(3, avop, &env);
                }
                return commands[i].fn(2, av, &env);
            }
        fprintf(stderr, "kgate help: unknown command '%s' (kgate --help lists them)\n", argv[2]);
        return KG_EXIT_USAGE;
    }
    if (kg_cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return KG_EXIT_PASS;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("kgate %s (git %s)\n", kg_version(), kg_git_sha());
        return KG_EXIT_PASS;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1, &env);
    fprintf(stderr, "kgate: unknown command '%s' (try kgate --help)\n", cmd);
    return KG_EXIT_USAGE;
}
