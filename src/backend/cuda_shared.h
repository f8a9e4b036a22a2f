/* cuda_shared.h: what the files of the cuda backend share, and nothing
 * else includes: the backend's state (cuda_ctx), a loaded arm (struct
 * kg_kernel), the driver-call check (CU, kg_cuda_check) and a digest
 * (cuda_shared.c).
 *
 *   cuda.c          the driver-API core: open, memory, load, bind, time;
 *                   it uses the files below, and they never use it
 *   cuda_compile.c  NVRTC compilation and include discovery
 *   cuda_blas.c     the builtin = cublas arm (cuBLASLt, cuda_blas.h)
 *   cuda_nvml.c     NVML: telemetry, and the device's compute processes (cuda_nvml.h)
 *   cuda_peaks.c    the device's peaks (the peaks slot)
 *   cuda_fill.c     kgate's input generator (kgate/gen.h) as a kernel
 *   cuda_poison.c   the shared memory's and workspace's poison before checked runs
 *   cuda_l2.c       the L2 warm-up before timed samples (l2 = warm)
 *   cuda_timing.c   one timed sample, the same in the worker and a host
 *   cuda_host.c     the cuda arm host, the process an untrusted arm runs in
 *   launch.c        launch specs (backend-neutral, see launch.h)
 *   cuda_loader.c   dlopen of the libraries (cuda_api.h) */
#ifndef KGATE_CUDA_SHARED_H
#define KGATE_CUDA_SHARED_H

#include <stdint.h>
#include <time.h>
#include "backend/backend_impl.h"
#include "backend/cuda_api.h"
#include "backend/launch.h"
#include "backend/cuda_host.h"
#include "backend/hostlink.h"

typedef struct cuda_ctx {
    const kg_settings *settings;  /* the backend's (libraries, include folders, negative) */
    kg_cuda_driver drv;
    kg_cuda_nvrtc nvrtc;
    kg_cuda_unit *units;    /* the campaign's NVRTC compiles, done at once by the first build (cuda_build) */
    int nunits, units_done;
    kg_cuda_nvml nvml;
    int nvml_state;               /* 0 untried, 1 ready, -1 unavailable */
    nvmlDevice_t nvdev;
    int ordinal;
    CUdevice dev;
    CUcontext ctx;
    int ctx_retained;
    CUstream stream;
    kg_cuda_gate gate;            /* the timed samples' events and gate (cuda_timing.c) */
    int cc_major, cc_minor, sm_count, l2_bytes, smem_optin_bytes, driver_version;
    size_t mem_bytes;
    char name[128];
    char uuid[64];
    CUdeviceptr flush_buf;
    size_t flush_bytes;
    unsigned flush_count;
    /* l2 = warm: the L2 warm-up of trusted arms' samples, in the worker
     * (cuda_l2.c): 0 not loaded yet, 1 ready */
    int l2_warm;
    int warm_state;
    kg_cuda_warm warm;
    /* escape accounting, reported through the telemetry slot */
    uint64_t samples, escapes;
    double last_event_ns, last_host_ns;
    /* the device's compute processes at the last telemetry reading and how
     * many were foreign: the same list again is the same answer, without
     * walking each process's ancestry through /proc (about 18 µs a process
     * that is not this worker's, 2.4 ms for a screen's 132 arm hosts) */
    unsigned *tel_pids;
    unsigned tel_npids, tel_cap;
    int tel_valid, tel_foreign;
    /* cuBLASLt, opened at the first builtin = cublas arm */
    kg_cuda_cublaslt lt;
    cublasLtHandle_t lt_handle;
    CUdeviceptr lt_ws;
    CUresult last_rc;             /* of the last failed driver call (kg_cuda_check) */
    /* the arm hosts, one per untrusted arm of the plan (by arm index) */
    struct cuda_host *hosts;
    int nhosts;
    /* the library arms' helpers (libarm.h), by arm index, started by the
     * prestart slot or at an arm's first load */
    struct kg_libarm **libs;
    struct kg_libarm_builds *lib_builds;   /* the library arms' builds (kg_libarm_build) */
    int any_hosted;               /* allocations are whole IPC blocks */
    double timeout_s;             /* the plan's per-request timeout */
    /* kgate's input generator as a kernel (cuda_fill.c): 0 not built yet,
     * 1 ready, -1 unavailable (fill_why says why) */
    int fill_state;
    CUmodule fill_mod;
    CUfunction fill_fn;
    char fill_why[256];
    int fill_built;               /* the supervisor's build wrote (or tried) the fill's cubin */
    /* the campaign's build folder, as the worker's first load named it: where
     * the fill's cubin is read from (empty: none named yet) */
    char build_dir[4096];
    /* the poison of trusted arms' checked runs, in the worker (cuda_poison.c):
     * 0 not loaded yet, 1 ready */
    int poison_state;
    kg_cuda_poison poison;
} cuda_ctx;

