/* cpu.c: the embedded default backend.  Arms are C source files compiled
 * by the system compiler (settings cc: KGATE_CC, else cc) into shared objects outside
 * any timing, loaded with dlopen in the worker, and called through the
 * kg_kargs ABI of kgate/kernel.h.  A sample is pack calls timed with
 * CLOCK_MONOTONIC_RAW.  A control arm is compiled into its own shared
 * object so that it is a separately loaded copy, as the A/A check needs.
 *
 * It does not sandbox the kernel: the worker process is the sandbox. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "backend/backend_impl.h"
#include "kgate/kernel.h"
#include "util.h"

typedef void (*cpu_entry)(const kg_kargs *);

struct kg_kernel {
    void *handle;
    cpu_entry fn;
    kg_kargs args;
    int pack;
};

static int cpu_open(kg_backend *be, const kg_plan *plan, kg_err *err)
{
    (void)be; (void)plan; (void)err;
    return KG_OK;
}

static void cpu_close(kg_backend *be)
{
    (void)be;
}


static void so_path(const kg_backend *be, const char *build_dir, const kg_arm *arm, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s%s.so", build_dir, arm->name, kg_backend_negative(be->settings, arm) ? ".negative" : "");
}

/* The compiler build() runs: the settings' cc (KGATE_CC), else cc. */
static const char *cpu_compiler(const kg_settings *s)
{
    return s->cc != NULL && s->cc[0] != '\0' ? s->cc : "cc";
}

static int split_words(char *s, char **out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, " \t"); tok != NULL && n < max; tok = strtok(NULL, " \t")) out[n++] = tok;
    return n;
}

static int cpu_build(kg_backend *be, const kg_plan *plan, int a, const char *build_dir, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    char src[KG_PATH_MAX], so[PATH_MAX], tmp[PATH_MAX + 16], log[PATH_MAX + 8], inc[PATH_MAX];
    char incflag[PATH_MAX + 4];
    int rc;
    if (arm->builtin[0] != '\0')
        return kg_errorf(err, KG_EUNSUPPORTED, "%s:%d: arm '%s': builtin '%s' is not available on the cpu backend (use a source file)",
                         plan->path, arm->line, arm->name, arm->builtin);
    if ((rc = kg_plan_source_path(plan, a, src, sizeof src, err)) != KG_OK) return rc;
    if ((rc = kg_include_dir(be->settings->include_dir, inc, sizeof inc, err)) != KG_OK) return rc;
    if ((rc = kg_mkdir_p(build_dir, err)) != KG_OK) return rc;
    so_path(be, build_dir, arm, so, sizeof so);
    snprintf(tmp, sizeof tmp, "%s.tmp", so);
    snprintf(log, sizeof log, "%s.log", so);
    snprintf(incflag, sizeof incflag, "-I%s", inc);
    remove(log);

    const char *cc = cpu_compiler(be->settings);
    char defs[KG_TEXT_MAX], flags[KG_TEXT_MAX];
    snprintf(defs, sizeof defs, "%s", arm->defines);
    snprintf(flags, sizeof flags, "%s", arm->cflags);
    /* the parser bounds defines and cflags to KG_ARM_MAX_FLAGS words */
    char *words[KG_ARM_MAX_FLAGS], *fwords[KG_ARM_MAX_FLAGS];
    int nd = split_words(defs, words, KG_ARM_MAX_FLAGS);
    int nf = split_words(flags, fwords, KG_ARM_MAX_FLAGS);
    char dbuf[KG_ARM_MAX_FLAGS][KG_TEXT_MAX + 3];
    char *argv[2 * KG_ARM_MAX_FLAGS + 16];
    int n = 0;
    argv[n++] = (char *)cc;
    argv[n++] = (char *)"-std=c11";
    argv[n++] = (char *)"-O2";
    argv[n++] = (char *)"-shared";
    argv[n++] = (char *)"-fPIC";
    argv[n++] = incflag;
    for (int i = 0; i < nd; i++) {
        snprintf(dbuf[i], sizeof dbuf[i], "-D%s", words[i]);
        argv[n++] = dbuf[i];
    }
    if (kg_backend_negative(be->settings, arm)) argv[n++] = (char *)"-DKGATE_NEGATIVE=1";
    for (int i = 0; i < nf; i++) argv[n++] = fwords[i];
    argv[n++] = src;
    argv[n++] = (char *)"-o";
    argv[n++] = tmp;
    argv[n++] = (char *)"-lm";
    argv[n] = NULL;
    int status;
    if ((rc = kg_run_capture(argv, log, &status, err)) != KG_OK) return rc;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char *text = NULL;
        size_t len = 0;
        kg_read_file(log, &text, &len, NULL);
        for (size_t i = 0; text != NULL && i < len; i++) if (text[i] == '\n') text[i] = ' ';
        rc = kg_errorf(err, KG_EBACKEND, "%s:%d: arm '%s': %s failed to compile %s: %.600s",
                       plan->path, arm->line, arm->name, cc, src, text ? text : "(no output)");
        free(text);
        return rc;
    }
    if (rename(tmp, so) != 0)
        return kg_errorf(err, KG_EIO, "%s: cannot rename the compiled arm into place", so);
    return KG_OK;
}

