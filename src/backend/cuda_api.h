/* cuda_api.h: the slice of the CUDA driver API, NVRTC, NVML and cuBLASLt
 * that the cuda backend uses, declared here so that kgate builds and
 * links with no CUDA toolkit and no GPU driver.
 *
 * Types are declared with the same sizes as the public headers (opaque
 * handles are pointers, CUdeviceptr is a 64-bit integer, enums are int);
 * enum values are copied as constants from the public API documentation.
 * Only the constants kgate uses are declared.  Libraries are opened with
 * dlopen at run time by cuda_loader.c: one struct of function pointers
 * per library.  A missing library is an ordinary error, never a crash.
 *
 * Also declares the host-side helpers of the backend that tests exercise
 * without a device (the cuBLASLt mapping, NVRTC compilation).
 *
 * This header does not describe the whole API and is not a replacement
 * for cuda.h: a symbol added here must be checked against the docs. */
#ifndef KGATE_CUDA_API_H
#define KGATE_CUDA_API_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/backend.h"
#include "kgate/err.h"
#include "kgate/plan.h"
#include "kgate/settings.h"

/* ---- CUDA driver API (libcuda.so.1) ---- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUuuid_st { char bytes[16]; } CUuuid;
typedef struct CUipcMemHandle_st { char reserved[64]; } CUipcMemHandle;

enum {
    KG_CUDA_SUCCESS = 0,
    KG_CUDA_ERROR_INVALID_VALUE = 1,
    KG_CUDA_ERROR_NO_DEVICE = 100,
    KG_CUDA_ERROR_NOT_READY = 600,   /* cuStreamQuery: work still queued */
    /* errors that leave a context unusable (sticky): the kernel faulted */
    KG_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    KG_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    KG_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    KG_CUDA_ERROR_ASSERT = 710,
    KG_CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    KG_CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    KG_CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    KG_CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    KG_CUDA_ERROR_INVALID_PC = 718,
    KG_CUDA_ERROR_LAUNCH_FAILED = 719,
    /* a launch whose thread block cluster the device cannot run: more
     * blocks than it schedules together, or a grid the cluster does not
     * divide (a configuration, not a fault) */
    KG_CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
    KG_CUDA_ERROR_UNKNOWN = 999,
    KG_CU_STREAM_NON_BLOCKING = 0x1,
    KG_CU_EVENT_DEFAULT = 0x0,
    KG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    /* CUdevice_attribute */
    KG_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    KG_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    KG_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    KG_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    KG_CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    KG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    KG_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    KG_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    KG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    KG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    KG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    /* CUfunction_attribute */
    KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    KG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    KG_CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
    KG_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    KG_CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    KG_CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
    KG_CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
    KG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    KG_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1,
    KG_CU_STREAM_WAIT_VALUE_GEQ = 0x0,
    KG_CU_STREAM_WRITE_VALUE_DEFAULT = 0x0
};

/* 1 when cuLaunchKernel's result r is the device refusing the launch's
 * configuration (threads, shared memory, registers, the cluster): the
 * context stays usable and the case is inadmissible for the arm. */
static inline int kg_cuda_launch_refusal(CUresult r)
{
    return r == KG_CUDA_ERROR_INVALID_VALUE || r == KG_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ||
           r == KG_CUDA_ERROR_INVALID_CLUSTER_SIZE;
}

/* In a function that returns CUresult and has `const char **call`: runs
 * expr, and on failure names the call in *call and returns its result
 * (kgate's own kernels' set-up: cuda_poison.c, cuda_l2.c). */
#define KG_CUDA_TRY(call_name, expr)                                                                           \
    do {                                                                                                      \
        CUresult r_ = (expr);                                                                                 \
        if (r_ != KG_CUDA_SUCCESS) {                                                                          \
            *call = call_name;                                                                                \
            return r_;                                                                                        \
        }                                                                                                     \
    } while (0)


