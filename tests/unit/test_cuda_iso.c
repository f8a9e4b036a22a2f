/* test_cuda_iso.c: the cuda backend's arm hosts, on a machine without a
 * GPU, against the stand-in driver of tests/unit/fake_libcuda.c
 * (build/tests/libcuda_fake.so, loaded as KGATE_LIBCUDA would be), whose
 * memory is shared memory so that a cuda arm host (`kgate armhost --cuda`,
 * build/kgate) can map the worker's buffers by IPC handle.  Needs NVRTC
 * (the arms are compiled for real); skipped without it.
 *
 * Checks: an untrusted arm's launches run in its host, not in this
 * process, and reach this process's buffers (after a run, a timed sample,
 * a rebinding); a trusted arm runs here; a launch the device refuses is
 * KG_EINADMISSIBLE with the limits and the host goes on; a fault is
 * KG_EARM for that arm only, and a later load starts a fresh host; a
 * kernel that copies another arm's output out of its process's memory
 * succeeds when trusted (one address space) and finds nothing in a host;
 * closing the backend leaves no process behind. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "kgate/backend.h"
#include "kgate/oracle.h"
#include "backend/cuda_api.h"

#define ARM(name, extra, entry)                                                                  \
    "[arm " name "]\nop = gemm_bt\nrole = candidate\n" extra                                      \
    "source = kernels/cuda/gemm_bt_naive.cu\nentry = " entry "\n"                               \
    "grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n"

static const char plan_text[] =
    "[campaign]\nname = iso\nbackend = cuda\nquiet = 0\ntimeout = 60\n"
    "[case c]\nop = gemm_bt\ndtype = f32\nM = 5\nN = 7\nK = 3\n"
    "[arm base]\nop = gemm_bt\nrole = baseline\ntrusted = yes\n"
    "source = kernels/cuda/gemm_bt_naive.cu\nentry = gemm_bt_naive\n"
    "grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n"
    ARM("cand", "", "gemm_bt_naive")
    ARM("thief", "", "gemm_bt_steal")
    ARM("thief_trusted", "trusted = yes\n", "gemm_bt_steal");

enum { M = 5, N = 7, K = 3 };

typedef struct arm_bufs {
    kg_dbuf a, b, c;
    kg_binding bind;
    kg_kernel *k;
} arm_bufs;

static int (*launches_here)(void);

static int setup(kg_backend *be, const kg_plan *plan, int arm, arm_bufs *x, const float *A,
                 const float *B, kg_err *err)
{
    memset(x, 0, sizeof *x);
    int rc = kg_backend_alloc(be, sizeof(float) * M * K, &x->a, err);
    if (rc == KG_OK) rc = kg_backend_alloc(be, sizeof(float) * N * K, &x->b, err);
    if (rc == KG_OK) rc = kg_backend_alloc(be, sizeof(float) * M * N + kg_guard_bytes(), &x->c, err);
    if (rc == KG_OK) rc = kg_backend_upload(be, &x->a, 0, A, sizeof(float) * M * K, err);
    if (rc == KG_OK) rc = kg_backend_upload(be, &x->b, 0, B, sizeof(float) * N * K, err);
    if (rc == KG_OK) rc = kg_backend_load(be, plan, arm, 0, NULL, &x->k, err);
    if (rc != KG_OK) return rc;
    x->bind.kase = &plan->cases[0];
    x->bind.nin = 2;
    x->bind.in[0] = x->a;
    x->bind.in[1] = x->b;
    x->bind.nout = 1;
    x->bind.out[0] = x->c;
    x->bind.out_bytes[0] = sizeof(float) * M * N;
    x->bind.pack = 2;
    return kg_backend_bind(be, x->k, &x->bind, err);
}

static void release(kg_backend *be, arm_bufs *x)
{
    kg_backend_unload(be, x->k);
    kg_backend_free(be, &x->a);
    kg_backend_free(be, &x->b);
    kg_backend_free(be, &x->c);
}

/* 1 when the arm's output, read back through the worker's buffer, is A*B^T */
static int output_right(kg_backend *be, arm_bufs *x, const float *want, kg_err *err)
{
    float got[M * N];
    if (kg_backend_download(be, got, &x->c, 0, sizeof got, err) != KG_OK) return 0;
    for (int i = 0; i < M * N; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f)) return 0;   /* NaN is wrong */
    return 1;
}

