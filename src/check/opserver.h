/* opserver.h: the op server, the one process that runs an evidence
 * folder's op code for `kgate verify` (opserver.c), and its client.
 *
 * Verify (a reader) runs no op code: to replay a saved output it needs the
 * op's float64 reference and bound, and asks the op server for them.  The
 * server is `kgate opserver`, exec'd fresh by the client with a
 * kgate-made environment (nothing of the user's), descriptors 0 (requests)
 * and 1 (replies) on pipes and 2 on /dev/null.  It reads the folder's
 * plan, compiles the folder's declared op sources (each checked against
 * the plan's sha256) into the private folder the client made, then
 * confines itself before any op code runs (src/sandbox/: no new
 * privileges, parent-death signal, every other descriptor closed, user,
 * mount, network and pid namespaces where the kernel allows them, the
 * signing key's folder and $HOME covered, resource limits, the seccomp
 * allow-list of an arm host), loads the modules (their constructors run
 * confined), stacks the filter that forbids opening files, says READY
 * and answers requests until its input ends.
 *
 * Frames (src/base/frame.h), tag = the request's sequence number:
 *   REF      client -> server: case (u32), precision (u32), tolerance
 *            (f64), seed (u64)
 *   REFS     server -> client: nout (u32); per output dtype (u32), weak
 *            (u32), elems (u64); then per output elems float64
 *            references and elems float64 bounds
 *   ERROR    server -> client: why it cannot answer a request (text)
 *   READY    server -> client: the protections in effect (text)
 *   VIOLATION server -> client: the system call (u32) the filter denied,
 *            just before the server dies of SIGSYS
 *
 * Nothing the server does decides verify's outcome but the values of a
 * well-formed REFS reply: an early end (whatever its exit status), a
 * hang past the client's limit, a forbidden call, a malformed, unasked or
 * oversized frame make the client's request fail, and verify says NOT
 * verified. */
#ifndef KGATE_OPSERVER_H
#define KGATE_OPSERVER_H

#include <stdint.h>
#include <sys/types.h>
#include "kgate/err.h"
#include "kgate/settings.h"
#include "verify/replay.h"

enum { KG_OPS_REF = 1, KG_OPS_REFS, KG_OPS_ERROR, KG_OPS_READY, KG_OPS_VIOLATION };

typedef struct kg_opserver_opts {
    const char *folder;       /* the evidence folder */
    const char *dir;          /* the private folder the client made (modules are built there) */
    pid_t parent;             /* the client */
    const char *hide;         /* colon-separated folders the op code must not see */
    const char *cc;           /* the C compiler; NULL: cc */
    const char *include_dir;  /* the folder holding kgate/op.h; NULL: found beside the program */
    const char *python;       /* the Python of ops declared in Python; NULL: /usr/bin/python3 */
    long cpu_s;               /* RLIMIT_CPU of the server; 0: none */
    uint64_t mem_bytes;       /* RLIMIT_AS; 0: none */
} kg_opserver_opts;

/* The server's body (`kgate opserver`): returns its exit status; the
 * caller _exits with it. */
int kg_opserver_main(const kg_opserver_opts *o);

/* The client: one server per folder, started on the first request. */
typedef struct kg_opclient kg_opclient;

typedef struct kg_opclient_opts {
    const kg_settings *settings;  /* the compiler, include folder, key folders, armhost_exe (this program) */
    double start_s;               /* the server's limit to build, load and say READY; <= 0: 120 s */
    double request_s;             /* its limit to answer one request; <= 0: 300 s */
} kg_opclient_opts;

int kg_opclient_new(const kg_opclient_opts *o, kg_opclient **out, kg_err *err);
/* Ends the server (killed if it still runs), reaps it, removes its folder. */
void kg_opclient_free(kg_opclient *c);
/* The reference source verify asks (replay.h). */
kg_ref_source kg_opclient_source(kg_opclient *c);

#endif
