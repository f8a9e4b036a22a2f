/* cuda_host.c: the cuda arm host's body (cuda_host.h). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "backend/cuda_host.h"
#include "backend/cuda_tmap.h"
#include "base/frame.h"
#include "kgate/settings.h"
#include "base/util.h"
#include "sandbox/sandbox.h"

/* One opened IPC mapping of a worker's buffer, shared by the slots bound to it. */
typedef struct ch_map {
    CUipcMemHandle h;
    CUdeviceptr ptr;
    uint64_t bytes;
    int refs;
} ch_map;

typedef struct ch_launch {
    kg_ch_launch spec;
    CUfunction fn;
    void *params[KG_LAUNCH_MAX_ARGS];
} ch_launch;

typedef struct ch_slot {
    int used;
    CUmodule mod;
    ch_launch launch[KG_CH_NLAUNCH];
    int nlaunch;
    CUgraph graph;
    CUgraphExec exec;
    int bound;
    int maps[KG_CH_NBUF];      /* indices into the map table; -1 none */
    int nmaps;
    CUdeviceptr ws;            /* the bound workspace (0: none), poisoned before checked runs */
    uint64_t ws_bytes;
    kg_cuda_warm_buf in[KG_CH_NBUF];   /* every input set's buffers, read into the L2 before a warm sample */
    int nin;
} ch_slot;

typedef struct ch_state {
    kg_cuda_driver drv;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    kg_cuda_gate gate;         /* the timed samples' events and gate */
    int smem_optin;
    kg_cuda_poison poison;     /* the shared memory's and workspace's poison (cuda_poison.c) */
    kg_cuda_warm warm;         /* the L2 warm-up of timed samples (cuda_l2.c) */
    unsigned sandbox;          /* KG_SBX_* in effect */
    void (*load_hook)(const char *entry);
    ch_slot slot[KG_CH_SLOTS];
    ch_map *map;
    int nmap, map_cap;
    uint32_t seq;              /* the request being served: its reply's tag */
    CUresult last;             /* of the last failed call */
    char why[KG_CH_TEXT];
} ch_state;


/* A driver call: 0, or -1 with the call and the driver's error in s->why. */
static int ok(ch_state *s, CUresult r, const char *call)
{
    if (r == KG_CUDA_SUCCESS) return 0;
    s->last = r;
    char text[256];
    kg_cuda_result_text(&s->drv, r, text, sizeof text);
    snprintf(s->why, sizeof s->why, "%s: %s", call, text);
    return -1;
}
#define CALL(s, fn, args) ok((s), (s)->drv.fn args, #fn)

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

/* A reply of status st for request kind t; text (may be NULL) says why. */
static void reply_status(ch_state *s, kg_ch_msg *r, uint32_t t, int st, const char *text)
{
    r->status = st;
    r->cu = st == KG_CH_OK ? 0 : (int32_t)s->last;
    if (text != NULL) snprintf(r->text, sizeof r->text, "%s", text);
    kg_frame_sendmsg(KG_CH_SOCK_FD, t, s->seq, r, sizeof *r, NULL, 0);
}

/* One request into m (its kind in *kind, its sequence number in s->seq)
 * and its descriptor (*fd, -1 none): 0, or -1 when the worker is gone or
 * sent what is not a request. */
static int recv_req(ch_state *s, kg_ch_msg *m, uint32_t *kind, int *fd)
{
    static unsigned char buf[KG_FRAME_HEADER + sizeof(kg_ch_msg)];
    int fds[1];
    kg_frame_rx rx;
    memset(&rx, 0, sizeof rx);
    rx.buf = buf;
    rx.max_len = sizeof *m;
    rx.fds = fds;
    rx.maxfd = 1;
    *fd = -1;
    if (kg_frame_recvmsg(KG_CH_SOCK_FD, 1, &rx) != 1) return -1;
    if (rx.nfd > 0) *fd = fds[0];
    if (rx.h.kind != KG_CH_QUIT && rx.h.len != sizeof *m) {
        if (*fd >= 0) close(*fd);
        return -1;
    }
    memset(m, 0, sizeof *m);
    memcpy(m, rx.payload, rx.h.len);
    *kind = rx.h.kind;
    s->seq = rx.h.tag;
    return 0;
}

