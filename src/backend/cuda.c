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
 * specs (launch.c) are apart, sharing cuda_shared.h.  It does not
 * generate inputs, check outputs or decide anything. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "kgate/op.h"
#include "backend/cuda_shared.h"
#include "backend/cuda_blas.h"
#include "backend/cuda_nvml.h"
#include "backend/cuda_tmap.h"
#include "backend/libarm.h"
#include "base/safefs.h"
#include "base/util.h"
#include "sandbox/sandbox.h"

/* A host bracket longer than this factor times the event time, plus a
 * fixed allowance for launch and synchronisation latency, counts as work
 * that escaped the timed events. */
#define KG_CUDA_ESCAPE_FACTOR 2.0
#define KG_CUDA_ESCAPE_SLACK_NS 200000.0

/* Puts "arm 'a' on case 'c': " in front of the recorded message, so that
 * a failing driver call names what was running. */
static void add_context(kg_err *err, const kg_kernel *k, const char *what)
{
    if (err == NULL || err->code == 0) return;
    char old[KG_ERR_MSG_MAX];
    snprintf(old, sizeof old, "%s", err->msg);
    snprintf(err->msg, sizeof err->msg, "arm '%s' on case '%s': %s: %.700s", k->arm,
             k->kase, what, old);
}

/* ------------------------------------------------------------ arm hosts
 *
 * Every untrusted arm (not `trusted = yes`, not a builtin library arm)
 * runs its kernels in a cuda arm host (cuda_host.h): a process of its own,
 * one per arm per worker, whose device address space holds that arm's
 * modules and the buffers bound to it, nothing else.  The worker keeps
 * allocating, filling, poisoning and reading every buffer in its own
 * primary context; a bound buffer reaches the host as an IPC handle of
 * its allocation.  Because an IPC mapping covers a whole block of the
 * driver's allocator, every allocation is a multiple of KG_CUDA_IPC_GRAIN
 * and checked to be an allocation of its own, so that no other buffer
 * (another arm's, or a check's) shares a mapped block.  The references
 * and expected outputs stay in the worker's pageable host memory: nothing
 * maps host memory into any context.  A fault of the arm's kernel ends
 * its host (KG_EARM for that arm); the worker's context and the other
 * hosts go on. */

#define KG_CUDA_IPC_GRAIN ((size_t)2 << 20)

static void release_graph(cuda_ctx *c, kg_kernel *k)
{
    if (k->exec != NULL) c->drv.cuGraphExecDestroy(k->exec);
    if (k->graph != NULL) c->drv.cuGraphDestroy(k->graph);
    k->exec = NULL;
    k->graph = NULL;
}

static int arm_hosted(const kg_arm *arm)
{
    return !arm->trusted && arm->builtin[0] == '\0';
}

/* The request limit: the plan's timeout, or ten times the slowest request
 * seen (at least 1 s) when that is shorter. */
static double host_limit(const cuda_host *h, const cuda_ctx *c, int pack)
{
    double lim = c->timeout_s;
    if (h->slowest_s > 0) {
        double adaptive = 10.0 * h->slowest_s * (pack > 0 ? pack : 1);
        if (adaptive < 1.0) adaptive = 1.0;
        if (adaptive < lim) lim = adaptive;
    }
    return lim;
}

static void host_close(cuda_host *h)
{
    if (!h->started) return;
    kg_hostlink_close(&h->link, KG_CH_QUIT, NULL);
    h->started = 0;
}

/* The host's request buffer, cleared, for a request of kind on slot. */
static kg_ch_msg *host_request(cuda_host *h, uint32_t kind, int slot)
{
    memset(h->req, 0, sizeof *h->req);
    h->req_kind = kind;
    h->req->slot = slot;
    return h->req;
}

/* A host its filter killed: the error names the system call. */
static int violated(cuda_host *h, int rc, kg_err *err)
{
    if (rc != KG_EARM || h->link.violation_nr < 0) return rc;
    char name[64];
    kg_sandbox_syscall_name(h->link.violation_nr, name, sizeof name);
    snprintf(h->link.dead_why, sizeof h->link.dead_why, "arm '%s': the CUDA arm host made a forbidden system call "
             "(%s) and was killed by SIGSYS (a sandbox violation)", h->link.arm, name);
    kg_err_clear(err);
    return kg_errorf(err, KG_EARM, "%s", h->link.dead_why);
}

/* Sends h->req (with descriptor fd, -1 none) and waits for its reply in
 * h->rep, whose text is NUL-terminated. */
static int host_ask(cuda_host *h, int fd, double limit_s, kg_err *err)
{
    kg_ch_msg *m = h->req, *rep = h->rep;
    int rc = kg_hostlink_quiet(&h->link, err);
    if (rc != KG_OK) return rc;
    uint32_t type = h->req_kind;
    double t0 = kg_mono_s();
    if (kg_hostlink_send(&h->link, type, m, sizeof *m, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0) != 0)
        return violated(h, kg_hostlink_fault(&h->link, -1, 0, limit_s, err), err);
    if ((rc = kg_hostlink_reply(&h->link, type, limit_s, rep, sizeof *rep, err)) != KG_OK) return violated(h, rc, err);
    rep->text[sizeof rep->text - 1] = '\0';
    double dt = kg_mono_s() - t0;
    if (type == KG_CH_RUN || type == KG_CH_TIME) {
        double per = dt / (type == KG_CH_TIME && m->pack > 0 ? m->pack : 1);
        if (per > h->slowest_s) h->slowest_s = per;
    }
    return KG_OK;
}

/* A FAULT reply: the arm's kernel faulted in its own process, which ends. */
static int host_faulted(cuda_host *h, const kg_kernel *k, const char *what, const char *text, kg_err *err)
{
    int status;
    if (!kg_hostlink_reap(&h->link, 2.0, &status)) kg_hostlink_kill(&h->link);
    kg_hostlink_reap(&h->link, 5.0, &status);
    if (h->link.pid > 0) h->link.pid = -h->link.pid;
    h->link.dead = 1;
    snprintf(h->link.dead_why, sizeof h->link.dead_why, "arm '%s' on case '%s': its kernel faulted in its own "
             "process during %.40s (%.200s); that process ended, the other arms are unaffected", k->arm, k->kase,
             what, text);
    kg_hostlink_flush(&h->link);
    return kg_errorf(err, KG_EARM, "%s", h->link.dead_why);
}

