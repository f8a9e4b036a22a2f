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
 * This file is the driver-API core; NVRTC compilation (cuda_compile.c),
 * the cuBLASLt arm (cuda_blas.c), NVML (cuda_nvml.c) and the launch
 * specs (launch.c) are apart, sharing cuda_internal.h.  It does not
 * generate inputs, check outputs or decide anything. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include "kgate/op.h"
#include "backend/cuda_internal.h"
#include "util.h"

/* A host bracket longer than this factor times the event time, plus a
 * fixed allowance for launch and synchronisation latency, counts as work
 * that escaped the timed events. */
#define KG_CUDA_ESCAPE_FACTOR 2.0
#define KG_CUDA_ESCAPE_SLACK_NS 200000.0


int kg_cuda_check(cuda_ctx *c, CUresult rc, const char *call, const char *file, int line,
                  kg_err *err)
{
    if (rc == KG_CUDA_SUCCESS) return KG_OK;
    c->last_rc = rc;
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

void kg_cuda_uuid_text(const CUuuid *u, char *buf, size_t cap)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, cap,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

void kg_cuda_sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    out[0] = '\0';
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32) return;
    for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* ------------------------------------------------------------ isolation
 *
 * Every untrusted arm (not `trusted = yes`, not a builtin library arm)
 * gets a context of its own on the device, created at load: its module,
 * stream, events, graphs and its copies of the worker's buffers live
 * there, and a kernel of one context cannot address memory of another
 * (an access faults with an illegal address in the faulting context
 * only).  The worker allocates and fills buffers through calls that name
 * no arm, in the primary context; bind() gives the arm a private copy of
 * each buffer it is bound to (cuda_shadow), and the copies are kept
 * coherent outside timing: run() and time() copy primary -> private when
 * the worker wrote the buffer since, a download copies private ->
 * primary when the arm ran since, an upload supersedes the private copy.
 * The worker's references and expected outputs stay in its own pageable
 * host memory: nothing here maps host memory into any context.
 *
 * Every call for an isolated arm pushes its context and pops it again
 * (the primary context stays current otherwise).  A sticky fault in an
 * arm's context (illegal address, illegal instruction, trap, ...) is that
 * arm's: the context is destroyed, the arm's copies are lost (a download
 * of a buffer whose newest bytes were there fails), and the call returns
 * KG_EARM; the primary context and the other arms' contexts go on. */

/* Off unless the settings ask (KGATE_CUDA_ARM_CONTEXTS=1): measured on the
 * H200 (driver 580, docs/measurements/h200-2026-12-01-cudaiso/), a kernel
 * in context A read context B's buffer with no fault, so contexts of one
 * process share the device address space and do not isolate, and an honest
 * control arm failed its checks in one of three floor campaigns with them.
 * Isolation of CUDA arms needs a process per arm (docs/security.md). */
static int arm_isolated(const kg_settings *s, const kg_arm *arm)
{
    return s != NULL && s->cuda_arm_contexts && !arm->trusted && arm->builtin[0] == '\0';
}

static int sticky(CUresult r)
{
    switch (r) {
    case KG_CUDA_ERROR_ILLEGAL_ADDRESS: case KG_CUDA_ERROR_LAUNCH_TIMEOUT:
    case KG_CUDA_ERROR_ASSERT: case KG_CUDA_ERROR_HARDWARE_STACK_ERROR:
    case KG_CUDA_ERROR_ILLEGAL_INSTRUCTION: case KG_CUDA_ERROR_MISALIGNED_ADDRESS:
    case KG_CUDA_ERROR_INVALID_ADDRESS_SPACE: case KG_CUDA_ERROR_INVALID_PC:
    case KG_CUDA_ERROR_LAUNCH_FAILED: case KG_CUDA_ERROR_UNKNOWN:
        return 1;
    default:
        return 0;
    }
}

static CUstream stream_of(const cuda_ctx *c, const kg_kernel *k)
{
    return k->isolated ? k->astream : c->stream;
}

/* Makes k's context current (a push; the primary stays below it). */
static int arm_enter(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    if (!k->isolated) return KG_OK;
    if (k->dead)
        return kg_errorf(err, KG_EARM, "arm '%s' on case '%s': %s", k->arm, k->kase, k->dead_why);
    return CU(c, cuCtxPushCurrent, (k->actx), err);
}

