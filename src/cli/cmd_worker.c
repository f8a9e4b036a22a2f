/* cmd_worker.c: `kgate worker`, started by the supervisor only. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include "run/worker.h"
#include "plan/shard.h"
#include "cli.h"

static const char about[] =
    "Runs one process of a campaign: loads every arm, runs the admission checks and the timed\n"
    "rounds of its schedule slot, and sends its rows to the supervisor through the pipe --rows-fd\n"
    "(the folder it only reads).  kgate run starts it (with --plan, --out, --proc, --backend,\n"
    "--rows-fd, --salt-fd, --token-fd and --now-fd); it is not meant to be run by hand: without the token\n"
    "kgate run issues to each worker it starts, it refuses to run.\n";

static const char footer[] =
    "Exit status: 0 the process completed, 2 usage error, 4 the process failed (its log says why).\n";

int kg_cmd_worker(int argc, char **argv, const kg_settings *env)
{
    kg_worker_opts o = { 0 };
    o.proc = -1;
    o.slot = -1;
    o.seq = -1;
    o.rows_fd = -1;
    o.salt_fd = -1;
    o.token_fd = -1;
    o.go_fd = -1;
    o.now_fd = -1;
    o.device = -1;
    int parent = 0;
    const char *shard = NULL;
    kg_settings s = *env; /* the environment, then what the supervisor says */
    o.settings = &s;
    const kg_cli_opt opts[] = {
        { .name = "plan", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &o.plan_path, .help = "the campaign's plan" },
        { .name = "out", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.out_dir, .help = "the evidence folder" },
        { .name = "backend", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &o.backend,
          .help = "the resolved backend: cpu, fake, cuda" },
        { .name = "proc", .arg = "N", .kind = KG_CLI_INT, .dst = &o.proc, .min = 0, .max = 999999,
          .help = "the process index" },
        { .name = "shard", .arg = "SHARD", .kind = KG_CLI_STRING, .dst = &shard,
          .help = "run only the cases of shard I of N (shard.h)" },
        { .name = "device", .arg = "D", .kind = KG_CLI_INT, .dst = &o.device, .min = 0, .max = 1023,
          .help = "open device D instead of the plan's device" },
        { .name = "seq", .arg = "N", .kind = KG_CLI_INT, .dst = &o.seq, .min = 0, .max = 999999999,
          .help = "the process index its seeds and load order take (a by-process shard's, shard.h; default: the "
                  "process index)" },
        { .name = "slot", .arg = "N", .kind = KG_CLI_INT, .dst = &o.slot, .min = 0, .max = 999999,
          .help = "the schedule slot it fills (a repeat keeps its slot's direction; default: the process index)" },
        { .name = "rows-fd", .arg = "N", .kind = KG_CLI_INT, .dst = &o.rows_fd, .min = 3, .max = 1023,
          .help = "the pipe to the supervisor: every record goes there as frames (channel.h)" },
        { .name = "salt-fd", .arg = "N", .kind = KG_CLI_INT, .dst = &o.salt_fd, .min = 3, .max = 1023,
          .help = "a pipe holding the campaign's input salt, read once and closed before any arm loads" },
        { .name = "token-fd", .arg = "N", .kind = KG_CLI_INT, .dst = &o.token_fd, .min = 3, .max = 1023,
          .help = "a pipe holding the supervisor's token for this worker (32 random bytes), read once and closed "
                  "before any arm loads: the worker authenticates its rows with it" },
        { .name = "go-fd", .arg = "N", .kind = KG_CLI_INT, .dst = &o.go_fd, .min = 3, .max = 1023,
          .help = "a pipe from the supervisor: before its first timed phase the worker says it is ready and waits "
                  "for one byte here (the host has been quiet for the plan's window)" },
        { .name = "now-fd", .arg = "N", .kind = KG_CLI_INT, .dst = &o.now_fd, .min = 3, .max = 1023,
          .help = "a sealed page from the supervisor, mapped and closed at once: the worker writes there which "
                  "case, arm, phase and round it runs (a timed sample's only there, not as a NOW frame)" },
        { .name = "parent", .arg = "PID", .kind = KG_CLI_INT, .dst = &parent, .min = 1, .max = 2147483647,
          .help = "the supervisor's pid: the worker ends if its parent is not that one" },
        { .name = "warm", .arg = "S", .kind = KG_CLI_REAL, .dst = &o.warm_s, .min = 0, .max = 600,
          .help = "before the first timed phase, run the first arm until the device's SM clock stops rising, "
                  "for at most S seconds" },
        { .name = "progress", .kind = KG_CLI_FLAG, .dst = &o.progress, .value = 1,
          .help = "\"progress: case C round r/R\" lines on stderr (its log)" },
        { .name = "check-only", .kind = KG_CLI_FLAG, .dst = &o.check_only, .value = 1,
          .help = "admission checks only, no timed rounds" },
        { .name = "smoke", .kind = KG_CLI_FLAG, .dst = &o.smoke, .value = 1,
          .help = "the plan's smoke run (kgate run --smoke): a few samples, no verdict" },
        { .name = "screen", .kind = KG_CLI_FLAG, .dst = &o.screen, .value = 1,
          .help = "a screen in screening mode: record each arm's own time; an arm whose sampled check fails is "
                  "timed no further" },
        { .name = "skip", .arg = "LIST", .kind = KG_CLI_STRING, .dst = &o.skip,
          .help = "arms (plan indices, comma-separated) this process leaves out: a screen's drops" },
        { .name = "negative", .kind = KG_CLI_FLAG, .dst = &s.negative, .value = 1,
          .help = "build the arms as the numerical negative (every KGATE_STORE stores zero)" },
        { .name = "hide", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &s.hide_dir,
          .help = "the folder of the key the campaign signs with: its arm hosts cannot read it" },
        { .name = "negative-arm", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &s.negative_arm,
          .help = "with --negative: only the arm NAME" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "worker", .about = about, .opts = opts, .footer = footer };
    int parsed = kg_cli_parse(&spec, argc, argv, NULL);
    if (parsed != KG_CLI_GO) return parsed;
    o.parent = parent;
    if (shard != NULL) {
        kg_err se = { 0 };
        if (kg_shard_parse(shard, &o.shard_i, &o.shard_n, &se) != KG_OK) return kg_cli_fail(KG_EUSAGE, se.msg);
    }
    if (o.token_fd < 0) {
        fprintf(stderr, "kgate worker: refused: no token from a supervisor (--token-fd N); a worker runs only under "
                "kgate run, which issues a fresh token to each worker it starts\n");
        return KG_EXIT_USAGE;
    }
    if (o.plan_path == NULL || o.out_dir == NULL || o.backend == NULL || o.proc < 0 || o.rows_fd < 0 ||
        o.salt_fd < 0) {
        fprintf(stderr, "kgate worker: needs --plan, --out, --backend, --proc, --rows-fd and --salt-fd (it is started "
                "by kgate run)\n");
        return KG_EXIT_USAGE;
    }
    /* the evidence folder, which its cuda arm hosts must not see */
    char out_abs[PATH_MAX];
    if (realpath(o.out_dir, out_abs) != NULL) s.evidence_dir = out_abs;
    kg_err err = { 0 };
    int rc = kg_worker_main(&o, &err);
    if (rc != KG_OK) {
        fprintf(stderr, "kgate worker %d: %s\n", o.proc, err.msg);
        return KG_EXIT_WORKER;
    }
    return 0;
}
