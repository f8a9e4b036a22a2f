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
 * context is made current once, in open().  This file does not generate
 * inputs, check outputs or decide anything; it does not run the cuBLAS
 * reference arm yet (builtin = cublas is refused with a clear message). */
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
} cuda_ctx;

struct kg_kernel {
    char arm[KG_NAME_MAX];
    char kase[KG_NAME_MAX];
    CUmodule mod;
    CUfunction fn;
    kg_cuda_geom geom;
    kg_carg args[KG_CUDA_MAX_ARGS];
    int nargs;
    void *params[KG_CUDA_MAX_ARGS];
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
    if (!is_buffer && strcmp(name, "ws") == 0) { a->kind = KG_CARG_WS; is_buffer = 1; }
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
    if (used < sizeof vocab) snprintf(vocab + used, sizeof vocab - used, "ws M N K splits eps");
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
    if (n == 0)
        return kg_errorf(err, KG_EINPUT, "arm '%s': args is empty (list the kernel's parameters "
                         "in order, e.g. args = A, B, C, M, N, K)", arm);
    *nargs = n;
    return KG_OK;
}

/* ------------------------------------------------------------ geometry */

int kg_cuda_geometry(const kg_arm *arm, const kg_case *c, kg_cuda_geom *g, kg_err *err)
{
    int64_t grid[3], block[3], shared = 0;
    int ng = 0, nb = 0;
    char what[KG_NAME_MAX + 32];
    memset(g, 0, sizeof *g);
    snprintf(what, sizeof what, "arm '%s' grid", arm->name);
    int rc = kg_expr_eval_list(what, arm->grid, c, grid, 3, 1, &ng, err);
    if (rc != KG_OK) return rc;
    snprintf(what, sizeof what, "arm '%s' block", arm->name);
    rc = kg_expr_eval_list(what, arm->block, c, block, 3, 1, &nb, err);
    if (rc != KG_OK) return rc;
    if (ng == 0 || nb == 0)
        return kg_errorf(err, KG_EINPUT, "arm '%s': %s is empty (a GPU arm declares grid and "
                         "block, e.g. grid = ceildiv(N, 64), ceildiv(M, 64))", arm->name,
                         ng == 0 ? "grid" : "block");
    if (arm->shared[0] != '\0') {
        snprintf(what, sizeof what, "arm '%s' shared", arm->name);
        rc = kg_expr_eval(what, arm->shared, c, &shared, err);
        if (rc != KG_OK) return rc;
    }
    static const char xyz[] = "xyz";
    for (int i = 0; i < 3; i++) {
        if (grid[i] < 1 || block[i] < 1)
            return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': %s.%c is %lld (must be >= 1)",
                             arm->name, c->name, grid[i] < 1 ? "grid" : "block", xyz[i],
                             (long long)(grid[i] < 1 ? grid[i] : block[i]));
    }
    if (grid[0] > INT32_MAX || grid[1] > 65535 || grid[2] > 65535)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': grid (%lld, %lld, %lld) exceeds "
                         "the CUDA limits (2^31-1, 65535, 65535)", arm->name, c->name,
                         (long long)grid[0], (long long)grid[1], (long long)grid[2]);
    if (block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
        block[0] * block[1] * block[2] > 1024)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': block (%lld, %lld, %lld) exceeds "
                         "the CUDA limits (1024 threads, z <= 64)", arm->name, c->name,
                         (long long)block[0], (long long)block[1], (long long)block[2]);
    if (shared < 0 || shared > INT32_MAX)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': shared = %lld bytes is out of "
                         "range", arm->name, c->name, (long long)shared);
    for (int i = 0; i < 3; i++) {
        g->grid[i] = (unsigned)grid[i];
        g->block[i] = (unsigned)block[i];
    }
    g->shared_bytes = (unsigned)shared;
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
    const char *neg = getenv("KGATE_NEGATIVE");
    if (rc == KG_OK && neg != NULL && strcmp(neg, "1") == 0)
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

/* Compiles every dtype the arm will be loaded for, so that compile errors
 * stop a campaign before any worker starts; writes the cubins to
 * build_dir (when given) as ARM.DTYPE.cubin for the evidence. */
static int cuda_build(kg_backend *be, const kg_plan *plan, int a, const char *build_dir,
                      kg_err *err)
{
    cuda_ctx *c = be->ctx;
    const kg_arm *arm = &plan->arms[a];
    if (arm->builtin[0] != '\0') return KG_OK;
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
    }
    free(k);
}