static void arm_leave(cuda_ctx *c, kg_kernel *k)
{
    if (!k->isolated || k->dead) return;
    CUcontext popped = NULL;
    c->drv.cuCtxPopCurrent(&popped);
}

static void release_graph(cuda_ctx *c, kg_kernel *k)
{
    if (k->exec != NULL) c->drv.cuGraphExecDestroy(k->exec);
    if (k->graph != NULL) c->drv.cuGraphDestroy(k->graph);
    k->exec = NULL;
    k->graph = NULL;
}

/* A new context on the backend's device, made current (pushed). */
static int arm_context_create(cuda_ctx *c, CUcontext *out, kg_err *err)
{
    *out = NULL;
    if (c->drv.cuCtxCreate != NULL) return CU(c, cuCtxCreate, (out, 0, c->dev), err);
    if (c->drv.cuCtxCreate4 != NULL) {
        kg_cu_ctx_create_params p;
        memset(&p, 0, sizeof p);
        return CU(c, cuCtxCreate4, (out, &p, 0, c->dev), err);
    }
    return kg_errorf(err, KG_EUNSUPPORTED, "the CUDA driver %s has neither cuCtxCreate_v2 nor "
                     "cuCtxCreate_v4: untrusted arms cannot get a context of their own",
                     c->drv.path);
}

/* Destroys an isolated arm's context and everything in it (not current). */
static void arm_context_destroy(cuda_ctx *c, kg_kernel *k)
{
    if (k->actx == NULL) return;
    if (c->drv.cuCtxPushCurrent(k->actx) == KG_CUDA_SUCCESS) {
        release_graph(c, k);
        if (k->mod != NULL) c->drv.cuModuleUnload(k->mod);
        if (k->aev_start != NULL) c->drv.cuEventDestroy(k->aev_start);
        if (k->aev_end != NULL) c->drv.cuEventDestroy(k->aev_end);
        if (k->astream != NULL) c->drv.cuStreamDestroy(k->astream);
        CUcontext popped = NULL;
        c->drv.cuCtxPopCurrent(&popped);
    }
    k->exec = NULL;
    k->graph = NULL;
    k->mod = NULL;
    k->aev_start = k->aev_end = NULL;
    k->astream = NULL;
    /* frees the arm's copies too */
    c->drv.cuCtxDestroy(k->actx);
    k->actx = NULL;
}

/* Called, with k's context current, after a failed call for k: a sticky
 * error in an isolated arm's context is the arm's fault.  Pops and
 * destroys the context, marks the arm dead and its unsynchronised copies
 * lost, and turns the error into KG_EARM.  Otherwise just pops. */
static int arm_failed(cuda_ctx *c, kg_kernel *k, int rc, const char *what, kg_err *err)
{
    if (rc == KG_OK || !k->isolated || k->dead) {
        arm_leave(c, k);
        return rc;
    }
    if (rc != KG_EBACKEND || !sticky(c->last_rc)) {
        arm_leave(c, k);
        return rc;
    }
    char text[256];
    kg_cuda_result_text(&c->drv, c->last_rc, text, sizeof text);
    snprintf(k->dead_why, sizeof k->dead_why, "the arm's kernel faulted in its own context "
             "during %s (%.200s); that context was destroyed, the other arms' are unaffected",
             what, text);
    CUcontext popped = NULL;
    c->drv.cuCtxPopCurrent(&popped);
    arm_context_destroy(c, k);
    for (int i = 0; i < k->nsh; i++) {
        if (k->sh[i].newest != KG_SH_PRIM) k->sh[i].newest = KG_SH_LOST;
        k->sh[i].priv = 0;
    }
    k->dead = 1;
    if (err != NULL) {
        err->code = KG_EARM;
        snprintf(err->msg, sizeof err->msg, "arm '%s' on case '%s': %s", k->arm, k->kase,
                 k->dead_why);
    }
    return KG_EARM;
}

/* Copies one shadow between the contexts on the arm's stream and waits
 * (k's context current). */