/* Starts the arm's host without waiting for its hello. */
static int host_spawn(kg_backend *be, int a, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    const kg_arm *arm = &be->plan->arms[a];
    cuda_host *h = &c->hosts[a];
    host_close(h);
    h->hello_due = 0;
    if (h->req == NULL) h->req = malloc(sizeof *h->req);
    if (h->rep == NULL) h->rep = malloc(sizeof *h->rep);
    if (h->req == NULL || h->rep == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory starting arm '%s'", arm->name);
    int rc = kg_hostlink_init(&h->link, arm->name, KG_CH_VIOLATION, sizeof(kg_ch_msg), err);
    if (rc != KG_OK) return rc;
    h->link.own_session = 1;
    h->started = 1;
    h->slowest_s = 0;
    char exe[PATH_MAX];
    if (c->settings->armhost_exe != NULL && c->settings->armhost_exe[0] != '\0')
        snprintf(exe, sizeof exe, "%s", c->settings->armhost_exe);
    else if ((rc = kg_self_exe(exe, sizeof exe, err)) != KG_OK)
        return rc;
    if ((rc = kg_hostlink_mkdir(&h->link, err)) != KG_OK) return rc;
    char ppid[32];
    snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
    /* out of its sight: the signing keys' folders and the evidence folder */
    const kg_settings *set = c->settings;
    char hide[3 * PATH_MAX + 3];
    snprintf(hide, sizeof hide, "%s:%s:%s", set->key_dir != NULL ? set->key_dir : "",
             set->hide_dir != NULL ? set->hide_dir : "", set->evidence_dir != NULL ? set->evidence_dir : "");
    /* the driver by the file the worker loaded (found perhaps through a
     * library path the host's environment does not have) */
    char driver[PATH_MAX];
    Dl_info di;
    if (dladdr(*(void **)&c->drv.cuInit, &di) != 0 && di.dli_fname != NULL && strchr(di.dli_fname, '/') != NULL)
        snprintf(driver, sizeof driver, "%s", di.dli_fname);
    else
        snprintf(driver, sizeof driver, "%s", c->drv.path);
    char *argv[] = { exe, (char *)"armhost", (char *)"--cuda", (char *)"--driver", driver,
                     (char *)"--uuid", c->uuid, (char *)"--arm", (char *)arm->name, (char *)"--dir", h->link.dir,
                     (char *)"--parent", ppid, (char *)"--hide", hide, NULL };
    /* an environment of kgate's making, what the driver needs and nothing
     * of the worker's else (cuda_host.h) */
    char envstore[4 * PATH_MAX], *envp[16];
    if (kg_cuda_host_env(h->link.dir, driver, set->cuda_visible, envstore, sizeof envstore, envp, 16) < 0)
        return kg_errorf(err, KG_EINTERNAL, "arm '%s': the cuda arm host's environment does not fit", arm->name);
    /* kgate's own host: this image, whatever its path names now */
    const char *prog = c->settings->armhost_exe != NULL && c->settings->armhost_exe[0] != '\0' ? exe : KG_SELF_EXEC;
    if ((rc = kg_hostlink_spawn(&h->link, prog, argv, envp, KG_CH_SOCK_FD, err)) != KG_OK) return rc;
    h->link.seq = 0;
    h->hello_due = 1;
    return KG_OK;
}

/* Reads the started host's hello: its device is open. */
static int host_hello(kg_backend *be, int a, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    const kg_arm *arm = &be->plan->arms[a];
    cuda_host *h = &c->hosts[a];
    kg_ch_msg *hello = h->rep;
    double lim = c->timeout_s < 120 ? c->timeout_s : 120;
    h->hello_due = 0;
    int rc = violated(h, kg_hostlink_reply(&h->link, KG_CH_HELLO, lim, hello, sizeof *hello, err), err);
    if (rc == KG_OK) h->sandbox = (unsigned)hello->sandbox;
    if (rc == KG_OK && hello->status != KG_CH_OK) {
        hello->text[sizeof hello->text - 1] = '\0';
        kg_hostlink_kill(&h->link);
        kg_hostlink_fault(&h->link, -1, 0, lim, NULL);
        rc = kg_errorf(err, KG_EBACKEND, "arm '%s': its cuda arm host could not open the device %s: %s",
                       arm->name, c->uuid, hello->text);
    }
    return rc;
}

/* The arm's host, started (again, after a fault) at its first load in
 * this worker, or by the prestart slot. */
static int host_get(kg_backend *be, int a, cuda_host **out, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    cuda_host *h = &c->hosts[a];
    *out = h;
    if (h->started && !h->link.dead && !h->hello_due) return KG_OK;
    if (h->started && !h->link.dead && h->hello_due) return host_hello(be, a, err);
    int rc = host_spawn(be, a, err);
    return rc != KG_OK ? rc : host_hello(be, a, err);
}

/* The prestart slot: every hosted arm's host started side by side, each
 * opening the device while the others do, and the library arms' helpers
 * importing theirs meanwhile (their hellos read here), but those of
 * skipped arms; a failure is left to the arm's first load, which starts
 * it again and says why. */
static void cuda_prestart(kg_backend *be, const unsigned char *skip)
{
    cuda_ctx *c = be->ctx;
    if (c == NULL || be->plan == NULL) return;
    for (int a = 0; a < c->nhosts; a++) {
        if (!arm_hosted(&be->plan->arms[a]) || c->hosts[a].started || (skip != NULL && skip[a])) continue;
        kg_err e = { 0 };
        if (host_spawn(be, a, &e) != KG_OK) host_close(&c->hosts[a]);
    }
    /* the library arms' helpers, while the hosts open the device */
    if (c->libs != NULL) kg_libarm_prestart(c->settings, be->plan, c->libs, c->nhosts, skip, c->uuid, c->timeout_s);
}

/* ----------------------------------------------------------- open/close */

static void cuda_close(kg_backend *be)
{
    cuda_ctx *c = be->ctx;
    if (c == NULL) return;
    if (c->ctx != NULL && c->drv.cuCtxSetCurrent != NULL) c->drv.cuCtxSetCurrent(c->ctx);
    /* the arm hosts end first: their mappings of the worker's buffers with
     * them; all are told at once, so that their contexts close side by
     * side, then each is reaped */
    for (int i = 0; i < c->nhosts; i++)
        if (c->hosts[i].started) kg_hostlink_quit(&c->hosts[i].link, KG_CH_QUIT);
    for (int i = 0; c->libs != NULL && i < c->nhosts; i++) kg_libarm_quit(c->libs[i]);
    for (int i = 0; c->libs != NULL && i < c->nhosts; i++) kg_libarm_stop(c->libs[i]);
    kg_libarm_stop_retired();
    kg_libarm_builds_free(c->lib_builds);
    free(c->libs);
    for (int i = 0; i < c->nhosts; i++) {
        host_close(&c->hosts[i]);
        free(c->hosts[i].req);
        free(c->hosts[i].rep);
    }
    free(c->hosts);
    free(c->tel_pids);
    if (c->flush_buf != 0) c->drv.cuMemFree(c->flush_buf);
    if (c->fill_mod != NULL) c->drv.cuModuleUnload(c->fill_mod);
    if (c->poison_state == 1) kg_cuda_poison_free(&c->drv, &c->poison);
    if (c->warm_state == 1) kg_cuda_warm_free(&c->drv, &c->warm);
    if (c->lt_handle != NULL) c->lt.cublasLtDestroy(c->lt_handle);
    if (c->lt_ws != 0) c->drv.cuMemFree(c->lt_ws);
    kg_cuda_cublaslt_unload(&c->lt);
    if (c->gate.stream != NULL) kg_cuda_gate_free(&c->drv, &c->gate);
    if (c->stream != NULL) c->drv.cuStreamDestroy(c->stream);
    if (c->ctx_retained) c->drv.cuDevicePrimaryCtxRelease(c->dev);
    if (c->nvml_state == 1) c->nvml.nvmlShutdown();
    kg_cuda_nvml_unload(&c->nvml);
    for (int i = 0; i < c->nunits; i++) free(c->units[i].image);
    free(c->units);
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
    c->timeout_s = plan != NULL && plan->campaign.timeout_s > 0 ? plan->campaign.timeout_s : 600;
    c->l2_warm = plan == NULL || plan->campaign.l2 == KG_L2_WARM;
    if (plan != NULL && plan->narms > 0) {
        c->hosts = calloc((size_t)plan->narms, sizeof *c->hosts);
        if (c->hosts == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory opening the cuda backend");
        c->nhosts = plan->narms;
        c->libs = calloc((size_t)plan->narms, sizeof *c->libs);
        if (c->libs == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory opening the cuda backend");
        /* a library arm's helper maps the worker's buffers by IPC handle too */
        for (int a = 0; a < plan->narms; a++)
            c->any_hosted |= arm_hosted(&plan->arms[a]) || kg_libarm_is(&plan->arms[a]);
    }
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
    {
        const char *call = "";
        CUresult rg = kg_cuda_gate_init(&c->drv, &c->gate, c->stream, &call);
        if (rg != KG_CUDA_SUCCESS && (rc = kg_cuda_check(c, rg, call, __FILE__, __LINE__, err)) != KG_OK) goto done;
        if (c->gate.shared_queue)
            fprintf(stderr, "kgate: note: the timing gate is off in this process: its side stream's write waited "
                    "behind the timed stream's wait (one hardware queue for both, as under "
                    "CUDA_DEVICE_MAX_CONNECTIONS=1); samples are timed without it, their launch included; unset "
                    "CUDA_DEVICE_MAX_CONNECTIONS or set it to 2 or more\n");
    }
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
    /* with arm hosts, every buffer is whole IPC blocks of its own */
    size_t whole = c->any_hosted ? (bytes + KG_CUDA_IPC_GRAIN - 1) / KG_CUDA_IPC_GRAIN * KG_CUDA_IPC_GRAIN : bytes;
    CUdeviceptr p = 0;
    int rc = CU(c, cuMemAlloc, (&p, whole), err);
    if (rc != KG_OK) return rc;
    if (c->any_hosted) {
        CUdeviceptr base = 0;
        size_t got = 0;
        rc = CU(c, cuMemGetAddressRange, (&base, &got, p), err);
        if (rc == KG_OK && (base != p || got != whole || p % KG_CUDA_IPC_GRAIN != 0))
            rc = kg_errorf(err, KG_EBACKEND, "the CUDA driver placed a buffer of %zu bytes at %#llx inside an "
                           "allocation of %zu bytes at %#llx: it would share an IPC block with other buffers, so "
                           "an arm host could read them; kgate cannot isolate untrusted arms on this driver "
                           "(mark the arms trusted = yes to run them in the worker)", whole,
                           (unsigned long long)p, got, (unsigned long long)base);
        if (rc != KG_OK) {
            c->drv.cuMemFree(p);
            return rc;
        }
    }
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
    int rc = CU(c, cuStreamSynchronize, (c->stream), err);
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
    int rc = CU(c, cuStreamSynchronize, (c->stream), err);
    if (rc == KG_OK) rc = CU(c, cuMemcpyDtoH, (dst, dptr(src->ptr) + off, n), err);
    return rc;
}

/* ------------------------------------------------------------- kernels */

/* Where cuda_build keeps the cubin of arm for case cs: build_dir/ARM.CASE.cubin
 * for a specialized arm (its variables are defines), else ARM.DTYPE.cubin. */
static void build_cubin_path(const kg_arm *arm, const kg_case *cs, const char *build_dir, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s.%s.cubin", build_dir, arm->name,
             arm->specialize ? cs->name : kg_dtype_name(cs->dtype));
}

/* The cubin the campaign's build wrote for arm on case cs, read into
 * *image: 1 when there is one (a regular file, at most 256 MiB), 0 when the arm
 * must be compiled here (no build folder, a precompiled image, the
 * numerical negative, whose build is not kept, or no readable file).  A worker
 * loads the campaign's build as the cpu backend loads build/ARM.so: NVRTC
 * runs once per arm and dtype in a campaign, not once per process. */
static int read_build(const kg_settings *s, const kg_arm *arm, const kg_case *cs, const char *build_dir,
                      char **image, size_t *bytes)
{
    if (build_dir == NULL || kg_arm_is_image(arm) || kg_backend_negative(s, arm)) return 0;
    char path[KG_PATH_MAX + 2 * KG_NAME_MAX];
    build_cubin_path(arm, cs, build_dir, path, sizeof path);
    kg_err e = { 0 };
    *image = NULL;
    *bytes = 0;
    if (kg_read_file_cap(path, (size_t)256 << 20, image, bytes, &e) == KG_OK && *bytes > 0) return 1;
    free(*image);
    *image = NULL;
    *bytes = 0;
    return 0;
}

/* Whether arm a has a build of its own for case k: every case it applies
 * to when per_case (specialize = yes: its variables are defines), else
 * the first such case of each dtype (one build per arm and dtype). */
static int builds_case(const kg_plan *plan, int a, int k, int per_case)
{
    kg_dtype dt = plan->cases[k].dtype;
    if (!kg_plan_arm_applies(plan, a, k) || (int)dt < 0 || (int)dt >= KG_DT_COUNT) return 0;
    if (per_case) return 1;
    for (int j = 0; j < k; j++)
        if (plan->cases[j].dtype == dt && kg_plan_arm_applies(plan, a, j)) return 0;
    return 1;
}

/* The arms this backend compiles with NVRTC: in CUDA C, not a library
 * call, cuBLAS or a precompiled image. */
static int nvrtc_arm(const kg_arm *arm)
{
    return !kg_libarm_is(arm) && arm->builtin[0] == '\0' && !kg_arm_is_image(arm);
}

/* Every compile the plan's builds need (one per arm and dtype, per case
 * for specialize = yes), run at once on the host's cores
 * (kg_cuda_compile_many) the first time an arm is built: a plan of 64
 * variants compiles in the time of a few.  Nothing is written here; each
 * arm's build takes its units' results in turn, so errors are reported
 * arm by arm as a serial build reports them.  Without memory for the
 * list, every arm compiles on its own (compile_unit). */
static void compile_all(cuda_ctx *c, const kg_plan *plan)
{
    c->units_done = 1;
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm *arm = &plan->arms[a];
            if (!nvrtc_arm(arm)) continue;
            for (int k = 0; k < plan->ncases; k++) {
                if (!builds_case(plan, a, k, arm->specialize)) continue;
                if (pass == 1)
                    c->units[n] = (kg_cuda_unit){ .arm = a, .cs = arm->specialize ? &plan->cases[k] : NULL,
                                                  .dt = plan->cases[k].dtype };
                n++;
            }
        }
        if (pass == 0 && (n == 0 || (c->units = calloc((size_t)n, sizeof *c->units)) == NULL)) return;
    }
    c->nunits = n;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    kg_cuda_compile_many(&c->nvrtc, c->settings, c->cc_major, c->cc_minor, plan, c->units, n,
                         cpus > 0 ? (int)cpus : 1);
}

