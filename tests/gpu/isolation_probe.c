/* isolation_probe.c: what a kernel in one CUDA context can address, on
 * the device at hand, with the driver API alone (dlopen, no toolkit).
 *
 * The cuda backend gives every untrusted arm a context of its own
 * (src/backend/cuda.c).  This probe checks the two facts that design
 * rests on, and measures what a context switch costs:
 *   1. a kernel in context A that reads memory allocated in context B, or
 *      in the primary context, faults (CUDA_ERROR_ILLEGAL_ADDRESS), while
 *      the same kernel on A's own memory runs;
 *   2. the fault poisons A only: B, the primary context and a fresh
 *      context still work after it;
 *   3. the cost of one cuCtxPushCurrent + cuCtxPopCurrent pair.
 * Prints one line per fact ("ok ..." or "FAIL ...") and exits 1 if any
 * failed.  Build: cc -O2 -o bin/isolation-probe tests/gpu/isolation_probe.c -ldl */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuCtxCreate)(CUcontext *, unsigned, CUdevice);
static CUresult (*cuCtxDestroy)(CUcontext);
static CUresult (*cuCtxPushCurrent)(CUcontext);
static CUresult (*cuCtxPopCurrent)(CUcontext *);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
static CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void **, void **);

/* dst[0] = src[0] */
static const char ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry peek(.param .u64 src, .param .u64 dst)\n{\n"
    "  .reg .b32 %r<2>;\n  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [src];\n  ld.param.u64 %rd2, [dst];\n"
    "  cvta.to.global.u64 %rd3, %rd1;\n  cvta.to.global.u64 %rd4, %rd2;\n"
    "  ld.global.u32 %r1, [%rd3];\n  st.global.u32 [%rd4], %r1;\n  ret;\n}\n";

static int failed;

static void report(int ok, const char *what, CUresult r)
{
    printf("%s %s (CUresult %d)\n", ok ? "ok  " : "FAIL", what, r);
    if (!ok) failed = 1;
}

#define SYM(name, sym) do { *(void **)&name = dlsym(lib, sym); \
    if (name == NULL) { printf("FAIL libcuda lacks %s\n", sym); return 1; } } while (0)

/* A fresh context (left not current) with the peek kernel loaded and a
 * buffer of its own. */
static CUresult make_ctx(CUdevice dev, CUcontext *ctx, CUfunction *fn, CUdeviceptr *buf)
{
    CUmodule mod;
    CUcontext popped;
    CUresult r = cuCtxCreate(ctx, 0, dev);
    if (r) return r;
    if ((r = cuModuleLoadData(&mod, ptx)) == 0 && (r = cuModuleGetFunction(fn, mod, "peek")) == 0 &&
        (r = cuMemAlloc(buf, 4096)) == 0)
        r = cuMemsetD32(*buf, 0x11111111u, 1024);
    cuCtxPopCurrent(&popped);
    return r;
}

/* Runs peek(src, dst) in ctx and waits: the synchronisation's result. */
static CUresult peek(CUcontext ctx, CUfunction fn, CUdeviceptr src, CUdeviceptr dst)
{
    CUcontext popped;
    void *params[] = { &src, &dst };
    CUresult r = cuCtxPushCurrent(ctx);
    if (r) return r;
    r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
    CUresult s = cuCtxSynchronize();
    cuCtxPopCurrent(&popped);
    return r ? r : s;
}

int main(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib == NULL) { printf("FAIL no libcuda.so.1: %s\n", dlerror()); return 1; }
    SYM(cuInit, "cuInit"); SYM(cuDeviceGet, "cuDeviceGet");
    SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"); SYM(cuCtxSetCurrent, "cuCtxSetCurrent");
    SYM(cuCtxCreate, "cuCtxCreate_v2"); SYM(cuCtxDestroy, "cuCtxDestroy_v2");
    SYM(cuCtxPushCurrent, "cuCtxPushCurrent_v2"); SYM(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    SYM(cuCtxSynchronize, "cuCtxSynchronize"); SYM(cuMemAlloc, "cuMemAlloc_v2");
    SYM(cuMemsetD32, "cuMemsetD32_v2"); SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    SYM(cuModuleLoadData, "cuModuleLoadData"); SYM(cuModuleGetFunction, "cuModuleGetFunction");
    SYM(cuLaunchKernel, "cuLaunchKernel");

    CUdevice dev;
    CUcontext prim, a, b, c;
    CUfunction fa, fb, fc;
    CUdeviceptr pa, pb, pc, pp;
    CUresult r;
    if ((r = cuInit(0)) || (r = cuDeviceGet(&dev, 0)) || (r = cuDevicePrimaryCtxRetain(&prim, dev)) ||
        (r = cuCtxSetCurrent(prim))) {
        report(0, "driver and primary context", r);
        return 1;
    }
    if ((r = cuMemAlloc(&pp, 4096)) || (r = cuMemsetD32(pp, 0x22222222u, 1024))) {
        report(0, "primary-context buffer", r);
        return 1;
    }
    if ((r = make_ctx(dev, &a, &fa, &pa)) || (r = make_ctx(dev, &b, &fb, &pb))) {
        report(0, "two contexts on one device", r);
        return 1;
    }
    unsigned v = 0;
    r = peek(a, fa, pa, pa + 64);
    report(r == 0, "a kernel in context A reads A's own buffer", r);
    r = peek(a, fa, pb, pa);
    printf("     A reading B's buffer at %#llx (A's is at %#llx): CUresult %d\n", pb, pa, r);
    report(r == 700, "a kernel in context A reading context B's buffer faults with an illegal address", r);
    r = peek(b, fb, pb, pb + 64);
    if (r == 0) {
        cuCtxPushCurrent(b);
        r = cuMemcpyDtoH(&v, pb + 64, 4);
        cuCtxPopCurrent(&c);
    }
    report(r == 0 && v == 0x11111111u, "context B still runs and copies after A faulted", r);
    r = cuMemcpyDtoH(&v, pp, 4);
    report(r == 0 && v == 0x22222222u, "the primary context still copies after A faulted", r);
    r = peek(a, fa, pa, pa + 64);
    report(r != 0, "context A stays poisoned (sticky error) until destroyed", r);
    r = cuCtxDestroy(a);
    report(r == 0, "the faulted context A is destroyed", r);
    if ((r = make_ctx(dev, &c, &fc, &pc)) == 0) r = peek(c, fc, pc, pc + 64);
    report(r == 0, "a fresh context runs after the fault", r);
    r = peek(c, fc, pp, pc);
    report(r == 700, "a kernel in an arm's context reading a primary-context buffer faults", r);
    cuCtxDestroy(c);

    /* the cost of the switch kgate makes around every call for an arm */
    enum { N = 200000 };
    struct timespec t0, t1;
    CUcontext popped;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t0);
    for (int i = 0; i < N; i++) {
        cuCtxPushCurrent(b);
        cuCtxPopCurrent(&popped);
    }
    clock_gettime(CLOCK_MONOTONIC_RAW, &t1);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / N;
    printf("     one cuCtxPushCurrent + cuCtxPopCurrent pair: %.1f ns (mean of %d)\n", ns, N);
    cuCtxDestroy(b);
    printf("%s\n", failed ? "isolation probe: FAILED" : "isolation probe: all facts hold");
    return failed;
}
