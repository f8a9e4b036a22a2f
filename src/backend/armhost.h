/* armhost.h: the arm host, the process an untrusted CPU arm runs in, and
 * its protocol with the worker's cpu backend (src/backend/cpu.c).
 *
 * The worker execs `kgate armhost` fresh (never a bare fork: a fork would
 * copy the worker's references and rows into the candidate's address
 * space) with the request socket, a SOCK_SEQPACKET socketpair end, as
 * descriptor KG_SANDBOX_SOCK_FD and its stdout and stderr on a pipe the
 * worker drains.  The host enters its sandbox (sandbox.h), opens the
 * arm's shared object, locks the sandbox further, and says HELLO with
 * the protections that took effect (and, when the worker pinned itself
 * to one CPU, having checked that its own affinity is that CPU, which it
 * inherited and which its sandbox lets no code of the arm change).  Then
 * it serves requests until QUIT:
 *   PAGE  the request page (armpage.h) as a descriptor: a page of the
 *         worker's, shared read-write, through which every later request
 *         is announced and every RUN passes as futex words instead of
 *         socket messages
 *   BIND  the buffers as descriptors (SCM_RIGHTS: inputs read-only,
 *         outputs and workspace read-write) and the kg_kargs scalars
 *   RUN n calls the kernel n times, then replies; call i reads the input
 *         set kg_binding_op_set(nop, i, n) names (0: the first nin).
 *         Posted on the page with a nonce and answered there (armpage.h);
 *         answered as a frame only when the worker asks for one
 *   QUIT  exits
 * Every message on the socket is one frame (hostlink.h, base/frame.h):
 * kind KG_AH_*, tag the request's sequence number, payload the fields
 * below, of exactly their size (PAGE none, with one descriptor; BIND a
 * kg_ah_bind; QUIT none; every reply a kg_ah_reply); the payloads are C
 * structs, both ends being the same kgate.  Once the page is mapped the
 * host waits on it, not on the socket: the worker posts KG_AP_SOCK there
 * before each framed request.  Every reply, on the page or the socket,
 * is checked by the worker.  A system call the sandbox denies is
 * reported as VIOLATION (its number, a little-endian 32-bit word) just
 * before the host dies of SIGSYS. */
#ifndef KGATE_ARMHOST_H
#define KGATE_ARMHOST_H

#include <stdint.h>
#include <sys/types.h>
#include "base/util.h"
#include "kgate/backend.h"
#include "kgate/err.h"
#include "kgate/kernel.h"

/* in[], out[], ws, then nop input sets, then (op_outs) nop output sets */
#define KG_AH_NBUF (KG_MAX_IN + KG_MAX_OUT + 1 + (KG_MAX_IN + KG_MAX_OUT) * KG_BIND_MAX_OP_SETS)
_Static_assert(KG_AH_NBUF <= KG_MAX_PASSED_FDS, "a BIND's descriptors exceed what one message to a host carries");
#define KG_AH_MSG_TEXT 200

enum { KG_AH_HELLO = 1, KG_AH_BIND = 2, KG_AH_RUN = 3, KG_AH_QUIT = 4, KG_AH_VIOLATION = 5, KG_AH_PAGE = 6 };

/* status of a reply */
enum { KG_AH_OK = 0, KG_AH_FAIL = 1, KG_AH_NOLOAD = 2, KG_AH_NOENTRY = 3 };

/* BIND: the buffers, as descriptors in the order in[], out[], ws, then
 * nop input sets of nin each, then with op_outs nop output sets of nout
 * each (operation j's own output), and the kg_kargs scalars. */
typedef struct kg_ah_bind {
    int32_t nin, nout, has_ws;
    int32_t dtype;
    int32_t nop, op_outs;
    int32_t nvars;                /* the case's named variables (kg_kargs.var_*) */
    uint64_t bytes[KG_AH_NBUF];   /* bytes to map of each descriptor */
    uint64_t ws_bytes;
    int64_t M, N, K, splits;
    double eps;
    char var_name[KG_KARGS_VARS][32];
    int64_t var_i[KG_KARGS_VARS];
    double var_r[KG_KARGS_VARS];
} kg_ah_bind;

/* Every reply (HELLO, PAGE, BIND, and RUN when asked for as a frame). */
typedef struct kg_ah_reply {
    uint64_t nonce;               /* RUN: the request's nonce, echoed (armpage.h); 0 otherwise */
    int32_t status;               /* KG_AH_OK, else msg says why */
    uint32_t prot;                /* HELLO: KG_SBX_* bits in effect */
    int32_t cpu;                  /* the CPU the host is on as it replies (sched_getcpu; RUN: read after the
                                   * calls); -1: unknown.  The host's word: a pinned worker reads the CPU
                                   * from outside and ignores it */
    char msg[KG_AH_MSG_TEXT];     /* a reason, NUL-terminated */
} kg_ah_reply;

typedef struct kg_armhost_opts {
    const char *so;       /* the arm's shared object, absolute */
    const char *entry;    /* its entry symbol */
    const char *dir;      /* the private folder the worker made */
    pid_t parent;         /* the worker */
    uint64_t mem_bytes;   /* RLIMIT_AS; 0: none */
    long cpu_s;           /* RLIMIT_CPU; 0: none */
    const char *hide;     /* colon-separated folders to hide (kg_sandbox_opts.hide) */
    int cpu;              /* >= 0: the one CPU the worker pinned itself and its hosts to: the host's
                           * affinity must be exactly it, or it refuses its HELLO; -1: not pinned */
} kg_armhost_opts;

/* The arm host's body (`kgate armhost`): sandbox, load, serve.  Returns
 * the exit status for the process (0 after QUIT); the caller exits with
 * _exit so that nothing of the candidate's runs at exit. */
int kg_armhost_main(const kg_armhost_opts *o);

#endif
