/* cmd_worker.c: `kgate worker`, started by the supervisor only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "campaign.h"
#include "cli.h"

int kg_cmd_worker(int argc, char **argv)
{
    kg_worker_opts o = { 0 };
    kg_settings s = *kg_cli_settings();
    o.settings = &s;
    o.proc = -1;
    o.slot = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--plan") == 0 && i + 1 < argc) o.plan_path = argv[++i];
        else if (strcmp(a, "--out") == 0 && i + 1 < argc) o.out_dir = argv[++i];
        else if (strcmp(a, "--backend") == 0 && i + 1 < argc) o.backend = argv[++i];
        else if (strcmp(a, "--proc") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            o.proc = (*end == '\0' && v >= 0 && v < 1000000) ? (int)v : -1;
        }
        else if (strcmp(a, "--slot") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 0 || v >= 1000000) { fprintf(stderr, "kgate worker: bad --slot\n"); return KG_EXIT_USAGE; }
            o.slot = (int)v;
        }
        else if (strcmp(a, "--check-only") == 0) o.check_only = 1;
        else if (strcmp(a, "--progress") == 0) o.progress = 1;
        else if (strcmp(a, "--negative") == 0) s.negative = 1;
        else if (strcmp(a, "--negative-arm") == 0 && i + 1 < argc) s.negative_arm = argv[++i];
        else { fprintf(stderr, "kgate worker: unknown argument '%s' (the worker is started by kgate run)\n", a); return KG_EXIT_USAGE; }
    }
    if (o.plan_path == NULL || o.out_dir == NULL || o.backend == NULL || o.proc < 0) {
        fprintf(stderr, "kgate worker: needs --plan, --out, --backend and --proc (it is started by kgate run)\n");
        return KG_EXIT_USAGE;
    }
    kg_err err = { 0 };
    int rc = kg_worker_main(&o, &err);
    if (rc != KG_OK) {
        fprintf(stderr, "kgate worker %d: %s\n", o.proc, err.msg);
        return 4;
    }
    return 0;
}
