/* armhost.c: the arm host's body (armhost.h). */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "backend/armhost.h"
#include "backend/armpage.h"
#include "base/frame.h"
#include "kgate/kernel.h"
#include "sandbox/sandbox.h"
#include "base/util.h"

typedef void (*ah_entry)(const kg_kargs *);

/* The sequence number of the request being served: its reply's tag. */
static uint32_t cur_seq;

static void reply_nonce(uint32_t kind, int status, uint32_t prot, const char *text, uint64_t nonce)
{
    kg_ah_reply r;
    memset(&r, 0, sizeof r);
    r.nonce = nonce;
    r.status = status;
    r.prot = prot;
    r.cpu = sched_getcpu();
    if (text != NULL) snprintf(r.msg, sizeof r.msg, "%s", text);
    kg_frame_sendmsg(KG_SANDBOX_SOCK_FD, kind, cur_seq, &r, sizeof r, NULL, 0);
}

static void reply(uint32_t kind, int status, uint32_t prot, const char *text)
{
    reply_nonce(kind, status, prot, text, 0);
}

/* From the SIGSYS handler: async-signal-safe only (kg_frame_pack is
 * arithmetic, send a system call). */
static void on_violation(int nr)
{
    unsigned char f[KG_FRAME_HEADER + 4];
    kg_frame_pack(f, KG_AH_VIOLATION, cur_seq, 4);
    kg_put32(f + KG_FRAME_HEADER, (uint32_t)nr);
    send(KG_SANDBOX_SOCK_FD, f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT);
}

typedef struct ah_map {
    void *p;
    size_t len;
} ah_map;

static void unmap_all(ah_map *maps)
{
    for (int i = 0; i < KG_AH_NBUF; i++) {
        if (maps[i].p != NULL) munmap(maps[i].p, maps[i].len);
        maps[i].p = NULL;
        maps[i].len = 0;
    }
}

/* One request (kind, payload) and the descriptors that came with it
 * (*nfd of them): 0, or -1 when the worker is gone or sent what is not
 * a request (a malformed frame, a known kind of another size). */
static int recv_req(uint32_t *kind, void *payload, int *fds, int *nfd)
{
    static unsigned char buf[KG_FRAME_HEADER + sizeof(kg_ah_bind)];
    kg_frame_rx rx;
    memset(&rx, 0, sizeof rx);
    rx.buf = buf;
    rx.max_len = sizeof(kg_ah_bind);
    rx.fds = fds;
    rx.maxfd = KG_AH_NBUF;
    *nfd = 0;
    if (kg_frame_recvmsg(KG_SANDBOX_SOCK_FD, 1, &rx) != 1) return -1;
    *nfd = rx.nfd;
    *kind = rx.h.kind;
    cur_seq = rx.h.tag;
    size_t want = rx.h.kind == KG_AH_BIND ? sizeof(kg_ah_bind) : rx.h.kind == KG_AH_QUIT || rx.h.kind == KG_AH_PAGE
                ? 0 : rx.h.len;
    if (rx.h.len != want) {
        for (int i = 0; i < rx.nfd; i++) close(fds[i]);
        return -1;
    }
    memcpy(payload, rx.payload, rx.h.len);
    return 0;
}

/* in_sets[0] is a->in; in_sets[j + 1] the input set of op_in[j];
 * out_sets likewise (out_sets[j + 1] is a->out without op_outs) */
