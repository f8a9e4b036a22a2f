/* cuda.c: the cuda backend (kg_backend_cuda, see kgate/backend.h).
 *
 * Kernels are CUDA C sources compiled at load time by NVRTC for the
 * device's exact architecture, loaded as cubins with the driver API and
 * launched on a kgate-owned non-blocking stream.  bind() captures `pack`
 * launches of one operation into a CUDA graph; time() replays that graph
 * between two events and also brackets it on the host with a device-wide
 * synchronisation, so that work escaping the events (e.g. on another
 * stream) is counted rather than silently excluded (see telemetry).
 *
 * Everything is reached through dlopen (cuda_loader.c): this file builds
 * and links without the CUDA toolkit, and opening the backend on a
 * machine with no driver is an ordinary KG_EUNSUPPORTED.
 *
 * The calling thread must be the one that opened the backend: the
 * context is made current once, in open().
 *
 * An operation is a chain of up to three launches from one module (entry,
 * entry2, entry3), issued in order on the kgate stream; bind() captures
 * pack whole chains.  `builtin = cublas` arms are one cuBLASLt matmul per
 * operation (gemm ops only), with the algorithm picked by the heuristic at
 * load and a workspace allocated once, captured into the graph like any
 * other arm.
 *
 * This file does not generate inputs, check outputs or decide anything. */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "kgate/backend.h"
#include "kgate/oracle.h"
#include "backend/cuda_api.h"
#include "expr.h"
#include "util.h"

/* A host bracket longer than this factor times the event time, plus a
 * fixed allowance for launch and synchronisation latency, counts as work
 * that escaped the timed events. */
#define KG_CUDA_ESCAPE_FACTOR 2.0
#define KG_CUDA_ESCAPE_SLACK_NS 200000.0
#define KG_CUDA_MAX_SOURCE_BYTES (16u << 20)

typedef struct cuda_ctx {
    kg_cuda_driver drv;
    kg_cuda_nvrtc nvrtc;
    kg_cuda_nvml nvml;
    int nvml_state;               /* 0 untried, 1 ready, -1 unavailable */
    nvmlDevice_t nvdev;
    int ordinal;
    CUdevice dev;
    CUcontext ctx;
    int ctx_retained;
    CUstream stream;
    CUevent ev_start, ev_end;
    int cc_major, cc_minor, sm_count, l2_bytes, smem_optin_bytes, driver_version;
    size_t mem_bytes;
    char name[128];
    char uuid[64];
    CUdeviceptr flush_buf;
    size_t flush_bytes;
    unsigned flush_count;
    /* escape accounting, reported through the telemetry slot */
    uint64_t samples, escapes;
    double last_event_ns, last_host_ns;
    /* cuBLASLt, opened at the first builtin = cublas arm */
    kg_cuda_cublaslt lt;
    cublasLtHandle_t lt_handle;
    CUdeviceptr lt_ws;
} cuda_ctx;

/* One launch of a chain. */
typedef struct cuda_launch {
    char entry[KG_NAME_MAX];
    CUfunction fn;
    kg_cuda_geom geom;
    kg_carg args[KG_CUDA_MAX_ARGS];
    int nargs;
    void *params[KG_CUDA_MAX_ARGS];
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
};

/* Checks one driver result; evaluates to KG_OK or KG_EBACKEND with the
 * call, the file:line and the driver's name for the error. */
#define CU(c, fn, args) cu_check((c), (c)->drv.fn args, #fn, __FILE__, __LINE__, err)

static int cu_check(const cuda_ctx *c, CUresult rc, const char *call, const char *file,
                    int line, kg_err *err)
{
    if (rc == KG_CUDA_SUCCESS) return KG_OK;
    char text[256];
    kg_cuda_result_text(&c->drv, rc, text, sizeof text);
    return kg_errorf(err, KG_EBACKEND, "%s failed at %s:%d: %s", call, file, line, text);
}

/* Puts "arm 'a' on case 'c': " in front of the recorded message, so that
 * a failing driver call names what was running. */
static void add_context(kg_err *err, const kg_kernel *k, const char *what)
{
    if (err == NULL || err->code == 0) return;
    char old[KG_ERR_MSG_MAX];
    snprintf(old, sizeof old, "%s", err->msg);
    snprintf(err->msg, sizeof err->msg, "arm '%s' on case '%s': %s: %.800s", k->arm,
             k->kase, what, old);
}

static CUdeviceptr dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void kg_cuda_uuid_text(const CUuuid *u, char *buf, size_t cap)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, cap,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

/* ---------------------------------------------------------------- args */

static int var_value(const kg_case *c, const char *name, int64_t *v)
{
    if (strcmp(name, "M") == 0) *v = c->M;
    else if (strcmp(name, "N") == 0) *v = c->N;
    else if (strcmp(name, "K") == 0) *v = c->K;
    else if (strcmp(name, "splits") == 0) *v = c->splits;
    else return 0;
    return 1;
}

static int parse_one_arg(const char *arm, const char *tok, const char *const *in_names, int nin,
                         const char *const *out_names, int nout, const kg_case *c, kg_carg *a,
                         kg_err *err)
{
    char name[64];
    const char *suffix = "";
    snprintf(name, sizeof name, "%s", tok);
    char *colon = strchr(name, ':');
    if (colon != NULL) {
        *colon = '\0';
        suffix = colon + 1;
    }
    memset(a, 0, sizeof *a);
    if (strlen(name) >= sizeof a->name)
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s' is too long", arm, tok);
    snprintf(a->name, sizeof a->name, "%.31s", name);
    int is_buffer = 0;
    for (int i = 0; i < nin && !is_buffer; i++)
        if (strcmp(name, in_names[i]) == 0) { a->kind = KG_CARG_IN; a->index = i; is_buffer = 1; }
    for (int o = 0; o < nout && !is_buffer; o++)
        if (strcmp(name, out_names[o]) == 0) { a->kind = KG_CARG_OUT; a->index = o; is_buffer = 1; }
    if (!is_buffer && (strcmp(name, "WS") == 0 || strcmp(name, "ws") == 0)) {
        a->kind = KG_CARG_WS;
        is_buffer = 1;
    }
    if (!is_buffer && strcmp(name, "none") == 0 && suffix[0] == '\0') {
        a->kind = KG_CARG_NONE;
        return KG_OK;
    }
    if (is_buffer) {
        if (suffix[0] != '\0')
            return kg_errorf(err, KG_EINPUT,
                             "arm '%s': argument '%s': a buffer takes no type suffix", arm, tok);
        return KG_OK;
    }
    int64_t v = 0;
    if (var_value(c, name, &v)) {
        if (v < 0)
            return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': case '%s' does not set %s",
                             arm, tok, c->name, name);
        if (suffix[0] == '\0' || strcmp(suffix, "i32") == 0) {
            if (v > INT32_MAX)
                return kg_errorf(err, KG_EINPUT,
                                 "arm '%s': argument '%s' = %lld does not fit a 32-bit int "
                                 "for case '%s' (write %s:i64 and take an int64_t)",
                                 arm, tok, (long long)v, c->name, name);
            a->kind = KG_CARG_I32;
            a->value.i32 = (int32_t)v;
            return KG_OK;
        }
        if (strcmp(suffix, "i64") == 0) {
            a->kind = KG_CARG_I64;
            a->value.i64 = v;
            return KG_OK;
        }
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': unknown suffix ':%s' "
                         "(use :i32 or :i64)", arm, tok, suffix);
    }
    if (strcmp(name, "eps") == 0) {
        if (suffix[0] == '\0' || strcmp(suffix, "f32") == 0) {
            a->kind = KG_CARG_F32;
            a->value.f32 = (float)c->eps;
            return KG_OK;
        }
        if (strcmp(suffix, "f64") == 0) {
            a->kind = KG_CARG_F64;
            a->value.f64 = c->eps;
            return KG_OK;
        }
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': unknown suffix ':%s' "
                         "(use :f32 or :f64)", arm, tok, suffix);
    }
    char vocab[256] = "";
    size_t used = 0;
    for (int i = 0; i < nin; i++)
        used += (size_t)snprintf(vocab + used, sizeof vocab - used, "%s ", in_names[i]);
    for (int o = 0; o < nout && used < sizeof vocab; o++)
        used += (size_t)snprintf(vocab + used, sizeof vocab - used, "%s ", out_names[o]);
    if (used < sizeof vocab) snprintf(vocab + used, sizeof vocab - used, "WS M N K splits eps");
    return kg_errorf(err, KG_EINPUT, "arm '%s': unknown argument '%s' (the op's vocabulary: %s)",
                     arm, tok, vocab);
}