typedef struct kg_cuda_driver {
    void *lib;
    char path[256];          /* the name that opened */
    CUresult (*cuInit)(unsigned flags);
    CUresult (*cuDriverGetVersion)(int *version);
    CUresult (*cuGetErrorName)(CUresult rc, const char **name);
    CUresult (*cuGetErrorString)(CUresult rc, const char **text);
    CUresult (*cuDeviceGetCount)(int *count);
    CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*cuDeviceGetAttribute)(int *value, int attrib, CUdevice dev);
    CUresult (*cuDeviceGetUuid)(CUuuid *uuid, CUdevice dev);             /* _v2 */
    CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice dev);           /* _v2 */
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev);                 /* _v2 */
    CUresult (*cuCtxSetCurrent)(CUcontext ctx);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuCtxResetPersistingL2Cache)(void);                       /* optional */
    /* optional (CUDA 12+): a TMA tensor map (cuda_tmap.c); its enums as ints */
    CUresult (*cuTensorMapEncodeTiled)(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
                                       const uint64_t *strides, const unsigned *box, const unsigned *estrides,
                                       int interleave, int swizzle, int l2promo, int oobfill);
    /* arm hosts (cuda_host.h): the worker's buffers, mapped into an arm
     * host's own process */
    CUresult (*cuIpcGetMemHandle)(CUipcMemHandle *h, CUdeviceptr ptr);
    CUresult (*cuIpcOpenMemHandle)(CUdeviceptr *ptr, CUipcMemHandle h, unsigned flags); /* _v2 */
    CUresult (*cuIpcCloseMemHandle)(CUdeviceptr ptr);
    CUresult (*cuMemGetAddressRange)(CUdeviceptr *base, size_t *bytes, CUdeviceptr ptr); /* _v2 */
    /* optional: the gate that holds a timed sample's stream until its
     * events and graph are all queued (kg_cuda_gate, cuda_timing.c) */
    CUresult (*cuStreamWaitValue32)(CUstream s, CUdeviceptr addr, unsigned value, unsigned flags);  /* _v2 */
    CUresult (*cuStreamWriteValue32)(CUstream s, CUdeviceptr addr, unsigned value, unsigned flags); /* _v2 */
    CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes);              /* _v2 */
    CUresult (*cuMemFree)(CUdeviceptr ptr);                              /* _v2 */
    CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t n);/* _v2 */
    CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t n);      /* _v2 */
    CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
    CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned v, size_t n, CUstream s);
    CUresult (*cuStreamCreate)(CUstream *s, unsigned flags);
    CUresult (*cuStreamDestroy)(CUstream s);                             /* _v2 */
    CUresult (*cuStreamSynchronize)(CUstream s);
    CUresult (*cuStreamQuery)(CUstream s);                               /* optional: the gate's test */
    CUresult (*cuStreamBeginCapture)(CUstream s, int mode);              /* _v2 */
    CUresult (*cuStreamEndCapture)(CUstream s, CUgraph *graph);
    CUresult (*cuEventCreate)(CUevent *e, unsigned flags);
    CUresult (*cuEventDestroy)(CUevent e);                               /* _v2 */
    CUresult (*cuEventRecord)(CUevent e, CUstream s);
    CUresult (*cuEventSynchronize)(CUevent e);
    CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end); /* _v2 when present */
    CUresult (*cuModuleLoadData)(CUmodule *mod, const void *image);
    CUresult (*cuModuleUnload)(CUmodule mod);
    CUresult (*cuModuleGetFunction)(CUfunction *f, CUmodule mod, const char *name);
    CUresult (*cuFuncGetAttribute)(int *value, int attrib, CUfunction f);
    CUresult (*cuFuncSetAttribute)(CUfunction f, int attrib, int value);
    CUresult (*cuLaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
                               CUstream s, void **params, void **extra);
    CUresult (*cuGraphInstantiate)(CUgraphExec *exec, CUgraph graph,
                                   unsigned long long flags);            /* ...WithFlags */
    CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream s);
    CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
    CUresult (*cuGraphDestroy)(CUgraph graph);
} kg_cuda_driver;

/* ---- NVRTC (libnvrtc.so) ---- */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
enum { KG_NVRTC_SUCCESS = 0, KG_NVRTC_ERROR_COMPILATION = 6 };