static int do_bind(const kg_ah_bind *m, const int *fds, int nfd, ah_map *maps, kg_kargs *a,
                   const void *in_sets[][KG_MAX_IN], void *out_sets[][KG_MAX_OUT], int *nop)
{
    int base = m->nin + m->nout + (m->has_ws ? 1 : 0), sets = base + m->nop * m->nin;
    if (m->nin < 0 || m->nin > KG_MAX_IN || m->nout < 0 || m->nout > KG_MAX_OUT || m->nop < 0 || m->nop > KG_BIND_MAX_OP_SETS ||
        (m->nop > 0 && m->nin == 0) || (m->op_outs != 0 && m->op_outs != 1) || (m->op_outs && m->nout == 0) ||
        nfd != sets + (m->op_outs ? m->nop * m->nout : 0))
        return -1;
    unmap_all(maps);
    memset(a, 0, sizeof *a);
    a->abi = KG_KARGS_ABI;
    a->dtype = m->dtype;
    for (int i = 0; i < nfd; i++) {
        int is_in = i < m->nin || (i >= base && i < sets);
        size_t len = (size_t)m->bytes[i];
        void *p = mmap(NULL, len ? len : 1, is_in ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
        if (p == MAP_FAILED) return -1;
        maps[i].p = p;
        maps[i].len = len ? len : 1;
        if (i < m->nin) a->in[i] = p;
        else if (i < m->nin + m->nout) a->out[i - m->nin] = p;
        else if (i < base) a->ws = p;
        else if (i < sets) in_sets[1 + (i - base) / m->nin][(i - base) % m->nin] = p;
        else out_sets[1 + (i - sets) / m->nout][(i - sets) % m->nout] = p;
    }
    for (int i = 0; i < KG_MAX_IN; i++) in_sets[0][i] = a->in[i];
    for (int j = 0; j <= m->nop; j++)
        if (j == 0 || !m->op_outs)
            for (int o = 0; o < KG_MAX_OUT; o++) out_sets[j][o] = a->out[o];
    *nop = m->nop;
    a->ws_bytes = a->ws != NULL ? (size_t)m->ws_bytes : 0;
    a->M = m->M;
    a->N = m->N;
    a->K = m->K;
    a->splits = m->splits;
    a->eps = m->eps;
    a->nvars = m->nvars >= 0 && m->nvars <= KG_KARGS_VARS ? m->nvars : 0;
    for (int v = 0; v < a->nvars; v++) {
        memcpy(a->var_name[v], m->var_name[v], sizeof a->var_name[v]);
        a->var_name[v][sizeof a->var_name[v] - 1] = '\0';
        a->var_i[v] = m->var_i[v];
        a->var_r[v] = m->var_r[v];
    }
    return 0;
}

/* 0 when the host's affinity is exactly the one CPU the worker pinned
 * itself to (o->cpu; any when -1), else -1 with why. */
static int check_cpu(const kg_armhost_opts *o, char *why, size_t cap)
{
    if (o->cpu < 0) return 0;
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) != 0) {
        snprintf(why, cap, "cannot read its CPU affinity: %s", strerror(errno));
        return -1;
    }
    if (o->cpu >= CPU_SETSIZE || CPU_COUNT(&s) != 1 || !CPU_ISSET(o->cpu, &s)) {
        snprintf(why, cap, "its CPU affinity is %d CPUs, not the worker's CPU %d alone", CPU_COUNT(&s), o->cpu);
        return -1;
    }
    return 0;
}

/* Sandbox, load, lock: the kernel's entry, or NULL after a refused HELLO. */
static ah_entry start(const kg_armhost_opts *o, unsigned *active)
{
    char why[KG_AH_MSG_TEXT];
    if (check_cpu(o, why, sizeof why) != 0) {
        char t[KG_AH_MSG_TEXT + 16];
        snprintf(t, sizeof t, "pinning: %s", why);
        reply(KG_AH_HELLO, KG_AH_FAIL, 0, t);
        return NULL;
    }
    kg_sandbox_opts so = { .parent = o->parent, .dir = o->dir, .mem_bytes = o->mem_bytes, .cpu_s = o->cpu_s, .hide = o->hide,
                           .on_violation = on_violation };
    if (kg_sandbox_enter(&so, active, why, sizeof why) != 0) {
        char t[KG_AH_MSG_TEXT + 16];
        snprintf(t, sizeof t, "sandbox: %s", why);
        reply(KG_AH_HELLO, KG_AH_FAIL, 0, t);
        return NULL;
    }
    void *h = dlopen(o->so, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        reply(KG_AH_HELLO, KG_AH_NOLOAD, 0, dlerror());
        return NULL;
    }
    void *sym = dlsym(h, o->entry);
    if (sym == NULL) {
        reply(KG_AH_HELLO, KG_AH_NOENTRY, 0, o->entry);
        return NULL;
    }
    ah_entry fn;
    memcpy(&fn, &sym, sizeof fn);
    if (kg_sandbox_lock(active, why, sizeof why) != 0) {
        reply(KG_AH_HELLO, KG_AH_FAIL, 0, why);
        return NULL;
    }
    return fn;
}

/* The arm in the host: its entry, its binding and the worker's page. */
typedef struct ah_state {
    ah_entry fn;
    ah_map maps[KG_AH_NBUF];
    kg_kargs args;
    const void *in_sets[1 + KG_BIND_MAX_OP_SETS][KG_MAX_IN];
    void *out_sets[1 + KG_BIND_MAX_OP_SETS][KG_MAX_OUT];
    int nop, bound;
    kg_ah_page *page;     /* the request page once mapped (PAGE) */
    uint32_t last;        /* its state as last seen or written here */
    uint32_t served;      /* the sequence number of the last RUN served */
    int served_any;
} ah_state;