int kg_cuda_args_parse(const char *arm, const char *text, const char *const *in_names, int nin,
                       const char *const *out_names, int nout, const kg_case *c,
                       kg_carg *args, int *nargs, kg_err *err)
{
    *nargs = 0;
    const char *p = text;
    int n = 0;
    for (;;) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        if (*p == '\0') break;
        const char *start = p;
        while (*p != '\0' && *p != ',' && *p != ' ' && *p != '\t') p++;
        char tok[64];
        size_t len = (size_t)(p - start);
        if (len >= sizeof tok)
            return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%.40s...' is too long", arm,
                             start);
        memcpy(tok, start, len);
        tok[len] = '\0';
        if (n == KG_CUDA_MAX_ARGS)
            return kg_errorf(err, KG_EINPUT, "arm '%s': more than %d kernel arguments", arm,
                             KG_CUDA_MAX_ARGS);
        int rc = parse_one_arg(arm, tok, in_names, nin, out_names, nout, c, &args[n], err);
        if (rc != KG_OK) return rc;
        n++;
    }
    for (int i = 0; i < n && n > 1; i++)
        if (args[i].kind == KG_CARG_NONE)
            return kg_errorf(err, KG_EINPUT, "arm '%s': 'none' must stand alone in args", arm);
    if (n == 1 && args[0].kind == KG_CARG_NONE) n = 0; /* args = none: a kernel without parameters */
    else if (n == 0)
        return kg_errorf(err, KG_EINPUT, "arm '%s': args is empty (list the kernel's parameters "
                         "in order, e.g. args = A, B, C, M, N, K, or args = none)", arm);
    *nargs = n;
    return KG_OK;
}

/* ------------------------------------------------------------ geometry */

int kg_cuda_chain_length(const kg_arm *arm, int *n, kg_err *err)
{
    *n = 1;
    for (int i = 0; i < KG_EXTRA_LAUNCHES; i++) {
        if (arm->extra[i].entry[0] == '\0') continue;
        if (*n != i + 1)
            return kg_errorf(err, KG_EINPUT, "arm '%s': entry%d is set but entry%d is not (the "
                             "launches of a chain are numbered without gaps)", arm->name, i + 2,
                             i + 1);
        *n = i + 2;
    }
    return KG_OK;
}

int kg_cuda_geometry(const kg_arm *arm, const kg_case *c, kg_cuda_geom *g, kg_err *err)
{
    return kg_cuda_launch_geometry(arm, 1, c, g, err);
}

int kg_cuda_launch_geometry(const kg_arm *arm, int launch, const kg_case *c, kg_cuda_geom *g,
                            kg_err *err)
{
    int64_t grid[3], block[3], shared = 0;
    int ng = 0, nb = 0;
    char what[KG_NAME_MAX + 32];
    memset(g, 0, sizeof *g);
    if (launch < 1 || launch > 1 + KG_EXTRA_LAUNCHES)
        return kg_errorf(err, KG_EINTERNAL, "arm '%s': no launch %d", arm->name, launch);
    const char *grid_text = launch == 1 ? arm->grid : arm->extra[launch - 2].grid;
    const char *block_text = launch == 1 ? arm->block : arm->extra[launch - 2].block;
    const char *shared_text = launch == 1 ? arm->shared : arm->extra[launch - 2].shared;
    /* the plan's key names: grid, grid2, grid3 */
    char sfx[4] = "";
    if (launch > 1) snprintf(sfx, sizeof sfx, "%d", launch);
    snprintf(what, sizeof what, "arm '%s' grid%s", arm->name, sfx);
    int rc = kg_expr_eval_list(what, grid_text, c, grid, 3, 1, &ng, err);
    if (rc != KG_OK) return rc;
    snprintf(what, sizeof what, "arm '%s' block%s", arm->name, sfx);
    rc = kg_expr_eval_list(what, block_text, c, block, 3, 1, &nb, err);
    if (rc != KG_OK) return rc;
    if (ng == 0 || nb == 0)
        return kg_errorf(err, KG_EINPUT, "arm '%s': %s%s is empty (a GPU arm declares grid%s and "
                         "block%s for every launch, e.g. grid%s = ceildiv(N, 64), ceildiv(M, 64))",
                         arm->name, ng == 0 ? "grid" : "block", sfx, sfx, sfx, sfx);
    if (shared_text[0] != '\0') {
        snprintf(what, sizeof what, "arm '%s' shared%s", arm->name, sfx);
        rc = kg_expr_eval(what, shared_text, c, &shared, err);
        if (rc != KG_OK) return rc;
    }
    static const char xyz[] = "xyz";
    for (int i = 0; i < 3; i++) {
        if (grid[i] < 1 || block[i] < 1)
            return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': %s%s.%c is %lld (must be >= 1)",
                             arm->name, c->name, grid[i] < 1 ? "grid" : "block", sfx, xyz[i],
                             (long long)(grid[i] < 1 ? grid[i] : block[i]));
    }
    if (grid[0] > INT32_MAX || grid[1] > 65535 || grid[2] > 65535)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': grid%s (%lld, %lld, %lld) exceeds "
                         "the CUDA limits (2^31-1, 65535, 65535)", arm->name, c->name, sfx,
                         (long long)grid[0], (long long)grid[1], (long long)grid[2]);
    if (block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
        block[0] * block[1] * block[2] > 1024)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': block%s (%lld, %lld, %lld) exceeds "
                         "the CUDA limits (1024 threads, z <= 64)", arm->name, c->name, sfx,
                         (long long)block[0], (long long)block[1], (long long)block[2]);
    if (shared < 0 || shared > INT32_MAX)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': shared%s = %lld bytes is out of "
                         "range", arm->name, c->name, sfx, (long long)shared);
    for (int i = 0; i < 3; i++) {
        g->grid[i] = (unsigned)grid[i];
        g->block[i] = (unsigned)block[i];
    }
    g->shared_bytes = (unsigned)shared;
    return KG_OK;
}

/* --------------------------------------------------------- cuBLASLt map */

int kg_cuda_gemm_map_case(const char *arm, const kg_case *c, kg_cuda_gemm_map *m, kg_err *err)
{
    memset(m, 0, sizeof *m);
    /* gemm_splitk has gemm_bt's contract; its workspace is for the
     * kernels' partials, which one cuBLASLt call does not need */
    int bt = strcmp(c->op, "gemm_bt") == 0 || strcmp(c->op, "gemm_splitk") == 0;
    int nt = strcmp(c->op, "gemm_nt") == 0;
    if (!bt && !nt)
        return kg_errorf(err, KG_EUNSUPPORTED, "arm '%s': builtin cublas implements gemm_bt, "
                         "gemm_nt and gemm_splitk, not op '%s' of case '%s'", arm, c->op, c->name);
    if (c->M < 1 || c->N < 1 || c->K < 1)
        return kg_errorf(err, KG_EINPUT, "arm '%s': case '%s' must set M, N and K for builtin "
                         "cublas", arm, c->name);
    switch (c->dtype) {
    case KG_DT_F32: m->in_type = KG_CUDA_R_32F; break;
    case KG_DT_F16: m->in_type = KG_CUDA_R_16F; break;
    case KG_DT_BF16: m->in_type = KG_CUDA_R_16BF; break;
    default:
        return kg_errorf(err, KG_EINPUT, "arm '%s': case '%s' has an unknown dtype", arm, c->name);
    }
    m->out_type = KG_CUDA_R_32F;
    /* CUBLAS_COMPUTE_32F, never the TF32 variants: f32 inputs must be
     * multiplied in full float32 for the op's f32 error bound to hold */
    m->compute_type = KG_CUBLAS_COMPUTE_32F;
    uint64_t M = (uint64_t)c->M, N = (uint64_t)c->N, K = (uint64_t)c->K;
    /* row-major C[M,N] read column-major is C^T[N,M] = op(B) * A^T[K,M] */
    m->m = N;
    m->n = M;
    m->k = K;
    m->a_input = 1;
    if (bt) {
        /* B[N,K] row-major = K x N column-major, ld K: transposed to N x K */
        m->transa = KG_CUBLAS_OP_T;
        m->a_rows = K; m->a_cols = N; m->lda = (int64_t)K;
    } else {
        /* B[K,N] row-major = N x K column-major, ld N: already B^T */
        m->transa = KG_CUBLAS_OP_N;
        m->a_rows = N; m->a_cols = K; m->lda = (int64_t)N;
    }
    m->b_input = 0;                 /* A[M,K] row-major = K x M column-major = A^T */
    m->transb = KG_CUBLAS_OP_N;
    m->b_rows = K; m->b_cols = M; m->ldb = (int64_t)K;
    m->d_rows = N; m->d_cols = M; m->ldd = (int64_t)N;
    return KG_OK;
}