static int shadow_copy(cuda_ctx *c, kg_kernel *k, cuda_shadow *sh, int to_priv, kg_err *err)
{
    int rc = to_priv
                 ? CU(c, cuMemcpyPeerAsync, (sh->priv, k->actx, sh->prim, c->ctx, sh->bytes, k->astream), err)
                 : CU(c, cuMemcpyPeerAsync, (sh->prim, c->ctx, sh->priv, k->actx, sh->bytes, k->astream), err);
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (k->astream), err);
    if (rc == KG_OK) sh->newest = KG_SH_BOTH;
    return rc;
}

/* Before the arm runs (k's context current, outside timing): brings every
 * bound copy up to date, then marks them written, since the kernel may
 * write anything it can address. */
static int shadows_before_run(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    int rc = KG_OK;
    for (int i = 0; i < k->nsh && rc == KG_OK; i++)
        if (k->sh[i].bound && k->sh[i].newest == KG_SH_PRIM) rc = shadow_copy(c, k, &k->sh[i], 1, err);
    if (rc != KG_OK) return rc;
    for (int i = 0; i < k->nsh; i++)
        if (k->sh[i].bound) k->sh[i].newest = KG_SH_PRIV;
    return KG_OK;
}

/* The worker touches primary buffer p: before a download (reading), the
 * arms' newer copies are brought back; before an upload (writing) of the
 * whole buffer, the copies are superseded (a partial upload brings them
 * back first); a free drops them. */
enum { KG_TOUCH_READ, KG_TOUCH_WRITE, KG_TOUCH_WRITE_PART, KG_TOUCH_FREE };
static int primary_touch(cuda_ctx *c, CUdeviceptr p, int how, kg_err *err)
{
    int rc = KG_OK;
    for (int j = 0; j < c->niso; j++) {
        kg_kernel *k = c->iso[j];
        for (int i = 0; i < k->nsh; i++) {
            cuda_shadow *sh = &k->sh[i];
            if (sh->prim != p) continue;
            if (how == KG_TOUCH_FREE) {
                if (sh->priv != 0 && !k->dead && c->drv.cuCtxPushCurrent(k->actx) == KG_CUDA_SUCCESS) {
                    CUcontext popped = NULL;
                    c->drv.cuMemFree(sh->priv);
                    c->drv.cuCtxPopCurrent(&popped);
                }
                k->sh[i] = k->sh[--k->nsh];
                i--;
                continue;
            }
            if (sh->newest == KG_SH_LOST && how == KG_TOUCH_READ) {
                if (rc == KG_OK)
                    rc = kg_errorf(err, KG_EARM, "arm '%s' on case '%s': %s; its last output is "
                                   "lost", k->arm, k->kase, k->dead_why);
                continue;
            }
            if (sh->newest == KG_SH_PRIV && how != KG_TOUCH_WRITE) {
                int r = arm_enter(c, k, err);
                if (r == KG_OK) r = arm_failed(c, k, shadow_copy(c, k, sh, 0, err), "a copy back", err);
                if (r != KG_OK) {
                    if (rc == KG_OK) rc = r;
                    continue;
                }
            }
            if (how != KG_TOUCH_READ) sh->newest = KG_SH_PRIM;
        }
    }
    return rc;
}

/* k's copy of primary buffer b (k's context current), made at the first
 * bind to it. */
