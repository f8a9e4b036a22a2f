/* run_devices.c: `kgate run PLAN --devices 0,1,2,3 -o DIR`: one shard per
 * device, each a child `kgate run PLAN --shard I/N --device D -o
 * DIR/shards/I` (its own device lock, quiet-host watch and telemetry, as
 * any campaign on that device), all at once; then kgate merge into DIR.
 * A shard that fails (exit 2: an error, not a verdict) fails the whole
 * command with its message, and its folder is kept for --resume. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "base/util.h"
#include "evidence/ledger.h"

extern char **environ;

#define MAX_DEV 64

/* The options of the parent's command line a shard takes too: the key,
 * the backend and the host watch's settings. */
static const char *const passed[] = { "--key", "--backend", "--lock-timeout", "--quiet-window", "--quiet-budget",
                                      "--forbid", "--max-load", "--repeats", "--frozen" };

static int passes(const char *arg, int *takes_value)
{
    for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++) {
        size_t n = strlen(passed[i]);
        if (strncmp(arg, passed[i], n) == 0 && (arg[n] == '\0' || arg[n] == '=')) {
            *takes_value = arg[n] == '\0';
            return 1;
        }
    }
    return 0;
}

int kg_cli_run_devices(int argc, char **argv, const kg_settings *env, const char *plan, const char *out_dir,
                       const char *devices, const char *key, int quiet, int json)
{
    int dev[MAX_DEV], n = 0;
    if (out_dir == NULL) {
        fprintf(stderr, "kgate run --devices: needs -o DIR (the merged folder; the shards go to DIR/shards/I)\n");
        return KG_EXIT_USAGE;
    }
    if (json) {
        fprintf(stderr, "kgate run --devices: --json is not supported with --devices (read DIR/results.json)\n");
        return KG_EXIT_USAGE;
    }
    for (const char *p = devices; *p != '\0';) {
        char *end = NULL;
        long d = strtol(p, &end, 10);
        if (end == p || d < 0 || d > 1023 || (*end != ',' && *end != '\0') || n >= MAX_DEV) {
            fprintf(stderr, "kgate run --devices '%s': expected a comma-separated list of device indices (0,1,2,3), "
                    "at most %d\n", devices, MAX_DEV);
            return KG_EXIT_USAGE;
        }
        for (int i = 0; i < n; i++)
            if (dev[i] == d) {
                fprintf(stderr, "kgate run --devices '%s': device %ld twice\n", devices, d);
                return KG_EXIT_USAGE;
            }
        dev[n++] = (int)d;
        p = *end == ',' ? end + 1 : end;
    }
    if (n == 0) {
        fprintf(stderr, "kgate run --devices: no device given\n");
        return KG_EXIT_USAGE;
    }
    char exe[PATH_MAX], dirs[MAX_DEV][PATH_MAX], shard[MAX_DEV][32], dv[MAX_DEV][16], id[KG_CAMPAIGN_ID_MAX + 1],
        ledger[PATH_MAX + 16];
    kg_err err = { 0 };
    if (kg_self_exe(exe, sizeof exe, &err) != KG_OK) return kg_cli_fail(KG_EIO, err.msg);
    /* one campaign: one id and one ledger, DIR/ledger, for every shard */
    if (kg_campaign_id_new(id, &err) != KG_OK) return kg_cli_fail(KG_EIO, err.msg);
    snprintf(ledger, sizeof ledger, "%s/ledger", out_dir);
    snprintf(dirs[0], sizeof dirs[0], "%s/shards", out_dir);
    if (kg_mkdir_p(dirs[0], &err) != KG_OK) return kg_cli_fail(KG_EIO, err.msg);
    pid_t pid[MAX_DEV];
    int failed = 0;
    for (int i = 0; i < n; i++) {
        snprintf(dirs[i], sizeof dirs[i], "%s/shards/%d", out_dir, i);
        snprintf(shard[i], sizeof shard[i], "%d/%d", i, n);
        snprintf(dv[i], sizeof dv[i], "%d", dev[i]);
        char *av[64];
        int k = 0;
        av[k++] = exe;
        av[k++] = (char *)"run";
        av[k++] = (char *)plan;
        av[k++] = (char *)"--shard";
        av[k++] = shard[i];
        av[k++] = (char *)"--device";
        av[k++] = dv[i];
        av[k++] = (char *)"-o";
        av[k++] = dirs[i];
        av[k++] = (char *)"--quiet";
        av[k++] = (char *)"--campaign";
        av[k++] = id;
        av[k++] = (char *)"--ledger";
        av[k++] = ledger;
        for (int a = 1; a < argc && k < 60; a++) {
            int tv = 0;
            if (!passes(argv[a], &tv)) continue;
            av[k++] = argv[a];
            if (tv && a + 1 < argc && k < 60) av[k++] = argv[++a];
        }
        av[k] = NULL;
        int e = posix_spawn(&pid[i], exe, NULL, NULL, av, environ);
        if (e != 0) {
            fprintf(stderr, "kgate run --devices: cannot start shard %d: %s\n", i, strerror(e));
            pid[i] = -1;
            failed = 1;
        } else {
            fprintf(stderr, "kgate: shard %s on device %d: pid %ld, %s (campaign %s)\n", shard[i], dev[i], (long)pid[i],
                    dirs[i], id);
        }
    }
    int worst = KG_EXIT_PASS;
    for (int i = 0; i < n; i++) {
        int st = 0;
        if (pid[i] < 0) continue;
        while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR) {}
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        /* 0, 1, 3: the shard completed with a verdict; anything else is an error */
        if (code != KG_EXIT_PASS && code != KG_EXIT_FAIL && code != KG_EXIT_INVALID) {
            fprintf(stderr, "kgate run --devices: shard %s on device %d failed (exit %d, its message above); its "
                    "folder %s is kept: kgate run %s --shard %s --device %d --resume %s continues it (the same attempt "
                    "of campaign %s)\n", shard[i], dev[i], code, dirs[i], plan, shard[i], dev[i], dirs[i], id);
            failed = 1;
        }
        if (code > worst) worst = code;
    }
    if (failed) return KG_EXIT_USAGE;
    const char *list[MAX_DEV];
    for (int i = 0; i < n; i++) list[i] = dirs[i];
    return kg_cli_merge_into(out_dir, list, n, key, NULL, ledger, argc, argv, env, quiet);
}