/* ------------------------------------------------------- include paths */

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* kgate/kernel.h lives in the repository's include/ folder: next to the
 * executable's folder (bin/, build/) or two up (build/tests/). */
static int find_kgate_include(char *out, size_t cap)
{
    char probe[KG_PATH_MAX + 32];
    const char *env = getenv("KGATE_INCLUDE");
    if (env != NULL && env[0] != '\0') {
        snprintf(out, cap, "%s", env);
        return 1;
    }
    char exe[KG_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) *slash = '\0';
        static const char *const ups[] = { "/../include", "/../../include", "/../../../include" };
        for (size_t i = 0; i < sizeof ups / sizeof ups[0]; i++) {
            snprintf(probe, sizeof probe, "%s%s/kgate/kernel.h", exe, ups[i]);
            if (is_file(probe)) {
                snprintf(out, cap, "%s%s", exe, ups[i]);
                return 1;
            }
        }
    }
    if (is_file("include/kgate/kernel.h")) {
        snprintf(out, cap, "include");
        return 1;
    }
    return 0;
}

/* The toolkit's include folder, for kernels that include cuda_fp16.h,
 * cuda_bf16.h or mma.h. */
static int find_cuda_include(char *out, size_t cap)
{
    char probe[KG_PATH_MAX + 32];
    static const char *const envs[] = { "CUDA_HOME", "CUDA_PATH" };
    for (size_t i = 0; i < 2; i++) {
        const char *e = getenv(envs[i]);
        if (e == NULL || e[0] == '\0') continue;
        snprintf(probe, sizeof probe, "%s/include/cuda_fp16.h", e);
        if (is_file(probe)) {
            snprintf(out, cap, "%s/include", e);
            return 1;
        }
    }
    if (is_file("/usr/local/cuda/include/cuda_fp16.h")) {
        snprintf(out, cap, "/usr/local/cuda/include");
        return 1;
    }
    glob_t gl;
    int found = 0;
    if (glob("/usr/local/cuda-*/include/cuda_fp16.h", 0, NULL, &gl) == 0 && gl.gl_pathc > 0) {
        /* glob sorts: the last is the newest toolkit */
        snprintf(out, cap, "%s", gl.gl_pathv[gl.gl_pathc - 1]);
        char *slash = strrchr(out, '/');
        if (slash != NULL) *slash = '\0';
        found = 1;
    }
    globfree(&gl);
    if (!found && is_file("/usr/include/cuda_fp16.h")) {
        snprintf(out, cap, "/usr/include");
        found = 1;
    }
    return found;
}

/* --------------------------------------------------------------- NVRTC */

static int read_source(const char *path, char **out, kg_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return kg_errorf(err, KG_EIO, "cannot open kernel source %s: %s", path,
                                    strerror(errno));
    int rc = KG_OK;
    char *buf = malloc(KG_CUDA_MAX_SOURCE_BYTES + 1);
    if (buf == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "out of memory reading %s", path);
        goto done;
    }
    size_t n = fread(buf, 1, KG_CUDA_MAX_SOURCE_BYTES + 1, f);
    if (ferror(f)) {
        rc = kg_errorf(err, KG_EIO, "cannot read kernel source %s", path);
        goto done;
    }
    if (n > KG_CUDA_MAX_SOURCE_BYTES) {
        rc = kg_errorf(err, KG_EINPUT, "kernel source %s is larger than %u bytes", path,
                       KG_CUDA_MAX_SOURCE_BYTES);
        goto done;
    }
    buf[n] = '\0';
    *out = buf;
    buf = NULL;
done:
    free(buf);
    fclose(f);
    return rc;
}

/* Makes a multi-line compiler log fit a one-line message. */
static void log_one_line(const char *log, char *out, size_t cap)
{
    size_t j = 0;
    int space = 0;
    for (size_t i = 0; log[i] != '\0' && j + 1 < cap; i++) {
        char ch = log[i];
        if (ch == '\n' || ch == '\r') {
            if (j > 0 && !space && j + 4 < cap) {
                memcpy(out + j, " | ", 3);
                j += 3;
                space = 1;
            }
            continue;
        }
        out[j++] = ch;
        space = 0;
    }
    while (j > 0 && (out[j - 1] == ' ' || out[j - 1] == '|')) j--;
    out[j] = '\0';
}

/* Appends whitespace-separated tokens of text to opts as "prefix token". */
static int add_tokens(const char *text, const char *prefix, char **opts, int *nopts, int max,
                      int *has_arch, kg_err *err)
{
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\0') return KG_OK;
        const char *s = p;
        while (*p != '\0' && *p != ' ' && *p != '\t') p++;
        if (*nopts == max) return kg_errorf(err, KG_EINPUT, "too many compiler options");
        size_t len = (size_t)(p - s);
        char *o = malloc(strlen(prefix) + len + 1);
        if (o == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
        sprintf(o, "%s%.*s", prefix, (int)len, s);
        if (has_arch != NULL && (strncmp(o, "--gpu-architecture", 18) == 0 ||
                                 strncmp(o, "-arch", 5) == 0))
            *has_arch = 1;
        opts[(*nopts)++] = o;
    }
}