static int shadow_of(cuda_ctx *c, kg_kernel *k, const kg_dbuf *b, CUdeviceptr *out, kg_err *err)
{
    *out = 0;
    if (b->ptr == NULL) return KG_OK;
    for (int i = 0; i < k->nsh; i++)
        if (k->sh[i].prim == dptr(b->ptr) && k->sh[i].bytes == b->bytes) {
            k->sh[i].bound = 1;
            *out = k->sh[i].priv;
            return KG_OK;
        }
    if (k->nsh == k->sh_cap) {
        int cap = k->sh_cap ? 2 * k->sh_cap : 8;
        cuda_shadow *n = realloc(k->sh, (size_t)cap * sizeof *n);
        if (n == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
        k->sh = n;
        k->sh_cap = cap;
    }
    cuda_shadow *sh = &k->sh[k->nsh];
    memset(sh, 0, sizeof *sh);
    int rc = CU(c, cuMemAlloc, (&sh->priv, b->bytes), err);
    if (rc != KG_OK) return rc;
    sh->prim = dptr(b->ptr);
    sh->bytes = b->bytes;
    sh->newest = KG_SH_PRIM;
    sh->bound = 1;
    k->nsh++;
    *out = sh->priv;
    return KG_OK;
}

static int iso_register(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    if (c->niso == c->iso_cap) {
        int cap = c->iso_cap ? 2 * c->iso_cap : 8;
        kg_kernel **n = realloc(c->iso, (size_t)cap * sizeof *n);
        if (n == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
        c->iso = n;
        c->iso_cap = cap;
    }
    c->iso[c->niso++] = k;
    return KG_OK;
}

static void iso_unregister(cuda_ctx *c, kg_kernel *k)
{
    for (int j = 0; j < c->niso; j++)
        if (c->iso[j] == k) {
            c->iso[j] = c->iso[--c->niso];
            return;
        }
}

/* ----------------------------------------------------------- open/close */

static void cuda_close(kg_backend *be)
{
    cuda_ctx *c = be->ctx;
    if (c == NULL) return;
    if (c->ctx != NULL && c->drv.cuCtxSetCurrent != NULL) c->drv.cuCtxSetCurrent(c->ctx);
    /* arms still loaded: their contexts go with them */
    while (c->niso > 0) {
        kg_kernel *k = c->iso[c->niso - 1];
        arm_context_destroy(c, k);
        k->dead = 1;
        k->nsh = 0;
        c->niso--;
    }
    free(c->iso);
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
    c->settings = be->settings;
    c->ordinal = plan != NULL ? plan->campaign.device : 0;
    int rc = kg_cuda_driver_load(&c->drv, c->settings, err);
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
    if ((rc = CU(c, cuDeviceGetCount, (&count), err)) != KG_OK) goto done;
    if (c->ordinal < 0 || c->ordinal >= count) {
        rc = kg_errorf(err, count == 0 ? KG_EUNSUPPORTED : KG_EINPUT,
                       "device = %d, but %d CUDA device(s) are visible (CUDA_VISIBLE_DEVICES=%s)",
                       c->ordinal, count,
                       c->settings->cuda_visible != NULL ? c->settings->cuda_visible : "unset");
        goto done;
    }
    if ((rc = CU(c, cuDeviceGet, (&c->dev, c->ordinal), err)) != KG_OK) goto done;
    if ((rc = CU(c, cuDeviceGetName, (c->name, (int)sizeof c->name, c->dev), err)) != KG_OK) goto done;
    struct { int attr; int *out; } attrs[] = {
        { KG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &c->cc_major },
        { KG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &c->cc_minor },
        { KG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &c->sm_count },
        { KG_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &c->l2_bytes },
        { KG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &c->smem_optin_bytes },
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if ((rc = CU(c, cuDeviceGetAttribute, (attrs[i].out, attrs[i].attr, c->dev), err)) != KG_OK)
            goto done;
    CUuuid uuid;
    if ((rc = CU(c, cuDeviceGetUuid, (&uuid, c->dev), err)) != KG_OK) goto done;
    kg_cuda_uuid_text(&uuid, c->uuid, sizeof c->uuid);
    if ((rc = CU(c, cuDeviceTotalMem, (&c->mem_bytes, c->dev), err)) != KG_OK) goto done;
    if ((rc = CU(c, cuDriverGetVersion, (&c->driver_version), err)) != KG_OK) goto done;
    if ((rc = CU(c, cuDevicePrimaryCtxRetain, (&c->ctx, c->dev), err)) != KG_OK) goto done;
    c->ctx_retained = 1;
    if ((rc = CU(c, cuCtxSetCurrent, (c->ctx), err)) != KG_OK) goto done;
    if ((rc = CU(c, cuStreamCreate, (&c->stream, KG_CU_STREAM_NON_BLOCKING), err)) != KG_OK) goto done;
    if ((rc = CU(c, cuEventCreate, (&c->ev_start, KG_CU_EVENT_DEFAULT), err)) != KG_OK) goto done;
    if ((rc = CU(c, cuEventCreate, (&c->ev_end, KG_CU_EVENT_DEFAULT), err)) != KG_OK) goto done;
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
    int rc = CU(c, cuMemAlloc, (&p, bytes), err);
    if (rc != KG_OK) return rc;
    out->ptr = (void *)(uintptr_t)p;
    out->bytes = bytes;
    return KG_OK;
}

static void cuda_free(kg_backend *be, kg_dbuf *buf)
{
    cuda_ctx *c = be->ctx;
    if (c == NULL || buf == NULL || buf->ptr == NULL) return;
    primary_touch(c, dptr(buf->ptr), KG_TOUCH_FREE, NULL);
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
    int rc = primary_touch(c, dptr(dst->ptr), off == 0 && n >= dst->bytes ? KG_TOUCH_WRITE
                                                                           : KG_TOUCH_WRITE_PART, err);
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (c->stream), err);
    if (rc == KG_OK) rc = CU(c, cuMemcpyHtoD, (dptr(dst->ptr) + off, src, n), err);
    /* From pageable memory cuMemcpyHtoD may return once the bytes are
     * staged, before the DMA lands; kgate's stream is non-blocking, so the
     * next launch is not ordered after it.  Wait for the whole device. */
    if (rc == KG_OK) rc = CU(c, cuCtxSynchronize, (), err);
    return rc;
}

static int cuda_download(kg_backend *be, void *dst, const kg_dbuf *src, size_t off, size_t n,
                         kg_err *err)
{
    cuda_ctx *c = be->ctx;
    if (n == 0) return KG_OK;
    int rc = primary_touch(c, dptr(src->ptr), KG_TOUCH_READ, err);
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (c->stream), err);
    if (rc == KG_OK) rc = CU(c, cuMemcpyDtoH, (dst, dptr(src->ptr) + off, n), err);
    return rc;
}

/* ------------------------------------------------------------- kernels */

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
        return kg_cuda_blas_ready(c, err);
    }
    int nlaunch = 0;
    int rc0 = kg_launch_chain_length(arm, &nlaunch, err);
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
        int rc = kg_cuda_compile(&c->nvrtc, c->settings, c->cc_major, c->cc_minor, plan, a, dt, &image,
                                 &bytes, err);
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