typedef struct kg_cuda_nvrtc {
    void *lib;
    char path[256];
    const char *(*nvrtcGetErrorString)(nvrtcResult rc);
    nvrtcResult (*nvrtcVersion)(int *major, int *minor);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *prog, const char *src, const char *name,
                                      int nheaders, const char *const *headers,
                                      const char *const *include_names);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *prog);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram prog, int nopts, const char *const *opts);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram prog, size_t *bytes);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram prog, char *log);
    nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram prog, size_t *bytes);
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram prog, char *cubin);
    nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram prog, size_t *bytes);
    nvrtcResult (*nvrtcGetPTX)(nvrtcProgram prog, char *ptx);
} kg_cuda_nvrtc;

/* ---- NVML (libnvidia-ml.so.1) ---- */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
/* nvmlProcessInfo_t as taken by nvmlDeviceGetComputeRunningProcesses_v3 */
typedef struct kg_nvml_process {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} kg_nvml_process;
enum {
    KG_NVML_SUCCESS = 0,
    KG_NVML_ERROR_INSUFFICIENT_SIZE = 7,
    KG_NVML_CLOCK_GRAPHICS = 0,
    KG_NVML_CLOCK_SM = 1,
    KG_NVML_CLOCK_MEM = 2,
    KG_NVML_TEMPERATURE_GPU = 0
};

typedef struct kg_cuda_nvml {
    void *lib;
    char path[256];
    nvmlReturn_t (*nvmlInit)(void);                                   /* _v2 */
    nvmlReturn_t (*nvmlShutdown)(void);
    const char *(*nvmlErrorString)(nvmlReturn_t rc);
    nvmlReturn_t (*nvmlDeviceGetHandleByIndex)(unsigned idx, nvmlDevice_t *dev);  /* _v2 */
    nvmlReturn_t (*nvmlDeviceGetHandleByUUID)(const char *uuid, nvmlDevice_t *dev);
    nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t dev, int type, unsigned *mhz);
    nvmlReturn_t (*nvmlDeviceGetPowerUsage)(nvmlDevice_t dev, unsigned *mw);
    nvmlReturn_t (*nvmlDeviceGetTemperature)(nvmlDevice_t dev, int sensor, unsigned *c);
    /* GetCurrentClocksEventReasons, or the older ...ThrottleReasons */
    nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons)(nvmlDevice_t dev,
                                                           unsigned long long *reasons);
    nvmlReturn_t (*nvmlDeviceGetUUID)(nvmlDevice_t dev, char *uuid, unsigned len);
    nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses)(nvmlDevice_t dev, unsigned *count,
                                                         kg_nvml_process *infos); /* _v3 */
} kg_cuda_nvml;

/* ---- cuBLASLt (libcublasLt.so) ---- */
typedef int cublasStatus_t;
typedef struct cublasLtContext *cublasLtHandle_t;
typedef struct kg_cublaslt_opaque *cublasLtMatmulDesc_t;
typedef struct kg_cublaslt_opaque *cublasLtMatrixLayout_t;
typedef struct kg_cublaslt_opaque *cublasLtMatmulPreference_t;
typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;
typedef struct {
    cublasLtMatmulAlgo_t algo;
    size_t workspaceSize;
    cublasStatus_t state;
    float wavesCount;
    int reserved[4];
} cublasLtMatmulHeuristicResult_t;
enum {
    KG_CUBLAS_STATUS_SUCCESS = 0,
    KG_CUBLAS_OP_N = 0,
    KG_CUBLAS_OP_T = 1,
    KG_CUBLAS_COMPUTE_32F = 68,
    KG_CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    KG_CUDA_R_32F = 0,
    KG_CUDA_R_16F = 2,
    KG_CUDA_R_16BF = 14,
    KG_CUBLASLT_MATMUL_DESC_TRANSA = 3,
    KG_CUBLASLT_MATMUL_DESC_TRANSB = 4,
    KG_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
    /* cublasLtMatmulDescCreate's scale type: float alpha and beta */
    KG_CUBLASLT_SCALE_32F = KG_CUDA_R_32F
};