int kg_cuda_compile(kg_cuda_nvrtc *nv, int cc_major, int cc_minor, const kg_plan *plan, int a,
                    kg_dtype dt, char **image, size_t *image_bytes, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    enum { MAXOPT = 96 };
    char *opts[MAXOPT];
    int nopts = 0, has_arch = 0;
    char *src = NULL, *log = NULL, *cubin = NULL;
    nvrtcProgram prog = NULL;
    char path[KG_PATH_MAX], kinc[KG_PATH_MAX], cinc[KG_PATH_MAX], arch[32];
    int have_cinc = 0;
    *image = NULL;
    *image_bytes = 0;

    int rc = KG_OK;
    if (nv->lib == NULL) rc = kg_cuda_nvrtc_load(nv, err);
    if (rc != KG_OK) goto done;
    rc = kg_plan_source_path(plan, a, path, sizeof path, err);
    if (rc != KG_OK) goto done;
    rc = read_source(path, &src, err);
    if (rc != KG_OK) goto done;
    if (!find_kgate_include(kinc, sizeof kinc)) {
        rc = kg_errorf(err, KG_EIO, "arm '%s': kgate's include folder (with kgate/kernel.h) was "
                       "not found next to the executable; set KGATE_INCLUDE", arm->name);
        goto done;
    }
    have_cinc = find_cuda_include(cinc, sizeof cinc);

    char buf[KG_PATH_MAX + 16];
    /* NVRTC has no C library headers: kgate/kernel.h declares the
     * fixed-width types when __CUDACC_RTC__ is defined */
    static const char *const fixed[] = { "-std=c++17", "-lineinfo" };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        rc = add_tokens(fixed[i], "", opts, &nopts, MAXOPT, NULL, err);
        if (rc != KG_OK) goto done;
    }
    snprintf(buf, sizeof buf, "-I%s", kinc);
    opts[nopts] = strdup(buf);
    if (opts[nopts++] == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    if (have_cinc) {
        snprintf(buf, sizeof buf, "-I%s", cinc);
        opts[nopts] = strdup(buf);
        if (opts[nopts++] == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    }
    snprintf(buf, sizeof buf, "KG_DTYPE=%d", (int)dt);
    rc = add_tokens(buf, "-D", opts, &nopts, MAXOPT, NULL, err);
    if (rc == KG_OK && kg_backend_negative(arm))
        rc = add_tokens("KGATE_NEGATIVE=1", "-D", opts, &nopts, MAXOPT, NULL, err);
    if (rc == KG_OK) rc = add_tokens(arm->defines, "-D", opts, &nopts, MAXOPT, NULL, err);
    /* on this backend cflags are extra NVRTC options, e.g. an sm_90a arch */
    if (rc == KG_OK) rc = add_tokens(arm->cflags, "", opts, &nopts, MAXOPT, &has_arch, err);
    if (rc != KG_OK) goto done;
    snprintf(arch, sizeof arch, "sm_%d%d", cc_major, cc_minor);
    if (!has_arch) {
        snprintf(buf, sizeof buf, "--gpu-architecture=%s", arch);
        rc = add_tokens(buf, "", opts, &nopts, MAXOPT, NULL, err);
        if (rc != KG_OK) goto done;
    }

    nvrtcResult nr = nv->nvrtcCreateProgram(&prog, src, path, 0, NULL, NULL);
    if (nr != KG_NVRTC_SUCCESS) {
        rc = kg_errorf(err, KG_EBACKEND, "arm '%s': nvrtcCreateProgram failed: %s", arm->name,
                       nv->nvrtcGetErrorString(nr));
        goto done;
    }
    nvrtcResult cr = nv->nvrtcCompileProgram(prog, nopts, (const char *const *)opts);
    size_t log_bytes = 0;
    if (nv->nvrtcGetProgramLogSize(prog, &log_bytes) == KG_NVRTC_SUCCESS && log_bytes > 1) {
        log = malloc(log_bytes + 1);
        if (log != NULL && nv->nvrtcGetProgramLog(prog, log) == KG_NVRTC_SUCCESS)
            log[log_bytes] = '\0';
        else if (log != NULL)
            log[0] = '\0';
    }
    if (cr != KG_NVRTC_SUCCESS) {
        char line[700];
        log_one_line(log != NULL ? log : "", line, sizeof line);
        rc = kg_errorf(err, KG_EBACKEND, "arm '%s': NVRTC could not compile %s for %s (%s): %s%s",
                       arm->name, path, has_arch ? "the arch in cflags" : arch,
                       nv->nvrtcGetErrorString(cr), line,
                       have_cinc ? "" : " [the CUDA toolkit include folder was not found: "
                                        "set CUDA_HOME for cuda_fp16.h and friends]");
        goto done;
    }
    size_t nbytes = 0;
    nr = nv->nvrtcGetCUBINSize(prog, &nbytes);
    if (nr != KG_NVRTC_SUCCESS || nbytes == 0) {
        rc = kg_errorf(err, KG_EBACKEND, "arm '%s': NVRTC produced no cubin (%s); the arch "
                       "must be a real sm_XY, not compute_XY", arm->name,
                       nr != KG_NVRTC_SUCCESS ? nv->nvrtcGetErrorString(nr) : "empty");
        goto done;
    }
    cubin = malloc(nbytes);
    if (cubin == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "out of memory for a %zu-byte cubin", nbytes);
        goto done;
    }
    nr = nv->nvrtcGetCUBIN(prog, cubin);
    if (nr != KG_NVRTC_SUCCESS) {
        rc = kg_errorf(err, KG_EBACKEND, "arm '%s': nvrtcGetCUBIN failed: %s", arm->name,
                       nv->nvrtcGetErrorString(nr));
        goto done;
    }
    *image = cubin;
    *image_bytes = nbytes;
    cubin = NULL;
done:
    if (prog != NULL) nv->nvrtcDestroyProgram(&prog);
    for (int i = 0; i < nopts; i++) free(opts[i]);
    free(cubin);
    free(log);
    free(src);
    return rc;
}

static void sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    out[0] = '\0';
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32) return;
    for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* ----------------------------------------------------------- open/close */

static void cuda_close(kg_backend *be)
{
    cuda_ctx *c = be->ctx;
    if (c == NULL) return;
    if (c->ctx != NULL && c->drv.cuCtxSetCurrent != NULL) c->drv.cuCtxSetCurrent(c->ctx);
    if (c->flush_buf != 0) c->drv.cuMemFree(c->flush_buf);
    if (c->lt_handle != NULL) c->lt.cublasLtDestroy(c->lt_handle);
    if (c->lt_ws != 0) c->drv.cuMemFree(c->lt_ws);
    kg_cuda_cublaslt_unload(&c->lt);
    if (c->ev_start != NULL) c->drv.cuEventDestroy(c->ev_start);
    if (c->ev_end != NULL) c->drv.cuEventDestroy(c->ev_end);
    if (c->stream != NULL) c->drv.cuStreamDestroy(c->stream);
    if (c->ctx_retained) c->drv.cuDevicePrimaryCtxRelease(c->dev);
    if (c->nvml_state == 1) c->nvml.nvmlShutdown();
    kg_cuda_nvml_unload(&c->nvml);
    kg_cuda_nvrtc_unload(&c->nvrtc);
    kg_cuda_driver_unload(&c->drv);
    free(c);
    be->ctx = NULL;
}