static void cuda_unload(kg_backend *be, kg_kernel *k)
{
    cuda_ctx *c = be->ctx;
    if (k == NULL) return;
    if (c != NULL && k->isolated) {
        /* what the arm wrote last goes back to the worker's buffers first */
        if (!k->dead) {
            kg_err e = { 0 };
            for (int i = 0; i < k->nsh; i++)
                if (k->sh[i].newest == KG_SH_PRIV &&
                    primary_touch(c, k->sh[i].prim, KG_TOUCH_READ, &e) != KG_OK)
                    break;
        }
        iso_unregister(c, k);
        arm_context_destroy(c, k);
    } else if (c != NULL) {
        release_graph(c, k);
        if (k->mod != NULL) c->drv.cuModuleUnload(k->mod);
        if (k->is_blas) kg_cuda_blas_unload(c, k);
    }
    free(k->sh);
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
    int max_threads = 0, static_shared = 0;
    if ((rc = CU(c, cuFuncGetAttribute, (&max_threads, KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                         l->fn), err)) != KG_OK)
        return rc;
    if ((rc = CU(c, cuFuncGetAttribute, (&static_shared, KG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                         l->fn), err)) != KG_OK)
        return rc;
    l->max_threads = max_threads;
    l->static_shared = static_shared;
    const char *key = li == 0 ? "" : (li == 1 ? "2" : "3");
    unsigned threads = l->geom.block[0] * l->geom.block[1] * l->geom.block[2];
    if (threads > (unsigned)max_threads)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': block%s has %u threads, "
                         "entry '%s' allows at most %d (its __launch_bounds__ or registers per "
                         "thread)", arm->name, cs->name, key, threads, l->entry, max_threads);
    /* dynamic plus static shared memory must fit the opt-in limit; above
     * 48 KiB in all the entry must opt in */
    long dyn_max = (long)c->smem_optin_bytes - static_shared;
    if ((long)l->geom.shared_bytes > dyn_max)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': shared%s asks for %u bytes "
                         "of dynamic shared memory; entry '%s' has %d bytes of static shared "
                         "memory and the device allows %d per block, so at most %ld",
                         arm->name, cs->name, key, l->geom.shared_bytes, l->entry, static_shared,
                         c->smem_optin_bytes, dyn_max > 0 ? dyn_max : 0);
    if ((long)l->geom.shared_bytes + static_shared > 48L * 1024L) {
        CUresult r2 = c->drv.cuFuncSetAttribute(l->fn, KG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                (int)l->geom.shared_bytes);
        if (r2 != KG_CUDA_SUCCESS) {
            char text[256];
            kg_cuda_result_text(&c->drv, r2, text, sizeof text);
            return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': the device refused "
                             "%u bytes of dynamic shared memory for entry '%s' (%s); it allows %d "
                             "per block, %d of them static in this entry", arm->name, cs->name,
                             l->geom.shared_bytes, l->entry, text, c->smem_optin_bytes,
                             static_shared);
        }
    }
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
    int rc = KG_OK, pushed = 0;
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
        rc = kg_cuda_blas_load(c, arm, cs, k, err);
        goto done;
    }
    if ((rc = kg_launch_chain_length(arm, &k->nlaunch, err)) != KG_OK) goto done;
    for (int li = 0; li < k->nlaunch; li++) {
        cuda_launch *l = &k->launch[li];
        const char *entry = li == 0 ? arm->entry : arm->extra[li - 1].entry;
        const char *args = li == 0 ? arm->args : arm->extra[li - 1].args;
        snprintf(l->entry, sizeof l->entry, "%s", entry[0] != '\0' ? entry : "kernel");
        if ((rc = kg_launch_geometry_at(arm, li + 1, cs, &l->geom, err)) != KG_OK) goto done;
        rc = kg_launch_args_parse(arm->name, args, op->in_names, op->nin, op->out_names, op->nout,
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
    rc = kg_cuda_compile(&c->nvrtc, c->settings, c->cc_major, c->cc_minor, plan, a, cs->dtype,
                         &image, &image_bytes, err);
    if (rc != KG_OK) goto done;
    k->image_bytes = image_bytes;
    kg_cuda_sha256_hex(image, image_bytes, k->image_sha256);
    if (arm_isolated(c->settings, arm)) {
        /* cuCtxCreate makes the new context current (pushed on the primary) */
        if ((rc = iso_register(c, k, err)) != KG_OK) goto done;
        k->isolated = 1;
        if ((rc = arm_context_create(c, &k->actx, err)) != KG_OK) {
            add_context(err, k, "creating the arm's context");
            goto done;
        }
        pushed = 1;
        if ((rc = CU(c, cuStreamCreate, (&k->astream, KG_CU_STREAM_NON_BLOCKING), err)) != KG_OK ||
            (rc = CU(c, cuEventCreate, (&k->aev_start, KG_CU_EVENT_DEFAULT), err)) != KG_OK ||
            (rc = CU(c, cuEventCreate, (&k->aev_end, KG_CU_EVENT_DEFAULT), err)) != KG_OK) {
            add_context(err, k, "the arm's stream and events");
            goto done;
        }
    }
    if ((rc = CU(c, cuModuleLoadData, (&k->mod, image), err)) != KG_OK) {
        add_context(err, k, "loading the cubin");
        goto done;
    }
    for (int li = 0; li < k->nlaunch && rc == KG_OK; li++) rc = load_entry(c, arm, cs, k, li, err);
done:
    if (pushed) {
        CUcontext popped = NULL;
        c->drv.cuCtxPopCurrent(&popped);
    }
    free(image);
    if (rc == KG_OK) *out = k;
    else cuda_unload(be, k);
    return rc;
}

/* A launch the device refused (its configuration, not a fault: the
 * context is still usable) makes the case inadmissible for the arm, with
 * the limits that apply. */
static int launch_refused(cuda_ctx *c, const kg_kernel *k, int li, CUresult r, kg_err *err)
{
    const cuda_launch *l = &k->launch[li];
    const kg_launch_geom *g = &l->geom;
    char text[256];
    kg_cuda_result_text(&c->drv, r, text, sizeof text);
    return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': the device refused launch %d "
                     "('%s'): %s; the block has %u threads (the entry allows at most %d) and %u "
                     "bytes of dynamic shared memory (the device allows %d per block, %d of them "
                     "static in this entry)", k->arm, k->kase, li + 1, l->entry, text,
                     g->block[0] * g->block[1] * g->block[2], l->max_threads, g->shared_bytes,
                     c->smem_optin_bytes, l->static_shared);
}