typedef struct kg_cuda_cublaslt {
    void *lib;
    char path[256];
    size_t (*cublasLtGetVersion)(void);
    cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t *h);
    cublasStatus_t (*cublasLtDestroy)(cublasLtHandle_t h);
    cublasStatus_t (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t *d, int compute, int scale);
    cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t d);
    cublasStatus_t (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t d, int attr,
                                                     const void *buf, size_t bytes);
    cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t *l, int type,
                                                 uint64_t rows, uint64_t cols, int64_t ld);
    cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t l);
    cublasStatus_t (*cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t *p);
    cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t p);
    cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t p, int attr,
                                                           const void *buf, size_t bytes);
    cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(
        cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
        cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
        cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t *results,
        int *returned);
    cublasStatus_t (*cublasLtMatmul)(cublasLtHandle_t h, cublasLtMatmulDesc_t op,
                                     const void *alpha, const void *a, cublasLtMatrixLayout_t ad,
                                     const void *b, cublasLtMatrixLayout_t bd, const void *beta,
                                     const void *c, cublasLtMatrixLayout_t cd, void *d,
                                     cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t *algo,
                                     void *ws, size_t ws_bytes, CUstream stream);
} kg_cuda_cublaslt;

/* ---- loaders (cuda_loader.c) ----
 * Each fills its struct or returns an error quoting dlerror() and leaves
 * the struct zeroed.  The library names can be overridden with the
 * settings' lib_cuda, lib_nvrtc, lib_nvml and lib_cublaslt (KGATE_LIBCUDA,
 * KGATE_LIBNVRTC, KGATE_LIBNVML, KGATE_LIBCUBLASLT: a path or a soname),
 * which is how tests simulate a missing library on a machine that has
 * it; NVRTC and cuBLASLt are also looked for under cuda_home.  The driver failing to open is KG_EUNSUPPORTED
 * ("no CUDA driver found: ...; use backend = cpu"); a missing symbol is
 * KG_EUNSUPPORTED too (the driver is too old). */
int kg_cuda_driver_load(kg_cuda_driver *d, const kg_settings *s, kg_err *err);
void kg_cuda_driver_unload(kg_cuda_driver *d);     /* NULL-safe, idempotent */
int kg_cuda_nvrtc_load(kg_cuda_nvrtc *n, const kg_settings *s, kg_err *err);
void kg_cuda_nvrtc_unload(kg_cuda_nvrtc *n);
int kg_cuda_nvml_load(kg_cuda_nvml *n, const kg_settings *s, kg_err *err);
void kg_cuda_nvml_unload(kg_cuda_nvml *n);
int kg_cuda_cublaslt_load(kg_cuda_cublaslt *c, const kg_settings *s, kg_err *err);
void kg_cuda_cublaslt_unload(kg_cuda_cublaslt *c);

/* 1 when the driver library (s->lib_cuda, else libcuda.so.1) opens here,
 * then closed again: the probe of `kgate list`, cheaper than
 * kg_cuda_driver_load. */
int kg_cuda_driver_present(const kg_settings *s);

/* Writes "CUDA_ERROR_X (text)" for a driver result into buf. */
void kg_cuda_result_text(const kg_cuda_driver *d, CUresult rc, char *buf, size_t cap);

/* ---- host-side helpers of the backend, tested without a GPU ----
 * (argument lists and launch geometry are backend-neutral: launch.h) */

/* How a row-major gemm op maps onto one column-major cuBLASLt matmul
 * D = op(A) * op(B), for `builtin = cublas`.  gemm_bt (and gemm_splitk,
 * the same contract) computes C[M,N] = A[M,K] * B[N,K]^T in row-major
 * storage; read column-major, the same bytes are C^T[N,M] = B * A^T, so
 * cuBLASLt's A operand is the op's B (stored K x N column-major, ld K,
 * transposed), its B operand is the op's A (stored K x M, ld K, not
 * transposed) and D is N x M, ld N.  gemm_nt (C = A * B, B[K,N]) differs
 * only in the op's B: stored N x K column-major, ld N, not transposed. */