static void poison(kg_backend *be, arm_bufs *x, kg_err *err)
{
    float p[M * N];
    for (int i = 0; i < M * N; i++) p[i] = NAN;
    CHECK(kg_backend_upload(be, &x->c, 0, p, sizeof p, err) == KG_OK);
}

static void touch(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

int main(void)
{
    char so[PATH_MAX + 32], exe[PATH_MAX], kgate[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 1;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(kgate, sizeof kgate, "%s/../kgate", exe);
    char dir[] = "/tmp/kgate-cuda-iso-XXXXXX", fault[PATH_MAX], refuse[PATH_MAX], knobs[PATH_MAX + 64];
    if (mkdtemp(dir) == NULL) return 1;
    snprintf(fault, sizeof fault, "%s/fault", dir);
    snprintf(refuse, sizeof refuse, "%s/refuse", dir);
    /* the stand-in driver, copied beside its settings (LIB.env): an arm
     * host's environment is kgate's own, so they reach it through the file */
    char cmd[3 * PATH_MAX];
    snprintf(so, sizeof so, "%s/libcuda_fake.so", dir);
    snprintf(cmd, sizeof cmd, "cp '%s/libcuda_fake.so' '%s'", exe, so);
    if (system(cmd) != 0) return 1;
    snprintf(knobs, sizeof knobs, "%s.env", so);
    char text[3 * PATH_MAX];
    snprintf(text, sizeof text, "FAKE_CUDA_FAULT_FILE=%s\nFAKE_CUDA_REFUSE_FILE=%s\n", fault, refuse);
    touch(knobs, text);
    kg_settings s = *kg_settings_defaults();
    s.lib_cuda = so;
    s.include_dir = "include";
    s.armhost_exe = kgate;
    kg_cuda_nvrtc nv;
    kg_err err = { 0 };
    if (kg_cuda_nvrtc_load(&nv, &s, &err) != KG_OK) {
        fprintf(stderr, "test_cuda_iso: NVRTC absent, skipped (%s)\n", err.msg);
        rmdir(dir);
        return kg_test_finish("test_cuda_iso");
    }
    kg_cuda_nvrtc_unload(&nv);
    void *fake = dlopen(so, RTLD_NOW | RTLD_NODELETE);
    CHECK_MSG(fake != NULL, "%s", dlerror());
    if (fake == NULL) return kg_test_finish("test_cuda_iso");
    *(void **)&launches_here = dlsym(fake, "fake_cuda_launches");
    CHECK(launches_here != NULL);
    if (launches_here == NULL) return kg_test_finish("test_cuda_iso");

    kg_plan *plan = NULL;
    CHECK_MSG(kg_plan_parse(plan_text, strlen(plan_text), "iso.kg", ".", &plan, &err) == KG_OK, "%s", err.msg);
    kg_backend *be = NULL;
    int rc = kg_backend_open("cuda", plan, &s, &be, NULL, 0, &err);
    CHECK_MSG(rc == KG_OK, "%s", err.msg);
    if (rc != KG_OK) return kg_test_finish("test_cuda_iso");

    float A[M * K], B[N * K], want[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (float)(i % 5) - 1.5f;
    for (int i = 0; i < N * K; i++) B[i] = (float)(i % 3) + 0.25f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc += A[i * K + k] * B[j * K + k];
            want[i * N + j] = acc;
        }

    arm_bufs base, cand;
    rc = setup(be, plan, 0, &base, A, B, &err);
    CHECK_MSG(rc == KG_OK, "base: %s", err.msg);
    rc = setup(be, plan, 1, &cand, A, B, &err);
    CHECK_MSG(rc == KG_OK, "cand: %s", err.msg);
    if (rc != KG_OK || cand.k == NULL) return kg_test_finish("test_cuda_iso");
    kg_resources res;
    CHECK(kg_backend_resources(be, cand.k, 0, &res, &err) == KG_OK);
    CHECK_STR_CONTAINS(res.sandbox, "cuda arm host");
    CHECK(res.max_threads_per_block == 1024);

    /* checked runs: the trusted arm here, the untrusted one in its host */
    poison(be, &base, &err);
    poison(be, &cand, &err);
    int l0 = launches_here();
    CHECK(kg_backend_run(be, base.k, &err) == KG_OK);
    CHECK_MSG(launches_here() == l0 + 1, "the trusted arm runs in the worker");
    CHECK_MSG(kg_backend_run(be, cand.k, &err) == KG_OK, "%s", err.msg);
    CHECK_MSG(launches_here() == l0 + 1, "the untrusted arm runs elsewhere (%d launches here)", launches_here() - l0);
    CHECK(output_right(be, &base, want, &err));
    CHECK_MSG(output_right(be, &cand, want, &err), "the host's output reaches the worker's buffer: %s", err.msg);
    /* before the trusted arm's checked runs, kgate's poison kernel filled
     * the shared memory of every SM of this process's device: one block
     * per SM, each the whole opt-in shared memory, the NaN word then the
     * finite one */
    typedef struct { unsigned grid, shared, word, words; } smem_launch;
    int (*smem_log)(const smem_launch **) = NULL;
    *(void **)&smem_log = dlsym(fake, "fake_cuda_smem_log");
    CHECK(smem_log != NULL);
    CHECK(kg_backend_run(be, base.k, &err) == KG_OK);
    const smem_launch *sl = NULL;
    int nsl = smem_log != NULL ? smem_log(&sl) : 0;
    CHECK_MSG(nsl == 2, "one poison per checked run of the trusted arm (%d)", nsl);
    for (int i = 0; i < nsl && i < 2; i++) {
        CHECK_MSG(sl[i].grid == 4 && sl[i].shared == 232448 && sl[i].words == 232448 / 4,
                  "poison %d: %u blocks of %u bytes, %u words", i, sl[i].grid, sl[i].shared, sl[i].words);
        CHECK_MSG(sl[i].word == (i == 0 ? 0x7fc07fc0u : 0x7b7b7b7bu), "poison %d: word %#x", i, sl[i].word);
    }

    /* a timed sample in the host writes the worker's buffer too */
    poison(be, &cand, &err);
    CHECK(!output_right(be, &cand, want, &err));
    double ns = 0.0;
    kg_sample_ctx sc;
    memset(&sc, 0, sizeof sc);
    CHECK_MSG(kg_backend_time(be, cand.k, &sc, &ns, &err) == KG_OK, "%s", err.msg);
    CHECK_MSG(ns > 0.0, "the host's event time, per operation: %g ns", ns);
    CHECK_MSG(output_right(be, &cand, want, &err), "after a timed sample: %s", err.msg);

    /* rebinding to a new input set */
    kg_dbuf a2;
    float A2[M * K], want2[M * N];
    for (int i = 0; i < M * K; i++) A2[i] = -A[i];
    for (int i = 0; i < M * N; i++) want2[i] = -want[i];
    CHECK(kg_backend_alloc(be, sizeof A2, &a2, &err) == KG_OK);
    CHECK(kg_backend_upload(be, &a2, 0, A2, sizeof A2, &err) == KG_OK);
    cand.bind.in[0] = a2;
    CHECK_MSG(kg_backend_bind(be, cand.k, &cand.bind, &err) == KG_OK, "%s", err.msg);
    CHECK(kg_backend_run(be, cand.k, &err) == KG_OK);
    CHECK_MSG(output_right(be, &cand, want2, &err), "after rebinding: %s", err.msg);
    cand.bind.in[0] = cand.a;
    CHECK(kg_backend_bind(be, cand.k, &cand.bind, &err) == KG_OK);
    kg_backend_free(be, &a2);

    /* a launch the device refuses: inadmissible, with the limits */
    touch(refuse, "128");
    kg_err_clear(&err);
    rc = kg_backend_run(be, cand.k, &err);
    CHECK_MSG(rc == KG_EINADMISSIBLE, "rc %d: %s", rc, err.msg);
    CHECK_STR_CONTAINS(err.msg, "the device refused launch 1 ('gemm_bt_naive')");
    CHECK_STR_CONTAINS(err.msg, "the block has 256 threads (the entry allows at most 1024)");
    CHECK_STR_CONTAINS(err.msg, "the device allows 232448 per block");
    unlink(refuse);
    kg_err_clear(&err);
    CHECK_MSG(kg_backend_run(be, cand.k, &err) == KG_OK, "the host survives a refusal: %s", err.msg);

    /* a cluster the device cannot run (__cluster_dims__ past the portable
     * size), refused while the host captures the timed graph and while it
     * runs: inadmissible, never the campaign's failure */
    touch(refuse, "128 912");
    kg_err_clear(&err);
    rc = kg_backend_bind(be, cand.k, &cand.bind, &err);
    CHECK_MSG(rc == KG_EINADMISSIBLE, "a refused cluster while capturing: rc %d: %s", rc, err.msg);
    CHECK_STR_CONTAINS(err.msg, "arm 'cand' on case 'c': the device refused launch 1 ('gemm_bt_naive')");
    CHECK_STR_CONTAINS(err.msg, "CUDA_ERROR_INVALID_CLUSTER_SIZE");
    CHECK_STR_CONTAINS(err.msg, "hold at most 8 of them");
    unlink(refuse);
    kg_err_clear(&err);
    CHECK_MSG(kg_backend_bind(be, cand.k, &cand.bind, &err) == KG_OK, "the host binds again: %s", err.msg);
    touch(refuse, "128 912");
    rc = kg_backend_run(be, cand.k, &err);
    CHECK_MSG(rc == KG_EINADMISSIBLE, "a refused cluster while running: rc %d: %s", rc, err.msg);
    CHECK_STR_CONTAINS(err.msg, "(__cluster_dims__) must divide its grid of 1 x 1 x 1 blocks");
    unlink(refuse);
    kg_err_clear(&err);
    CHECK_MSG(kg_backend_run(be, cand.k, &err) == KG_OK, "the host survives a refused cluster: %s", err.msg);
    poison(be, &cand, &err);
    CHECK(kg_backend_run(be, cand.k, &err) == KG_OK);
    CHECK_MSG(output_right(be, &cand, want, &err), "after a refused cluster: %s", err.msg);

    /* a fault in the host: the arm's, not the campaign's */
    poison(be, &cand, &err);
    touch(fault, "1");
    kg_err_clear(&err);
    rc = kg_backend_time(be, cand.k, &sc, &ns, &err);
    CHECK_MSG(rc == KG_EARM, "rc %d: %s", rc, err.msg);
    CHECK_STR_CONTAINS(err.msg, "arm 'cand' on case 'c': its kernel faulted in its own process");
    CHECK_STR_CONTAINS(err.msg, "CUDA_ERROR_ILLEGAL_ADDRESS");
    unlink(fault);
    kg_err_clear(&err);
    CHECK(kg_backend_run(be, cand.k, &err) == KG_EARM);
    /* the trusted arm and the worker's context go on */
    kg_err_clear(&err);
    poison(be, &base, &err);
    CHECK_MSG(kg_backend_run(be, base.k, &err) == KG_OK, "%s", err.msg);
    CHECK(output_right(be, &base, want, &err));
    release(be, &cand);

    /* a fresh load after the fault starts a fresh host */
    rc = setup(be, plan, 1, &cand, A, B, &err);
    CHECK_MSG(rc == KG_OK, "%s", err.msg);
    poison(be, &cand, &err);
    CHECK(kg_backend_run(be, cand.k, &err) == KG_OK);
    CHECK(output_right(be, &cand, want, &err));

    /* a kernel that copies another arm's output from its process's memory:
     * in the worker (trusted) it finds base's; in a host there is none */
    arm_bufs thief, thief_t;
    CHECK_MSG(setup(be, plan, 2, &thief, A, B, &err) == KG_OK, "%s", err.msg);
    CHECK_MSG(setup(be, plan, 3, &thief_t, A, B, &err) == KG_OK, "%s", err.msg);
    poison(be, &thief, &err);
    poison(be, &thief_t, &err);
    CHECK(kg_backend_run(be, thief_t.k, &err) == KG_OK);
    CHECK_MSG(output_right(be, &thief_t, want, &err), "the stand-in's stealing kernel works in one address space");
    CHECK(kg_backend_run(be, thief.k, &err) == KG_OK);
    CHECK_MSG(!output_right(be, &thief, want, &err), "a hosted arm cannot reach another arm's output");
    release(be, &thief);
    release(be, &thief_t);
    release(be, &cand);
    release(be, &base);

    kg_backend_close(be);
    int st = 0;
    CHECK_MSG(waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD, "no arm host left after close");
    kg_plan_free(plan);
    unlink(fault);
    unlink(refuse);
    unlink(knobs);
    unlink(so);
    rmdir(dir);
    return kg_test_finish("test_cuda_iso");
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libnvrtc\nleak:libstdc++\nleak:libcuda_fake\n";
}