static int cuda_open(kg_backend *be, const kg_plan *plan, kg_err *err)
{
    cuda_ctx *c = calloc(1, sizeof *c);
    if (c == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory opening the cuda backend");
    be->ctx = c;
    c->ordinal = plan != NULL ? plan->campaign.device : 0;
    int rc = kg_cuda_driver_load(&c->drv, err);
    if (rc != KG_OK) goto done;
    CUresult r = c->drv.cuInit(0);
    if (r != KG_CUDA_SUCCESS) {
        char text[256];
        kg_cuda_result_text(&c->drv, r, text, sizeof text);
        rc = kg_errorf(err, KG_EUNSUPPORTED, "the CUDA driver found no usable GPU: cuInit: %s; "
                       "use backend = cpu", text);
        goto done;
    }
    int count = 0;
    if ((rc = CU(c, cuDeviceGetCount, (&count))) != KG_OK) goto done;
    if (c->ordinal < 0 || c->ordinal >= count) {
        rc = kg_errorf(err, count == 0 ? KG_EUNSUPPORTED : KG_EINPUT,
                       "device = %d, but %d CUDA device(s) are visible (CUDA_VISIBLE_DEVICES=%s)",
                       c->ordinal, count,
                       getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
        goto done;
    }
    if ((rc = CU(c, cuDeviceGet, (&c->dev, c->ordinal))) != KG_OK) goto done;
    if ((rc = CU(c, cuDeviceGetName, (c->name, (int)sizeof c->name, c->dev))) != KG_OK) goto done;
    struct { int attr; int *out; } attrs[] = {
        { KG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &c->cc_major },
        { KG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &c->cc_minor },
        { KG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &c->sm_count },
        { KG_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &c->l2_bytes },
        { KG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &c->smem_optin_bytes },
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if ((rc = CU(c, cuDeviceGetAttribute, (attrs[i].out, attrs[i].attr, c->dev))) != KG_OK)
            goto done;
    CUuuid uuid;
    if ((rc = CU(c, cuDeviceGetUuid, (&uuid, c->dev))) != KG_OK) goto done;
    kg_cuda_uuid_text(&uuid, c->uuid, sizeof c->uuid);
    if ((rc = CU(c, cuDeviceTotalMem, (&c->mem_bytes, c->dev))) != KG_OK) goto done;
    if ((rc = CU(c, cuDriverGetVersion, (&c->driver_version))) != KG_OK) goto done;
    if ((rc = CU(c, cuDevicePrimaryCtxRetain, (&c->ctx, c->dev))) != KG_OK) goto done;
    c->ctx_retained = 1;
    if ((rc = CU(c, cuCtxSetCurrent, (c->ctx))) != KG_OK) goto done;
    if ((rc = CU(c, cuStreamCreate, (&c->stream, KG_CU_STREAM_NON_BLOCKING))) != KG_OK) goto done;
    if ((rc = CU(c, cuEventCreate, (&c->ev_start, KG_CU_EVENT_DEFAULT))) != KG_OK) goto done;
    if ((rc = CU(c, cuEventCreate, (&c->ev_end, KG_CU_EVENT_DEFAULT))) != KG_OK) goto done;
done:
    /* the caller closes a backend whose open failed */
    return rc;
}

/* ------------------------------------------------------------- memory */

static int cuda_alloc(kg_backend *be, size_t bytes, kg_dbuf *out, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    out->ptr = NULL;
    out->bytes = 0;
    if (bytes == 0) return KG_OK;
    CUdeviceptr p = 0;
    int rc = CU(c, cuMemAlloc, (&p, bytes));
    if (rc != KG_OK) return rc;
    out->ptr = (void *)(uintptr_t)p;
    out->bytes = bytes;
    return KG_OK;
}

static void cuda_free(kg_backend *be, kg_dbuf *buf)
{
    cuda_ctx *c = be->ctx;
    if (c == NULL || buf == NULL || buf->ptr == NULL) return;
    c->drv.cuMemFree(dptr(buf->ptr));
    buf->ptr = NULL;
    buf->bytes = 0;
}

/* Copies go through the legacy default stream, which does not order with
 * the kgate stream (non-blocking): drain it first. */
static int cuda_upload(kg_backend *be, const kg_dbuf *dst, size_t off, const void *src, size_t n,
                       kg_err *err)
{
    cuda_ctx *c = be->ctx;
    if (n == 0) return KG_OK;
    int rc = CU(c, cuStreamSynchronize, (c->stream));
    if (rc == KG_OK) rc = CU(c, cuMemcpyHtoD, (dptr(dst->ptr) + off, src, n));
    /* From pageable memory cuMemcpyHtoD may return once the bytes are
     * staged, before the DMA lands; kgate's stream is non-blocking, so the
     * next launch is not ordered after it.  Wait for the whole device. */
    if (rc == KG_OK) rc = CU(c, cuCtxSynchronize, ());
    return rc;
}

static int cuda_download(kg_backend *be, void *dst, const kg_dbuf *src, size_t off, size_t n,
                         kg_err *err)
{
    cuda_ctx *c = be->ctx;
    if (n == 0) return KG_OK;
    int rc = CU(c, cuStreamSynchronize, (c->stream));
    if (rc == KG_OK) rc = CU(c, cuMemcpyDtoH, (dst, dptr(src->ptr) + off, n));
    return rc;
}

/* ------------------------------------------------------------- kernels */

/* cuBLASLt is opened, its handle created and its workspace allocated at
 * the first builtin = cublas arm, once per backend: never inside timing. */
static int blas_ready(cuda_ctx *c, kg_err *err)
{
    if (c->lt_handle != NULL) return KG_OK;
    int rc = KG_OK;
    if (c->lt.lib == NULL) {
        rc = kg_cuda_cublaslt_load(&c->lt, err);
        if (rc != KG_OK) {
            /* the message must say what to do: the library is optional */
            char old[KG_ERR_MSG_MAX];
            snprintf(old, sizeof old, "%s", err != NULL ? err->msg : "");
            if (err != NULL)
                snprintf(err->msg, sizeof err->msg, "builtin cublas needs cuBLASLt: %.700s (install "
                         "the CUDA toolkit's cuBLAS, set CUDA_HOME or KGATE_LIBCUBLASLT)", old);
            return rc;
        }
    }
    cublasStatus_t st = c->lt.cublasLtCreate(&c->lt_handle);
    if (st != KG_CUBLAS_STATUS_SUCCESS) {
        c->lt_handle = NULL;
        return kg_errorf(err, KG_EBACKEND, "cublasLtCreate failed: status %d", st);
    }
    if (c->lt_ws == 0 && (rc = CU(c, cuMemAlloc, (&c->lt_ws, KG_CUDA_CUBLAS_WS_BYTES))) != KG_OK)
        return rc;
    return KG_OK;
}

static int blas_status(cublasStatus_t st, const kg_kernel *k, const char *call, kg_err *err)
{
    if (st == KG_CUBLAS_STATUS_SUCCESS) return KG_OK;
    return kg_errorf(err, KG_EBACKEND, "arm '%s' on case '%s': %s failed: cuBLAS status %d",
                     k->arm, k->kase, call, st);
}

/* Describes the matmul of the case and asks the heuristic for the best
 * algorithm that fits the shared workspace. */
static int blas_load(cuda_ctx *c, const kg_arm *arm, const kg_case *cs, kg_kernel *k, kg_err *err)
{
    cuda_blas *b = &k->blas;
    cublasLtMatmulPreference_t pref = NULL;
    int rc = kg_cuda_gemm_map_case(arm->name, cs, &b->map, err);
    if (rc != KG_OK) return rc;
    if ((rc = blas_ready(c, err)) != KG_OK) return rc;
    const kg_cuda_gemm_map *m = &b->map;
    kg_cuda_cublaslt *lt = &c->lt;
    int32_t ta = m->transa, tb = m->transb;
    uint64_t ws_max = KG_CUDA_CUBLAS_WS_BYTES;
    rc = blas_status(lt->cublasLtMatmulDescCreate(&b->desc, m->compute_type, KG_CUBLASLT_SCALE_32F),
                     k, "cublasLtMatmulDescCreate", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatmulDescSetAttribute(b->desc, KG_CUBLASLT_MATMUL_DESC_TRANSA,
                                                            &ta, sizeof ta),
                         k, "cublasLtMatmulDescSetAttribute(TRANSA)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatmulDescSetAttribute(b->desc, KG_CUBLASLT_MATMUL_DESC_TRANSB,
                                                            &tb, sizeof tb),
                         k, "cublasLtMatmulDescSetAttribute(TRANSB)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatrixLayoutCreate(&b->la, m->in_type, m->a_rows, m->a_cols,
                                                        m->lda), k, "cublasLtMatrixLayoutCreate(A)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatrixLayoutCreate(&b->lb, m->in_type, m->b_rows, m->b_cols,
                                                        m->ldb), k, "cublasLtMatrixLayoutCreate(B)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatrixLayoutCreate(&b->ld, m->out_type, m->d_rows, m->d_cols,
                                                        m->ldd), k, "cublasLtMatrixLayoutCreate(D)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatmulPreferenceCreate(&pref), k,
                         "cublasLtMatmulPreferenceCreate", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatmulPreferenceSetAttribute(
                             pref, KG_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_max, sizeof ws_max),
                         k, "cublasLtMatmulPreferenceSetAttribute", err);
    if (rc != KG_OK) goto done;
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    memset(&res, 0, sizeof res);
    cublasStatus_t st = lt->cublasLtMatmulAlgoGetHeuristic(c->lt_handle, b->desc, b->la, b->lb,
                                                           b->ld, b->ld, pref, 1, &res, &got);
    if (st != KG_CUBLAS_STATUS_SUCCESS || got < 1 || res.state != KG_CUBLAS_STATUS_SUCCESS) {
        rc = kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': cuBLASLt has no algorithm for "
                       "%s gemm_bt %lldx%lldx%lld with float32 output (heuristic status %d, %d "
                       "results)", k->arm, k->kase, kg_dtype_name(cs->dtype), (long long)cs->M,
                       (long long)cs->N, (long long)cs->K, st, got);
        goto done;
    }
    b->algo = res.algo;
    b->ws_bytes = res.workspaceSize;
    /* the algorithm is the "image" of a builtin arm: the same bytes and
     * library version mean the same kernel */
    {
        unsigned char id[sizeof b->algo + sizeof(size_t)];
        size_t ver = lt->cublasLtGetVersion();
        memcpy(id, &b->algo, sizeof b->algo);
        memcpy(id + sizeof b->algo, &ver, sizeof ver);
        sha256_hex(id, sizeof id, k->image_sha256);
    }