typedef struct kg_cuda_gemm_map {
    int a_input, b_input;         /* op input index behind cuBLASLt's A and B */
    int transa, transb;           /* KG_CUBLAS_OP_N or _T */
    uint64_t m, n, k;             /* of op(A) m x k, op(B) k x n, D m x n */
    uint64_t a_rows, a_cols;  int64_t lda;   /* stored layouts, column-major */
    uint64_t b_rows, b_cols;  int64_t ldb;
    uint64_t d_rows, d_cols;  int64_t ldd;
    int in_type;                  /* KG_CUDA_R_32F / _16F / _16BF of the case dtype */
    int out_type;                 /* KG_CUDA_R_32F */
    int compute_type;             /* KG_CUBLAS_COMPUTE_32F; _FAST_TF32 only under a tf32 contract */
} kg_cuda_gemm_map;

/* Fills m for case c of op op_name; KG_EUNSUPPORTED naming the op when
 * builtin = cublas does not implement it, KG_EINPUT when the case lacks
 * M, N or K. */
int kg_cuda_gemm_map_case(const char *arm, const kg_case *c, const kg_contract *ct, kg_cuda_gemm_map *m,
                          kg_err *err);

/* The cuBLASLt reference size of the workspace handed to every matmul
 * (allocated once per backend, outside timing). */
#define KG_CUDA_CUBLAS_WS_BYTES ((size_t)32 << 20)

/* Compiles arm a of plan for dtype dt with NVRTC (loaded into nv when
 * not yet) for sm_<cc_major><cc_minor>, unless the arm's cflags name an
 * arch; *image receives a malloc'd cubin.  Include paths: kgate's include
 * folder (s->include_dir, or found from the executable) and the CUDA
 * toolkit's (under s->cuda_home or s->cuda_path, else the system's).
 * Defines: KG_DTYPE=dt, the arm's defines, KGATE_NEGATIVE=1 when the
 * settings build this arm as the negative (kg_backend_negative).  A
 * precompiled arm (image = PATH) is read instead, the same bytes for every
 * dtype, and checked against the device (kg_cuda_image_check); NVRTC is
 * then not needed.  Needs no GPU.  A compile error is KG_EBACKEND with the arm, the source path
 * and the NVRTC log. */
int kg_cuda_compile(kg_cuda_nvrtc *nv, const kg_settings *s, int cc_major, int cc_minor,
                    const kg_plan *plan, int a, kg_dtype dt, char **image, size_t *image_bytes,
                    kg_err *err);

/* kg_cuda_compile for case cs: an arm with specialize = yes also gets
 * -DKG_VAR_NAME=VALUE for each of the case's variables (M N K splits when
 * set, eps, then the op's variables; yes/no as 1/0, reals as C double
 * literals), so that its kernels may take the shape as compile-time
 * constants; cs NULL or specialize = no: kg_cuda_compile. */
int kg_cuda_compile_case(kg_cuda_nvrtc *nv, const kg_settings *s, int cc_major, int cc_minor,
                         const kg_plan *plan, int a, const kg_case *cs, kg_dtype dt, char **image,
                         size_t *image_bytes, kg_err *err);

/* One compile of kg_cuda_compile_many: arm a for case cs (NULL: not
 * specialized) in dtype dt; its result (rc, err, and the cubin in image,
 * which the caller takes and frees). */
typedef struct kg_cuda_unit {
    int arm;
    const kg_case *cs;
    kg_dtype dt;
    int rc;
    kg_err err;
    char *image;
    size_t bytes;
    int taken;       /* the caller's: its result was handed on */
} kg_cuda_unit;

/* Compiles the n units with kg_cuda_compile_case on up to `threads`
 * threads at once (NVRTC compiles distinct programs concurrently): each
 * unit's own rc and err say how it went.  NVRTC is loaded first, once;
 * if it cannot be, every unit gets that error.  Returns KG_OK. */