static int cuda_load(kg_backend *be, const kg_plan *plan, int a, int kase, const char *build_dir,
                     kg_kernel **out, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    const kg_arm *arm = &plan->arms[a];
    const kg_case *cs = &plan->cases[kase];
    char *image = NULL;
    size_t image_bytes = 0;
    (void)build_dir;
    *out = NULL;
    if (arm->builtin[0] != '\0') {
        if (strcmp(arm->builtin, "cublas") == 0)
            return kg_errorf(err, KG_EUNSUPPORTED, "arm '%s': builtin cublas not implemented yet "
                             "on the cuda backend", arm->name);
        return kg_errorf(err, KG_EUNSUPPORTED, "arm '%s': builtin '%s' is not available on the "
                         "cuda backend", arm->name, arm->builtin);
    }
    const kg_op *op = kg_op_find(cs->op);
    if (op == NULL) return kg_errorf(err, KG_EINPUT, "case '%s': unknown op '%s'", cs->name, cs->op);
    kg_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory loading arm '%s'", arm->name);
    snprintf(k->arm, sizeof k->arm, "%s", arm->name);
    snprintf(k->kase, sizeof k->kase, "%s", cs->name);
    int rc = kg_cuda_geometry(arm, cs, &k->geom, err);
    if (rc != KG_OK) goto done;
    rc = kg_cuda_args_parse(arm->name, arm->args, op->in_names, op->nin, op->out_names, op->nout,
                            cs, k->args, &k->nargs, err);
    if (rc != KG_OK) goto done;
    for (int i = 0; i < k->nargs; i++) k->params[i] = &k->args[i].value;
    if (k->geom.shared_bytes > (unsigned)c->smem_optin_bytes) {
        rc = kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': %u bytes of dynamic shared "
                       "memory, the device allows at most %d per block", arm->name, cs->name,
                       k->geom.shared_bytes, c->smem_optin_bytes);
        goto done;
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
    const char *entry = arm->entry[0] != '\0' ? arm->entry : "kernel";
    CUresult r = c->drv.cuModuleGetFunction(&k->fn, k->mod, entry);
    if (r != KG_CUDA_SUCCESS) {
        char text[256];
        kg_cuda_result_text(&c->drv, r, text, sizeof text);
        rc = kg_errorf(err, KG_EBACKEND, "arm '%s': entry '%s' not found in the compiled module "
                       "(declare it extern \"C\" __global__): %s", arm->name, entry, text);
        goto done;
    }
    if (k->geom.shared_bytes > 48u * 1024u &&
        (rc = CU(c, cuFuncSetAttribute, (k->fn, KG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         (int)k->geom.shared_bytes))) != KG_OK)
        goto done;
    int max_threads = 0;
    if ((rc = CU(c, cuFuncGetAttribute, (&max_threads, KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                         k->fn))) != KG_OK)
        goto done;
    unsigned threads = k->geom.block[0] * k->geom.block[1] * k->geom.block[2];
    if (threads > (unsigned)max_threads) {
        rc = kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': block of %u threads, the "
                       "compiled entry allows at most %d (registers per thread)", arm->name,
                       cs->name, threads, max_threads);
        goto done;
    }
    *out = k;
    k = NULL;
done:
    free(image);
    if (k != NULL) cuda_unload(be, k);
    return rc;
}

static int launch(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    const kg_cuda_geom *g = &k->geom;
    return CU(c, cuLaunchKernel, (k->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0],
                                  g->block[1], g->block[2], g->shared_bytes, c->stream,
                                  k->params, NULL));
}

static int cuda_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    int rc = KG_OK;
    k->bound = 0;
    release_graph(c, k);
    for (int i = 0; i < k->nargs; i++) {
        kg_carg *a = &k->args[i];
        if (a->kind == KG_CARG_IN) {
            if (a->index >= b->nin)
                return kg_errorf(err, KG_EINTERNAL, "arm '%s': input %d not bound", k->arm, a->index);
            a->value.ptr = dptr(b->in[a->index].ptr);
        } else if (a->kind == KG_CARG_OUT) {
            if (a->index >= b->nout)
                return kg_errorf(err, KG_EINTERNAL, "arm '%s': output %d not bound", k->arm, a->index);
            a->value.ptr = dptr(b->out[a->index].ptr);
        } else if (a->kind == KG_CARG_WS) {
            a->value.ptr = dptr(b->ws.ptr);
        }
    }
    k->pack = b->pack;
    /* a capture must always be ended, even after a failed launch, or the
     * stream stays in capture mode */
    if ((rc = CU(c, cuStreamBeginCapture, (c->stream, KG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))) != KG_OK)
        goto done;
    for (int i = 0; i < k->pack && rc == KG_OK; i++) rc = launch(c, k, err);
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
    int rc = launch(c, k, err);
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

static int cuda_resources(kg_backend *be, kg_kernel *k, kg_resources *res, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    memset(res, 0, sizeof *res);
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
        int rc = CU(c, cuFuncGetAttribute, (attrs[i].out, attrs[i].attr, k->fn));
        if (rc != KG_OK) return rc;
    }
    res->dynamic_shared_bytes = (int)k->geom.shared_bytes;
    for (int i = 0; i < 3; i++) {
        res->grid[i] = k->geom.grid[i];
        res->block[i] = k->geom.block[i];
    }
    res->launches = 1;
    snprintf(res->arch, sizeof res->arch, "sm_%d%d", c->cc_major, c->cc_minor);
    res->image_bytes = k->image_bytes;
    snprintf(res->image_sha256, sizeof res->image_sha256, "%s", k->image_sha256);
    return KG_OK;
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
};
