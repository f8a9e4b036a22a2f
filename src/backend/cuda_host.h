/* cuda_host.h: the cuda arm host, the process an untrusted CUDA arm runs
 * in, and its protocol with the worker's cuda backend (cuda.c).
 *
 * Device code cannot patch host memory, but it can read and write any
 * device memory of its own process: every context of one process shares
 * one device address space (measured on the H200,
 * docs/measurements/h200-2026-12-01-cudaiso/).  So an untrusted arm's
 * kernels run in a process of their own, whose device address space holds
 * nothing but that arm's module and the buffers the worker bound to it.
 * The host's own code is kgate's (an arm is device code only), so what it
 * measures is trusted: it records the events and the host bracket around
 * each timed sample itself.
 *
 * The worker execs `kgate armhost --cuda` fresh (never a bare fork) with
 * the request socket as descriptor KG_CH_SOCK_FD and its output on a pipe
 * (hostlink.h).  The host retains the primary context of the device the
 * worker names by UUID and says HELLO.  Then, each one frame (hostlink.h,
 * base/frame.h: kind KG_CH_*, tag the request's sequence number) whose
 * payload is one kg_ch_msg, request and reply alike, of exactly its size
 * (a C struct: both ends are the same kgate):
 *   LOAD    a cubin (a memfd, SCM_RIGHTS) and the launch chain, the
 *           entries' attributes in the reply, a kernel slot
 *   BIND    a slot's buffers as IPC handles of the worker's allocations
 *           (each a whole allocation of its own, never sub-allocated), and
 *           the pack: the host captures pack operations as one graph
 *   RUN     one operation of a slot, then the whole context synchronised
 *   TIME    the graph between two events, the context synchronised, the
 *           host's CLOCK_MONOTONIC_RAW around both: event and host ns;
 *           with `warm` set (l2 = warm), the slot's input sets are read into
 *           the L2 by kgate's kernel first (cuda_l2.c), outside the bracket
 *   UNLOAD  a slot's module and mappings go
 *   QUIT    exits
 * A fault of the arm's kernel (a sticky error) is replied FAULT with the
 * driver's error, and the host exits: its context is unusable.  A launch
 * the device refuses is replied REFUSED with the launch and the error. */
#ifndef KGATE_CUDA_HOST_H
#define KGATE_CUDA_HOST_H

#include <stdint.h>
#include "backend/cuda_api.h"
#include "backend/launch.h"
#include "kgate/backend.h"
#include "kgate/plan.h"

#define KG_CH_SOCK_FD 3
/* in[], out[], ws, then nop input sets, then (op_outs) nop output sets */
#define KG_CH_NBUF (KG_MAX_IN + KG_MAX_OUT + 1 + (KG_MAX_IN + KG_MAX_OUT) * KG_BIND_MAX_OP_SETS)
#define KG_CH_NLAUNCH (1 + KG_EXTRA_LAUNCHES)
#define KG_CH_SLOTS 64              /* kernels loaded in one host at once */
#define KG_CH_TEXT 480

enum { KG_CH_HELLO = 1, KG_CH_LOAD = 2, KG_CH_BIND = 3, KG_CH_RUN = 4, KG_CH_TIME = 5,
       KG_CH_UNLOAD = 6, KG_CH_QUIT = 7,
       /* the host's last word: its filter denied a system call (4 bytes: its number) */
       KG_CH_VIOLATION = 8 };

/* status of a reply */
enum { KG_CH_OK = 0, KG_CH_FAIL = 1, KG_CH_FAULT = 2, KG_CH_REFUSED = 3, KG_CH_NOENTRY = 4,
       /* BIND: the driver refused an argument for this case (a tensor map): text says why */
       KG_CH_INADMISSIBLE = 5 };

/* attributes of one compiled entry, as cuFuncGetAttribute reads them */
enum { KG_CH_A_MAX_THREADS, KG_CH_A_STATIC_SHARED, KG_CH_A_CONST, KG_CH_A_LOCAL, KG_CH_A_REGS,
       KG_CH_A_PTX, KG_CH_A_BINARY, KG_CH_NATTR };

typedef struct kg_ch_launch {
    char entry[KG_NAME_MAX];
    kg_launch_geom geom;
    int32_t nargs;
    int32_t pad;
    kg_carg args[KG_LAUNCH_MAX_ARGS];   /* buffer arguments by kind and index */
    int32_t attr[KG_CH_NATTR];          /* LOAD reply */
} kg_ch_launch;