static void run_calls(ah_state *st, int n)
{
    if (st->nop == 0) {
        for (int i = 0; i < n; i++) st->fn(&st->args);
        return;
    }
    for (int i = 0; i < n; i++) {
        int set = kg_binding_op_set(st->nop, i, n);
        memcpy(st->args.in, st->in_sets[set], sizeof st->args.in);
        memcpy(st->args.out, st->out_sets[set], sizeof st->args.out);
        st->fn(&st->args);
    }
    memcpy(st->args.in, st->in_sets[0], sizeof st->args.in);
    memcpy(st->args.out, st->out_sets[0], sizeof st->args.out);
}

/* PAGE: maps the worker's request page (one descriptor), once. */
static int map_page(ah_state *st, const int *fds, int nfd)
{
    if (nfd != 1 || st->page != NULL) return -1;
    void *p = mmap(NULL, sizeof(kg_ah_page), PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    if (p == MAP_FAILED) return -1;
    st->page = p;
    st->last = kg_armpage_state(st->page);
    return 0;
}

/* A RUN of sequence seq posted on the page: the calls, then the reply on
 * the page (DONE, swapped in from RUN) or, when the state is no longer
 * RUN, as a frame: the worker asked for one (SLOW), or the arm's code
 * changed the state, and the frame is then a second reply the worker
 * takes as a message nobody asked for. */
static void page_run(ah_state *st, uint32_t seq)
{
    kg_ah_page *pg = st->page;
    int n = pg->n;
    uint64_t nonce = pg->nonce;
    int ok = st->bound && n >= 1;
    if (ok) run_calls(st, n);
    const char *why = ok ? "" : "run before bind";
    pg->echo = nonce;
    pg->status = ok ? KG_AH_OK : KG_AH_FAIL;
    pg->cpu = sched_getcpu();
    for (size_t i = 0; i < sizeof pg->msg; i++) {
        pg->msg[i] = why[i];
        if (why[i] == '\0') break;
    }
    st->served = seq;
    st->served_any = 1;
    uint32_t seen = 0;
    if (kg_armpage_answer(pg, KG_AP_STATE(seq, KG_AP_RUN), KG_AP_STATE(seq, KG_AP_DONE), &seen)) {
        st->last = KG_AP_STATE(seq, KG_AP_DONE);
        return;
    }
    cur_seq = seq;
    reply_nonce(KG_AH_RUN, ok ? KG_AH_OK : KG_AH_FAIL, 0, ok ? NULL : why, nonce);
    st->last = seen;
}

/* Waits on the page for the worker's next post: 1 when a framed request
 * waits on the socket, 0 when a RUN was served here. */
static int page_next(ah_state *st)
{
    for (;;) {
        uint32_t s = kg_armpage_state(st->page);
        if (s == st->last) {
            kg_armpage_wait(st->page, s, -1);
            continue;
        }
        st->last = s;
        uint32_t seq = KG_AP_SEQ(s), phase = KG_AP_PHASE(s);
        if (phase == KG_AP_SOCK) return 1;
        /* SLOW before the host took the RUN: served, answered as a frame */
        if (phase == KG_AP_RUN || (phase == KG_AP_SLOW && !(st->served_any && st->served == seq))) {
            page_run(st, seq);
            return 0;
        }
    }
}

int kg_armhost_main(const kg_armhost_opts *o)
{
    unsigned active = 0;
    ah_state st;
    memset(&st, 0, sizeof st);
    st.fn = start(o, &active);
    if (st.fn == NULL) return 3;
    cur_seq = 0;
    reply(KG_AH_HELLO, KG_AH_OK, active, NULL);
    for (;;) {
        if (st.page != NULL && page_next(&st) == 0) continue;
        kg_ah_bind m;
        uint32_t kind = 0;
        int fds[KG_AH_NBUF], nfd = 0;
        if (recv_req(&kind, &m, fds, &nfd) != 0) return 4;   /* the worker is gone or spoke nonsense */
        int rc;
        switch (kind) {
        case KG_AH_PAGE:
            rc = map_page(&st, fds, nfd);
            for (int i = 0; i < nfd; i++) close(fds[i]);
            reply(KG_AH_PAGE, rc == 0 ? KG_AH_OK : KG_AH_FAIL, 0, rc == 0 ? NULL : "bad request page");
            break;
        case KG_AH_BIND:
            rc = do_bind(&m, fds, nfd, st.maps, &st.args, st.in_sets, st.out_sets, &st.nop);
            for (int i = 0; i < nfd; i++) close(fds[i]);
            st.bound = rc == 0;
            reply(KG_AH_BIND, rc == 0 ? KG_AH_OK : KG_AH_FAIL, 0, rc == 0 ? NULL : "bad binding");
            break;
        case KG_AH_QUIT:
            return 0;
        default:
            for (int i = 0; i < nfd; i++) close(fds[i]);
            reply(kind, KG_AH_FAIL, 0, "unknown request");
            break;
        }
    }
}
