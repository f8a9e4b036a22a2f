/* cuda_compile.c: compiles a cuda arm with NVRTC (kg_cuda_compile, see
 * cuda_api.h), and finds the include folders it needs: kgate's (for
 * kgate/kernel.h) and the CUDA toolkit's.  A precompiled arm (image =
 * .cubin, .ptx or .fatbin) is read instead, and its target architecture
 * checked against the device's (kg_cuda_image_check), without NVRTC.
 *
 * Needs no GPU and no driver: only libnvrtc, opened on first use. */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kgate/backend.h"
#include "backend/cuda_api.h"
#include "base/safefs.h"

#define KG_CUDA_MAX_SOURCE_BYTES (16u << 20)
#define KG_CUDA_MAX_IMAGE_BYTES ((size_t)256 << 20)

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

/* ------------------------------------------------ precompiled images */

static unsigned rd16(const unsigned char *b) { return (unsigned)b[0] | (unsigned)b[1] << 8; }
static uint32_t rd32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static uint64_t rd64(const unsigned char *b) { return (uint64_t)rd32(b) | (uint64_t)rd32(b + 4) << 32; }

/* A cubin for sm_XY runs on a device of compute capability X.Y' with
 * Y' >= Y (the driver refuses the rest). */
static int sm_runs(int sm, int cc_major, int cc_minor)
{
    return sm / 10 == cc_major && sm % 10 <= cc_minor;
}

/* The SM of a CUDA ELF's e_flags: the low byte before sm_100, the next
 * byte from then on (the high byte is then set). */
static int cubin_sm(uint32_t flags)
{
    return (flags >> 24) == 0 ? (int)(flags & 0xffu) : (int)((flags >> 8) & 0xffu);
}

int kg_cuda_image_check(kg_image_kind kind, const unsigned char *b, size_t n, int cc_major, int cc_minor,
                        char *why, size_t cap)
{
    int cc = 10 * cc_major + cc_minor;
    why[0] = '\0';
    if (kind == KG_IMAGE_CUBIN) {
        if (n < 52 || memcmp(b, "\177ELF", 4) != 0) {
            snprintf(why, cap, "it is not an ELF file (a cubin is one: nvcc -cubin)");
            return 1;
        }
        int is64 = b[4] == 2;
        if (n < (is64 ? 64u : 52u) || b[5] != 1 || rd16(b + 18) != 190) {
            snprintf(why, cap, "it is an ELF file but not a CUDA one (EM_CUDA): %s",
                     rd16(b + 18) == 62 || rd16(b + 18) == 183 ? "a host object; a .so runs on the cpu backend"
                                                               : "another machine's code");
            return 1;
        }
        int sm = cubin_sm(rd32(b + (is64 ? 48 : 36)));
        if (!sm_runs(sm, cc_major, cc_minor)) {
            snprintf(why, cap, "it was built for sm_%d and the device is sm_%d (compute capability %d.%d): "
                     "rebuild it with -arch=sm_%d%s", sm, cc, cc_major, cc_minor, cc, cc == 90 ? "a" : "");
            return 1;
        }
        return 0;
    }
    if (kind == KG_IMAGE_PTX) {
        if (memchr(b, '\0', n) != NULL) {
            snprintf(why, cap, "it holds a NUL byte: PTX is text");
            return 1;
        }
        const char *t = NULL;
        for (size_t i = 0; i + 7 < n && t == NULL; i++)
            if (memcmp(b + i, ".target", 7) == 0 && (i == 0 || b[i - 1] == '\n' || b[i - 1] == ' ' || b[i - 1] == '\t'))
                t = (const char *)b + i + 7;
        int sm = -1;
        if (t != NULL) {
            while ((size_t)(t - (const char *)b) < n && (*t == ' ' || *t == '\t')) t++;
            if ((size_t)(t - (const char *)b) + 4 < n && strncmp(t, "sm_", 3) == 0) sm = atoi(t + 3);
        }
        if (sm <= 0) {
            snprintf(why, cap, "it has no '.target sm_XY' directive: not PTX (nvcc -ptx writes one)");
            return 1;
        }
        if (sm > cc) {
            snprintf(why, cap, "its .target is sm_%d and the device is sm_%d (compute capability %d.%d): PTX runs "
                     "on its target and later devices; rebuild it for sm_%d or lower", sm, cc, cc_major, cc_minor, cc);
            return 1;
        }
        return 0;
    }
    if (kind == KG_IMAGE_FATBIN) {
        if (n < 16 || rd32(b) != 0xBA55ED50u) {
            snprintf(why, cap, "it is not a fatbin (magic 0xBA55ED50: nvcc -fatbin)");
            return 1;
        }
        /* the header (16 bytes), then entries: kind (1 PTX, 2 ELF), the
         * entry's header size, its payload size, ..., its SM at byte 28 */
        uint64_t off = rd16(b + 6), end = 16 + rd64(b + 8);
        if (end > n) end = n;
        char seen[160] = "";
        size_t used = 0;
        int entries = 0;
        while (off + 32 <= end && entries < 4096) {
            const unsigned char *e = b + off;
            unsigned ek = rd16(e);
            uint32_t ehs = rd32(e + 4);
            uint64_t esz = rd64(e + 8);
            int sm = (int)rd32(e + 28);
            if (ehs < 32 || (ek != 1 && ek != 2)) break;
            entries++;
            if ((ek == 2 && sm_runs(sm, cc_major, cc_minor)) || (ek == 1 && sm > 0 && sm <= cc)) return 0;
            if (used + 24 < sizeof seen) {
                int w = snprintf(seen + used, sizeof seen - used, "%s%s sm_%d", used ? ", " : "", ek == 2 ? "cubin"
                                 : "PTX", sm);
                if (w > 0) used += (size_t)w;
            }
            if (esz > end - off - ehs) break;
            off += ehs + esz;
        }
        if (entries == 0) {
            snprintf(why, cap, "its entries could not be read (an empty or unknown fatbin layout)");
            return 1;
        }
        snprintf(why, cap, "it holds no code for sm_%d (compute capability %d.%d): %s; rebuild it with "
                 "-gencode arch=compute_%d,code=sm_%d", cc, cc_major, cc_minor, seen, cc, cc);
        return 1;
    }
    snprintf(why, cap, "a %s image is not a cuda image (.cubin, .ptx or .fatbin)", kg_image_kind_name(kind));
    return 1;
}