/* ---- mappings ---- */

static void map_release(ch_state *s, int i)
{
    if (i < 0 || i >= s->nmap || s->map[i].refs <= 0) return;
    if (--s->map[i].refs == 0 && s->map[i].ptr != 0) {
        s->drv.cuIpcCloseMemHandle(s->map[i].ptr);
        s->map[i].ptr = 0;
    }
}

static int map_open(ch_state *s, const CUipcMemHandle *h, uint64_t bytes, int *out)
{
    for (int i = 0; i < s->nmap; i++)
        if (s->map[i].refs > 0 && memcmp(&s->map[i].h, h, sizeof *h) == 0) {
            s->map[i].refs++;
            *out = i;
            return 0;
        }
    int i = 0;
    while (i < s->nmap && s->map[i].refs > 0) i++;
    if (i == s->nmap) {
        if (s->nmap == s->map_cap) {
            int cap = s->map_cap ? 2 * s->map_cap : 16;
            ch_map *n = realloc(s->map, (size_t)cap * sizeof *n);
            if (n == NULL) {
                snprintf(s->why, sizeof s->why, "out of memory");
                return -1;
            }
            s->map = n;
            s->map_cap = cap;
        }
        s->nmap++;
    }
    ch_map *m = &s->map[i];
    memset(m, 0, sizeof *m);
    m->h = *h;
    if (CALL(s, cuIpcOpenMemHandle, (&m->ptr, *h, KG_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)) != 0) return -1;
    /* the mapping must be the whole allocation the worker made for this buffer, no more */
    CUdeviceptr base = 0;
    size_t got = 0;
    if (CALL(s, cuMemGetAddressRange, (&base, &got, m->ptr)) != 0) {
        s->drv.cuIpcCloseMemHandle(m->ptr);
        return -1;
    }
    if (base != m->ptr || got < bytes) {
        s->drv.cuIpcCloseMemHandle(m->ptr);
        snprintf(s->why, sizeof s->why, "a bound buffer mapped as %zu bytes at an offset of %llu, not the "
                 "%llu bytes of its own allocation", got, (unsigned long long)(m->ptr - base),
                 (unsigned long long)bytes);
        return -1;
    }
    m->bytes = bytes;
    m->refs = 1;
    *out = i;
    return 0;
}

/* ---- slots ---- */

static void slot_unbind(ch_state *s, ch_slot *k)
{
    if (k->exec != NULL) s->drv.cuGraphExecDestroy(k->exec);
    if (k->graph != NULL) s->drv.cuGraphDestroy(k->graph);
    k->exec = NULL;
    k->graph = NULL;
    k->bound = 0;
    for (int i = 0; i < k->nmaps; i++) map_release(s, k->maps[i]);
    k->nmaps = 0;
    k->ws = 0;
    k->ws_bytes = 0;
    k->nin = 0;
}

static void slot_free(ch_state *s, ch_slot *k)
{
    slot_unbind(s, k);
    if (k->mod != NULL) s->drv.cuModuleUnload(k->mod);
    memset(k, 0, sizeof *k);
}

static ch_slot *slot_of(ch_state *s, const kg_ch_msg *m)
{
    if (m->slot < 0 || m->slot >= KG_CH_SLOTS || !s->slot[m->slot].used) {
        snprintf(s->why, sizeof s->why, "no kernel in slot %d", m->slot);
        return NULL;
    }
    return &s->slot[m->slot];
}