/* One complete operation: every launch of the chain, in order, on the
 * arm's stream (stream order is what makes launch 2 see launch 1). */
static int launch_op(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    if (k->is_blas) return kg_cuda_blas_launch(c, k, err);
    CUstream st = stream_of(c, k);
    for (int li = 0; li < k->nlaunch; li++) {
        cuda_launch *l = &k->launch[li];
        const kg_launch_geom *g = &l->geom;
        CUresult r = c->drv.cuLaunchKernel(l->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0],
                                           g->block[1], g->block[2], g->shared_bytes, st,
                                           l->params, NULL);
        if (r == KG_CUDA_SUCCESS) continue;
        if (r == KG_CUDA_ERROR_INVALID_VALUE || r == KG_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
            return launch_refused(c, k, li, r, err);
        int rc = kg_cuda_check(c, r, "cuLaunchKernel", __FILE__, __LINE__, err);
        if (k->nlaunch > 1 && err != NULL) {
            char old[KG_ERR_MSG_MAX];
            snprintf(old, sizeof old, "%s", err->msg);
            snprintf(err->msg, sizeof err->msg, "launch %d ('%s'): %.900s", li + 1, l->entry, old);
        }
        return rc;
    }
    return KG_OK;
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
    if ((rc = arm_enter(c, k, err)) != KG_OK) return rc;
    release_graph(c, k);
    kg_binding tb = *b;
    if (k->isolated) {
        /* the arm sees only its own copies, in its own context */
        for (int i = 0; i < k->nsh; i++) k->sh[i].bound = 0;
        CUdeviceptr p = 0;
        for (int i = 0; i < tb.nin && rc == KG_OK; i++)
            if ((rc = shadow_of(c, k, &b->in[i], &p, err)) == KG_OK) tb.in[i].ptr = (void *)(uintptr_t)p;
        for (int o = 0; o < tb.nout && rc == KG_OK; o++)
            if ((rc = shadow_of(c, k, &b->out[o], &p, err)) == KG_OK) tb.out[o].ptr = (void *)(uintptr_t)p;
        if (rc == KG_OK && (rc = shadow_of(c, k, &b->ws, &p, err)) == KG_OK)
            tb.ws.ptr = (void *)(uintptr_t)p;
        if (rc != KG_OK) goto done;
    }
    if ((rc = bind_args(k, &tb, err)) != KG_OK) goto done;
    if (b->pack < 1) {
        rc = kg_errorf(err, KG_EINTERNAL, "arm '%s': pack %d", k->arm, b->pack);
        goto done;
    }
    k->pack = b->pack;
    /* a capture must always be ended, even after a failed launch, or the
     * stream stays in capture mode */
    CUstream st = stream_of(c, k);
    if ((rc = CU(c, cuStreamBeginCapture, (st, KG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), err)) != KG_OK)
        goto done;
    for (int i = 0; i < k->pack && rc == KG_OK; i++) rc = launch_op(c, k, err);
    int rc_end = CU(c, cuStreamEndCapture, (st, &k->graph), err);
    if (rc == KG_OK) rc = rc_end;
    if (rc != KG_OK) goto done;
    if ((rc = CU(c, cuGraphInstantiate, (&k->exec, k->graph, 0), err)) != KG_OK) goto done;
    k->bound = 1;
done:
    if (rc != KG_OK) {
        release_graph(c, k);
        if (rc != KG_EINADMISSIBLE) add_context(err, k, "capturing the timed graph");
    }
    return arm_failed(c, k, rc, "capturing the timed graph", err);
}

