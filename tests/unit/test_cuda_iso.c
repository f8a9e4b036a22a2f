/* test_cuda_iso.c: the cuda backend's per-arm isolation, on a machine
 * without a GPU, against the fake driver of tests/unit/fake_libcuda.c
 * (build/tests/libcuda_fake.so, loaded as KGATE_LIBCUDA would be).  Needs
 * NVRTC (the arms are compiled for real); skipped without it.
 *
 * Checks: an untrusted arm's launches run outside the primary context and
 * touch no memory but their own context's; its outputs reach the worker's
 * buffers (after run, after timed samples, after rebinding) and an upload
 * supersedes them; a trusted arm stays in the primary context; a fault in
 * an arm's context is KG_EARM for that arm only, its lost output cannot be
 * read back, and the other arm goes on; a launch the device refuses is
 * KG_EINADMISSIBLE with the limits; unload leaves no context behind. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "kgate/backend.h"
#include "kgate/oracle.h"
#include "backend/cuda_api.h"

static const char plan_text[] =
    "[campaign]\nname = iso\nbackend = cuda\nquiet = 0\n"
    "[case c]\nop = gemm_bt\ndtype = f32\nM = 5\nN = 7\nK = 3\n"
    "[arm base]\nop = gemm_bt\nrole = baseline\ntrusted = yes\n"
    "source = kernels/cuda/gemm_bt_naive.cu\nentry = gemm_bt_naive\n"
    "grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n"
    "[arm cand]\nop = gemm_bt\nrole = candidate\n"
    "source = kernels/cuda/gemm_bt_naive.cu\nentry = gemm_bt_naive\n"
    "grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n";

enum { M = 5, N = 7, K = 3 };

typedef struct arm_bufs {
    kg_dbuf a, b, c;
    kg_binding bind;
    kg_kernel *k;
} arm_bufs;

static void (*fault_next)(void);
static void (*refuse_threads)(unsigned);
static void (*stats)(int *, int *, int *);

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

int main(void)
{
    char so[PATH_MAX + 32], exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 1;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(so, sizeof so, "%s/libcuda_fake.so", exe);
    kg_settings s = *kg_settings_defaults();
    s.lib_cuda = so;
    s.cuda_arm_contexts = 1;   /* the experimental path, against the stand-in driver */
    s.include_dir = "include";
    kg_cuda_nvrtc nv;
    kg_err err = { 0 };
    if (kg_cuda_nvrtc_load(&nv, &s, &err) != KG_OK) {
        fprintf(stderr, "test_cuda_iso: NVRTC absent, skipped (%s)\n", err.msg);
        return kg_test_finish("test_cuda_iso");
    }
    kg_cuda_nvrtc_unload(&nv);
    void *fake = dlopen(so, RTLD_NOW | RTLD_NODELETE);
    CHECK_MSG(fake != NULL, "%s", dlerror());
    if (fake == NULL) return kg_test_finish("test_cuda_iso");
    *(void **)&fault_next = dlsym(fake, "fake_cuda_fault_next");
    *(void **)&refuse_threads = dlsym(fake, "fake_cuda_refuse_threads");
    *(void **)&stats = dlsym(fake, "fake_cuda_stats");

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
    int foreign = 0, outside = 0, live = 0;
    stats(&foreign, &outside, &live);
    CHECK_MSG(live == 1, "one context of its own for the untrusted arm, none for the trusted: %d", live);

    /* checked runs: each arm's output reaches the worker's buffer */
    poison(be, &base, &err);
    poison(be, &cand, &err);
    CHECK(kg_backend_run(be, base.k, &err) == KG_OK);
    stats(&foreign, &outside, &live);
    CHECK_MSG(outside == 0, "the trusted arm runs in the primary context (%d launches outside)", outside);
    CHECK_MSG(kg_backend_run(be, cand.k, &err) == KG_OK, "%s", err.msg);
    stats(&foreign, &outside, &live);
    CHECK_MSG(outside == 1 && foreign == 0, "the untrusted arm ran in its context on its own memory "
              "(%d launches outside the primary, %d foreign accesses)", outside, foreign);
    CHECK(output_right(be, &base, want, &err));
    CHECK_MSG(output_right(be, &cand, want, &err), "%s", err.msg);

    /* an upload supersedes the arm's copy; a timed sample brings it back */
    poison(be, &cand, &err);
    CHECK(!output_right(be, &cand, want, &err));
    double ns = 0.0;
    kg_sample_ctx sc;
    memset(&sc, 0, sizeof sc);
    CHECK_MSG(kg_backend_time(be, cand.k, &sc, &ns, &err) == KG_OK, "%s", err.msg);
    CHECK(ns > 0.0);
    CHECK_MSG(output_right(be, &cand, want, &err), "after a timed sample: %s", err.msg);
    stats(&foreign, &outside, &live);
    CHECK_MSG(foreign == 0 && outside == 3, "timed replays (pack 2) in the arm's context: %d, %d",
              outside, foreign);

    /* rebinding to a new input set: the arm gets a copy of it */
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
    /* the input itself is read back through the worker's buffer as well */
    float back[M * K];
    CHECK(kg_backend_download(be, back, &a2, 0, sizeof back, &err) == KG_OK);
    CHECK(memcmp(back, A2, sizeof back) == 0);
    cand.bind.in[0] = cand.a;
    CHECK(kg_backend_bind(be, cand.k, &cand.bind, &err) == KG_OK);
    kg_backend_free(be, &a2);

    /* a launch the device refuses: inadmissible, with the limits */
    refuse_threads(128);
    kg_err_clear(&err);
    rc = kg_backend_run(be, cand.k, &err);
    CHECK_MSG(rc == KG_EINADMISSIBLE, "rc %d: %s", rc, err.msg);
    CHECK_STR_CONTAINS(err.msg, "the device refused launch 1 ('gemm_bt_naive')");
    CHECK_STR_CONTAINS(err.msg, "the block has 256 threads (the entry allows at most 1024)");
    CHECK_STR_CONTAINS(err.msg, "the device allows 232448 per block");
    refuse_threads(1u << 30);
    kg_err_clear(&err);
    CHECK_MSG(kg_backend_run(be, cand.k, &err) == KG_OK, "the context survives a refusal: %s", err.msg);

    /* a fault in the arm's context: the arm's, not the campaign's */
    poison(be, &cand, &err);
    fault_next();
    kg_err_clear(&err);
    rc = kg_backend_time(be, cand.k, &sc, &ns, &err);
    CHECK_MSG(rc == KG_EARM, "rc %d: %s", rc, err.msg);
    CHECK_STR_CONTAINS(err.msg, "arm 'cand' on case 'c': the arm's kernel faulted in its own context");
    CHECK_STR_CONTAINS(err.msg, "CUDA_ERROR_ILLEGAL_ADDRESS");
    stats(&foreign, &outside, &live);
    CHECK_MSG(live == 0, "the faulted context is destroyed (%d live)", live);
    kg_err_clear(&err);
    {
        float got[M * N];
        rc = kg_backend_download(be, got, &cand.c, 0, sizeof got, &err);
        CHECK_MSG(rc == KG_EARM, "the lost output is not read back: rc %d", rc);
    }
    kg_err_clear(&err);
    CHECK(kg_backend_run(be, cand.k, &err) == KG_EARM);
    /* the trusted arm and the primary context go on */
    kg_err_clear(&err);
    poison(be, &base, &err);
    CHECK_MSG(kg_backend_run(be, base.k, &err) == KG_OK, "%s", err.msg);
    CHECK(output_right(be, &base, want, &err));
    release(be, &cand);
    release(be, &base);

    /* a fresh untrusted arm after the fault works, and unload destroys its context */
    rc = setup(be, plan, 1, &cand, A, B, &err);
    CHECK_MSG(rc == KG_OK, "%s", err.msg);
    poison(be, &cand, &err);
    CHECK(kg_backend_run(be, cand.k, &err) == KG_OK);
    CHECK(output_right(be, &cand, want, &err));
    release(be, &cand);
    stats(&foreign, &outside, &live);
    CHECK_MSG(live == 0 && foreign == 0, "no context left (%d), no foreign access (%d)", live, foreign);

    kg_backend_close(be);
    kg_plan_free(plan);
    return kg_test_finish("test_cuda_iso");
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libnvrtc\nleak:libstdc++\nleak:libcuda_fake\n";
}