/* The cubin of arm a for case cs (NULL: not specialized) in dtype dt: the
 * result compile_all kept for it (taken: *image is the caller's), else
 * compiled now. */
static int compile_unit(cuda_ctx *c, const kg_plan *plan, int a, const kg_case *cs, kg_dtype dt, char **image,
                        size_t *bytes, kg_err *err)
{
    for (int i = 0; i < c->nunits; i++) {
        kg_cuda_unit *u = &c->units[i];
        if (u->taken || u->arm != a || u->cs != cs || u->dt != dt) continue;
        int rc = u->rc;
        if (rc != KG_OK) *err = u->err;
        *image = u->image;
        *bytes = u->bytes;
        u->image = NULL;
        u->taken = 1;
        return rc;
    }
    return kg_cuda_compile_case(&c->nvrtc, c->settings, c->cc_major, c->cc_minor, plan, a, cs, dt, image, bytes,
                                err);
}

/* The argument lists of arm a's launches on every case it runs: a plan
 * error in them (an unknown name, a bad suffix or tensor map, a value that
 * does not fit) stops the campaign at the build, before any process, as a
 * compile error does, instead of failing the arm at every load.  What the
 * case's shape decides (a tensor map the TMA cannot address) is left to
 * the load, where it makes that case inadmissible for the arm. */