static int cuda_run(kg_backend *be, kg_kernel *k, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    if (!k->bound) return kg_errorf(err, KG_EINTERNAL, "arm '%s': run before bind", k->arm);
    int rc = arm_enter(c, k, err);
    if (rc != KG_OK) return rc;
    if (k->isolated) rc = shadows_before_run(c, k, err);
    if (rc == KG_OK) rc = launch_op(c, k, err);
    /* an isolated arm's context holds nothing but the arm's own work */
    if (rc == KG_OK)
        rc = k->isolated ? CU(c, cuCtxSynchronize, (), err)
                         : CU(c, cuStreamSynchronize, (c->stream), err);
    if (rc != KG_OK && rc != KG_EINADMISSIBLE) add_context(err, k, "run");
    return arm_failed(c, k, rc, "a checked run", err);
}

static int cuda_time(kg_backend *be, kg_kernel *k, const kg_sample_ctx *ctx, double *ns,
                     kg_err *err)
{
    cuda_ctx *c = be->ctx;
    (void)ctx;
    *ns = NAN;
    if (!k->bound) return kg_errorf(err, KG_EINTERNAL, "arm '%s': time before bind", k->arm);
    int rc = arm_enter(c, k, err);
    if (rc != KG_OK) return rc;
    /* copies, when the worker wrote a buffer since, are outside the bracket */
    if (k->isolated && (rc = shadows_before_run(c, k, err)) != KG_OK)
        return arm_failed(c, k, rc, "a copy before a timed sample", err);
    CUstream st = stream_of(c, k);
    CUevent e0 = k->isolated ? k->aev_start : c->ev_start;
    CUevent e1 = k->isolated ? k->aev_end : c->ev_end;
    double t0 = now_ns();
    rc = CU(c, cuEventRecord, (e0, st), err);
    if (rc == KG_OK) rc = CU(c, cuGraphLaunch, (k->exec, st), err);
    if (rc == KG_OK) rc = CU(c, cuEventRecord, (e1, st), err);
    /* everything the graph started must finish here: the whole context,
     * which for an isolated arm is everything its code can reach */
    if (rc == KG_OK) rc = CU(c, cuCtxSynchronize, (), err);
    double t1 = now_ns();
    float ms = 0.0f;
    if (rc == KG_OK) rc = CU(c, cuEventElapsedTime, (&ms, e0, e1), err);
    if (rc != KG_OK) {
        add_context(err, k, "timed sample");
        return arm_failed(c, k, rc, "a timed sample", err);
    }
    arm_leave(c, k);
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
        if ((rc = CU(c, cuMemAlloc, (&c->flush_buf, bytes), err)) != KG_OK) return rc;
        c->flush_bytes = bytes;
    }
    /* a different byte each time, so no write can be elided */
    rc = CU(c, cuMemsetD8Async, (c->flush_buf, (unsigned char)(c->flush_count++ & 0xffu),
                                 c->flush_bytes, c->stream), err);
    if (rc == KG_OK && c->drv.cuCtxResetPersistingL2Cache != NULL)
        rc = CU(c, cuCtxResetPersistingL2Cache, (), err);
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (c->stream), err);
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
    int rc = arm_enter(c, k, err);
    if (rc != KG_OK) return rc;
    struct { int attr; int *out; } attrs[] = {
        { KG_CU_FUNC_ATTRIBUTE_NUM_REGS, &res->regs },
        { KG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &res->static_shared_bytes },
        { KG_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &res->local_bytes },
        { KG_CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &res->const_bytes },
        { KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &res->max_threads_per_block },
        { KG_CU_FUNC_ATTRIBUTE_PTX_VERSION, &res->ptx_version },
        { KG_CU_FUNC_ATTRIBUTE_BINARY_VERSION, &res->binary_version },
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0] && rc == KG_OK; i++)
        rc = CU(c, cuFuncGetAttribute, (attrs[i].out, attrs[i].attr, l->fn), err);
    arm_leave(c, k);
    if (rc != KG_OK) return rc;
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

/* The device lock of a GPU: its UUID, found in the description ("gpu"
 * when it names none). */
static void cuda_lock_key(const char *device, char *buf, size_t cap)
{
    const char *u = device != NULL ? strstr(device, "GPU-") : NULL;
    if (u == NULL) { snprintf(buf, cap, "gpu"); return; }
    size_t n = 0;
    while (u[n] != '\0' && n + 1 < cap && (u[n] == '-' || (u[n] >= '0' && u[n] <= '9') ||
                                           (u[n] >= 'a' && u[n] <= 'f') || (u[n] >= 'A' && u[n] <= 'Z')))
        n++;
    memcpy(buf, u, n);
    buf[n] = '\0';
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
    .telemetry = kg_cuda_telemetry,
    .resources = cuda_resources,
    .resources_launch = kg_cuda_launch_resources,
    .caps = KG_CAP_EXECUTES | KG_CAP_QUIET_HOST,
    .lock_key = cuda_lock_key,
    .procs_open = kg_cuda_procs_open,
    .procs_list = kg_cuda_procs_list,
    .procs_close = kg_cuda_procs_close,
    .probe = kg_cuda_driver_present,
    .peaks = kg_cuda_peaks,
};