/* An untrusted arm's process in this worker (cuda.c, cuda_host.h). */
typedef struct cuda_host {
    kg_hostlink link;
    unsigned sandbox;             /* its confinement (KG_SBX_* bits, from its hello) */
    int started;
    int hello_due;                /* started by the prestart slot: its hello not read yet */
    double slowest_s;             /* the slowest request per operation seen */
    kg_ch_msg *req, *rep;         /* the one request and reply in flight (allocated once) */
    uint32_t req_kind;            /* the request's kind (KG_CH_*) */
} cuda_host;

/* One launch of a chain. */
typedef struct cuda_launch {
    char entry[KG_NAME_MAX];
    CUfunction fn;
    kg_launch_geom geom;
    kg_carg args[KG_LAUNCH_MAX_ARGS];
    int nargs;
    void *params[KG_LAUNCH_MAX_ARGS];
    int max_threads;              /* of the compiled entry (__launch_bounds__, registers) */
    int static_shared;            /* bytes of static shared memory of the entry */
} cuda_launch;

/* builtin = cublas: one matmul described once at load */
typedef struct cuda_blas {
    kg_cuda_gemm_map map;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
    size_t ws_bytes;              /* what the picked algorithm needs */
    CUdeviceptr a, b, d;          /* bound operands */
} cuda_blas;

struct kg_kernel {
    char arm[KG_NAME_MAX];
    char kase[KG_NAME_MAX];
    CUmodule mod;
    cuda_launch launch[1 + KG_EXTRA_LAUNCHES];
    int nlaunch;
    int is_blas;
    cuda_blas blas;
    int pack;
    int bound;
    CUgraph graph;
    CUgraphExec exec;
    size_t image_bytes;
    char image_sha256[65];
    /* an untrusted arm: its kernels run in its host, in slot `slot` */
    cuda_host *host;
    int slot;
    /* a library arm (builtin = torch): its helper, the backend's */
    struct kg_libarm *lib;
    int lib_slot;
    char lib_record[KG_LIBRARY_RECORD_MAX];
    int attr[1 + KG_EXTRA_LAUNCHES][KG_CH_NATTR];   /* its entries', as the host read them */
    /* the poison of its checked runs: the bound workspace (trusted arms;
     * a host keeps its own), and the fewest SMs a poison reached (-1: none yet) */
    CUdeviceptr ws;
    size_t ws_bytes;
    int smem_min;
    /* l2 = warm: every input set bound (read into the L2 before each timed
     * sample), and what the warm-ups of its samples read and took */
    kg_cuda_warm_buf warm_in[KG_CH_NBUF];
    int nwarm_in;
    int nsets;                    /* input sets bound: 1 + the binding's nop */
    uint64_t warm_bytes;          /* of the last sample */
    double warm_ns;               /* all samples' */
    int64_t warm_samples;
    int64_t timed;                /* its timed samples */
};

_Static_assert(sizeof(((kg_carg *)0)->value.ptr) == sizeof(CUdeviceptr), "a device address argument is a CUdeviceptr");

/* Checks one driver result; evaluates to KG_OK or KG_EBACKEND (recorded
 * in err, and the result in c->last_rc) with the call, the file:line and
 * the driver's name for the error. */
#define CU(c, fn, args, err) kg_cuda_check((c), (c)->drv.fn args, #fn, __FILE__, __LINE__, (err))

int kg_cuda_check(cuda_ctx *c, CUresult rc, const char *call, const char *file, int line,
                  kg_err *err);

static inline CUdeviceptr dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The supervisor's build of kgate's fill kernel (cuda_fill.c): compiled
 * once for the campaign and written to build_dir/kgate_fill.sm_XY.cubin,
 * which each worker loads instead of running NVRTC again.  A compile that
 * fails writes nothing and is not an error here (workers then fall back as
 * before); a failed write is. */
int kg_cuda_fill_build(cuda_ctx *c, const char *build_dir, kg_err *err);

/* SHA-256 of data as 64 hex digits (empty on failure). */
void kg_cuda_sha256_hex(const void *data, size_t n, char out[65]);

#endif