static void do_load(ch_state *s, const kg_ch_msg *m, int fd, kg_ch_msg *r)
{
    int i = 0;
    while (i < KG_CH_SLOTS && s->slot[i].used) i++;
    s->last = 0;
    if (fd < 0 || m->nlaunch < 1 || m->nlaunch > KG_CH_NLAUNCH || m->image_bytes == 0 || i == KG_CH_SLOTS) {
        if (fd >= 0) close(fd);
        reply_status(s, r, KG_CH_LOAD, KG_CH_FAIL, i == KG_CH_SLOTS ? "every kernel slot is in use"
                                                                   : "a load without a cubin or launches");
        return;
    }
    void *img = mmap(NULL, (size_t)m->image_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (img == MAP_FAILED) {
        reply_status(s, r, KG_CH_LOAD, KG_CH_FAIL, "cannot map the cubin");
        return;
    }
    ch_slot *k = &s->slot[i];
    memset(k, 0, sizeof *k);
    int bad = CALL(s, cuModuleLoadData, (&k->mod, img));
    munmap(img, (size_t)m->image_bytes);
    if (s->load_hook != NULL) {
        char entry[KG_NAME_MAX];
        snprintf(entry, sizeof entry, "%.*s", (int)sizeof entry - 1, m->launch[0].entry);
        s->load_hook(entry);
    }
    if (bad) {
        reply_status(s, r, KG_CH_LOAD, KG_CH_FAIL, s->why);
        return;
    }
    k->used = 1;
    k->nlaunch = m->nlaunch;
    static const int attr_of[KG_CH_NATTR] = {
        [KG_CH_A_MAX_THREADS] = KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        [KG_CH_A_STATIC_SHARED] = KG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        [KG_CH_A_CONST] = KG_CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
        [KG_CH_A_LOCAL] = KG_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
        [KG_CH_A_REGS] = KG_CU_FUNC_ATTRIBUTE_NUM_REGS,
        [KG_CH_A_PTX] = KG_CU_FUNC_ATTRIBUTE_PTX_VERSION,
        [KG_CH_A_BINARY] = KG_CU_FUNC_ATTRIBUTE_BINARY_VERSION,
    };
    for (int li = 0; li < k->nlaunch; li++) {
        ch_launch *l = &k->launch[li];
        l->spec = m->launch[li];
        l->spec.entry[sizeof l->spec.entry - 1] = '\0';
        if (l->spec.nargs < 0 || l->spec.nargs > KG_LAUNCH_MAX_ARGS) {
            slot_free(s, k);
            reply_status(s, r, KG_CH_LOAD, KG_CH_FAIL, "a launch with too many arguments");
            return;
        }
        if (CALL(s, cuModuleGetFunction, (&l->fn, k->mod, l->spec.entry)) != 0) {
            r->n = li;
            slot_free(s, k);
            reply_status(s, r, KG_CH_LOAD, KG_CH_NOENTRY, s->why);
            return;
        }
        for (int a = 0; a < KG_CH_NATTR; a++)
            if (CALL(s, cuFuncGetAttribute, (&l->spec.attr[a], attr_of[a], l->fn)) != 0) {
                slot_free(s, k);
                reply_status(s, r, KG_CH_LOAD, KG_CH_FAIL, s->why);
                return;
            }
        /* above 48 KiB of shared memory in all, the entry must opt in */
        long total = (long)l->spec.geom.shared_bytes + l->spec.attr[KG_CH_A_STATIC_SHARED];
        if (total > 48L * 1024L && total <= s->smem_optin &&
            CALL(s, cuFuncSetAttribute, (l->fn, KG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         (int)l->spec.geom.shared_bytes)) != 0) {
            r->n = li;
            r->launch[li] = l->spec;
            slot_free(s, k);
            reply_status(s, r, KG_CH_LOAD, KG_CH_REFUSED, s->why);
            return;
        }
        for (int a = 0; a < l->spec.nargs; a++) l->params[a] = &l->spec.args[a].value;
        r->launch[li] = l->spec;
    }
    r->slot = i;
    r->nlaunch = k->nlaunch;
    reply_status(s, r, KG_CH_LOAD, KG_CH_OK, NULL);
}

/* Launches one operation (every launch of the chain) on the stream:
 * 0, or a refused launch (*refused its index) or another error. */
static int launch_op(ch_state *s, ch_slot *k, int *refused)
{
    *refused = -1;
    for (int li = 0; li < k->nlaunch; li++) {
        ch_launch *l = &k->launch[li];
        const kg_launch_geom *g = &l->spec.geom;
        CUresult rr = s->drv.cuLaunchKernel(l->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1],
                                            g->block[2], g->shared_bytes, s->stream, l->params, NULL);
        if (rr == KG_CUDA_SUCCESS) continue;
        if (kg_cuda_launch_refusal(rr)) *refused = li;
        return ok(s, rr, "cuLaunchKernel");
    }
    return 0;
}

