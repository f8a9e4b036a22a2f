/* armhost.c: the arm host's body (armhost.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "backend/armhost.h"
#include "kgate/kernel.h"
#include "sandbox/sandbox.h"
#include "base/util.h"

typedef void (*ah_entry)(const kg_kargs *);

static uint64_t cur_seq;

static int send_msg(kg_ah_msg *m)
{
    m->magic = KG_AH_MAGIC;
    ssize_t w = send(KG_SANDBOX_SOCK_FD, m, sizeof *m, MSG_NOSIGNAL);
    return w == (ssize_t)sizeof *m ? 0 : -1;
}

static void reply(uint32_t type, int status, const char *text)
{
    kg_ah_msg m;
    memset(&m, 0, sizeof m);
    m.type = type;
    m.seq = cur_seq;
    m.status = status;
    if (text != NULL) snprintf(m.msg, sizeof m.msg, "%s", text);
    send_msg(&m);
}

/* From the SIGSYS handler: async-signal-safe only. */
static void on_violation(int nr)
{
    kg_ah_msg m;
    memset(&m, 0, sizeof m);
    m.magic = KG_AH_MAGIC;
    m.type = KG_AH_VIOLATION;
    m.seq = cur_seq;
    m.status = KG_AH_FAIL;
    m.n = nr;
    send(KG_SANDBOX_SOCK_FD, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
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

/* One request and the descriptors that came with it (*nfd of them). */
static int recv_req(kg_ah_msg *m, int *fds, int *nfd)
{
    if (kg_recv_msg_fds(KG_SANDBOX_SOCK_FD, m, sizeof *m, fds, KG_AH_NBUF, nfd) != 0) return -1;
    return m->magic == KG_AH_MAGIC ? 0 : -1;
}

/* in_sets[0] is a->in; in_sets[j + 1] the input set of op_in[j] */
static int do_bind(const kg_ah_msg *m, const int *fds, int nfd, ah_map *maps, kg_kargs *a,
                   const void *in_sets[][KG_MAX_IN], int *nop)
{
    int base = m->nin + m->nout + (m->has_ws ? 1 : 0);
    if (m->nin < 0 || m->nin > KG_MAX_IN || m->nout < 0 || m->nout > KG_MAX_OUT || m->nop < 0 || m->nop > KG_BIND_MAX_OP_SETS ||
        (m->nop > 0 && m->nin == 0) || nfd != base + m->nop * m->nin)
        return -1;
    unmap_all(maps);
    memset(a, 0, sizeof *a);
    a->abi = KG_KARGS_ABI;
    a->dtype = m->dtype;
    for (int i = 0; i < nfd; i++) {
        int is_in = i < m->nin || i >= base;
        size_t len = (size_t)m->bytes[i];
        void *p = mmap(NULL, len ? len : 1, is_in ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
        if (p == MAP_FAILED) return -1;
        maps[i].p = p;
        maps[i].len = len ? len : 1;
        if (i < m->nin) a->in[i] = p;
        else if (i < m->nin + m->nout) a->out[i - m->nin] = p;
        else if (i < base) a->ws = p;
        else in_sets[1 + (i - base) / m->nin][(i - base) % m->nin] = p;
    }
    for (int i = 0; i < KG_MAX_IN; i++) in_sets[0][i] = a->in[i];
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

int kg_armhost_main(const kg_armhost_opts *o)
{
    unsigned active = 0;
    char why[KG_AH_MSG_TEXT];
    kg_sandbox_opts so = { .parent = o->parent, .dir = o->dir, .mem_bytes = o->mem_bytes, .cpu_s = o->cpu_s, .hide = o->hide,
                           .on_violation = on_violation };
    if (kg_sandbox_enter(&so, &active, why, sizeof why) != 0) {
        char t[KG_AH_MSG_TEXT + 16];
        snprintf(t, sizeof t, "sandbox: %s", why);
        reply(KG_AH_HELLO, KG_AH_FAIL, t);
        return 3;
    }
    void *h = dlopen(o->so, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        reply(KG_AH_HELLO, KG_AH_NOLOAD, dlerror());
        return 3;
    }
    void *sym = dlsym(h, o->entry);
    if (sym == NULL) {
        reply(KG_AH_HELLO, KG_AH_NOENTRY, o->entry);
        return 3;
    }
    ah_entry fn;
    memcpy(&fn, &sym, sizeof fn);
    if (kg_sandbox_lock(&active, why, sizeof why) != 0) {
        reply(KG_AH_HELLO, KG_AH_FAIL, why);
        return 3;
    }
    kg_ah_msg hello;
    memset(&hello, 0, sizeof hello);
    hello.type = KG_AH_HELLO;
    hello.prot = active;
    if (send_msg(&hello) != 0) return 3;

    ah_map maps[KG_AH_NBUF];
    memset(maps, 0, sizeof maps);
    kg_kargs args;
    memset(&args, 0, sizeof args);
    const void *in_sets[1 + KG_BIND_MAX_OP_SETS][KG_MAX_IN];
    memset(in_sets, 0, sizeof in_sets);
    int nop = 0;
    int bound = 0;
    for (;;) {
        kg_ah_msg m;
        int fds[KG_AH_NBUF], nfd = 0;
        if (recv_req(&m, fds, &nfd) != 0) return 4;   /* the worker is gone or spoke nonsense */
        cur_seq = m.seq;
        switch (m.type) {
        case KG_AH_BIND: {
            int rc = do_bind(&m, fds, nfd, maps, &args, in_sets, &nop);
            for (int i = 0; i < nfd; i++) close(fds[i]);
            bound = rc == 0;
            reply(KG_AH_BIND, rc == 0 ? KG_AH_OK : KG_AH_FAIL, rc == 0 ? NULL : "bad binding");
            break;
        }
        case KG_AH_RUN:
            for (int i = 0; i < nfd; i++) close(fds[i]);
            if (!bound || m.n < 1) {
                reply(KG_AH_RUN, KG_AH_FAIL, "run before bind");
                break;
            }
            if (nop == 0) {
                for (int i = 0; i < m.n; i++) fn(&args);
            } else {
                for (int i = 0; i < m.n; i++) {
                    memcpy(args.in, in_sets[kg_binding_op_set(nop, i, m.n)], sizeof args.in);
                    fn(&args);
                }
                memcpy(args.in, in_sets[0], sizeof args.in);
            }
            reply(KG_AH_RUN, KG_AH_OK, NULL);
            break;
        case KG_AH_QUIT:
            return 0;
        default:
            for (int i = 0; i < nfd; i++) close(fds[i]);
            reply(m.type, KG_AH_FAIL, "unknown request");
            break;
        }
    }
}