static int check_args(const kg_plan *plan, int a, int nlaunch, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    for (int k = 0; k < plan->ncases; k++) {
        if (!kg_plan_arm_applies(plan, a, k)) continue;
        const kg_case *cs = &plan->cases[k];
        const kg_op *op = kg_op_find(cs->op);
        if (op == NULL) continue;   /* the load says so */
        for (int li = 0; li < nlaunch; li++) {
            kg_carg args[KG_LAUNCH_MAX_ARGS];
            int n = 0;
            const char *text = li == 0 ? arm->args : arm->extra[li - 1].args;
            int rc = kg_launch_args_parse(arm->name, text, op->in_names, op->nin, op->out_names, op->nout, cs,
                                          args, &n, err);
            if (rc != KG_OK) {
                /* where to fix it: the plan, the arm's section, the key */
                if (err != NULL) {
                    char old[KG_ERR_MSG_MAX], key[16] = "args";
                    if (li > 0) snprintf(key, sizeof key, "args%d", li + 1);
                    snprintf(old, sizeof old, "%s", err->msg);
                    snprintf(err->msg, sizeof err->msg, "%.200s:%d: %s: %.600s", plan->path, arm->line, key, old);
                }
                return rc;
            }
        }
    }
    return KG_OK;
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
    /* kgate's fill kernel, once for the campaign, beside the arms' cubins:
     * workers load it instead of compiling it in every process */
    if (!c->fill_built && build_dir != NULL && plan->campaign.inputs == KG_INPUTS_FRESH) {
        int rc = kg_mkdir_p(build_dir, err);
        if (rc == KG_OK) rc = kg_cuda_fill_build(c, build_dir, err);
        if (rc != KG_OK) return rc;
    }
    if (kg_libarm_is(arm)) return kg_libarm_build(&c->lib_builds, c->settings, plan, a, c->uuid, err);
    if (arm->builtin[0] != '\0') {
        if (strcmp(arm->builtin, "cublas") != 0)
            return kg_errorf(err, KG_EUNSUPPORTED, "arm '%s': builtin '%s' is not available on the "
                             "cuda backend (builtin = cublas is)", arm->name, arm->builtin);
        for (int k = 0; k < plan->ncases; k++) {
            if (!kg_plan_arm_applies(plan, a, k)) continue;
            kg_cuda_gemm_map m;
            int rc = kg_cuda_gemm_map_case(arm->name, &plan->cases[k], &arm->contract, &m, err);
            if (rc != KG_OK) return rc;
        }
        return kg_cuda_blas_ready(c, err);
    }
    int nlaunch = 0;
    int rc0 = kg_launch_chain_length(arm, &nlaunch, err);
    if (rc0 == KG_OK) rc0 = check_args(plan, a, nlaunch, err);
    if (rc0 == KG_OK && build_dir != NULL) rc0 = kg_mkdir_p(build_dir, err);
    if (rc0 != KG_OK) return rc0;
    int per_case = arm->specialize && !kg_arm_is_image(arm);
    for (int k = 0; k < plan->ncases; k++) {
        if (!builds_case(plan, a, k, per_case)) continue;
        kg_dtype dt = plan->cases[k].dtype;
        char *image = NULL;
        size_t bytes = 0;
        if (!c->units_done && nvrtc_arm(arm)) compile_all(c, plan);
        int rc = nvrtc_arm(arm) ? compile_unit(c, plan, a, per_case ? &plan->cases[k] : NULL, dt, &image, &bytes, err)
                                : kg_cuda_compile_case(&c->nvrtc, c->settings, c->cc_major, c->cc_minor, plan, a,
                                                       NULL, dt, &image, &bytes, err);
        if (rc == KG_OK && build_dir != NULL) {
            char path[KG_PATH_MAX + 2 * KG_NAME_MAX];
            /* a precompiled arm keeps its image's kind: ARM.DTYPE.ptx, ...;
             * a specialized one is ARM.CASE.cubin */
            if (kg_arm_is_image(arm))
                snprintf(path, sizeof path, "%s/%s.%s.%s", build_dir, arm->name, kg_dtype_name(dt),
                         kg_image_kind_name(kg_image_kind_of(arm->image)));
            else
                build_cubin_path(arm, &plan->cases[k], build_dir, path, sizeof path);
            /* a temporary renamed in place: a link at path is replaced, never written through */
            rc = kg_write_atomic(path, image, bytes, err);
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
    if (k->lib != NULL) {
        /* the helper stays for the arm's next case; this slot goes */
        kg_libarm_unload(k->lib, k->lib_slot);
    } else if (c != NULL && k->host != NULL) {
        /* its module and mappings go; a host that is gone has none */
        cuda_host *h = k->host;
        if (h->started && !h->link.dead && k->slot >= 0) {
            kg_err e = { 0 };
            host_request(h, KG_CH_UNLOAD, k->slot);
            host_ask(h, -1, host_limit(h, c, 1), &e);
        }
    } else if (c != NULL) {
        release_graph(c, k);
        if (k->mod != NULL) c->drv.cuModuleUnload(k->mod);
        if (k->is_blas) kg_cuda_blas_unload(c, k);
    }
    free(k);
}

static const char *launch_key(int li)
{
    return li == 0 ? "" : (li == 1 ? "2" : "3");
}

static int entry_missing(const kg_arm *arm, const cuda_launch *l, int li, const char *text, kg_err *err)
{
    return kg_errorf(err, KG_EBACKEND, "arm '%s': entry%s '%s' not found in the compiled module (declare it "
                     "extern \"C\" __global__): %s", arm->name, launch_key(li), l->entry, text);
}

/* Checks launch li's block and shared memory against what its compiled
 * entry (l->max_threads, l->static_shared) and the device allow. */
static int entry_limits(const cuda_ctx *c, const kg_arm *arm, const kg_case *cs, const cuda_launch *l, int li,
                        kg_err *err)
{
    const char *key = launch_key(li);
    unsigned threads = l->geom.block[0] * l->geom.block[1] * l->geom.block[2];
    if (threads > (unsigned)l->max_threads)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': block%s has %u threads, "
                         "entry '%s' allows at most %d (its __launch_bounds__ or registers per "
                         "thread)", arm->name, cs->name, key, threads, l->entry, l->max_threads);
    /* dynamic plus static shared memory must fit the opt-in limit */
    long dyn_max = (long)c->smem_optin_bytes - l->static_shared;
    if ((long)l->geom.shared_bytes > dyn_max)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': shared%s asks for %u bytes "
                         "of dynamic shared memory; entry '%s' has %d bytes of static shared "
                         "memory and the device allows %d per block, so at most %ld",
                         arm->name, cs->name, key, l->geom.shared_bytes, l->entry, l->static_shared,
                         c->smem_optin_bytes, dyn_max > 0 ? dyn_max : 0);
    return KG_OK;
}

static int shared_refused(const cuda_ctx *c, const kg_arm *arm, const kg_case *cs, const cuda_launch *l, int li,
                          const char *text, kg_err *err)
{
    (void)li;
    return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': the device refused %u bytes of dynamic "
                     "shared memory for entry '%s' (%s); it allows %d per block, %d of them static in this "
                     "entry", arm->name, cs->name, l->geom.shared_bytes, l->entry, text, c->smem_optin_bytes,
                     l->static_shared);
}

/* Looks up launch li's entry in the loaded module (in the worker) and
 * checks its block against what the compiled entry allows. */