/* Reads a precompiled arm's image and checks it against the device; a
 * PTX image gets the NUL that the driver's module load needs. */
static int read_image(const kg_plan *plan, int a, int cc_major, int cc_minor, char **image, size_t *image_bytes,
                      kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    kg_image_kind kind = kg_image_kind_of(arm->image);
    char path[KG_PATH_MAX], why[400];
    char *data = NULL;
    size_t n = 0;
    if (kind == KG_IMAGE_SO)
        return kg_errorf(err, KG_EUNSUPPORTED, "%s:%d: arm '%s': image '%s' is a shared object, which runs on the "
                         "cpu backend (backend = cpu, or --backend cpu); a cuda image is a .cubin (nvcc -cubin "
                         "-arch=sm_90a), a .ptx or a .fatbin", plan->path, arm->line, arm->name, arm->image);
    int rc = kg_plan_source_path(plan, a, path, sizeof path, err);
    if (rc == KG_OK) rc = kg_read_file_cap(path, KG_CUDA_MAX_IMAGE_BYTES, &data, &n, err);
    if (rc != KG_OK) return rc;
    if (kg_cuda_image_check(kind, (const unsigned char *)data, n, cc_major, cc_minor, why, sizeof why)) {
        free(data);
        return kg_errorf(err, KG_EINPUT, "%s:%d: arm '%s': image %s cannot run on this device: %s", plan->path,
                         arm->line, arm->name, path, why);
    }
    if (kind == KG_IMAGE_PTX) {
        char *t = realloc(data, n + 1);
        if (t == NULL) {
            free(data);
            return kg_errorf(err, KG_ENOMEM, "out of memory reading %s", path);
        }
        data = t;
        data[n++] = '\0';
    }
    *image = data;
    *image_bytes = n;
    return KG_OK;
}

int kg_cuda_compile(kg_cuda_nvrtc *nv, const kg_settings *s, int cc_major, int cc_minor,
                    const kg_plan *plan, int a, kg_dtype dt, char **image, size_t *image_bytes,
                    kg_err *err)
{
    return kg_cuda_compile_case(nv, s, cc_major, cc_minor, plan, a, NULL, dt, image, image_bytes, err);
}