/* A failed call: a sticky error is the arm's fault (replied FAULT; the
 * caller exits), a refused launch is REFUSED, anything else FAIL. */
static int failed(ch_state *s, kg_ch_msg *r, uint32_t t, int refused)
{
    if (sticky(s->last)) {
        reply_status(s, r, t, KG_CH_FAULT, s->why);
        return 1;
    }
    if (refused >= 0) {
        r->n = refused;
        reply_status(s, r, t, KG_CH_REFUSED, s->why);
        return 0;
    }
    reply_status(s, r, t, KG_CH_FAIL, s->why);
    return 0;
}

/* Points every buffer argument of k's launches at the buffers of BIND m
 * (mapped at ptr), the inputs at input set `set` (0: the first), and
 * encodes each tensor map argument of them here, where they are mapped.
 * 1; 0 when an argument has no buffer; -1 when the driver refused a
 * tensor map (s->why says which). */
static int bind_set(ch_state *s, ch_slot *k, const kg_ch_msg *m, const CUdeviceptr *ptr, int set)
{
    for (int li = 0; li < k->nlaunch; li++) {
        ch_launch *l = &k->launch[li];
        for (int a = 0; a < l->spec.nargs; a++) {
            kg_carg *c = &l->spec.args[a];
            int role = c->kind == KG_CARG_TMAP ? (c->tmap.out ? KG_CARG_OUT : KG_CARG_IN) : (int)c->kind;
            if (role != KG_CARG_IN && role != KG_CARG_OUT && role != KG_CARG_WS) continue;
            /* inputs of the set; outputs of the set where each operation has its own, else the first */
            int want = role == KG_CARG_IN || (role == KG_CARG_OUT && m->op_outs) ? set : 0, found = -1;
            for (int b = 0; b < m->nbuf && found < 0; b++)
                if (m->buf_role[b] == (int32_t)role && (role == KG_CARG_WS || m->buf_index[b] == c->index) &&
                    (role == KG_CARG_WS || m->buf_set[b] == want))
                    found = b;
            if (found < 0) return 0;
            if (c->kind != KG_CARG_TMAP) c->value.ptr = ptr[found];
            else if ((s->last = kg_cuda_tmap_encode(&s->drv, c, ptr[found], s->why, sizeof s->why)) != KG_CUDA_SUCCESS)
                return -1;
        }
    }
    return 1;
}