static int load_entry(cuda_ctx *c, const kg_arm *arm, const kg_case *cs, kg_kernel *k, int li,
                      kg_err *err)
{
    cuda_launch *l = &k->launch[li];
    int rc = KG_OK;
    CUresult r = c->drv.cuModuleGetFunction(&l->fn, k->mod, l->entry);
    if (r != KG_CUDA_SUCCESS) {
        char text[256];
        kg_cuda_result_text(&c->drv, r, text, sizeof text);
        return entry_missing(arm, l, li, text, err);
    }
    if ((rc = CU(c, cuFuncGetAttribute, (&l->max_threads, KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                         l->fn), err)) != KG_OK)
        return rc;
    if ((rc = CU(c, cuFuncGetAttribute, (&l->static_shared, KG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                         l->fn), err)) != KG_OK)
        return rc;
    if ((rc = entry_limits(c, arm, cs, l, li, err)) != KG_OK) return rc;
    /* above 48 KiB in all the entry must opt in */
    if ((long)l->geom.shared_bytes + l->static_shared > 48L * 1024L) {
        CUresult r2 = c->drv.cuFuncSetAttribute(l->fn, KG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                (int)l->geom.shared_bytes);
        if (r2 != KG_CUDA_SUCCESS) {
            char text[256];
            kg_cuda_result_text(&c->drv, r2, text, sizeof text);
            return shared_refused(c, arm, cs, l, li, text, err);
        }
    }
    return KG_OK;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Loads the compiled image into the arm's host (a slot there) and checks
 * each entry's limits as the host read them. */
static int host_load(kg_backend *be, int a, const kg_case *cs, kg_kernel *k, const char *image,
                     size_t bytes, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    const kg_arm *arm = &be->plan->arms[a];
    cuda_host *h = NULL;
    int rc = host_get(be, a, &h, err);
    if (rc != KG_OK) return rc;
    k->host = h;
    int fd = memfd_create("kgate-cubin", MFD_CLOEXEC);
    if (fd < 0) return kg_errorf(err, KG_EIO, "arm '%s': memfd_create: %s", arm->name, strerror(errno));
    if (write_all(fd, image, bytes) != 0) {
        close(fd);
        return kg_errorf(err, KG_EIO, "arm '%s': cannot write its cubin to a memfd: %s", arm->name,
                         strerror(errno));
    }
    kg_ch_msg *m = host_request(h, KG_CH_LOAD, -1), *r = h->rep;
    m->nlaunch = k->nlaunch;
    m->image_bytes = bytes;
    for (int li = 0; li < k->nlaunch; li++) {
        kg_ch_launch *o = &m->launch[li];
        snprintf(o->entry, sizeof o->entry, "%s", k->launch[li].entry);
        o->geom = k->launch[li].geom;
        o->nargs = k->launch[li].nargs;
        memcpy(o->args, k->launch[li].args, sizeof o->args);
    }
    rc = host_ask(h, fd, c->timeout_s, err);
    close(fd);
    if (rc == KG_OK) {
        int li = r->n >= 0 && r->n < k->nlaunch ? r->n : 0;
        switch (r->status) {
        case KG_CH_OK:
            k->slot = r->slot;
            for (int i = 0; i < k->nlaunch && rc == KG_OK; i++) {
                memcpy(k->attr[i], r->launch[i].attr, sizeof k->attr[i]);
                k->launch[i].max_threads = r->launch[i].attr[KG_CH_A_MAX_THREADS];
                k->launch[i].static_shared = r->launch[i].attr[KG_CH_A_STATIC_SHARED];
                rc = entry_limits(c, arm, cs, &k->launch[i], i, err);
            }
            break;
        case KG_CH_NOENTRY:
            rc = entry_missing(arm, &k->launch[li], li, r->text, err);
            break;
        case KG_CH_REFUSED:
            k->launch[li].static_shared = r->launch[li].attr[KG_CH_A_STATIC_SHARED];
            rc = shared_refused(c, arm, cs, &k->launch[li], li, r->text, err);
            break;
        default:
            rc = kg_errorf(err, KG_EBACKEND, "arm '%s' on case '%s': its cuda arm host could not load the "
                           "%s: %s", arm->name, cs->name, kg_arm_is_image(arm) ? "precompiled image (rebuild it for "
                           "this device and driver: docs/images.md)" : "cubin", r->text);
            break;
        }
    }
    return rc;
}

/* A library arm's load: its helper (started at the arm's first load in
 * this worker, again after a fault) takes the case. */
static int lib_load(kg_backend *be, const kg_plan *plan, int a, int kase, const char *build_dir, kg_kernel **out,
                    kg_err *err)
{
    cuda_ctx *c = be->ctx;
    if (c->libs == NULL || a >= c->nhosts)
        return kg_errorf(err, KG_EINTERNAL, "arm %d of a plan the backend was not opened for", a);
    int rc = kg_libarm_acquire(&c->libs[a], c->settings, plan, a, c->uuid, c->timeout_s, err);
    if (rc != KG_OK) return rc;
    int slot = -1;
    char record[KG_LIBRARY_RECORD_MAX];
    if ((rc = kg_libarm_load(c->libs[a], &plan->cases[kase], build_dir, &slot, record, err)) != KG_OK) return rc;
    kg_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory loading arm '%s'", plan->arms[a].name);
    snprintf(k->arm, sizeof k->arm, "%s", plan->arms[a].name);
    snprintf(k->kase, sizeof k->kase, "%s", plan->cases[kase].name);
    k->slot = -1;
    k->smem_min = -1;
    k->nlaunch = 1;
    k->lib = c->libs[a];
    k->lib_slot = slot;
    snprintf(k->lib_record, sizeof k->lib_record, "%s", record);
    size_t len = 0;
    kg_libarm_source(&len);
    k->image_bytes = len;
    kg_libarm_source_sha256(k->image_sha256);
    *out = k;
    return KG_OK;
}

/* A library arm's buffers: the IPC handle of each allocation. */
static int lib_bind(cuda_ctx *c, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    kg_libarm_buf bufs[KG_MAX_IN * (1 + KG_BIND_MAX_OP_SETS) + KG_MAX_OUT];
    int n = 0, rc = KG_OK;
    for (int j = 0; j <= b->nop && rc == KG_OK; j++)
        for (int i = 0; i < b->nin && rc == KG_OK; i++) {
            const kg_dbuf *d = j == 0 ? &b->in[i] : &b->op_in[j - 1][i];
            kg_libarm_buf *x = &bufs[n++];
            *x = (kg_libarm_buf){ .role = KG_CARG_IN, .index = i, .set = j, .bytes = d->bytes, .fd = -1, .has_ipc = 1 };
            rc = CU(c, cuIpcGetMemHandle, ((CUipcMemHandle *)(void *)x->ipc, dptr(d->ptr)), err);
        }
    for (int o = 0; o < b->nout && rc == KG_OK; o++) {
        kg_libarm_buf *x = &bufs[n++];
        *x = (kg_libarm_buf){ .role = KG_CARG_OUT, .index = o, .bytes = b->out[o].bytes, .fd = -1, .has_ipc = 1 };
        rc = CU(c, cuIpcGetMemHandle, ((CUipcMemHandle *)(void *)x->ipc, dptr(b->out[o].ptr)), err);
    }
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (c->stream), err);
    return rc == KG_OK ? kg_libarm_bind(k->lib, k->lib_slot, bufs, n, b->pack, b->nop, k->lib_record, err) : rc;
}

/* A tensor map argument's matrix on case cs: its buffer's shape and dtype. */
static int tmap_shape(const kg_arm *arm, const kg_op *op, const kg_case *cs, kg_carg *a, kg_err *err)
{
    int64_t dims[KG_OP_MAX_DIMS];
    char why[256] = "";
    int out = a->tmap.out;
    int nd = kg_op_shape(op, cs, out, a->index, dims, why, sizeof why);
    if (nd <= 0) return kg_errorf(err, KG_EINPUT, "arm '%s': argument %s:tmap: %s", arm->name, a->name, why);
    kg_dtype dt = out ? op->out_dtype(cs, a->index) : op->in_dtype != NULL ? op->in_dtype(cs, a->index) : cs->dtype;
    return kg_launch_tmap_shape(arm->name, cs, a, dims, nd, dt, err);
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
    *out = NULL;
    /* the fill reads the campaign's build of it from here (cuda_fill.c) */
    if (build_dir != NULL && c->build_dir[0] == '\0' && strlen(build_dir) < sizeof c->build_dir)
        snprintf(c->build_dir, sizeof c->build_dir, "%s", build_dir);
    if (kg_libarm_is(arm)) return lib_load(be, plan, a, kase, build_dir, out, err);
    if (arm->builtin[0] != '\0' && strcmp(arm->builtin, "cublas") != 0)
        return kg_errorf(err, KG_EUNSUPPORTED, "arm '%s': builtin '%s' is not available on the "
                         "cuda backend (builtin = cublas is)", arm->name, arm->builtin);
    const kg_op *op = kg_op_find(cs->op);
    if (op == NULL) return kg_errorf(err, KG_EINPUT, "case '%s': unknown op '%s'", cs->name, cs->op);
    kg_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory loading arm '%s'", arm->name);
    snprintf(k->arm, sizeof k->arm, "%s", arm->name);
    snprintf(k->kase, sizeof k->kase, "%s", cs->name);
    k->slot = -1;
    k->smem_min = -1;
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
        for (int i = 0; i < l->nargs && rc == KG_OK; i++)
            if (l->args[i].kind == KG_CARG_TMAP) rc = tmap_shape(arm, op, cs, &l->args[i], err);
        if (rc != KG_OK) goto done;
        for (int i = 0; i < l->nargs; i++) l->params[i] = &l->args[i].value;
        if (l->geom.shared_bytes > (unsigned)c->smem_optin_bytes) {
            rc = kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': launch %d asks for %u "
                           "bytes of dynamic shared memory, the device allows at most %d per "
                           "block", arm->name, cs->name, li + 1, l->geom.shared_bytes,
                           c->smem_optin_bytes);
            goto done;
        }
    }
    if (!read_build(c->settings, arm, cs, build_dir, &image, &image_bytes))
        rc = kg_cuda_compile_case(&c->nvrtc, c->settings, c->cc_major, c->cc_minor, plan, a, cs, cs->dtype,
                                  &image, &image_bytes, err);
    if (rc != KG_OK) goto done;
    k->image_bytes = image_bytes;
    kg_cuda_sha256_hex(image, image_bytes, k->image_sha256);
    if (arm_hosted(arm)) {
        rc = host_load(be, a, cs, k, image, image_bytes, err);
        goto done;
    }
    if ((rc = CU(c, cuModuleLoadData, (&k->mod, image), err)) != KG_OK) {
        add_context(err, k, kg_arm_is_image(arm) ? "loading its precompiled image (rebuild it for this device and "
                                                   "driver: docs/images.md)" : "loading the cubin");
        goto done;
    }
    for (int li = 0; li < k->nlaunch && rc == KG_OK; li++) rc = load_entry(c, arm, cs, k, li, err);