/* -DKG_VAR_NAME=VALUE for each of cs's variables (kg_cuda_compile_case) */
static int add_case_vars(const kg_case *cs, char **opts, int *nopts, int max, kg_err *err)
{
    static const char *const shape[] = { "M", "N", "K", "splits" };
    char buf[KG_VAR_NAME_MAX + 64];
    int rc = KG_OK;
    for (size_t k = 0; k < sizeof shape / sizeof shape[0] && rc == KG_OK; k++) {
        int64_t v = -1;
        if (!kg_case_var(cs, shape[k], NULL, &v, NULL) || v < 0) continue;
        snprintf(buf, sizeof buf, "KG_VAR_%s=%lld", shape[k], (long long)v);
        rc = add_tokens(buf, "-D", opts, nopts, max, NULL, err);
    }
    if (rc == KG_OK) {
        snprintf(buf, sizeof buf, "KG_VAR_eps=%.17g", cs->eps);
        rc = add_tokens(buf, "-D", opts, nopts, max, NULL, err);
    }
    for (int k = 0; k < cs->nvars && rc == KG_OK; k++) {
        const kg_var *v = &cs->vars[k];
        if (v->type == KG_VAR_REAL) {
            /* a double literal: 0.5, 1e-05, 3.0 */
            snprintf(buf, sizeof buf, "KG_VAR_%s=%.17g%s", v->name, v->r,
                     v->r == (double)(int64_t)v->r && fabs(v->r) < 1e15 ? ".0" : "");
        } else {
            snprintf(buf, sizeof buf, "KG_VAR_%s=%lld", v->name, (long long)v->i);
        }
        rc = add_tokens(buf, "-D", opts, nopts, max, NULL, err);
    }
    return rc;
}

int kg_cuda_compile_case(kg_cuda_nvrtc *nv, const kg_settings *s, int cc_major, int cc_minor,
                         const kg_plan *plan, int a, const kg_case *cs, kg_dtype dt, char **image,
                         size_t *image_bytes, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    /* a dozen fixed options, and the arm's defines and cflags (the parser
     * bounds them to KG_ARM_MAX_FLAGS words) */
    enum { MAXOPT = KG_ARM_MAX_FLAGS + 32 + 5 + KG_CASE_VARS };
    char *opts[MAXOPT];
    int nopts = 0, has_arch = 0;
    char *src = NULL, *log = NULL, *cubin = NULL;
    nvrtcProgram prog = NULL;
    char path[KG_PATH_MAX], kinc[KG_PATH_MAX], cinc[KG_PATH_MAX], arch[32];
    int have_cinc = 0;
    *image = NULL;
    *image_bytes = 0;
    /* a precompiled arm: its image, the same for every dtype, and no NVRTC */
    if (kg_arm_is_image(arm)) return read_image(plan, a, cc_major, cc_minor, image, image_bytes, err);

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
    if (rc == KG_OK && arm->specialize && cs != NULL) rc = add_case_vars(cs, opts, &nopts, MAXOPT, err);
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

/* ------------------------------------------------ many compiles at once */

typedef struct many_job {
    kg_cuda_nvrtc *nv;
    const kg_settings *s;
    int cc_major, cc_minor;
    const kg_plan *plan;
    kg_cuda_unit *units;
    int n;
    atomic_int next;
} many_job;

static void *many_worker(void *arg)
{
    many_job *j = arg;
    for (int i; (i = atomic_fetch_add(&j->next, 1)) < j->n;) {
        kg_cuda_unit *u = &j->units[i];
        u->err = (kg_err){ 0 };
        u->rc = kg_cuda_compile_case(j->nv, j->s, j->cc_major, j->cc_minor, j->plan, u->arm, u->cs, u->dt,
                                     &u->image, &u->bytes, &u->err);
    }
    return NULL;
}

int kg_cuda_compile_many(kg_cuda_nvrtc *nv, const kg_settings *s, int cc_major, int cc_minor,
                         const kg_plan *plan, kg_cuda_unit *units, int n, int threads)
{
    kg_err e = { 0 };
    int rc = nv->lib == NULL ? kg_cuda_nvrtc_load(nv, s, &e) : KG_OK;
    for (int i = 0; rc != KG_OK && i < n; i++) {
        units[i].rc = rc;
        units[i].err = e;
    }
    if (rc != KG_OK || n <= 0) return KG_OK;
    many_job j = { .nv = nv, .s = s, .cc_major = cc_major, .cc_minor = cc_minor, .plan = plan, .units = units,
                   .n = n };
    atomic_init(&j.next, 0);
    if (threads > n) threads = n;
    if (threads > 32) threads = 32;
    pthread_t tid[32];
    int started = 0;
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&tid[started], NULL, many_worker, &j) != 0) break;
        started++;
    }
    many_worker(&j);  /* this thread compiles too, and alone when no thread could start */
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    return KG_OK;
}