done:
    if (pref != NULL) lt->cublasLtMatmulPreferenceDestroy(pref);
    return rc;
}

static void blas_unload(cuda_ctx *c, kg_kernel *k)
{
    cuda_blas *b = &k->blas;
    if (c->lt.lib == NULL) return;
    if (b->la != NULL) c->lt.cublasLtMatrixLayoutDestroy(b->la);
    if (b->lb != NULL) c->lt.cublasLtMatrixLayoutDestroy(b->lb);
    if (b->ld != NULL) c->lt.cublasLtMatrixLayoutDestroy(b->ld);
    if (b->desc != NULL) c->lt.cublasLtMatmulDescDestroy(b->desc);
    memset(b, 0, sizeof *b);
}

/* Compiles every dtype the arm will be loaded for, so that compile errors
 * stop a campaign before any worker starts; writes the cubins to
 * build_dir (when given) as ARM.DTYPE.cubin for the evidence.  A builtin
 * arm has nothing to compile: its library is opened here instead, so that
 * a missing cuBLASLt also stops the campaign early. */
static int cuda_build(kg_backend *be, const kg_plan *plan, int a, const char *build_dir,
                      kg_err *err)
{
    cuda_ctx *c = be->ctx;
    const kg_arm *arm = &plan->arms[a];
    if (arm->builtin[0] != '\0') {
        if (strcmp(arm->builtin, "cublas") != 0)
            return kg_errorf(err, KG_EUNSUPPORTED, "arm '%s': builtin '%s' is not available on the "
                             "cuda backend (builtin = cublas is)", arm->name, arm->builtin);
        for (int k = 0; k < plan->ncases; k++) {
            if (!kg_plan_arm_applies(plan, a, k)) continue;
            kg_cuda_gemm_map m;
            int rc = kg_cuda_gemm_map_case(arm->name, &plan->cases[k], &m, err);
            if (rc != KG_OK) return rc;
        }
        return blas_ready(c, err);
    }
    int nlaunch = 0;
    int rc0 = kg_cuda_chain_length(arm, &nlaunch, err);
    if (rc0 == KG_OK && build_dir != NULL) rc0 = kg_mkdir_p(build_dir, err);
    if (rc0 != KG_OK) return rc0;
    int done_dt[3] = { 0, 0, 0 };
    for (int k = 0; k < plan->ncases; k++) {
        if (!kg_plan_arm_applies(plan, a, k)) continue;
        kg_dtype dt = plan->cases[k].dtype;
        if ((int)dt < 0 || (int)dt > 2 || done_dt[dt]) continue;
        done_dt[dt] = 1;
        char *image = NULL;
        size_t bytes = 0;
        int rc = kg_cuda_compile(&c->nvrtc, c->cc_major, c->cc_minor, plan, a, dt, &image, &bytes, err);
        if (rc == KG_OK && build_dir != NULL) {
            char path[KG_PATH_MAX + 2 * KG_NAME_MAX];
            snprintf(path, sizeof path, "%s/%s.%s.cubin", build_dir, arm->name, kg_dtype_name(dt));
            FILE *f = fopen(path, "wb");
            if (f == NULL || fwrite(image, 1, bytes, f) != bytes)
                rc = kg_errorf(err, KG_EIO, "cannot write %s: %s", path, strerror(errno));
            if (f != NULL && fclose(f) != 0 && rc == KG_OK)
                rc = kg_errorf(err, KG_EIO, "cannot write %s: %s", path, strerror(errno));
        }
        free(image);
        if (rc != KG_OK) return rc;
    }
    return KG_OK;
}

static void release_graph(cuda_ctx *c, kg_kernel *k)
{
    if (k->exec != NULL) c->drv.cuGraphExecDestroy(k->exec);
    if (k->graph != NULL) c->drv.cuGraphDestroy(k->graph);
    k->exec = NULL;
    k->graph = NULL;
}

static void cuda_unload(kg_backend *be, kg_kernel *k)
{
    cuda_ctx *c = be->ctx;
    if (k == NULL) return;
    if (c != NULL) {
        release_graph(c, k);
        if (k->mod != NULL) c->drv.cuModuleUnload(k->mod);
        if (k->is_blas) blas_unload(c, k);
    }
    free(k);
}

/* Looks up launch li's entry in the loaded module and checks its block
 * against what the compiled entry allows. */
static int load_entry(cuda_ctx *c, const kg_arm *arm, const kg_case *cs, kg_kernel *k, int li,
                      kg_err *err)
{
    cuda_launch *l = &k->launch[li];
    int rc = KG_OK;
    CUresult r = c->drv.cuModuleGetFunction(&l->fn, k->mod, l->entry);
    if (r != KG_CUDA_SUCCESS) {
        char text[256];
        kg_cuda_result_text(&c->drv, r, text, sizeof text);
        return kg_errorf(err, KG_EBACKEND, "arm '%s': entry%s '%s' not found in the compiled "
                         "module (declare it extern \"C\" __global__): %s", arm->name,
                         li == 0 ? "" : (li == 1 ? "2" : "3"), l->entry, text);
    }
    if (l->geom.shared_bytes > 48u * 1024u &&
        (rc = CU(c, cuFuncSetAttribute, (l->fn, KG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         (int)l->geom.shared_bytes))) != KG_OK)
        return rc;
    int max_threads = 0;
    if ((rc = CU(c, cuFuncGetAttribute, (&max_threads, KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                         l->fn))) != KG_OK)
        return rc;
    unsigned threads = l->geom.block[0] * l->geom.block[1] * l->geom.block[2];
    if (threads > (unsigned)max_threads)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': entry '%s' has a block of "
                         "%u threads, the compiled entry allows at most %d (registers per thread)",
                         arm->name, cs->name, l->entry, threads, max_threads);
    return KG_OK;
}

static int cuda_load(kg_backend *be, const kg_plan *plan, int a, int kase, const char *build_dir,
                     kg_kernel **out, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    const kg_arm *arm = &plan->arms[a];
    const kg_case *cs = &plan->cases[kase];
    char *image = NULL;
    size_t image_bytes = 0;
    int rc = KG_OK;
    (void)build_dir;
    *out = NULL;
    if (arm->builtin[0] != '\0' && strcmp(arm->builtin, "cublas") != 0)
        return kg_errorf(err, KG_EUNSUPPORTED, "arm '%s': builtin '%s' is not available on the "
                         "cuda backend (builtin = cublas is)", arm->name, arm->builtin);
    const kg_op *op = kg_op_find(cs->op);
    if (op == NULL) return kg_errorf(err, KG_EINPUT, "case '%s': unknown op '%s'", cs->name, cs->op);
    kg_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory loading arm '%s'", arm->name);
    snprintf(k->arm, sizeof k->arm, "%s", arm->name);
    snprintf(k->kase, sizeof k->kase, "%s", cs->name);
    if (arm->builtin[0] != '\0') {
        k->is_blas = 1;
        k->nlaunch = 1;
        rc = blas_load(c, arm, cs, k, err);
        goto done;
    }
    if ((rc = kg_cuda_chain_length(arm, &k->nlaunch, err)) != KG_OK) goto done;
    for (int li = 0; li < k->nlaunch; li++) {
        cuda_launch *l = &k->launch[li];
        const char *entry = li == 0 ? arm->entry : arm->extra[li - 1].entry;
        const char *args = li == 0 ? arm->args : arm->extra[li - 1].args;
        snprintf(l->entry, sizeof l->entry, "%s", entry[0] != '\0' ? entry : "kernel");
        if ((rc = kg_cuda_launch_geometry(arm, li + 1, cs, &l->geom, err)) != KG_OK) goto done;
        rc = kg_cuda_args_parse(arm->name, args, op->in_names, op->nin, op->out_names, op->nout,
                                cs, l->args, &l->nargs, err);
        if (rc != KG_OK) {
            if (li > 0 && err != NULL) {
                char old[KG_ERR_MSG_MAX];
                snprintf(old, sizeof old, "%s", err->msg);
                snprintf(err->msg, sizeof err->msg, "args%d: %.900s", li + 1, old);
            }
            goto done;
        }
        for (int i = 0; i < l->nargs; i++) l->params[i] = &l->args[i].value;
        if (l->geom.shared_bytes > (unsigned)c->smem_optin_bytes) {
            rc = kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': launch %d asks for %u "
                           "bytes of dynamic shared memory, the device allows at most %d per "
                           "block", arm->name, cs->name, li + 1, l->geom.shared_bytes,
                           c->smem_optin_bytes);
            goto done;
        }
    }
    rc = kg_cuda_compile(&c->nvrtc, c->cc_major, c->cc_minor, plan, a, cs->dtype, &image,
                         &image_bytes, err);
    if (rc != KG_OK) goto done;
    k->image_bytes = image_bytes;
    sha256_hex(image, image_bytes, k->image_sha256);
    if ((rc = CU(c, cuModuleLoadData, (&k->mod, image))) != KG_OK) {
        add_context(err, k, "loading the cubin");
        goto done;
    }
    for (int li = 0; li < k->nlaunch && rc == KG_OK; li++) rc = load_entry(c, arm, cs, k, li, err);
