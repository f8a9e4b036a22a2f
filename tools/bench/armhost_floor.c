/* armhost_floor.c: the cpu backend's request floor, measured through the
 * public backend API (kgate/backend.h) alone, so that one source builds
 * against any kgate tree: the empty kernel of the noop op (kernels/cpu/
 * noop.c) timed in its sandboxed arm host (one request over the socket
 * per sample, the worker's clock around it) and trusted in the process
 * (one call between two clock reads), interleaved sample by sample.
 * Prints the median, p10 and p90 of each, in microseconds.
 *
 *   make && cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc -o build/armhost_floor \
 *       tools/bench/armhost_floor.c build/libkgate.a -Wl,-Bstatic -linih -lgsl -lseccomp -lzstd \
 *       -Wl,-Bdynamic -ljansson -lcrypto -lopenblas -ldl -lm -lpthread
 *   KGATE_LOCK_DIR=$(mktemp -d) build/armhost_floor build/kgate [samples]   (from the repository root) */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kgate/backend.h"
#include "kgate/plan.h"
#include "kgate/settings.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    printf("%-9s samples %d median_us %.2f p10_us %.2f p90_us %.2f\n", what, n, v[n / 2] / 1e3, v[n / 10] / 1e3,
           v[n * 9 / 10] / 1e3);
}

static int fail(const char *what, const kg_err *e)
{
    fprintf(stderr, "armhost_floor: %s: %s\n", what, e->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: armhost_floor KGATE [samples]   (from the repository root)\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    if (n < 10) n = 10;
    char repo[PATH_MAX], inc[PATH_MAX + 16], tmp[] = "/tmp/kgate-floor-XXXXXX", text[2 * PATH_MAX + 512];
    if (getcwd(repo, sizeof repo) == NULL || mkdtemp(tmp) == NULL) return 1;
    snprintf(inc, sizeof inc, "%s/include", repo);
    size_t len = (size_t)snprintf(text, sizeof text,
        "[campaign]\nbackend = cpu\ntimeout = 60\n[case empty]\nop = noop\ndtype = f32\n"
        "[arm in_worker]\nop = noop\nrole = baseline\nsource = %s/kernels/cpu/noop.c\ntrusted = yes\n"
        "[arm arm_host]\nop = noop\nrole = candidate\nsource = %s/kernels/cpu/noop.c\n", repo, repo);
    kg_settings set = *kg_settings_defaults();
    set.armhost_exe = argv[1];
    set.include_dir = inc;
    kg_err err = { 0 };
    kg_plan *plan = NULL;
    kg_backend *be = NULL;
    if (kg_plan_parse(text, len, "floor.kg", tmp, &plan, &err) != KG_OK) return fail("plan", &err);
    if (kg_backend_open("cpu", plan, &set, &be, NULL, 0, &err) != KG_OK) return fail("backend", &err);
    kg_kernel *k[2] = { NULL, NULL };
    for (int a = 0; a < 2; a++) {
        kg_binding b;
        memset(&b, 0, sizeof b);
        b.kase = &plan->cases[0];
        b.pack = 1;
        if (kg_backend_build(be, plan, a, tmp, &err) != KG_OK || kg_backend_load(be, plan, a, 0, tmp, &k[a], &err) != KG_OK ||
            kg_backend_bind(be, k[a], &b, &err) != KG_OK)
            return fail(plan->arms[a].name, &err);
    }
    double *v[2] = { calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double)) };
    if (v[0] == NULL || v[1] == NULL) return 1;
    kg_sample_ctx sc = { 0 };
    for (int i = -n / 10; i < n; i++)   /* a tenth of them warm-up */
        for (int a = 0; a < 2; a++) {
            double ns = 0;
            if (kg_backend_time(be, k[a], &sc, &ns, &err) != KG_OK) return fail(plan->arms[a].name, &err);
            if (i >= 0) v[a][i] = ns;
        }
    report("arm_host", v[1], n);
    report("in_worker", v[0], n);
    for (int a = 0; a < 2; a++) kg_backend_unload(be, k[a]);
    kg_backend_close(be);
    kg_plan_free(plan);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) != 0;
}
