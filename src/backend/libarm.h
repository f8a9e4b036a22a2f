/* libarm.h: library arms, `builtin = torch` and `builtin = numpy`
 * (docs/library-arms.md): the library everyone compares against, timed in
 * the same campaign, on the same generated inputs, under the same checks.
 *
 * A library arm is a call from a small table per op (libarm.c; the
 * helper's own table must agree, tests/cli/libarm.sh) made by kgate's
 * trusted helper, a Python process (libarm_helper.py, embedded in kgate)
 * that the worker starts once per arm and reuses across cases.  The
 * helper gets the worker's own buffers: the memfds of the cpu backend's
 * buffers (inputs read-only), or on the GPU the CUDA IPC handles of the
 * worker's allocations, so the call reads kgate's generated bits and
 * writes kgate's output buffer, which the float64 checks read as they do
 * every arm's.  A timed sample is pack calls timed by the helper: on the
 * GPU CUDA events around one replay of a CUDA graph of pack calls (the
 * native arms' method), with the host's monotonic clock around it; on the
 * cpu the monotonic clock around pack calls.  The helper is kgate's code,
 * not the candidate's, so its times are trusted like the cuda arm host's.
 *
 * The protocol is the hostlink's (hostlink.h): every request and reply
 * one frame (base/frame.h: kind KG_LA_*, tag the request's sequence
 * number) whose payload is one JSON object of at most KG_LA_MAX_BYTES,
 * a reply's with its "status" (KG_LA_*) and, unless OK, its "error"; the
 * helper reads and writes the same header and refuses a frame that is
 * not whole, of another magic or over the limit.  A helper that
 * dies, hangs, breaks the protocol or fails a request ends as a fault of
 * its arm (KG_EARM): the arm is INCORRECT on that case, the campaign goes
 * on.  A call that does not take a case (a dtype the library lacks) is
 * KG_EINADMISSIBLE for the arm. */
#ifndef KGATE_LIBARM_H
#define KGATE_LIBARM_H

#include <stddef.h>
#include "kgate/backend.h"
#include "kgate/err.h"
#include "kgate/plan.h"
#include "kgate/settings.h"

#define KG_LA_MAX_BYTES 16384        /* the longest JSON text of a request or reply */
#define KG_LA_MAX_FDS 64             /* descriptors of one BIND (the helper takes no more) */
#define KG_LA_RECORD_MAX KG_LIBRARY_RECORD_MAX   /* the provenance record kept per loaded case */

enum { KG_LA_HELLO = 1, KG_LA_LOAD = 2, KG_LA_BIND = 3, KG_LA_RUN = 4, KG_LA_TIME = 5, KG_LA_QUIT = 6,
       KG_LA_UNLOAD = 7 };
enum { KG_LA_OK = 0, KG_LA_FAIL = 1, KG_LA_REFUSED = 3 };

/* 1 when arm is a library arm (builtin = torch or numpy). */
int kg_libarm_is(const kg_arm *arm);

/* The call a library arm makes on op: its name and the expression the
 * helper runs (for reports).  KG_EINPUT naming the calls the op has when
 * the arm's call is not among them, or the op has none. */
int kg_libarm_call(const kg_arm *arm, const char *op, const char **name, const char **expr, kg_err *err);

/* The supervisor's build of a library arm: every case it applies to has
 * a call, and the helper starts (the library imports) on device (NULL:
 * the host's CPU; kg_libarm_start). */
typedef struct kg_libarm_builds kg_libarm_builds;
int kg_libarm_build(kg_libarm_builds **b, const kg_settings *s, const kg_plan *plan, int a, const char *device,
                    kg_err *err);
/* The first call builds every library arm of plan at once (their helpers
 * start side by side) and keeps each result in *b (the backend's, NULL at
 * first), which kg_libarm_builds_free ends (NULL-safe). */
void kg_libarm_builds_free(kg_libarm_builds *b);

/* The flags the helper's Python runs with: isolated (-I: no PYTHON*
 * variable, no user site-packages, not the script's folder on sys.path)
 * and writing no bytecode (-B). */
#define KG_LIBARM_PY_FLAGS "-I -B"

/* The helper's source, embedded in kgate, and its sha256. */
const char *kg_libarm_source(size_t *len);
void kg_libarm_source_sha256(char out[65]);

/* One bound buffer: role KG_CARG_IN or KG_CARG_OUT (launch.h), the op's
 * index of it, the input set (0: in[], j + 1: op_in[j]), its bytes, and
 * a memfd (cpu) or an IPC handle (cuda). */
typedef struct kg_libarm_buf {
    int role, index, set;
    size_t bytes;
    int fd;                        /* -1: none */
    unsigned char ipc[64];
    int has_ipc;
} kg_libarm_buf;