done:
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
    if (r == KG_CUDA_ERROR_INVALID_CLUSTER_SIZE)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': the device refused launch %d "
                         "('%s'): %s; the entry's thread block cluster (__cluster_dims__) must divide "
                         "its grid of %u x %u x %u blocks and hold at most 8 of them (the portable "
                         "cluster size), with room for the whole cluster's shared memory (%u bytes "
                         "of dynamic shared memory a block)", k->arm, k->kase, li + 1, l->entry, text,
                         g->grid[0], g->grid[1], g->grid[2], g->shared_bytes);
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
    CUstream st = c->stream;
    for (int li = 0; li < k->nlaunch; li++) {
        cuda_launch *l = &k->launch[li];
        const kg_launch_geom *g = &l->geom;
        CUresult r = c->drv.cuLaunchKernel(l->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0],
                                           g->block[1], g->block[2], g->shared_bytes, st,
                                           l->params, NULL);
        if (r == KG_CUDA_SUCCESS) continue;
        if (kg_cuda_launch_refusal(r)) return launch_refused(c, k, li, r, err);
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

/* Every buffer argument of every launch has a buffer in the binding. */
static int binding_covers(const kg_kernel *k, const kg_binding *b, kg_err *err)
{
    for (int li = 0; li < k->nlaunch; li++) {
        const cuda_launch *l = &k->launch[li];
        for (int i = 0; i < l->nargs; i++) {
            const kg_carg *a = &l->args[i];
            int in = a->kind == KG_CARG_IN || (a->kind == KG_CARG_TMAP && !a->tmap.out);
            int out = a->kind == KG_CARG_OUT || (a->kind == KG_CARG_TMAP && a->tmap.out);
            if (in && a->index >= b->nin)
                return kg_errorf(err, KG_EINTERNAL, "arm '%s': input %d not bound", k->arm, a->index);
            if (out && a->index >= b->nout)
                return kg_errorf(err, KG_EINTERNAL, "arm '%s': output %d not bound", k->arm, a->index);
            if (a->kind == KG_CARG_WS && b->ws.ptr == NULL)
                return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': launch %d passes WS, but the case "
                                 "has no workspace (op '%s' declares none, or its size is 0 for this case)",
                                 k->arm, k->kase, li + 1, b->kase != NULL ? b->kase->op : "?");
        }
    }
    return KG_OK;
}

/* Fills the buffer arguments of every launch from the binding. */
static int bind_args(cuda_ctx *c, kg_kernel *k, const kg_binding *b, kg_err *err)
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
    int rc = binding_covers(k, b, err);
    if (rc != KG_OK) return rc;
    for (int li = 0; li < k->nlaunch; li++) {
        cuda_launch *l = &k->launch[li];
        for (int i = 0; i < l->nargs; i++) {
            kg_carg *a = &l->args[i];
            if (a->kind == KG_CARG_IN) a->value.ptr = dptr(b->in[a->index].ptr);
            else if (a->kind == KG_CARG_OUT) a->value.ptr = dptr(b->out[a->index].ptr);
            else if (a->kind == KG_CARG_WS) a->value.ptr = dptr(b->ws.ptr);
            else if (a->kind == KG_CARG_TMAP) {
                char why[300];
                CUdeviceptr p = dptr(a->tmap.out ? b->out[a->index].ptr : b->in[a->index].ptr);
                if (kg_cuda_tmap_encode(&c->drv, a, p, why, sizeof why) != KG_CUDA_SUCCESS)
                    return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': %s", k->arm, k->kase, why);
            }
        }
    }
    k->ws = dptr(b->ws.ptr);
    k->ws_bytes = b->ws.ptr != NULL ? b->ws.bytes : 0;
    return KG_OK;
}

/* A REFUSED, FAULT or FAIL reply of the host to a request for k. */
static int host_said(cuda_ctx *c, kg_kernel *k, const kg_ch_msg *r, const char *what, kg_err *err)
{
    if (r->status == KG_CH_FAULT) return host_faulted(k->host, k, what, r->text, err);
    if (r->status == KG_CH_INADMISSIBLE)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': %s", k->arm, k->kase, r->text);
    if (r->status == KG_CH_REFUSED) {
        int li = r->n >= 0 && r->n < k->nlaunch ? r->n : 0;
        return launch_refused(c, k, li, (CUresult)r->cu, err);
    }
    return kg_errorf(err, KG_EBACKEND, "arm '%s' on case '%s': its cuda arm host failed %s: %s", k->arm, k->kase,
                     what, r->text);
}

/* Binds k's buffers in its host: each as the IPC handle of its allocation. */
static int host_bind(cuda_ctx *c, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    int rc = binding_covers(k, b, err);
    if (rc != KG_OK) return rc;
    kg_ch_msg *m = host_request(k->host, KG_CH_BIND, k->slot);
    const int base = b->nin + b->nout + 1, sets = base + b->nop * b->nin;
    const int op_outs = b->op_outs && b->nop > 0 && b->nout > 0;
    for (int i = 0; rc == KG_OK && i < sets + (op_outs ? b->nop * b->nout : 0); i++) {
        const kg_dbuf *d = i < b->nin ? &b->in[i] : i < b->nin + b->nout ? &b->out[i - b->nin] : i < base ? &b->ws
                           : i < sets ? &b->op_in[(i - base) / b->nin][(i - base) % b->nin]
                           : &b->op_out[(i - sets) / b->nout][(i - sets) % b->nout];
        if (d->ptr == NULL) continue;
        if (m->nbuf == KG_CH_NBUF) {
            rc = kg_errorf(err, KG_EINTERNAL, "arm '%s': more than %d buffers bound", k->arm, KG_CH_NBUF);
            break;
        }
        int j = m->nbuf++;
        rc = CU(c, cuIpcGetMemHandle, (&m->ipc[j], dptr(d->ptr)), err);
        m->buf_bytes[j] = d->bytes;
        m->buf_role[j] = i < b->nin || (i >= base && i < sets) ? KG_CARG_IN
                         : i < b->nin + b->nout || i >= sets ? KG_CARG_OUT : KG_CARG_WS;
        m->buf_index[j] = i < b->nin ? i : i < b->nin + b->nout ? i - b->nin : i < base ? 0
                          : i < sets ? (i - base) % b->nin : (i - sets) % b->nout;
        m->buf_set[j] = i < base ? 0 : i < sets ? 1 + (i - base) / b->nin : 1 + (i - sets) / b->nout;
    }
    if (rc == KG_OK) {
        m->pack = b->pack;
        m->nop = b->nop;
        m->op_outs = op_outs;
        rc = host_ask(k->host, -1, c->timeout_s, err);
        if (rc == KG_OK && k->host->rep->status != KG_CH_OK)
            rc = host_said(c, k, k->host->rep, "capturing the timed graph", err);
    }
    return rc;
}

/* The buffers of every input set b binds: what a warm sample reads into
 * the L2 first (the host keeps the same list from its BIND). */
static void warm_list(kg_kernel *k, const kg_binding *b)
{
    k->nwarm_in = 0;
    k->nsets = 1 + b->nop;
    for (int j = 0; j <= b->nop; j++)
        for (int i = 0; i < b->nin && k->nwarm_in < KG_CH_NBUF; i++) {
            const kg_dbuf *d = j == 0 ? &b->in[i] : &b->op_in[j - 1][i];
            if (d->ptr != NULL) k->warm_in[k->nwarm_in++] = (kg_cuda_warm_buf){ dptr(d->ptr), d->bytes };
        }
}

