/* cuda_peaks.c: the cuda backend's peak measurement (kgate/peaks.h), the
 * `peaks` slot of kg_backend_cuda.
 *
 * Trusted code, in the supervisor, before the first process, on the
 * backend's context and stream.  Small kernels compiled here with NVRTC
 * (no arm code), each timed with the backend's events, the best of five
 * launches after a warm-up:
 *   - FMA rate: every SM full of threads, each running 8 independent
 *     float32 FMA chains (2 flops per FMA);
 *   - matrix rate (16-bit inputs, sm_80 and later): mma.sync
 *     m16n8k16 bf16 x bf16 + f32, 4 independent accumulators per warp
 *     (2 x 16 x 8 x 16 flops per mma).  Hopper's wgmma is faster than
 *     mma.sync, so this rate can be below what cuBLAS reaches: the
 *     margin covers it (docs/admission.md, "Physics limits");
 *   - bandwidth: for working sets of 1 MiB, 8 MiB, the L2 size and four
 *     times the L2 (at least 256 MiB), the larger of a grid-stride float4
 *     read and a float4 copy (bytes read plus bytes written), each launch
 *     passing over the set until it has moved 256 MiB.
 * Measured on an H200: docs/measurements/h200-2026-12-01-checks/.
 * A failure of any step fails the measurement, which the record then
 * says; nothing is guessed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda_shared.h"

static const char peaks_src[] =
    "/* reps passes over n float4, each pass shifted so that no load or store repeats an address\n"
    " * of the previous pass at the same index (nothing to hoist out of the loop) */\n"
    "extern \"C\" __global__ void pk_read(const float4 *__restrict__ a, float *out, unsigned long long n, int reps)\n"
    "{\n"
    "    float s = 0.0f;\n"
    "    for (int r = 0; r < reps; r++)\n"
    "        for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "             i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "            unsigned long long k = i + (unsigned long long)r * 64u;\n"
    "            if (k >= n) k -= n;\n"
    "            float4 v = a[k];\n"
    "            s += v.x + v.y + v.z + v.w;\n"
    "        }\n"
    "    if (s == 1234.5f) out[0] = s;\n"
    "}\n"
    "extern \"C\" __global__ void pk_copy(const float4 *__restrict__ a, float4 *__restrict__ b, unsigned long long n, int reps)\n"
    "{\n"
    "    for (int r = 0; r < reps; r++)\n"
    "        for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "             i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "            unsigned long long k = i + (unsigned long long)r * 64u;\n"
    "            if (k >= n) k -= n;\n"
    "            b[k] = a[k];\n"
    "        }\n"
    "}\n"
    "extern \"C\" __global__ void pk_fma(float *out, int iters, float b, float c)\n"
    "{\n"
    "    float a0 = threadIdx.x * 1e-3f, a1 = a0 + 1.0f, a2 = a0 + 2.0f, a3 = a0 + 3.0f;\n"
    "    float a4 = a0 + 4.0f, a5 = a0 + 5.0f, a6 = a0 + 6.0f, a7 = a0 + 7.0f;\n"
    "    for (int i = 0; i < iters; i++) {\n"
    "#pragma unroll\n"
    "        for (int u = 0; u < 8; u++) {\n"
    "            a0 = fmaf(a0, b, c); a1 = fmaf(a1, b, c); a2 = fmaf(a2, b, c); a3 = fmaf(a3, b, c);\n"
    "            a4 = fmaf(a4, b, c); a5 = fmaf(a5, b, c); a6 = fmaf(a6, b, c); a7 = fmaf(a7, b, c);\n"
    "        }\n"
    "    }\n"
    "    float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;\n"
    "    if (s == 1234.5f) out[0] = s;\n"
    "}\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "#define PK_MMA(d0, d1, d2, d3) asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 \"\\\n"
    "    \"{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\"\\\n"
    "    : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3) : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1))\n"
    "extern \"C\" __global__ void pk_mma(float *out, int iters)\n"
    "{\n"
    "    unsigned a0 = 0x3f803f80u ^ threadIdx.x, a1 = a0, a2 = a0, a3 = a0, b0 = 0x3f803f80u, b1 = b0;\n"
    "    float p0 = 0, p1 = 0, p2 = 0, p3 = 0, q0 = 0, q1 = 0, q2 = 0, q3 = 0;\n"
    "    float r0 = 0, r1 = 0, r2 = 0, r3 = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0;\n"
    "    for (int i = 0; i < iters; i++) {\n"
    "        PK_MMA(p0, p1, p2, p3); PK_MMA(q0, q1, q2, q3); PK_MMA(r0, r1, r2, r3); PK_MMA(s0, s1, s2, s3);\n"
    "    }\n"
    "    float s = p0 + p1 + p2 + p3 + q0 + q1 + q2 + q3 + r0 + r1 + r2 + r3 + s0 + s1 + s2 + s3;\n"
    "    if (s == 1234.5f) out[0] = s;\n"
    "}\n"
    "#endif\n";

