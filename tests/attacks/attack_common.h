/* attack_common.h: helpers shared by the attack kernels of tests/attacks/.
 *
 * Every attack kernel is a candidate for op rowsum (f32 inputs) that
 * leaves the honest result in its output, so that the output checks
 * alone do not catch it, and cheats in one other way.  None of them is
 * really faster than the naive baseline: each does the naive work (or
 * skips it only by cheating), so a FASTER verdict is a successful attack.
 *
 * Include after defining _GNU_SOURCE and including kgate/kernel.h. */
#ifndef KGATE_ATTACK_COMMON_H
#define KGATE_ATTACK_COMMON_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The naive rowsum, bit for bit the baseline's result
 * (kernels/cpu/rowsum_naive.c), followed by a quarter of the rows once
 * more into a sink.  Two shared objects with the same loop can differ by
 * several percent in speed through code placement alone, which is enough
 * for an honest copy to come out FASTER at a 5% margin on some CPUs; the
 * extra quarter keeps an attacker whose cheat did not fire about 1.25x
 * slower than the baseline.  Every cheat here gains 2x or more when it
 * works, so a working cheat still comes out FASTER. */
static inline void atk_rowsum(const kg_kargs *a)
{
    const void *X = a->in[0];
    float *Y = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N;
    for (int64_t i = 0; i < M; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < N; j++) acc += kg_load(X, dt, i * N + j);
        KGATE_STORE(&Y[i], acc);
    }
    static volatile float atk_sink;
    for (int64_t i = 0; i < (M + 3) / 4; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < N; j++) acc += kg_load(X, dt, i * N + j);
        atk_sink = acc;
    }
}

/* One row of the naive rowsum, in float, in the baseline's order. */
static inline float atk_row_f(const kg_kargs *a, int64_t i)
{
    float acc = 0.0f;
    for (int64_t j = 0; j < a->N; j++) acc += kg_load(a->in[0], a->dtype, i * a->N + j);
    return acc;
}

/* One row in double (how the float64 reference is computed, up to order). */
static inline double atk_row_d(const kg_kargs *a, int64_t i)
{
    double acc = 0.0;
    for (int64_t j = 0; j < a->N; j++) acc += (double)kg_load(a->in[0], a->dtype, i * a->N + j);
    return acc;
}

/* The worker's own command line: `kgate worker --plan P --out DIR --proc N ...`.
 * Fills out (the --out value, as given) and *proc; returns 0 when found. */
static inline int atk_worker_args(char *out, size_t cap, int *proc)
{
    char buf[8192];
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    int found = 0;
    *proc = -1;
    for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
        char *next = p + strlen(p) + 1;
        if (next >= buf + n) break;
        if (strcmp(p, "--out") == 0) { snprintf(out, cap, "%s", next); found = 1; }
        if (strcmp(p, "--proc") == 0) *proc = atoi(next);
    }
    return found ? 0 : -1;
}

/* Calls through __builtin_return_address: the first call of a kernel is
 * always a checked run (kgate checks every arm before timing it), so the
 * return address of that call names "a checked run" and any other one
 * "the timing loop".  ATK_TIMED() must be used in the entry function. */
#define ATK_TIMED()                                                    \
    __extension__({                                                    \
        static void *atk_ra_checked;                                   \
        void *atk_ra = __builtin_return_address(0);                    \
        if (atk_ra_checked == NULL) atk_ra_checked = atk_ra;           \
        atk_ra != atk_ra_checked;                                      \
    })

/* Keeps this kernel's shared object mapped until the process exits
 * (RTLD_NODELETE): kgate dlcloses an arm at the end of a case, which would
 * unmap the code of a thread the kernel left running (and run its
 * destructors early).  fn is any function of the object.  Fills name
 * (may be NULL) with the object's file name.  Needs <dlfcn.h>. */
#ifdef RTLD_NODELETE
static inline int atk_pin_self(void (*fn)(const kg_kargs *), char *name, size_t cap)
{
    Dl_info info;
    void *p;
    memcpy(&p, &fn, sizeof p);
    if (dladdr(p, &info) == 0 || info.dli_fname == NULL) return -1;
    if (dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == NULL) return -1;
    if (name != NULL) snprintf(name, cap, "%s", info.dli_fname);
    return 0;
}
#endif

/* One line on stderr (the process's log), once per call site and
 * process, when the cheat is armed: tells "defended" from "did not fire". */
#define ATK_NOTE(msg)                                                   \
    do {                                                                \
        static int atk_noted;                                           \
        if (!atk_noted) {                                               \
            atk_noted = 1;                                              \
            fprintf(stderr, "kgate-attack: %s\n", msg);                 \
        }                                                               \
    } while (0)

/* Walks the readable, writable private mappings of this process. */
typedef int (*atk_region_fn)(char *lo, char *hi, const char *name, void *ctx);
static inline int atk_each_rw_region(atk_region_fn fn, void *ctx)
{
    FILE *fp = fopen("/proc/self/maps", "r");
    if (fp == NULL) return -1;
    char line[512];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, fp) != NULL) {
        unsigned long lo, hi;
        char perm[8] = "", name[400] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %399[^\n]", &lo, &hi, perm, name) < 3) continue;
        if (perm[0] != 'r' || perm[1] != 'w') continue;
        if (strstr(name, "[stack") != NULL || strstr(name, "[vvar") != NULL) continue;
        if (hi - lo > (256ul << 20)) continue;
        rc = fn((char *)lo, (char *)hi, name, ctx);
    }
    fclose(fp);
    return rc;
}

#endif