int kg_cuda_compile_many(kg_cuda_nvrtc *nv, const kg_settings *s, int cc_major, int cc_minor,
                         const kg_plan *plan, kg_cuda_unit *units, int n, int threads);

/* 0 when the n bytes at b, a precompiled image of the given kind, can run
 * on a device of compute capability cc_major.cc_minor: a cubin (CUDA ELF)
 * built for sm_XY with X the device's major and Y at most its minor; PTX
 * text whose .target is at most the device's; a fatbin holding such a
 * cubin or PTX.  Otherwise 1, with why (the fix included).  Reads the
 * bytes as data only; no driver. */
int kg_cuda_image_check(kg_image_kind kind, const unsigned char *b, size_t n, int cc_major, int cc_minor,
                        char *why, size_t cap);

/* The resource record of launch i (0-based) of a loaded kernel's chain;
 * the backend's resources slot gives launch 0 with `launches` set to the
 * chain length.  For builtin = cublas (one opaque library call) the
 * kernel attributes are -1 and image_sha256 identifies the algorithm the
 * heuristic picked (its 64 bytes and the library version). */
int kg_cuda_launch_resources(kg_backend *be, kg_kernel *k, int i, kg_resources *out,
                             kg_err *err);

/* Formats a 16-byte device UUID as NVML writes it ("GPU-xxxxxxxx-...") */
void kg_cuda_uuid_text(const CUuuid *u, char *buf, size_t cap);

/* How long the gate's test at creation waits for the side stream's write
 * to release the stream (it takes microseconds on separate queues). */
#define KG_CUDA_GATE_TEST_S 0.5

/* One timed sample's machinery, the same in the worker (trusted arms) and
 * in a cuda arm host (cuda_timing.c).  A sample first synchronises one
 * event, so that the timing process's context is resident on the device
 * before the host bracket starts; then, where the driver has stream
 * memory operations, the timed stream waits on a flag while the start
 * event, the graph and the end event are queued behind it, and a second
 * stream opens the flag: the events time the graph's execution, not the
 * host's submission of it. */
typedef struct kg_cuda_gate {
    CUstream stream, side;
    CUevent pre, e0, e1;
    CUdeviceptr flag;
    unsigned count;
    int gated;           /* 1: the flag is used; 0: the driver lacks it, or it failed its test */
    int shared_queue;    /* the test found the side stream's write queued behind the stream's wait
                          * (one hardware queue for both: CUDA_DEVICE_MAX_CONNECTIONS=1): ungated */
    int sched_fd;        /* /proc/thread-self/schedstat of the thread that times, or -1 */
} kg_cuda_gate;

/* Creates what the gate needs on stream (current context); *call names a
 * failing call.  The gate holds the stream on a flag that a second stream
 * writes, which needs the two on different hardware queues: a test at
 * creation (a wait released by the side stream, given KG_CUDA_GATE_TEST_S)
 * leaves the gate off (gated 0, shared_queue 1) where the write waits
 * behind the wait, and releases the stream from the host. */
CUresult kg_cuda_gate_init(const kg_cuda_driver *d, kg_cuda_gate *g, CUstream stream, const char **call);
void kg_cuda_gate_free(const kg_cuda_driver *d, kg_cuda_gate *g);
/* Replays exec once between the events: the event time and the host
 * bracket (CLOCK_MONOTONIC_RAW, after a device-wide synchronisation) less
 * the time the thread spent runnable but waiting for a CPU meanwhile
 * (schedstat's run delay, where the kernel keeps it), ns: a bracket that
 * a busy host lengthened is not work that escaped the events. */
CUresult kg_cuda_gate_replay(const kg_cuda_driver *d, kg_cuda_gate *g, CUgraphExec exec, double *event_ns,
                             double *host_ns, const char **call);

/* ---- the poison of checked executions (cuda_poison.c) ----
 * Before every checked execution of a CUDA arm (the backend's run: the
 * checks before and after timing, never a timed sample), in the process
 * the arm runs in: kgate's own kernel fills the shared memory of every SM
 * with a word, and the arm's workspace is filled with the same word; the
 * words alternate between a NaN pattern and a large finite one, so that an
 * arm whose result depends on shared memory or workspace it did not write
 * is wrong in its checks (a NaN alone could be lost in a max). */