static int do_bind(ch_state *s, const kg_ch_msg *m, kg_ch_msg *r)
{
    s->last = 0;
    ch_slot *k = slot_of(s, m);
    if (k == NULL || m->nbuf < 0 || m->nbuf > KG_CH_NBUF || m->pack < 1) {
        reply_status(s, r, KG_CH_BIND, KG_CH_FAIL, k == NULL ? s->why : "a bad binding");
        return 0;
    }
    slot_unbind(s, k);
    CUdeviceptr ptr[KG_CH_NBUF];
    for (int b = 0; b < m->nbuf; b++) {
        int mi;
        if (map_open(s, &m->ipc[b], m->buf_bytes[b], &mi) != 0) {
            slot_unbind(s, k);
            return failed(s, r, KG_CH_BIND, -1);
        }
        k->maps[k->nmaps++] = mi;
        ptr[b] = s->map[mi].ptr;
        if (m->buf_role[b] == KG_CARG_WS) {
            k->ws = ptr[b];
            k->ws_bytes = m->buf_bytes[b];
        }
        if (m->buf_role[b] == KG_CARG_IN) k->in[k->nin++] = (kg_cuda_warm_buf){ ptr[b], m->buf_bytes[b] };
    }
    int bound = m->nop < 0 || m->nop > KG_BIND_MAX_OP_SETS || m->nop > m->pack - 1 ? 0 : bind_set(s, k, m, ptr, 0);
    for (int j = 1; j <= m->nop && bound == 1; j++)
        if ((bound = bind_set(s, k, m, ptr, j)) == 0) {
            slot_unbind(s, k);
            reply_status(s, r, KG_CH_BIND, KG_CH_FAIL, "an input set with a buffer missing");
            return 0;
        }
    if (bound != 1) {
        slot_unbind(s, k);
        /* a refused tensor map is the case's, as a refused launch is */
        if (bound < 0) {
            reply_status(s, r, KG_CH_BIND, KG_CH_INADMISSIBLE, s->why);
            s->last = 0;
        } else {
            reply_status(s, r, KG_CH_BIND, KG_CH_FAIL, "a buffer argument with no buffer bound");
        }
        return 0;
    }
    /* the capture is always ended, even after a failed launch; operation i
     * of the timed graph reads the input set kgate/backend.h's rule names */
    int refused = -1, bad = CALL(s, cuStreamBeginCapture, (s->stream, KG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    if (!bad) {
        for (int i = 0; i < m->pack && !bad; i++) {
            if (m->nop > 0) bind_set(s, k, m, ptr, kg_binding_op_set(m->nop, i, m->pack));
            bad = launch_op(s, k, &refused);
        }
        /* checked runs read the first set */
        if (m->nop > 0) bind_set(s, k, m, ptr, 0);
        CUresult saved = s->last;
        char why[KG_CH_TEXT];
        snprintf(why, sizeof why, "%s", s->why);
        int bad_end = CALL(s, cuStreamEndCapture, (s->stream, &k->graph));
        if (bad) {
            s->last = saved;
            snprintf(s->why, sizeof s->why, "%s", why);
        }
        bad = bad || bad_end;
    }
    if (!bad) bad = CALL(s, cuGraphInstantiate, (&k->exec, k->graph, 0));
    if (bad) {
        slot_unbind(s, k);
        return failed(s, r, KG_CH_BIND, refused);
    }
    k->bound = 1;
    reply_status(s, r, KG_CH_BIND, KG_CH_OK, NULL);
    return 0;
}

static int do_run(ch_state *s, const kg_ch_msg *m, kg_ch_msg *r)
{
    s->last = 0;
    ch_slot *k = slot_of(s, m);
    if (k == NULL || !k->bound) {
        reply_status(s, r, KG_CH_RUN, KG_CH_FAIL, k == NULL ? s->why : "run before bind");
        return 0;
    }
    int refused = -1;
    /* a checked run: the shared memory of every SM and the workspace hold
     * kgate's poison first */
    const char *call = "";
    uint32_t word = 0;
    int covered = 0;
    CUresult pr = kg_cuda_poison_run(&s->drv, &s->poison, s->stream, k->ws, k->ws_bytes, &word, &covered, &call);
    if (ok(s, pr, call) != 0) return failed(s, r, KG_CH_RUN, -1);
    r->smem_sms = covered;
    r->smem_word = word;
    /* everything the launches started finishes here: the whole context,
     * which holds nothing but this arm's work */
    if (launch_op(s, k, &refused) != 0 || CALL(s, cuCtxSynchronize, ()) != 0)
        return failed(s, r, KG_CH_RUN, refused);
    reply_status(s, r, KG_CH_RUN, KG_CH_OK, NULL);
    return 0;
}

static int do_time(ch_state *s, const kg_ch_msg *m, kg_ch_msg *r)
{
    s->last = 0;
    ch_slot *k = slot_of(s, m);
    if (k == NULL || !k->bound) {
        reply_status(s, r, KG_CH_TIME, KG_CH_FAIL, k == NULL ? s->why : "time before bind");
        return 0;
    }
    const char *call = "";
    CUresult rr = KG_CUDA_SUCCESS;
    /* l2 = warm: the sample's input sets into the L2, in this context,
     * just before the sample (its own synchronisation comes next) */
    if (m->warm) rr = kg_cuda_warm_run(&s->drv, &s->warm, s->stream, k->in, k->nin, &r->warm_ns, &r->warm_bytes, &call);
    if (rr == KG_CUDA_SUCCESS) rr = kg_cuda_gate_replay(&s->drv, &s->gate, k->exec, &r->event_ns, &r->host_ns, &call);
    int bad = ok(s, rr, call);
    if (bad) return failed(s, r, KG_CH_TIME, -1);
    reply_status(s, r, KG_CH_TIME, KG_CH_OK, NULL);
    return 0;
}

static int setup(ch_state *s, const kg_cuda_host_opts *o)
{
    kg_settings set = *kg_settings_defaults();
    set.lib_cuda = o->driver;
    kg_err e = { 0 };
    if (kg_cuda_driver_load(&s->drv, &set, &e) != KG_OK) {
        snprintf(s->why, sizeof s->why, "%.400s", e.msg);
        return -1;
    }
    if (CALL(s, cuInit, (0)) != 0) return -1;
    int count = 0;
    if (CALL(s, cuDeviceGetCount, (&count)) != 0) return -1;
    int found = 0;
    for (int i = 0; i < count && !found; i++) {
        CUuuid u;
        char text[64];
        if (CALL(s, cuDeviceGet, (&s->dev, i)) != 0 || CALL(s, cuDeviceGetUuid, (&u, s->dev)) != 0) return -1;
        kg_cuda_uuid_text(&u, text, sizeof text);
        found = strcmp(text, o->uuid) == 0;
    }
    if (!found) {
        snprintf(s->why, sizeof s->why, "no device with UUID %s among the %d visible here", o->uuid, count);
        return -1;
    }
    if (CALL(s, cuDeviceGetAttribute, (&s->smem_optin, KG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                       s->dev)) != 0 ||
        CALL(s, cuDevicePrimaryCtxRetain, (&s->ctx, s->dev)) != 0 || CALL(s, cuCtxSetCurrent, (s->ctx)) != 0 ||
        CALL(s, cuStreamCreate, (&s->stream, KG_CU_STREAM_NON_BLOCKING)) != 0)
        return -1;
    const char *call = "";
    CUresult rr = kg_cuda_gate_init(&s->drv, &s->gate, s->stream, &call);
    if (ok(s, rr, call) != 0) return -1;
    rr = kg_cuda_poison_init(&s->drv, s->dev, &s->poison, &call);
    if (ok(s, rr, call) != 0) return -1;
    rr = kg_cuda_warm_init(&s->drv, s->dev, &s->warm, &call);
    return ok(s, rr, call);
}

/* The variables kg_cuda_host_env may set, and the sanitizer's. */
static const char *const host_env_names[] = { "PATH=", "LANG=", "OPENBLAS_NUM_THREADS=", "HOME=", "TMPDIR=",
                                              "CUDA_CACHE_DISABLE=", "CUDA_VISIBLE_DEVICES=", "LD_LIBRARY_PATH=",
                                              "CUDA_DEVICE_MAX_CONNECTIONS=",
                                              "ASAN_OPTIONS=", NULL };

int kg_cuda_host_env(const char *dir, const char *driver_path, const char *visible, char *store, size_t cap, char *envp[],
                     int max)
{
    char libdir[PATH_MAX] = "";
    const char *slash = driver_path != NULL ? strrchr(driver_path, '/') : NULL;
    if (slash != NULL && slash > driver_path) snprintf(libdir, sizeof libdir, "%.*s", (int)(slash - driver_path), driver_path);
    /* the arm host's own list: PATH, LANG, OPENBLAS_NUM_THREADS=1 (kgate
     * links OpenBLAS, whose constructor would start threads), HOME, TMPDIR
     * (and the sanitizer's options in such a build) */
    char base[2 * PATH_MAX + 256], *basev[8];
    int nb = kg_sandbox_env(dir, base, sizeof base, basev, 8);
    if (nb < 0) return -1;
    size_t used = 0;
    int n = 0;
    char one[PATH_MAX + 64];
    for (int i = 0; i < nb + 4 && n < max - 1; i++) {
        if (i < nb) {
            snprintf(one, sizeof one, "%s", basev[i]);
        } else if (i == nb) {
            snprintf(one, sizeof one, "CUDA_CACHE_DISABLE=1");
        } else if (i == nb + 1) {
            /* two hardware work queues, not the driver's eight: the host
             * runs one stream and the gate's side stream (which must not
             * share the first one's queue, kg_cuda_gate).  A context
             * opens faster with fewer (64 at once on an H100: 5.7 s
             * against 16.1 s), and more of them fit a device (132 at once
             * failed there at the default: CUDA_ERROR_OUT_OF_MEMORY);
             * docs/cuda-backend.md, "What a host's context costs". */
            snprintf(one, sizeof one, "CUDA_DEVICE_MAX_CONNECTIONS=%d", KG_CUDA_HOST_CONNECTIONS);
        } else if (i == nb + 2) {
            if (visible == NULL) continue;
            snprintf(one, sizeof one, "CUDA_VISIBLE_DEVICES=%.200s", visible);
        } else {
            if (libdir[0] == '\0') continue;
            snprintf(one, sizeof one, "LD_LIBRARY_PATH=%s", libdir);
        }
        size_t len = strlen(one) + 1;
        if (used + len > cap) return -1;
        memcpy(store + used, one, len);
        envp[n++] = store + used;
        used += len;
    }
    envp[n] = NULL;
    return n;
}

/* From the SIGSYS handler: async-signal-safe only (kg_frame_pack is
 * arithmetic, send a system call). */
static uint32_t violation_seq;
static void on_violation(int nr)
{
    unsigned char f[KG_FRAME_HEADER + 4];
    kg_frame_pack(f, KG_CH_VIOLATION, violation_seq, 4);
    kg_put32(f + KG_FRAME_HEADER, (uint32_t)nr);
    send(KG_CH_SOCK_FD, f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT);
}

int kg_cuda_host_main(const kg_cuda_host_opts *o)
{
    static ch_state st;
    ch_state *s = &st;
    s->load_hook = o->load_hook;
    kg_ch_msg *m = calloc(1, sizeof *m), *r = calloc(1, sizeof *r);
    if (m == NULL || r == NULL) return 3;
    /* confined before the driver starts (sandbox.h): it dies with the
     * worker, no core, no ptrace by its peers, no new privileges, its own
     * folder and namespaces, the key's and the evidence's folders hidden */
    kg_sandbox_opts so = { .parent = o->parent, .dir = o->dir, .hide = o->hide, .on_violation = on_violation,
                           .env_names = host_env_names };
    char why[KG_CH_TEXT - 32];
    if (kg_sandbox_cuda_enter(&so, &s->sandbox, why, sizeof why) != 0) {
        snprintf(s->why, sizeof s->why, "confinement: %s", why);
        reply_status(s, r, KG_CH_HELLO, KG_CH_FAIL, s->why);
        return 3;
    }
    if (setup(s, o) != 0) {
        reply_status(s, r, KG_CH_HELLO, KG_CH_FAIL, s->why);
        return 3;
    }
    /* the driver is up and kgate's kernels loaded: the allow-list, before
     * any arm's image reaches the driver's parser */
    if (kg_sandbox_cuda_lock(&so, &s->sandbox, why, sizeof why) != 0) {
        snprintf(s->why, sizeof s->why, "confinement: %s", why);
        reply_status(s, r, KG_CH_HELLO, KG_CH_FAIL, s->why);
        return 3;
    }
    r->smem_optin = s->smem_optin;
    r->sandbox = (int32_t)s->sandbox;
    r->smem_sms = s->poison.sm_count;
    reply_status(s, r, KG_CH_HELLO, KG_CH_OK, NULL);
    for (;;) {
        int fd = -1;
        uint32_t kind = 0;
        if (recv_req(s, m, &kind, &fd) != 0) return 4;   /* the worker is gone or spoke nonsense */
        violation_seq = s->seq;
        memset(r, 0, sizeof *r);
        r->slot = m->slot;
        int fatal = 0;
        switch (kind) {
        case KG_CH_LOAD:
            do_load(s, m, fd, r);
            fd = -1;
            break;
        case KG_CH_BIND: fatal = do_bind(s, m, r); break;
        case KG_CH_RUN: fatal = do_run(s, m, r); break;
        case KG_CH_TIME: fatal = do_time(s, m, r); break;
        case KG_CH_UNLOAD: {
            ch_slot *k = slot_of(s, m);
            if (k != NULL) slot_free(s, k);
            reply_status(s, r, KG_CH_UNLOAD, k != NULL ? KG_CH_OK : KG_CH_FAIL, k != NULL ? NULL : s->why);
            break;
        }
        case KG_CH_QUIT:
            return 0;
        default:
            reply_status(s, r, kind, KG_CH_FAIL, "unknown request");
            break;
        }
        if (fd >= 0) close(fd);
        /* a faulted context is unusable: the host ends with it */
        if (fatal) return 5;
    }
}