static int cpu_alloc(kg_backend *be, size_t bytes, kg_dbuf *out, kg_err *err)
{
    (void)be;
    /* 64-byte alignment, as a vectorising kernel would expect on a device. */
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (p == NULL) return kg_errorf(err, KG_ENOMEM, "cpu backend: cannot allocate %zu bytes", bytes);
    memset(p, 0, rounded ? rounded : 64);
    out->ptr = p;
    out->bytes = bytes;
    return KG_OK;
}

static void cpu_free(kg_backend *be, kg_dbuf *buf)
{
    (void)be;
    free(buf->ptr);
}

static int cpu_upload(kg_backend *be, const kg_dbuf *dst, size_t off, const void *src, size_t n, kg_err *err)
{
    (void)be; (void)err;
    memcpy((char *)dst->ptr + off, src, n);
    return KG_OK;
}

static int cpu_download(kg_backend *be, void *dst, const kg_dbuf *src, size_t off, size_t n, kg_err *err)
{
    (void)be; (void)err;
    memcpy(dst, (const char *)src->ptr + off, n);
    return KG_OK;
}

static int cpu_load(kg_backend *be, const kg_plan *plan, int a, int kase, const char *build_dir,
                    kg_kernel **out, kg_err *err)
{
    (void)kase;
    const kg_arm *arm = &plan->arms[a];
    char so[PATH_MAX];
    so_path(be, build_dir, arm, so, sizeof so);
    if (!kg_path_exists(so)) {
        int rc = cpu_build(be, plan, a, build_dir, err);
        if (rc != KG_OK) return rc;
    }
    kg_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory loading arm %s", arm->name);
    k->handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (k->handle == NULL) {
        int rc = kg_errorf(err, KG_EBACKEND, "%s:%d: arm '%s': cannot load %s: %s", plan->path, arm->line,
                           arm->name, so, dlerror());
        free(k);
        return rc;
    }
    void *sym = dlsym(k->handle, arm->entry);
    if (sym == NULL) {
        int rc = kg_errorf(err, KG_EBACKEND, "%s:%d: arm '%s': no function '%s' in its source (set entry = NAME)",
                           plan->path, arm->line, arm->name, arm->entry);
        dlclose(k->handle);
        free(k);
        return rc;
    }
    memcpy(&k->fn, &sym, sizeof k->fn);
    *out = k;
    return KG_OK;
}

static void cpu_unload(kg_backend *be, kg_kernel *k)
{
    (void)be;
    if (k->handle != NULL) dlclose(k->handle);
    free(k);
}

static int cpu_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    (void)be; (void)err;
    memset(&k->args, 0, sizeof k->args);
    k->args.abi = KG_KARGS_ABI;
    k->args.dtype = (int)b->kase->dtype;
    for (int i = 0; i < b->nin && i < 4; i++) k->args.in[i] = b->in[i].ptr;
    for (int i = 0; i < b->nout && i < 2; i++) k->args.out[i] = b->out[i].ptr;
    k->args.ws = b->ws.ptr;
    k->args.ws_bytes = b->ws.bytes;
    k->args.M = b->kase->M;
    k->args.N = b->kase->N;
    k->args.K = b->kase->K;
    k->args.splits = b->kase->splits;
    k->args.eps = b->kase->eps;
    k->pack = b->pack;
    return KG_OK;
}

static int cpu_run(kg_backend *be, kg_kernel *k, kg_err *err)
{
    (void)be; (void)err;
    k->fn(&k->args);
    return KG_OK;
}

static int cpu_time(kg_backend *be, kg_kernel *k, const kg_sample_ctx *ctx, double *ns, kg_err *err)
{
    (void)be; (void)ctx; (void)err;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t0);
    for (int i = 0; i < k->pack; i++) k->fn(&k->args);
    clock_gettime(CLOCK_MONOTONIC_RAW, &t1);
    double total = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    *ns = total / k->pack;
    return KG_OK;
}

static void cpu_describe(kg_backend *be, char *buf, size_t cap)
{
    (void)be;
    char model[256] = "unknown CPU";
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp != NULL) {
        char line[512];
        while (fgets(line, sizeof line, fp) != NULL) {
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon != NULL) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(fp);
    }
    snprintf(buf, cap, "%s, %ld online cores", model, sysconf(_SC_NPROCESSORS_ONLN));
}

const kg_backend_ops kg_backend_cpu = {
    .abi = KG_BACKEND_ABI,
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .build = cpu_build,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .load = cpu_load,
    .unload = cpu_unload,
    .bind = cpu_bind,
    .run = cpu_run,
    .time = cpu_time,
    .flush = NULL,
    .describe = cpu_describe,
    .caps = KG_CAP_EXECUTES | KG_CAP_QUIET_HOST,
    .compiler = cpu_compiler,
};