typedef struct kg_ch_msg {
    int32_t status;                 /* reply: KG_CH_OK, else text says why */
    int32_t n;                      /* REFUSED: the launch (0-based) */
    int32_t slot;                   /* LOAD reply; BIND, RUN, TIME, UNLOAD */
    int32_t nlaunch;                /* LOAD */
    int32_t nbuf;                   /* BIND: handles in ipc, in the binding's order */
    int32_t pack;                   /* BIND */
    int32_t nop;                    /* BIND: input sets besides the first (kgate/backend.h) */
    int32_t op_outs;                /* BIND: 1 when each of those operations writes an output set of its own */
    int32_t cu;                     /* reply: the CUresult of the call that failed */
    int32_t smem_optin;             /* HELLO reply: the device's opt-in shared memory per block */
    int32_t sandbox;                /* HELLO reply: the confinement in effect (KG_SBX_* bits, sandbox.h) */
    int32_t smem_sms;               /* HELLO reply: the device's SMs; RUN reply: the SMs whose shared memory
                                     * the run's poison reached */
    uint32_t smem_word;             /* RUN reply: the word the shared memory and workspace held first */
    uint64_t image_bytes;           /* LOAD: bytes of the cubin in the descriptor */
    kg_ch_launch launch[KG_CH_NLAUNCH];
    CUipcMemHandle ipc[KG_CH_NBUF]; /* BIND */
    uint64_t buf_bytes[KG_CH_NBUF]; /* BIND: each allocation's size */
    int32_t buf_role[KG_CH_NBUF];   /* BIND: KG_CARG_IN, _OUT or _WS of each */
    int32_t buf_index[KG_CH_NBUF];  /* BIND: its index among that role's buffers */
    int32_t buf_set[KG_CH_NBUF];    /* BIND: 0 the first set, j + 1 op_in[j]'s (op_out[j]'s for outputs) */
    double event_ns, host_ns;       /* TIME reply */
    double warm_ns;                 /* TIME reply: the L2 warm-up's host time (warm set) */
    uint64_t warm_bytes;            /* TIME reply: the input bytes it read */
    int32_t warm;                   /* TIME: read the slot's input sets into the L2 first (l2 = warm) */
    int32_t warm_pad;
    char text[KG_CH_TEXT];          /* reply: a reason, NUL-terminated */
} kg_ch_msg;

typedef struct kg_cuda_host_opts {
    const char *driver;   /* the libcuda the worker opened (its path) */
    const char *uuid;     /* the device, "GPU-..." as the worker describes it */
    const char *arm;      /* for messages */
    const char *dir;      /* the private folder the worker made */
    const char *hide;     /* colon-separated folders out of its sight (the signing key's, the evidence
                           * folder): covered in its mount namespace; NULL: none */
    int parent;           /* the worker */
    /* called after the driver parsed an arm's image (cuModuleLoadData), with
     * the launch's entry, where an exploit of the driver's parser would run:
     * set only by the test host of tests/unit/cuda_host_attack.c; no command
     * line sets it */
    void (*load_hook)(const char *entry);
} kg_cuda_host_opts;

/* The host's body (`kgate armhost --cuda`): returns the process's exit
 * status (0 after QUIT).  Its confinement, before the driver starts
 * (single-threaded): no new privileges, parent-death SIGKILL, not
 * dumpable, no core, a session of its own (the worker starts it in one),
 * its private folder; user,
 * mount and network namespaces where the kernel allows them, with the
 * --hide folders covered by an empty tmpfs.  After the driver opened the
 * device and kgate's own kernels are loaded, before any arm's image
 * reaches the driver: no file may grow (RLIMIT_FSIZE 0) and the seccomp
 * allow-list of sandbox.h (kg_sandbox_cuda_lock), whose violation is
 * reported as KG_CH_VIOLATION before the process dies of SIGSYS. */
int kg_cuda_host_main(const kg_cuda_host_opts *o);

/* The environment a cuda arm host is started with, built by the worker
 * (NULL-terminated, strings in store): PATH, LANG, OPENBLAS_NUM_THREADS=1,
 * HOME and TMPDIR (its private folder dir), CUDA_CACHE_DISABLE=1, CUDA_VISIBLE_DEVICES when
 * the worker has it (visible; NULL: unset), LD_LIBRARY_PATH the folder of
 * the driver the worker opened (driver_path) so that the driver finds its
 * own libraries, CUDA_DEVICE_MAX_CONNECTIONS=KG_CUDA_HOST_CONNECTIONS (its
 * context's hardware work queues: the host's stream and the gate's side
 * stream, each on its own), and nothing else (the host finds its device by
 * UUID, so the order of devices does not matter).  -1 when it does not
 * fit. */
#define KG_CUDA_HOST_CONNECTIONS 2
int kg_cuda_host_env(const char *dir, const char *driver_path, const char *visible, char *store, size_t cap,
                     char *envp[], int max);

#endif
