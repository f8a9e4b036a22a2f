/* cpu_peaks.c: the CPU backend's peak measurement (kgate/peaks.h), the
 * `peaks` slot of kg_backend_cpu.
 *
 * Runs in the supervisor (trusted code), on one core, before the first
 * process:
 *   - FMA rate: 16 independent chains of float32 fused multiply-adds in
 *     the widest vector unit the CPU reports (AVX-512F, else AVX2 + FMA),
 *     enough chains to cover the FMA latency on every port; the best of
 *     five runs of about 10 ms each.  One core's rate times the CPUs the
 *     campaign may use (sched_getaffinity): every arm host may run on any
 *     of them.  On other architectures nothing is measured and nothing is
 *     assumed.
 *   - bandwidth: for working sets from 16 KiB up to twice the last-level
 *     cache (at least 64 MiB, at most 128 MiB, so that the supervisor's
 *     memory stays bounded), the larger of a read (a vector sum with 8
 *     accumulators) and a copy (memcpy between two halves, counted as
 *     bytes read plus bytes written), the best of five runs; also times
 *     the CPUs.  Where the last-level cache exceeds 64 MiB the top rung is
 *     partly cache-resident: it overestimates the memory bandwidth, which
 *     makes the limit looser, never a false INVALID.
 * An arm host is single threaded (seccomp refuses clone), so the
 * multiplication by the CPU count makes the limit looser, never tighter.
 * 16-bit inputs: dot-product and matrix instructions (AVX512-BF16, AMX)
 * are not measured, so no flops limit applies to f16 and bf16 cases. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "backend/backend_impl.h"
#include "base/util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PEAKS_X86 1
#endif

#define CHAINS 16
#define REPS 5
#define RUN_S 0.01

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile float sink;

#ifdef PEAKS_X86
/* CHAINS (16) independent accumulators in named registers: an array would
 * be kept in memory, and each FMA would wait on a store and a load. */
#define FMA_BODY(T, SET1, FMADD, ADD)                                                       \
    T b = SET1(0.999999f), c = SET1(1e-7f);                                                 \
    T a0 = SET1(1.00f), a1 = SET1(1.01f), a2 = SET1(1.02f), a3 = SET1(1.03f);               \
    T a4 = SET1(1.04f), a5 = SET1(1.05f), a6 = SET1(1.06f), a7 = SET1(1.07f);               \
    T a8 = SET1(1.08f), a9 = SET1(1.09f), a10 = SET1(1.10f), a11 = SET1(1.11f);             \
    T a12 = SET1(1.12f), a13 = SET1(1.13f), a14 = SET1(1.14f), a15 = SET1(1.15f);           \
    for (long n = 0; n < iters; n++) {                                                      \
        a0 = FMADD(a0, b, c); a1 = FMADD(a1, b, c); a2 = FMADD(a2, b, c); a3 = FMADD(a3, b, c); \
        a4 = FMADD(a4, b, c); a5 = FMADD(a5, b, c); a6 = FMADD(a6, b, c); a7 = FMADD(a7, b, c); \
        a8 = FMADD(a8, b, c); a9 = FMADD(a9, b, c); a10 = FMADD(a10, b, c); a11 = FMADD(a11, b, c); \
        a12 = FMADD(a12, b, c); a13 = FMADD(a13, b, c); a14 = FMADD(a14, b, c); a15 = FMADD(a15, b, c); \
    }                                                                                       \
    T s = ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))),             \
              ADD(ADD(ADD(a8, a9), ADD(a10, a11)), ADD(ADD(a12, a13), ADD(a14, a15))));

/* iterations of CHAINS FMAs of 16 float lanes */
__attribute__((target("avx512f"))) static void fma512(long iters)
{
    FMA_BODY(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps)
    float out[16];
    _mm512_storeu_ps(out, s);
    sink = out[0];
}

/* iterations of CHAINS FMAs of 8 float lanes */
__attribute__((target("avx2,fma"))) static void fma256(long iters)
{
    FMA_BODY(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps)
    float out[8];
    _mm256_storeu_ps(out, s);
    sink = out[0];
}
#endif

/* Best rate of REPS runs of fn, each grown to at least RUN_S seconds. */
static double best_rate(void (*fn)(long), double work_per_iter)
{
    long iters = 1024;
    double best = 0.0;
    for (int r = 0; r < REPS;) {
        double t0 = now_s();
        fn(iters);
        double dt = now_s() - t0;
        if (dt < RUN_S) {
            iters *= 2;
            continue;
        }
        double rate = work_per_iter * (double)iters / dt;
        if (rate > best) best = rate;
        r++;
    }
    return best;
}