#define PK_REPS 5

typedef struct pk {
    cuda_ctx *c;
    CUmodule mod;
    CUfunction read, copy, fma, mma;
    CUdeviceptr buf, out;
    size_t buf_bytes;
} pk;

static int pk_compile(pk *p, char **image, kg_err *err)
{
    cuda_ctx *c = p->c;
    kg_cuda_nvrtc *nv = &c->nvrtc;
    int rc = KG_OK;
    if (nv->lib == NULL && (rc = kg_cuda_nvrtc_load(nv, c->settings, err)) != KG_OK) return rc;
    nvrtcProgram prog = NULL;
    if (nv->nvrtcCreateProgram(&prog, peaks_src, "kgate_peaks.cu", 0, NULL, NULL) != KG_NVRTC_SUCCESS)
        return kg_errorf(err, KG_EBACKEND, "peaks: nvrtcCreateProgram failed");
    char arch[48];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", c->cc_major, c->cc_minor);
    /* NVRTC optimises device code by default and rejects -O3 */
    const char *opts[] = { arch };
    size_t n = 0;
    if (nv->nvrtcCompileProgram(prog, 1, opts) != KG_NVRTC_SUCCESS) {
        char log[1024] = "";
        size_t ln = 0;
        if (nv->nvrtcGetProgramLogSize(prog, &ln) == KG_NVRTC_SUCCESS && ln < sizeof log)
            nv->nvrtcGetProgramLog(prog, log);
        rc = kg_errorf(err, KG_EBACKEND, "peaks: NVRTC could not compile the measuring kernels for %s: %.600s", arch, log);
    } else if (nv->nvrtcGetCUBINSize(prog, &n) != KG_NVRTC_SUCCESS || n == 0 || (*image = malloc(n)) == NULL ||
               nv->nvrtcGetCUBIN(prog, *image) != KG_NVRTC_SUCCESS) {
        rc = kg_errorf(err, KG_EBACKEND, "peaks: no cubin from NVRTC for %s", arch);
    }
    nv->nvrtcDestroyProgram(&prog);
    return rc;
}

/* Best time in seconds of PK_REPS launches of f (after one warm-up). */
static int pk_time(pk *p, CUfunction f, unsigned grid, unsigned block, void **args, double *best, kg_err *err)
{
    cuda_ctx *c = p->c;
    int rc;
    *best = 0.0;
    for (int r = -1; r < PK_REPS; r++) {
        if ((rc = CU(c, cuEventRecord, (c->gate.e0, c->stream), err)) != KG_OK) return rc;
        if ((rc = CU(c, cuLaunchKernel, (f, grid, 1, 1, block, 1, 1, 0, c->stream, args, NULL), err)) != KG_OK)
            return rc;
        if ((rc = CU(c, cuEventRecord, (c->gate.e1, c->stream), err)) != KG_OK) return rc;
        if ((rc = CU(c, cuEventSynchronize, (c->gate.e1), err)) != KG_OK) return rc;
        float ms = 0.0f;
        if ((rc = CU(c, cuEventElapsedTime, (&ms, c->gate.e0, c->gate.e1), err)) != KG_OK) return rc;
        double s = (double)ms * 1e-3;
        if (r >= 0 && s > 0.0 && (*best == 0.0 || s < *best)) *best = s;
    }
    if (!(*best > 0.0)) return kg_errorf(err, KG_EBACKEND, "peaks: a measuring kernel took no measurable time");
    return KG_OK;
}