#define KG_CUDA_POISON_NAN 0x7fc07fc0u     /* NaN as f32, and each 16-bit half NaN as f16 and bf16 */
#define KG_CUDA_POISON_FINITE 0x7b7b7b7bu  /* 1.3e36 as f32, 6.5e4 / 1.3e36 as f16 / bf16 halves */

typedef struct kg_cuda_poison {
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr seen;     /* one word per %smid (KG_CUDA_POISON_SMIDS): set by the block that ran there */
    int sm_count;         /* the device's SMs */
    int smem_bytes;       /* dynamic shared memory per block: the device's opt-in limit */
    int threads;          /* threads per block */
    unsigned count;       /* poisons so far: the word alternates */
    int min_covered;      /* the fewest SMs a poison reached; -1 none yet */
} kg_cuda_poison;
#define KG_CUDA_POISON_SMIDS 1024

/* The word of poison number n (0: the NaN one). */
uint32_t kg_cuda_poison_word(unsigned n);
/* Loads kgate's poison kernel (embedded PTX) in the current context and
 * opts it into the device's whole shared memory per block. */
CUresult kg_cuda_poison_init(const kg_cuda_driver *d, CUdevice dev, kg_cuda_poison *p, const char **call);
void kg_cuda_poison_free(const kg_cuda_driver *d, kg_cuda_poison *p);
/* Fills the shared memory of every SM with the next word (*word): a grid
 * of one block per SM, each holding the whole opt-in shared memory so that
 * no two fit on one SM, launched again (up to 8 times in all) until every
 * SM has run one; *covered: the SMs reached.  The workspace (ws, bytes;
 * 0: none) gets the same word.  Synchronises the stream. */
CUresult kg_cuda_poison_run(const kg_cuda_driver *d, kg_cuda_poison *p, CUstream s, CUdeviceptr ws, size_t ws_bytes,
                            uint32_t *word, int *covered, const char **call);

/* ---- the warm L2 of timed samples (cuda_l2.c) ----
 * Under l2 = warm, before every timed sample, in the process that times
 * it (the arm's cuda arm host, or the worker for a trusted arm): kgate's
 * own kernel reads every input set the sample's operations read, so that
 * they are in the L2 when the sample starts, whoever wrote them last (the
 * worker's generator, in another process's context, leaves them written
 * and nothing more).  Each 16-byte piece is read KG_CUDA_WARM_READS times,
 * each time by a block a quarter of the grid away, so that the reads come
 * from SMs all over the device (the H200's L2 is two partitions, each
 * nearer one half of the SMs).  The loads are L2-only (ld.global.cg). */
#define KG_CUDA_WARM_READS 4
#define KG_CUDA_WARM_READS_TEXT "4"  /* the same, for messages */
#define KG_CUDA_WARM_MAX 64          /* buffers one sample reads at most (KG_CH_NBUF's inputs) */

typedef struct kg_cuda_warm_buf {
    CUdeviceptr ptr;
    uint64_t bytes;
} kg_cuda_warm_buf;

typedef struct kg_cuda_warm {
    CUmodule mod;
    CUfunction fn;
    int blocks, threads;  /* the grid: one block per SM, as many threads as the kernel takes (at most 1024) */
} kg_cuda_warm;

/* Loads kgate's warm kernel (embedded PTX) in the current context. */
CUresult kg_cuda_warm_init(const kg_cuda_driver *d, CUdevice dev, kg_cuda_warm *w, const char **call);
void kg_cuda_warm_free(const kg_cuda_driver *d, kg_cuda_warm *w);
/* Reads the n buffers into the L2 on stream s and synchronises it: *ns is
 * the host's time for it, *bytes the bytes read once (each buffer's). */
CUresult kg_cuda_warm_run(const kg_cuda_driver *d, const kg_cuda_warm *w, CUstream s, const kg_cuda_warm_buf *bufs,
                          int n, double *ns, uint64_t *bytes, const char **call);

#endif