/* Sum of n floats with 8 accumulators (the compiler vectorises it). */
static float read_sum(const float *p, size_t n)
{
    float acc[8] = { 0 };
    for (size_t i = 0; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += p[i + k];
    float s = 0.0f;
    for (int k = 0; k < 8; k++) s += acc[k];
    return s;
}

/* Best bytes/s of a read and of a copy over a working set of `set` bytes
 * of buf (at least set bytes). */
static double bw_rung(float *buf, size_t set)
{
    double best = 0.0;
    size_t n = set / sizeof(float);
    for (int kind = 0; kind < 2; kind++) {
        long passes = 1;
        for (int r = 0; r < REPS;) {
            double t0 = now_s();
            for (long p = 0; p < passes; p++) {
                if (kind == 0) {
                    sink = read_sum(buf, n);
                } else {
                    memcpy(buf + n / 2, buf, (n / 2) * sizeof(float));
                    sink = buf[n / 2 + (size_t)p % (n / 2)];
                }
            }
            double dt = now_s() - t0;
            if (dt < RUN_S) {
                passes *= 2;
                continue;
            }
            /* a read moves set bytes; a copy reads set/2 and writes set/2 */
            double rate = (double)set * (double)passes / dt;
            if (rate > best) best = rate;
            r++;
        }
    }
    return best;
}

static long llc_bytes(void)
{
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l3 > 0 ? l3 : l2 > 0 ? l2 : 0;
}

/* The peaks of a peaks.json named by the settings' peaks_file
 * (KGATE_PEAKS) instead of a measurement: its flops and bandwidth ladder
 * (kg_peaks_parse, the evidence's own reader), recorded as read from the
 * file, not measured (peaks.json's status and method, and so the report,
 * say so); the CPUs are this host's. */
static int peaks_from_file(const char *file, int ncpu, kg_peaks *out, kg_err *err)
{
    char *text = NULL;
    int line = 0;
    if (kg_read_file(file, &text, NULL, err) != KG_OK)
        return kg_errorf(err, KG_EINPUT, "KGATE_PEAKS=%s: cannot be read (name a peaks.json of an evidence folder, "
                         "or unset KGATE_PEAKS to measure)", file);
    const char *bad = kg_peaks_parse(text, out, &line);
    free(text);
    if (bad != NULL && line > 0)
        return kg_errorf(err, KG_EINPUT, "KGATE_PEAKS=%s:%d: %s (name a peaks.json of an evidence folder, or unset "
                         "KGATE_PEAKS to measure)", file, line, bad);
    if (bad != NULL)
        return kg_errorf(err, KG_EINPUT, "KGATE_PEAKS=%s: field '%s' is missing or malformed (the file has "
                         "peaks.json's fields: status, method, cpus, flops_f32, flops_mma16, flops_note, bandwidth)",
                         file, bad);
    out->ncpu = ncpu;
    snprintf(out->status, sizeof out->status, "from %.200s, not measured", file);
    snprintf(out->method, sizeof out->method, "read from %.200s (KGATE_PEAKS), not measured on this host", file);
    return KG_OK;
}

int kg_cpu_peaks(kg_backend *be, kg_peaks *out, kg_err *err)
{
    memset(out, 0, sizeof *out);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return kg_errorf(err, KG_EIO, "sched_getaffinity failed: the CPUs the campaign may use are unknown");
    int ncpu = CPU_COUNT(&set);
    if (ncpu < 1) ncpu = 1;
    out->ncpu = ncpu;
    if (be != NULL && be->settings != NULL && be->settings->peaks_file != NULL)
        return peaks_from_file(be->settings->peaks_file, ncpu, out, err);

    const char *isa = "none";
#ifdef PEAKS_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        out->flops_f32 = best_rate(fma512, CHAINS * 16 * 2.0) * ncpu;
        isa = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        out->flops_f32 = best_rate(fma256, CHAINS * 8 * 2.0) * ncpu;
        isa = "avx2+fma";
    }
#endif
    if (out->flops_f32 > 0.0)
        snprintf(out->flops_note, sizeof out->flops_note,
                 "f32: %s FMA, %d chains, best of %d, x %d CPUs; f16/bf16: not measured (dot-product and "
                 "matrix instructions), no flops limit", isa, CHAINS, REPS, ncpu);
    else
        snprintf(out->flops_note, sizeof out->flops_note,
                 "not measured: no AVX-512F or AVX2+FMA unit found on this CPU, no flops limit");

    long llc = llc_bytes();
    double top = llc > 0 ? 2.0 * (double)llc : 256.0 * 1048576.0;
    if (top < 64.0 * 1048576.0) top = 64.0 * 1048576.0;
    if (top > 128.0 * 1048576.0) top = 128.0 * 1048576.0;
    size_t top_b = (size_t)top & ~(size_t)63;
    float *buf = aligned_alloc(64, top_b);
    if (buf != NULL) {
        for (size_t i = 0; i < top_b / sizeof(float); i++) buf[i] = (float)(i & 1023) * 1e-3f;
        static const double sets[] = { 16384.0, 262144.0, 2097152.0, 16777216.0 };
        for (int i = 0; i < 4 && (size_t)sets[i] < top_b; i++) {
            out->bw_set[out->nbw] = sets[i];
            out->bw_rate[out->nbw++] = bw_rung(buf, (size_t)sets[i]) * ncpu;
        }
        out->bw_set[out->nbw] = (double)top_b;
        out->bw_rate[out->nbw++] = bw_rung(buf, top_b) * ncpu;
        free(buf);
    }
    out->measured = out->flops_f32 > 0.0 || out->nbw > 0;
    snprintf(out->status, sizeof out->status, "%s", out->measured ? "measured" : "not measured: no memory for the bandwidth buffer and no FMA unit");
    snprintf(out->method, sizeof out->method,
             "one core, in the supervisor, before the first process, times %d CPUs (sched_getaffinity); "
             "bandwidth: max(read, copy) per working set up to %.0f MiB (last-level cache %ld KiB)",
             ncpu, (double)top_b / 1048576.0, llc / 1024);
    return KG_OK;
}