static int cuda_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    int rc = KG_OK;
    k->bound = 0;
    if (b->pack < 1) return kg_errorf(err, KG_EINTERNAL, "arm '%s': pack %d", k->arm, b->pack);
    if (b->nop < 0 || b->nop > KG_BIND_MAX_OP_SETS || b->nop > b->pack - 1)
        return kg_errorf(err, KG_EINTERNAL, "arm '%s': %d input sets for pack %d", k->arm, b->nop, b->pack);
    k->pack = b->pack;
    warm_list(k, b);
    if (k->host != NULL) {
        if ((rc = host_bind(c, k, b, err)) == KG_OK) k->bound = 1;
        return rc;
    }
    if (k->lib != NULL) {
        if ((rc = lib_bind(c, k, b, err)) == KG_OK) k->bound = 1;
        return rc;
    }
    release_graph(c, k);
    if ((rc = bind_args(c, k, b, err)) != KG_OK) goto done;
    /* a capture must always be ended, even after a failed launch, or the
     * stream stays in capture mode */
    if ((rc = CU(c, cuStreamBeginCapture, (c->stream, KG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), err)) != KG_OK)
        goto done;
    for (int i = 0; i < k->pack && rc == KG_OK; i++) {
        /* operation i reads its own input set (inputs = fresh, pack > 1) */
        if (b->nop > 0) {
            kg_binding bi = *b;
            int set = kg_binding_op_set(b->nop, i, k->pack);
            memcpy(bi.in, kg_binding_op_in(b, i, k->pack), sizeof bi.in);
            /* and writes its own output where one is bound (inputs = fresh) */
            if (b->op_outs && set > 0) memcpy(bi.out, b->op_out[set - 1], sizeof bi.out);
            rc = bind_args(c, k, &bi, err);
        }
        if (rc == KG_OK) rc = launch_op(c, k, err);
    }
    int rc_end = CU(c, cuStreamEndCapture, (c->stream, &k->graph), err);
    if (rc == KG_OK) rc = rc_end;
    /* checked runs read in[] */
    if (rc == KG_OK && b->nop > 0) rc = bind_args(c, k, b, err);
    if (rc != KG_OK) goto done;
    if ((rc = CU(c, cuGraphInstantiate, (&k->exec, k->graph, 0), err)) != KG_OK) goto done;
    k->bound = 1;
done:
    if (rc != KG_OK) {
        release_graph(c, k);
        if (rc != KG_EINADMISSIBLE) add_context(err, k, "capturing the timed graph");
    }
    return rc;
}

static int cuda_run(kg_backend *be, kg_kernel *k, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    if (!k->bound) return kg_errorf(err, KG_EINTERNAL, "arm '%s': run before bind", k->arm);
    int rc;
    if (k->lib != NULL) {
        /* the worker's own writes (poison) are done before the helper's call */
        if ((rc = CU(c, cuStreamSynchronize, (c->stream), err)) != KG_OK) return rc;
        return kg_libarm_run(k->lib, k->lib_slot, err);
    }
    if (k->host != NULL) {
        /* the host poisons the shared memory and workspace first */
        host_request(k->host, KG_CH_RUN, k->slot);
        rc = host_ask(k->host, -1, host_limit(k->host, c, 1), err);
        if (rc == KG_OK && k->host->rep->status != KG_CH_OK) rc = host_said(c, k, k->host->rep, "a checked run", err);
        if (rc == KG_OK && (k->smem_min < 0 || k->host->rep->smem_sms < k->smem_min)) k->smem_min = k->host->rep->smem_sms;
        return rc;
    }
    /* a trusted arm in the worker: the same poison, in the worker's context */
    if (c->poison_state == 0) {
        const char *call = "";
        CUresult pr = kg_cuda_poison_init(&c->drv, c->dev, &c->poison, &call);
        if ((rc = kg_cuda_check(c, pr, call, __FILE__, __LINE__, err)) != KG_OK) return rc;
        c->poison_state = 1;
    }
    {
        const char *call = "";
        uint32_t word = 0;
        int covered = 0;
        CUresult pr = kg_cuda_poison_run(&c->drv, &c->poison, c->stream, k->is_blas ? 0 : k->ws, k->ws_bytes, &word,
                                         &covered, &call);
        if ((rc = kg_cuda_check(c, pr, call, __FILE__, __LINE__, err)) != KG_OK) return rc;
        if (k->smem_min < 0 || covered < k->smem_min) k->smem_min = covered;
    }
    rc = launch_op(c, k, err);
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (c->stream), err);
    if (rc != KG_OK && rc != KG_EINADMISSIBLE) add_context(err, k, "run");
    return rc;
}

static void warm_count(kg_kernel *k, double ns, uint64_t bytes)
{
    k->warm_ns += ns;
    k->warm_bytes = bytes;
    k->warm_samples++;
}

/* l2 = warm, a trusted arm: its input sets into the L2 in the worker's
 * context, just before the sample (cuda_l2.c). */
static int worker_warm(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    const char *call = "";
    if (c->warm_state == 0) {
        CUresult wr = kg_cuda_warm_init(&c->drv, c->dev, &c->warm, &call);
        if (wr != KG_CUDA_SUCCESS) return kg_cuda_check(c, wr, call, __FILE__, __LINE__, err);
        c->warm_state = 1;
    }
    double ns = 0;
    uint64_t bytes = 0;
    CUresult wr = kg_cuda_warm_run(&c->drv, &c->warm, c->stream, k->warm_in, k->nwarm_in, &ns, &bytes, &call);
    if (wr != KG_CUDA_SUCCESS) return kg_cuda_check(c, wr, call, __FILE__, __LINE__, err);
    warm_count(k, ns, bytes);
    return KG_OK;
}