typedef struct kg_libarm kg_libarm;

/* Starts arm's helper: device NULL for the host's CPU, or the cuda
 * backend's device as "GPU-<uuid>".  timeout_s bounds every request. */
int kg_libarm_start(const kg_settings *s, const kg_plan *plan, int arm, const char *device, double timeout_s,
                    kg_libarm **out, kg_err *err);
/* kg_libarm_start in two steps, so that several helpers import their
 * library side by side: begin spawns the helper, ready reads its hello
 * (at once when it is already read; on a failure the helper is stopped
 * and *h is NULL). */
int kg_libarm_begin(const kg_settings *s, const kg_plan *plan, int arm, const char *device, double timeout_s,
                    kg_libarm **out, kg_err *err);
int kg_libarm_ready(kg_libarm **h, kg_err *err);
/* The helper of arm a in *slot, for a load: a helper that ended is
 * retired (kg_libarm_retire), one begun has its hello read, none is
 * started (kg_libarm_start); on a failure *slot is NULL. */
int kg_libarm_acquire(kg_libarm **slot, const kg_settings *s, const kg_plan *plan, int a, const char *device,
                      double timeout_s, kg_err *err);
/* Every library arm of plan among libs[0..n) not started yet and not
 * skipped (skip NULL: none; the worker skips the arms of no case it
 * runs): all begun, then every hello read.  A helper that fails to start is left NULL: the
 * arm's first load starts it again and tells why. */
void kg_libarm_prestart(const kg_settings *s, const kg_plan *plan, kg_libarm **libs, int n, const unsigned char *skip,
                        const char *device, double timeout_s);
/* 1 while the helper runs (a fault ends it; the next load starts another). */
int kg_libarm_alive(const kg_libarm *h);
/* The helper's process id (-1: none running), for the CPU it last ran on. */
long kg_libarm_pid(const kg_libarm *h);
/* The library's versions the helper reported (JSON), "" before the hello. */
const char *kg_libarm_versions(const kg_libarm *h);
/* A python call (call = python:FILE:FUNCTION) comes with the LOAD as the
 * text of the evidence folder's copy, build_dir/../sources/call-ARM.py (a
 * worker's), or of the plan's file (build_dir NULL: the supervisor's
 * build), each checked against the plan's call_sha256; the helper
 * compiles that text under FILE's name and calls FUNCTION(*inputs,
 * **variables) on the case's tensors, in kg_op_shape's shapes. */
#define KG_LIBARM_PY_EXPR "FUNCTION(*inputs, **variables), a Python function of the plan"
/* One case loaded into a slot of the helper (an arm is loaded for its
 * case and for held-out shapes side by side): the call's tensors,
 * variables and dtypes.  record (KG_LIBRARY_RECORD_MAX bytes) gets the
 * provenance record (JSON: library, versions, helper_sha256, call,
 * expression, output, timing, compile, cache); bind updates it. */
int kg_libarm_load(kg_libarm *h, const kg_case *cs, const char *build_dir, int *slot, char *record, kg_err *err);
int kg_libarm_bind(kg_libarm *h, int slot, const kg_libarm_buf *bufs, int n, int pack, int nop, char *record,
                   kg_err *err);
int kg_libarm_run(kg_libarm *h, int slot, kg_err *err);
/* pack calls: *ns the helper's time of all of them (events on the GPU),
 * *host_ns its host clock around them. */
int kg_libarm_time(kg_libarm *h, int slot, int pack, double *ns, double *host_ns, kg_err *err);
/* The same sample, on the GPU with l2 = warm first (warm != 0): the helper
 * reads every input buffer bound on the device (a reduction over each)
 * and synchronises before the sample; *warm_ns its host time for that,
 * *warm_bytes the bytes read (both 0 without warm). */
int kg_libarm_time_warm(kg_libarm *h, int slot, int pack, int warm, double *ns, double *host_ns, double *warm_ns,
                        uint64_t *warm_bytes, kg_err *err);
/* The slot's case goes (a helper that is gone has none). */
void kg_libarm_unload(kg_libarm *h, int slot);
void kg_libarm_stop(kg_libarm *h);   /* NULL-safe */
/* Tells the helper to end without waiting for it (NULL-safe): a backend
 * tells all its helpers first, so that they end side by side, then stops
 * each. */
void kg_libarm_quit(kg_libarm *h);
/* A helper that ended is kept (its memory) until kg_libarm_stop_retired,
 * so that kernels loaded on it stay safe to unload. */
int kg_libarm_retire(kg_libarm *h, kg_err *err);
void kg_libarm_stop_retired(void);

#endif