done:
    free(image);
    if (rc == KG_OK) *out = k;
    else cuda_unload(be, k);
    return rc;
}

static int blas_launch(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    static const float one = 1.0f, zero = 0.0f;
    cuda_blas *b = &k->blas;
    /* C = D with beta = 0: C is never read */
    cublasStatus_t st = c->lt.cublasLtMatmul(
        c->lt_handle, b->desc, &one, (const void *)(uintptr_t)b->a, b->la,
        (const void *)(uintptr_t)b->b, b->lb, &zero, (const void *)(uintptr_t)b->d, b->ld,
        (void *)(uintptr_t)b->d, b->ld, &b->algo, (void *)(uintptr_t)c->lt_ws, b->ws_bytes,
        c->stream);
    return blas_status(st, k, "cublasLtMatmul", err);
}

/* One complete operation: every launch of the chain, in order, on the
 * kgate stream (stream order is what makes launch 2 see launch 1). */
static int launch_op(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    if (k->is_blas) return blas_launch(c, k, err);
    int rc = KG_OK;
    for (int li = 0; li < k->nlaunch && rc == KG_OK; li++) {
        cuda_launch *l = &k->launch[li];
        const kg_cuda_geom *g = &l->geom;
        rc = CU(c, cuLaunchKernel, (l->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0],
                                    g->block[1], g->block[2], g->shared_bytes, c->stream,
                                    l->params, NULL));
        if (rc != KG_OK && k->nlaunch > 1 && err != NULL) {
            char old[KG_ERR_MSG_MAX];
            snprintf(old, sizeof old, "%s", err->msg);
            snprintf(err->msg, sizeof err->msg, "launch %d ('%s'): %.900s", li + 1, l->entry, old);
        }
    }
    return rc;
}

/* Fills the buffer arguments of every launch from the binding. */
static int bind_args(kg_kernel *k, const kg_binding *b, kg_err *err)
{
    if (k->is_blas) {
        const kg_cuda_gemm_map *m = &k->blas.map;
        if (m->a_input >= b->nin || m->b_input >= b->nin || b->nout < 1)
            return kg_errorf(err, KG_EINTERNAL, "arm '%s': gemm operands not bound", k->arm);
        k->blas.a = dptr(b->in[m->a_input].ptr);
        k->blas.b = dptr(b->in[m->b_input].ptr);
        k->blas.d = dptr(b->out[0].ptr);
        return KG_OK;
    }
    for (int li = 0; li < k->nlaunch; li++) {
        cuda_launch *l = &k->launch[li];
        for (int i = 0; i < l->nargs; i++) {
            kg_carg *a = &l->args[i];
            if (a->kind == KG_CARG_IN) {
                if (a->index >= b->nin)
                    return kg_errorf(err, KG_EINTERNAL, "arm '%s': input %d not bound", k->arm,
                                     a->index);
                a->value.ptr = dptr(b->in[a->index].ptr);
            } else if (a->kind == KG_CARG_OUT) {
                if (a->index >= b->nout)
                    return kg_errorf(err, KG_EINTERNAL, "arm '%s': output %d not bound", k->arm,
                                     a->index);
                a->value.ptr = dptr(b->out[a->index].ptr);
            } else if (a->kind == KG_CARG_WS) {
                if (b->ws.ptr == NULL)
                    return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': launch %d passes WS, "
                                     "but the case has no workspace (op '%s' declares none, or "
                                     "its size is 0 for this case)", k->arm, k->kase, li + 1,
                                     b->kase != NULL ? b->kase->op : "?");
                a->value.ptr = dptr(b->ws.ptr);
            }
        }
    }
    return KG_OK;
}

static int cuda_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    int rc = KG_OK;
    k->bound = 0;
    release_graph(c, k);
    if ((rc = bind_args(k, b, err)) != KG_OK) return rc;
    if (b->pack < 1) return kg_errorf(err, KG_EINTERNAL, "arm '%s': pack %d", k->arm, b->pack);
    k->pack = b->pack;
    /* a capture must always be ended, even after a failed launch, or the
     * stream stays in capture mode */
    if ((rc = CU(c, cuStreamBeginCapture, (c->stream, KG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))) != KG_OK)
        goto done;
    for (int i = 0; i < k->pack && rc == KG_OK; i++) rc = launch_op(c, k, err);
    int rc_end = CU(c, cuStreamEndCapture, (c->stream, &k->graph));
    if (rc == KG_OK) rc = rc_end;
    if (rc != KG_OK) goto done;
    if ((rc = CU(c, cuGraphInstantiate, (&k->exec, k->graph, 0))) != KG_OK) goto done;
    k->bound = 1;
done:
    if (rc != KG_OK) {
        release_graph(c, k);
        add_context(err, k, "capturing the timed graph");
    }
    return rc;
}

static int cuda_run(kg_backend *be, kg_kernel *k, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    if (!k->bound) return kg_errorf(err, KG_EINTERNAL, "arm '%s': run before bind", k->arm);
    int rc = launch_op(c, k, err);
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (c->stream));
    if (rc != KG_OK) add_context(err, k, "run");
    return rc;
}

static int cuda_time(kg_backend *be, kg_kernel *k, const kg_sample_ctx *ctx, double *ns,
                     kg_err *err)
{
    cuda_ctx *c = be->ctx;
    (void)ctx;
    *ns = NAN;
    if (!k->bound) return kg_errorf(err, KG_EINTERNAL, "arm '%s': time before bind", k->arm);
    double t0 = now_ns();
    int rc = CU(c, cuEventRecord, (c->ev_start, c->stream));
    if (rc == KG_OK) rc = CU(c, cuGraphLaunch, (k->exec, c->stream));
    if (rc == KG_OK) rc = CU(c, cuEventRecord, (c->ev_end, c->stream));
    /* device-wide: anything the graph started anywhere must finish here */
    if (rc == KG_OK) rc = CU(c, cuCtxSynchronize, ());
    double t1 = now_ns();
    float ms = 0.0f;
    if (rc == KG_OK) rc = CU(c, cuEventElapsedTime, (&ms, c->ev_start, c->ev_end));
    if (rc != KG_OK) {
        add_context(err, k, "timed sample");
        return rc;
    }
    double event_ns = (double)ms * 1e6;
    double host_ns = t1 - t0;
    c->samples++;
    c->last_event_ns = event_ns;
    c->last_host_ns = host_ns;
    if (host_ns > KG_CUDA_ESCAPE_FACTOR * event_ns + KG_CUDA_ESCAPE_SLACK_NS) c->escapes++;
    *ns = event_ns / (double)k->pack;
    return KG_OK;
}

