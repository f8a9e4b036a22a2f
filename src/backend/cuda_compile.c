/* cuda_compile.c: compiles a cuda arm with NVRTC (kg_cuda_compile, see
 * cuda_api.h), and finds the include folders it needs: kgate's (for
 * kgate/kernel.h) and the CUDA toolkit's.
 *
 * Needs no GPU and no driver: only libnvrtc, opened on first use. */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kgate/backend.h"
#include "backend/cuda_api.h"

#define KG_CUDA_MAX_SOURCE_BYTES (16u << 20)

/* ------------------------------------------------------- include paths */

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* kgate/kernel.h lives in the repository's include/ folder: next to the
 * executable's folder (bin/, build/) or two up (build/tests/). */
static int find_kgate_include(const kg_settings *s, char *out, size_t cap)
{
    char probe[KG_PATH_MAX + 32];
    const char *env = s->include_dir;
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
static int find_cuda_include(const kg_settings *s, char *out, size_t cap)
{
    char probe[KG_PATH_MAX + 32];
    const char *const roots[] = { s->cuda_home, s->cuda_path };
    for (size_t i = 0; i < 2; i++) {
        const char *e = roots[i];
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
        if (*nopts == max)
            return kg_errorf(err, KG_EINPUT, "more than %d NVRTC options (the plan bounds an arm's defines and "
                             "cflags to %d words)", max, KG_ARM_MAX_FLAGS);
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

int kg_cuda_compile(kg_cuda_nvrtc *nv, const kg_settings *s, int cc_major, int cc_minor,
                    const kg_plan *plan, int a, kg_dtype dt, char **image, size_t *image_bytes,
                    kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    /* a dozen fixed options, and the arm's defines and cflags (the parser
     * bounds them to KG_ARM_MAX_FLAGS words) */
    enum { MAXOPT = KG_ARM_MAX_FLAGS + 32 };
    char *opts[MAXOPT];
    int nopts = 0, has_arch = 0;
    char *src = NULL, *log = NULL, *cubin = NULL;
    nvrtcProgram prog = NULL;
    char path[KG_PATH_MAX], kinc[KG_PATH_MAX], cinc[KG_PATH_MAX], arch[32];
    int have_cinc = 0;
    *image = NULL;
    *image_bytes = 0;

    int rc = KG_OK;
    if (nv->lib == NULL) rc = kg_cuda_nvrtc_load(nv, s, err);
    if (rc != KG_OK) goto done;
    rc = kg_plan_source_path(plan, a, path, sizeof path, err);
    if (rc != KG_OK) goto done;
    rc = read_source(path, &src, err);
    if (rc != KG_OK) goto done;
    if (!find_kgate_include(s, kinc, sizeof kinc)) {
        rc = kg_errorf(err, KG_EIO, "arm '%s': kgate's include folder (with kgate/kernel.h) was "
                       "not found next to the executable; set KGATE_INCLUDE", arm->name);
        goto done;
    }
    have_cinc = find_cuda_include(s, cinc, sizeof cinc);

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
    if (rc == KG_OK && kg_backend_negative(s, arm))
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