static int cuda_time(kg_backend *be, kg_kernel *k, const kg_sample_ctx *ctx, double *ns,
                     kg_err *err)
{
    cuda_ctx *c = be->ctx;
    (void)ctx;
    *ns = NAN;
    if (!k->bound) return kg_errorf(err, KG_EINTERNAL, "arm '%s': time before bind", k->arm);
    double event_ns = 0, host_ns = 0;
    int rc = KG_OK;
    if (k->lib != NULL) {
        /* the helper records the events and its own bracket: its code is kgate's */
        double wn = 0;
        uint64_t wb = 0;
        if ((rc = kg_libarm_time_warm(k->lib, k->lib_slot, k->pack, c->l2_warm, &event_ns, &host_ns, &wn, &wb, err)) !=
            KG_OK)
            return rc;
        if (c->l2_warm) warm_count(k, wn, wb);
    } else if (k->host != NULL) {
        /* the host records the events and its own bracket: its code is kgate's */
        const kg_ch_msg *r = k->host->rep;
        kg_ch_msg *q = host_request(k->host, KG_CH_TIME, k->slot);
        q->pack = k->pack;
        q->warm = c->l2_warm;
        rc = host_ask(k->host, -1, host_limit(k->host, c, k->pack), err);
        if (rc == KG_OK && r->status != KG_CH_OK) rc = host_said(c, k, r, "a timed sample", err);
        if (rc == KG_OK) {
            event_ns = r->event_ns;
            host_ns = r->host_ns;
            if (c->l2_warm) warm_count(k, r->warm_ns, r->warm_bytes);
            if (!(event_ns >= 0) || !(host_ns >= 0))
                rc = kg_hostlink_broken(&k->host->link, "replied a timed sample with no time", err);
        }
        if (rc != KG_OK) return rc;
    } else {
        /* the same sample as an arm host's (cuda_timing.c), after the same
         * warm-up (l2 = warm) */
        if (c->l2_warm && (rc = worker_warm(c, k, err)) != KG_OK) {
            add_context(err, k, "the L2 warm-up before a timed sample");
            return rc;
        }
        const char *call = "";
        CUresult r = kg_cuda_gate_replay(&c->drv, &c->gate, k->exec, &event_ns, &host_ns, &call);
        if (r != KG_CUDA_SUCCESS) {
            rc = kg_cuda_check(c, r, call, __FILE__, __LINE__, err);
            add_context(err, k, "timed sample");
            return rc;
        }
    }
    c->samples++;
    k->timed++;
    c->last_event_ns = event_ns;
    c->last_host_ns = host_ns;
    /* a library arm's bracket is the helper's, in Python: the interpreter's
     * pauses (its collector, the next worker's import of the library beside
     * it) lengthen the bracket, not the gated events around one graph
     * replay, and the code on both sides is kgate's and the library's (on
     * the H200 13-32 of 200 samples per case were over the bound in one
     * run, 2 in another: docs/measurements/h200-2026-12-03-libarm/) */
    if (k->lib == NULL && host_ns > KG_CUDA_ESCAPE_FACTOR * event_ns + KG_CUDA_ESCAPE_SLACK_NS) c->escapes++;
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

/* bytes as "N KiB" under a MiB, else "N.NN MiB" */
static void size_text(uint64_t bytes, char *buf, size_t cap)
{
    if (bytes < ((uint64_t)1 << 20))
        snprintf(buf, cap, "%.1f KiB", (double)bytes / 1024.0);
    else
        snprintf(buf, cap, "%.2f MiB", (double)bytes / (1024.0 * 1024.0));
}

/* The bytes a warm sample's buffers may take (the warm_budget slot): a
 * sixth of the L2.  Hopper's (and Ampere's) L2 is two partitions, each
 * nearer half of the SMs, and a line read from SMs on both sides is held
 * in both, so what a warm-up from across the device keeps is about half
 * the L2; the outputs, the workspace and the cache's placement take part
 * of that.  Measured (docs/measurements/h200-2026-12-05f/): on an H200 (60
 * MiB), the split-K plan's fresh sets against one resident set: within
 * 1.5% up to 14% of the L2, +2.8% at 18%, +1.1% and +4.1% in two
 * campaigns at 19%, +3.7% at 25%, +19% and +36% at 35% and 48%; on an
 * H100 (50 MiB) +22% and +35% at 38% and 48% (h100-2026-12-05e). */
#define KG_CUDA_WARM_SHARE 6

static uint64_t cuda_warm_budget(kg_backend *be, char *why, size_t cap)
{
    cuda_ctx *c = be->ctx;
    if (c == NULL || c->l2_bytes <= 0) return 0;
    snprintf(why, cap, "a sixth of the device's %d MiB L2, what stays resident when every SM reads it",
             c->l2_bytes >> 20);
    return (uint64_t)c->l2_bytes / KG_CUDA_WARM_SHARE;
}

/* The cache regime of k's samples so far, for the evidence (the cache_note slot). */
static void cuda_cache_note(kg_backend *be, kg_kernel *k, char *buf, size_t cap)
{
    cuda_ctx *c = be->ctx;
    int l2_mib = c->l2_bytes >> 20;
    char size[32];
    if (!c->l2_warm) {
        size_text(c->flush_bytes, size, sizeof size);
        snprintf(buf, cap, "l2 cold: before each of its %lld timed samples the worker wrote %s (twice the "
                 "device's %d MiB L2)%s, after its inputs were written, so no input set of the sample was in the L2 "
                 "when it started%s", (long long)k->timed, size, l2_mib,
                 c->drv.cuCtxResetPersistingL2Cache != NULL ? " and reset the persisting L2 lines" : "",
                 k->pack <= 1 ? ""
                 : k->nsets >= k->pack ? "; each operation of a sample reads an input set of its own"
                 : "; some operations of a sample share an input set, and may find it in the L2");
        return;
    }
    double each = k->warm_samples > 0 ? k->warm_ns / 1e3 / (double)k->warm_samples : 0.0;
    double share = c->l2_bytes > 0 ? 100.0 * (double)k->warm_bytes / (double)c->l2_bytes : 0.0;
    size_text(k->warm_bytes, size, sizeof size);
    snprintf(buf, cap, "l2 warm: before each of its %lld timed samples kgate read the sample's %d input "
             "buffers (%s, %.1f%% of the device's %d MiB L2) into the L2 %s, in %s, outside the timed events "
             "(%.1f us each)%s", (long long)k->warm_samples, k->nwarm_in, size, share, l2_mib,
             k->lib != NULL ? "with a reduction over each buffer"
             : "with its kernel, " KG_CUDA_WARM_READS_TEXT " times over from SMs across the device",
             k->host != NULL ? "its cuda arm host, the process that times it"
             : k->lib != NULL ? "its library helper, the process that times it" : "the worker, the process that times it",
             each, c->l2_bytes > 0 && k->warm_bytes > (uint64_t)c->l2_bytes / KG_CUDA_WARM_SHARE
                 ? "; they are more than a sixth of the L2, more than it keeps resident when every SM reads "
                   "them, so not all of them can be resident when a sample starts"
                 : "");
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
    if (k->is_blas || k->lib != NULL) {
        if (k->lib != NULL) {
            snprintf(res->sandbox, sizeof res->sandbox, "library helper (kgate's code, a process of its own)");
            snprintf(res->library, sizeof res->library, "%s", k->lib_record);
        }
        /* one opaque library call: its kernels' attributes are not ours to read */
        res->regs = res->static_shared_bytes = res->dynamic_shared_bytes = -1;
        res->local_bytes = res->const_bytes = res->max_threads_per_block = -1;
        res->ptx_version = res->binary_version = -1;
        for (int i = 0; i < 3; i++) res->grid[i] = res->block[i] = -1;
        return KG_OK;
    }
    const cuda_launch *l = &k->launch[li];
    int rc = KG_OK;
    if (k->host != NULL) {
        res->regs = k->attr[li][KG_CH_A_REGS];
        res->static_shared_bytes = k->attr[li][KG_CH_A_STATIC_SHARED];
        res->local_bytes = k->attr[li][KG_CH_A_LOCAL];
        res->const_bytes = k->attr[li][KG_CH_A_CONST];
        res->max_threads_per_block = k->attr[li][KG_CH_A_MAX_THREADS];
        res->ptx_version = k->attr[li][KG_CH_A_PTX];
        res->binary_version = k->attr[li][KG_CH_A_BINARY];
        char bits[96], smem[40];
        kg_sandbox_text(k->host->sandbox, bits, sizeof bits);
        snprintf(smem, sizeof smem, "smem poisoned on %d/%d SMs", k->smem_min < 0 ? 0 : k->smem_min % 100000,
                 c->sm_count % 100000);
        snprintf(res->sandbox, sizeof res->sandbox, "cuda arm host: %.78s; %.32s", bits, smem);
    } else {
        snprintf(res->sandbox, sizeof res->sandbox, "trusted (in the worker); smem poisoned on %d/%d SMs",
                 k->smem_min < 0 ? 0 : k->smem_min, c->sm_count);
    }
    struct { int attr; int *out; } attrs[] = {
        { KG_CU_FUNC_ATTRIBUTE_NUM_REGS, &res->regs },
        { KG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &res->static_shared_bytes },
        { KG_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &res->local_bytes },
        { KG_CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &res->const_bytes },
        { KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &res->max_threads_per_block },
        { KG_CU_FUNC_ATTRIBUTE_PTX_VERSION, &res->ptx_version },
        { KG_CU_FUNC_ATTRIBUTE_BINARY_VERSION, &res->binary_version },
    };
    for (size_t i = 0; k->host == NULL && i < sizeof attrs / sizeof attrs[0] && rc == KG_OK; i++)
        rc = CU(c, cuFuncGetAttribute, (attrs[i].out, attrs[i].attr, l->fn), err);
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

/* Launch chains and cuBLAS arms, in the worker or in an arm host, write an
 * output per operation when bound; a library arm's helper writes out[] */
static int cuda_op_outputs(const kg_backend *be, const kg_kernel *k)
{
    (void)be;
    return k->lib == NULL;
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
    .cache_note = cuda_cache_note,
    .warm_budget = cuda_warm_budget,
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
    .summary = "CUDA C kernels compiled by NVRTC, timed with events around CUDA-graph replays",
    .probe_found = "driver found",
    .probe_missing = "no CUDA driver here",
    .peaks = kg_cuda_peaks,
    .fill = kg_cuda_fill,
    .prestart = cuda_prestart,
    .op_outputs = cuda_op_outputs,
};