static int cuda_flush(kg_backend *be, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    int rc = KG_OK;
    if (c->flush_buf == 0) {
        size_t bytes = 2 * (size_t)(c->l2_bytes > 0 ? c->l2_bytes : 64 << 20);
        if ((rc = CU(c, cuMemAlloc, (&c->flush_buf, bytes))) != KG_OK) return rc;
        c->flush_bytes = bytes;
    }
    /* a different byte each time, so no write can be elided */
    rc = CU(c, cuMemsetD8Async, (c->flush_buf, (unsigned char)(c->flush_count++ & 0xffu),
                                 c->flush_bytes, c->stream));
    if (rc == KG_OK && c->drv.cuCtxResetPersistingL2Cache != NULL)
        rc = CU(c, cuCtxResetPersistingL2Cache, ());
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (c->stream));
    return rc;
}

static void cuda_describe(kg_backend *be, char *buf, size_t cap)
{
    cuda_ctx *c = be->ctx;
    if (c == NULL) return;
    snprintf(buf, cap, "%s (sm_%d%d, %d SMs, L2 %d MiB, %.0f GiB, driver %d.%d, UUID %s)",
             c->name, c->cc_major, c->cc_minor, c->sm_count, c->l2_bytes >> 20,
             (double)c->mem_bytes / (double)(1u << 30), c->driver_version / 1000,
             (c->driver_version % 1000) / 10, c->uuid);
}

/* ----------------------------------------------------------- telemetry */

static int nvml_ready(cuda_ctx *c, kg_err *err)
{
    if (c->nvml_state == 1) return KG_OK;
    if (c->nvml_state == -1) return kg_errorf(err, KG_EUNSUPPORTED, "NVML is not available");
    int rc = kg_cuda_nvml_load(&c->nvml, err);
    if (rc != KG_OK) {
        c->nvml_state = -1;
        return rc;
    }
    nvmlReturn_t r = c->nvml.nvmlInit();
    if (r != KG_NVML_SUCCESS) {
        c->nvml_state = -1;
        return kg_errorf(err, KG_EUNSUPPORTED, "nvmlInit failed: %s", c->nvml.nvmlErrorString(r));
    }
    /* by UUID: CUDA ordinals and NVML indices differ under CUDA_VISIBLE_DEVICES */
    r = c->nvml.nvmlDeviceGetHandleByUUID != NULL
            ? c->nvml.nvmlDeviceGetHandleByUUID(c->uuid, &c->nvdev)
            : -1;
    if (r != KG_NVML_SUCCESS) r = c->nvml.nvmlDeviceGetHandleByIndex((unsigned)c->ordinal, &c->nvdev);
    if (r != KG_NVML_SUCCESS) {
        c->nvml.nvmlShutdown();
        c->nvml_state = -1;
        return kg_errorf(err, KG_EUNSUPPORTED, "NVML has no handle for %s", c->uuid);
    }
    c->nvml_state = 1;
    return KG_OK;
}

static int cuda_telemetry(kg_backend *be, kg_telemetry *t, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    memset(t, 0, sizeof *t);
    t->sm_clock_mhz = t->mem_clock_mhz = -1;
    t->power_w = NAN;
    t->temp_c = -1;
    t->clock_event_reasons = 0;
    t->foreign_procs = -1;
    t->samples = c->samples;
    t->escapes = c->escapes;
    t->last_event_ns = c->last_event_ns;
    t->last_host_ns = c->last_host_ns;
    t->t_ns = now_ns();
    int rc = nvml_ready(c, err);
    if (rc != KG_OK) return rc;
    unsigned v = 0;
    if (c->nvml.nvmlDeviceGetClockInfo(c->nvdev, KG_NVML_CLOCK_SM, &v) == KG_NVML_SUCCESS)
        t->sm_clock_mhz = (int)v;
    if (c->nvml.nvmlDeviceGetClockInfo(c->nvdev, KG_NVML_CLOCK_MEM, &v) == KG_NVML_SUCCESS)
        t->mem_clock_mhz = (int)v;
    if (c->nvml.nvmlDeviceGetPowerUsage(c->nvdev, &v) == KG_NVML_SUCCESS)
        t->power_w = (double)v / 1000.0;
    if (c->nvml.nvmlDeviceGetTemperature(c->nvdev, KG_NVML_TEMPERATURE_GPU, &v) == KG_NVML_SUCCESS)
        t->temp_c = (int)v;
    unsigned long long reasons = 0;
    if (c->nvml.nvmlDeviceGetCurrentClocksEventReasons != NULL &&
        c->nvml.nvmlDeviceGetCurrentClocksEventReasons(c->nvdev, &reasons) == KG_NVML_SUCCESS)
        t->clock_event_reasons = (uint64_t)reasons;
    if (c->nvml.nvmlDeviceGetComputeRunningProcesses != NULL) {
        kg_nvml_process procs[64];
        unsigned n = 64;
        nvmlReturn_t r = c->nvml.nvmlDeviceGetComputeRunningProcesses(c->nvdev, &n, procs);
        if (r == KG_NVML_SUCCESS) {
            unsigned self = (unsigned)getpid();
            int foreign = 0;
            for (unsigned i = 0; i < n && i < 64; i++) foreign += procs[i].pid != self;
            t->foreign_procs = foreign;
        } else if (r == KG_NVML_ERROR_INSUFFICIENT_SIZE) {
            t->foreign_procs = 64;
        }
    }
    return KG_OK;
}

int kg_cuda_launch_resources(kg_backend *be, kg_kernel *k, int li, kg_resources *res,
                             kg_err *err)
{
    cuda_ctx *c = be->ctx;
    memset(res, 0, sizeof *res);
    if (li < 0 || li >= k->nlaunch)
        return kg_errorf(err, KG_EINPUT, "arm '%s': no launch %d (the chain has %d)", k->arm,
                         li + 1, k->nlaunch);
    res->launches = k->nlaunch;
    snprintf(res->arch, sizeof res->arch, "sm_%d%d", c->cc_major, c->cc_minor);
    res->image_bytes = k->image_bytes;
    snprintf(res->image_sha256, sizeof res->image_sha256, "%s", k->image_sha256);
    if (k->is_blas) {
        /* one opaque library call: its kernels' attributes are not ours to read */
        res->regs = res->static_shared_bytes = res->dynamic_shared_bytes = -1;
        res->local_bytes = res->const_bytes = res->max_threads_per_block = -1;
        res->ptx_version = res->binary_version = -1;
        for (int i = 0; i < 3; i++) res->grid[i] = res->block[i] = -1;
        return KG_OK;
    }
    const cuda_launch *l = &k->launch[li];
    struct { int attr; int *out; } attrs[] = {
        { KG_CU_FUNC_ATTRIBUTE_NUM_REGS, &res->regs },
        { KG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &res->static_shared_bytes },
        { KG_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &res->local_bytes },
        { KG_CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &res->const_bytes },
        { KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &res->max_threads_per_block },
        { KG_CU_FUNC_ATTRIBUTE_PTX_VERSION, &res->ptx_version },
        { KG_CU_FUNC_ATTRIBUTE_BINARY_VERSION, &res->binary_version },
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int rc = CU(c, cuFuncGetAttribute, (attrs[i].out, attrs[i].attr, l->fn));
        if (rc != KG_OK) return rc;
    }
    res->dynamic_shared_bytes = (int)l->geom.shared_bytes;
    for (int i = 0; i < 3; i++) {
        res->grid[i] = l->geom.grid[i];
        res->block[i] = l->geom.block[i];
    }
    return KG_OK;
}

/* The first launch's record; launches counts the chain (the others are
 * read with kg_cuda_launch_resources). */
static int cuda_resources(kg_backend *be, kg_kernel *k, kg_resources *res, kg_err *err)
{
    return kg_cuda_launch_resources(be, k, 0, res, err);
}

const kg_backend_ops kg_backend_cuda = {
    .abi = KG_BACKEND_ABI,
    .name = "cuda",
    .open = cuda_open,
    .close = cuda_close,
    .build = cuda_build,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .load = cuda_load,
    .unload = cuda_unload,
    .bind = cuda_bind,
    .run = cuda_run,
    .time = cuda_time,
    .flush = cuda_flush,
    .describe = cuda_describe,
    .telemetry = cuda_telemetry,
    .resources = cuda_resources,
    .resources_launch = kg_cuda_launch_resources,
};