static int pk_measure(pk *p, kg_peaks *out, kg_err *err)
{
    cuda_ctx *c = p->c;
    char *image = NULL;
    int rc = pk_compile(p, &image, err);
    if (rc != KG_OK) return rc;
    rc = CU(c, cuModuleLoadData, (&p->mod, image), err);
    free(image);
    if (rc != KG_OK) return rc;
    if ((rc = CU(c, cuModuleGetFunction, (&p->read, p->mod, "pk_read"), err)) != KG_OK ||
        (rc = CU(c, cuModuleGetFunction, (&p->copy, p->mod, "pk_copy"), err)) != KG_OK ||
        (rc = CU(c, cuModuleGetFunction, (&p->fma, p->mod, "pk_fma"), err)) != KG_OK)
        return rc;
    int has_mma = c->cc_major >= 8 && c->drv.cuModuleGetFunction(&p->mma, p->mod, "pk_mma") == 0;
    if ((rc = CU(c, cuMemAlloc, (&p->out, 64), err)) != KG_OK) return rc;
    unsigned sms = c->sm_count > 0 ? (unsigned)c->sm_count : 1;

    /* FMA: 8 blocks of 256 threads per SM; per thread iters x 8 x 8 FMAs */
    int iters = 4096;
    float fb = 0.999999f, fc = 1e-7f;
    void *fargs[] = { &p->out, &iters, &fb, &fc };
    double t;
    if ((rc = pk_time(p, p->fma, 8 * sms, 256, fargs, &t, err)) != KG_OK) return rc;
    out->flops_f32 = 2.0 * 64.0 * (double)iters * 256.0 * 8.0 * sms / t;

    if (has_mma) {
        int mi = 4096;
        void *margs[] = { &p->out, &mi };
        if ((rc = pk_time(p, p->mma, 8 * sms, 256, margs, &t, err)) != KG_OK) return rc;
        /* per warp and iteration 4 mma of 2 x 16 x 8 x 16 flops */
        out->flops_mma16 = 4.0 * 2.0 * 16 * 8 * 16 * (double)mi * (256.0 / 32.0) * 8.0 * sms / t;
    }
    snprintf(out->flops_note, sizeof out->flops_note,
             "f32: FFMA, 8 chains per thread, 8 x 256 threads per SM x %u SMs; 16-bit: %s; best of %d", sms,
             has_mma ? "mma.sync m16n8k16 bf16 (wgmma, cuBLAS's Hopper path, is faster: see the margin)"
                     : "not measured (no mma.sync before sm_80), no flops limit",
             PK_REPS);

    /* bandwidth ladder */
    double l2 = c->l2_bytes > 0 ? (double)c->l2_bytes : 8.0 * 1048576.0;
    double top = 4.0 * l2 < 256.0 * 1048576.0 ? 256.0 * 1048576.0 : 4.0 * l2;
    if (c->mem_bytes > 0 && top > (double)c->mem_bytes / 8.0) top = (double)c->mem_bytes / 8.0;
    p->buf_bytes = (size_t)top & ~(size_t)255;
    if ((rc = CU(c, cuMemAlloc, (&p->buf, p->buf_bytes), err)) != KG_OK) return rc;
    if ((rc = CU(c, cuMemsetD8Async, (p->buf, 0, p->buf_bytes, c->stream), err)) != KG_OK) return rc;
    double sets[4] = { 1048576.0, 8.0 * 1048576.0, l2, (double)p->buf_bytes };
    for (int i = 0; i < 4; i++) {
        if (sets[i] > (double)p->buf_bytes || (out->nbw > 0 && sets[i] <= out->bw_set[out->nbw - 1])) continue;
        size_t set = (size_t)sets[i] & ~(size_t)255;
        unsigned long long n4 = set / 16, half = n4 / 2;
        CUdeviceptr dst = p->buf + half * 16;
        /* small sets are passed over many times in one launch, so that the
         * launch's own cost (microseconds) does not hide the bandwidth */
        int reps = (int)(256.0 * 1048576.0 / (double)set);
        if (reps < 1) reps = 1;
        void *rargs[] = { &p->buf, &p->out, &n4, &reps };
        void *cargs[] = { &p->buf, &dst, &half, &reps };
        double tr, tc;
        if ((rc = pk_time(p, p->read, 16 * sms, 256, rargs, &tr, err)) != KG_OK) return rc;
        if ((rc = pk_time(p, p->copy, 16 * sms, 256, cargs, &tc, err)) != KG_OK) return rc;
        double r = (double)set * reps / tr, cp = (double)(half * 32) * reps / tc;
        out->bw_set[out->nbw] = (double)set;
        out->bw_rate[out->nbw++] = r > cp ? r : cp;
    }
    out->measured = 1;
    snprintf(out->status, sizeof out->status, "measured");
    snprintf(out->method, sizeof out->method,
             "device %.48s (sm_%d%d, %u SMs, L2 %.0f MiB), before the first process; bandwidth: "
             "max(read, copy) per working set up to %.0f MiB; events, best of %d",
             c->name, c->cc_major, c->cc_minor, sms, l2 / 1048576.0, (double)p->buf_bytes / 1048576.0, PK_REPS);
    return KG_OK;
}

int kg_cuda_peaks(kg_backend *be, kg_peaks *out, kg_err *err)
{
    cuda_ctx *c = be != NULL ? be->ctx : NULL;
    memset(out, 0, sizeof *out);
    if (c == NULL || c->ctx == NULL || c->stream == NULL)
        return kg_errorf(err, KG_EBACKEND, "peaks: the cuda backend is not open");
    pk p;
    memset(&p, 0, sizeof p);
    p.c = c;
    int rc = CU(c, cuCtxSetCurrent, (c->ctx), err);
    if (rc == KG_OK) rc = pk_measure(&p, out, err);
    if (p.buf) c->drv.cuMemFree(p.buf);
    if (p.out) c->drv.cuMemFree(p.out);
    if (p.mod) c->drv.cuModuleUnload(p.mod);
    if (rc != KG_OK) memset(out, 0, sizeof *out);
    return rc;
}
