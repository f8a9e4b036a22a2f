/* kgate/backend.h: the seam between the protocol and the hardware.
 *
 * Backends: cpu (C kernels compiled by the system cc into shared
 * objects), fake (scripted timings from the plan, deterministic from the
 * seed, for tests), cuda (NVRTC-compiled kernels timed with events around
 * CUDA-graph replays).  An open backend is an opaque handle; callers use
 * the kg_backend_* wrappers of backend.c, which own the policy for
 * optional slots (each backend's table is private: backend_impl.h).  What
 * kgate may assume about a backend it has not opened (capabilities, lock
 * name, compiler, the device's compute processes) is asked of the
 * registry by name.  A backend never prints to stdout.
 *
 * Life cycle in a worker: open, alloc/upload inputs, load an arm for a
 * case, bind its buffers, run (untimed, for checks) and time (samples),
 * download outputs, unload, free, close.  build() runs in the supervisor,
 * before any worker, so that compile errors stop a campaign early and no
 * candidate code runs in the supervisor. */
#ifndef KGATE_BACKEND_H
#define KGATE_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"
#include "kgate/gen.h"
#include "kgate/peaks.h"
#include "kgate/plan.h"
#include "kgate/settings.h"

typedef struct kg_backend kg_backend;   /* opaque: an open backend */
typedef struct kg_kernel kg_kernel;   /* one arm loaded for one case; backend-owned */

typedef struct kg_dbuf {
    void *ptr;        /* device address (host address on cpu and fake) */
    size_t bytes;
} kg_dbuf;

/* inputs = fresh with pack > 1: input sets besides in[], one per
 * operation of a timed sample but its last (so pack <= 1 + this) */
#define KG_BIND_MAX_OP_SETS (KG_PLAN_MAX_FRESH_PACK - 1)

/* Buffers an arm's kernel works on for one case.  Output buffers are
 * followed by kg_guard_bytes() of guard (not counted in out_bytes).
 * Operation i of a run of n operations (a timed sample: n = pack; a
 * checked run: n = 1) reads kg_binding_op_in(b, i, n): the last one
 * in[], the one before it op_in[0], the one before that op_in[1], ...,
 * and in[] where no such set is bound (nop = 0: every operation reads
 * in[]).  The output a sample leaves in out[] is then always of in[]'s
 * inputs.  With op_outs = 1 the operation that reads op_in[j] writes
 * op_out[j] (its own output, which the sampled checks may compare: an
 * operation before the last is then checked too), where the backend
 * says the kernel can (kg_backend_op_outputs); with op_outs = 0 every
 * operation writes out[]. */
typedef struct kg_binding {
    const kg_case *kase;
    kg_dbuf in[KG_MAX_IN];   int nin;
    kg_dbuf out[KG_MAX_OUT]; int nout;
    size_t out_bytes[KG_MAX_OUT];
    kg_dbuf ws;            /* workspace, may be empty */
    int pack;              /* operations per timed sample */
    kg_dbuf op_in[KG_BIND_MAX_OP_SETS][KG_MAX_IN];
    int nop;               /* sets in op_in, 0 .. min(pack - 1, KG_BIND_MAX_OP_SETS) */
    kg_dbuf op_out[KG_BIND_MAX_OP_SETS][KG_MAX_OUT];   /* with op_outs: nop sets of nout */
    int op_outs;
} kg_binding;

/* The input set (nin buffers) operation i of a run of n reads. */
static inline const kg_dbuf *kg_binding_op_in(const kg_binding *b, int i, int n)
{
    int j = n - 2 - i;
    return j >= 0 && j < b->nop ? b->op_in[j] : b->in;
}

/* The same rule as a set number: 0 for in[], j + 1 for op_in[j]. */
static inline int kg_binding_op_set(int nop, int i, int n)
{
    int j = n - 2 - i;
    return j >= 0 && j < nop ? j + 1 : 0;
}

/* Where a sample sits in the protocol.  It exists for the fake backend,
 * which scripts its timings from it (kgate/plan.h's fake_* keys); the
 * real backends ignore it. */
typedef struct kg_sample_ctx {
    int proc, dir, round, sample;
    int arm, kase;
    int first_arm;         /* arm listed first in this process's arm order */
    int pos;               /* position of the arm in this round's order */
    uint64_t seed;
    int load_slot;         /* index of the arm in the order its instances were loaded in this
                            * process for this case (0: loaded first) */
    uint64_t place_seed;   /* seed of the process's buffer placement; 0: none given */
} kg_sample_ctx;

/* One reading of the device, taken between samples (never inside one).
 * Fields a backend cannot read are -1 (NaN for power). */
typedef struct kg_telemetry {
    double t_ns;                  /* host CLOCK_MONOTONIC_RAW at the reading */
    int sm_clock_mhz, mem_clock_mhz;
    double power_w;
    int temp_c;
    uint64_t clock_event_reasons; /* NVML clocks event (throttle) reasons mask */
    int foreign_procs;            /* compute processes on the device besides this one */
    /* timing integrity: time() also brackets each sample on the host with a
     * device-wide synchronisation; a bracket longer than twice the event
     * time plus 200 us counts as an escape (work outside the events) */
    uint64_t samples, escapes;
    double last_event_ns, last_host_ns;  /* of the last sample, whole pack */
    /* the CPU the last sample's code ran on, read after it (cpu: the arm's
     * host from outside and as the host says, the worker for an in-worker
     * arm, the library helper); -1 on backends that run nothing on the
     * host's CPUs (KG_CAP_HOST_CPU) or when it cannot be read */
    int cpu;
} kg_telemetry;

/* The longest provenance record of a library arm (kg_resources.library). */
#define KG_LIBRARY_RECORD_MAX 1536

/* What a loaded kernel uses, for the evidence. */
typedef struct kg_resources {
    int regs;                     /* registers per thread */
    int static_shared_bytes, dynamic_shared_bytes;
    int local_bytes;              /* per thread: spills, local arrays */
    int const_bytes;
    int max_threads_per_block;    /* of the compiled entry */
    int ptx_version, binary_version;   /* major * 10 + minor */
    int64_t grid[3], block[3];
    int launches;                 /* kernel launches per operation */
    char arch[16];                /* "sm_90" */
    size_t image_bytes;           /* cubin (or shared object) size */
    char image_sha256[65];
    /* cpu: the arm host's protections in effect, as
     * "seccomp,nnp,..." (sandbox.h), or "trusted (in the worker)"; "" elsewhere */
    char sandbox[128];
    /* a library arm (builtin = torch or numpy): its provenance
     * record, JSON (library, versions, call, expression, output, compile,
     * cache); "" for every other arm */
    char library[KG_LIBRARY_RECORD_MAX];
} kg_resources;

/* Opens the backend named name ("auto", "cpu", "fake", "cuda").  "auto"
 * picks cuda when a GPU is usable, else cpu, and writes the reason for
 * the choice into notice (may be NULL).  The backend takes what it needs
 * from the environment from s (compiler, include folder, library names,
 * negative arms...), which must outlive it; NULL means the defaults. */
int kg_backend_open(const char *name, const kg_plan *plan, const kg_settings *s, kg_backend **out,
                    char *notice, size_t notice_cap, kg_err *err);

/* The worker's arm hosts started side by side now, where the backend
 * runs arms in hosts of their own (cuda); otherwise nothing.  skip (per
 * arm, NULL: none): arms the process leaves out, whose hosts are not
 * started (a screen's drops). */
void kg_backend_prestart(kg_backend *be, const unsigned char *skip);
void kg_backend_close(kg_backend *be);   /* NULL-safe */
const char *kg_backend_name(const kg_backend *be);

int kg_backend_build(kg_backend *be, const kg_plan *plan, int arm, const char *build_dir, kg_err *err);
int kg_backend_alloc(kg_backend *be, size_t bytes, kg_dbuf *out, kg_err *err);
void kg_backend_free(kg_backend *be, kg_dbuf *buf);
int kg_backend_upload(kg_backend *be, const kg_dbuf *dst, size_t off, const void *src, size_t n, kg_err *err);
int kg_backend_download(kg_backend *be, void *dst, const kg_dbuf *src, size_t off, size_t n, kg_err *err);
int kg_backend_load(kg_backend *be, const kg_plan *plan, int arm, int kase, const char *build_dir,
                    kg_kernel **out, kg_err *err);
void kg_backend_unload(kg_backend *be, kg_kernel *k);
int kg_backend_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err);
int kg_backend_run(kg_backend *be, kg_kernel *k, kg_err *err);
int kg_backend_time(kg_backend *be, kg_kernel *k, const kg_sample_ctx *ctx, double *ns, kg_err *err);
int kg_backend_flush(kg_backend *be, kg_err *err);
/* One sentence for the evidence: how the plan's l2 was honoured before
 * k's timed samples so far (what was read into the cache or flushed, by
 * which process, at what cost), or that the backend did nothing. */
void kg_backend_cache_note(kg_backend *be, kg_kernel *k, char *buf, size_t cap);
/* Under l2 = warm: the most bytes of buffers one timed sample may read
 * (its input sets and outputs) and still find every one in the cache when
 * it starts, and in why what that is ("a quarter of the device's 50 MiB
 * L2"); 0 where the backend does not know (nothing is refused then).
 * The worker refuses a fresh-input pack whose sets exceed it
 * (docs/cuda-backend.md, "The cache regime"). */
uint64_t kg_backend_warm_budget(kg_backend *be, char *why, size_t cap);
void kg_backend_describe(kg_backend *be, char *buf, size_t cap);
/* The device's peaks (kgate/peaks.h), measured in trusted code.  Always
 * fills out: a backend without the optional slot, or whose measurement
 * fails, gives measured = 0 and a status that says why (nothing is
 * guessed).  Returns KG_OK unless out is NULL. */
int kg_backend_peaks(kg_backend *be, kg_peaks *out, kg_err *err);
/* Writes the input stream of spec (kgate/gen.h) into buf with the
 * backend's own generator (the cpu backend on the host, the cuda backend
 * as a kernel of kgate's in the worker's context): the bits
 * kg_oracle_generate gives, without a host copy or an upload.
 * KG_EUNSUPPORTED where the backend has none (the caller generates on the
 * host and uploads); buf must hold spec->n elements of spec->dtype. */
int kg_backend_fill(kg_backend *be, const kg_dbuf *buf, const kg_gen_spec *spec, kg_err *err);
int kg_backend_has_fill(const kg_backend *be);
/* 1 when loaded kernel k writes an output of its own per operation of a
 * sample (kg_binding's op_out) when they are bound; 0: every operation
 * writes out[] */
int kg_backend_op_outputs(const kg_backend *be, const kg_kernel *k);

/* 1 when arm is to be built as the numerical negative: not a precompiled
 * image (kgate cannot rebuild one), s->negative
 * (KGATE_NEGATIVE=1), and s->negative_arm unset or naming this arm.  s
 * may be NULL (defaults: never). */
int kg_backend_negative(const kg_settings *s, const kg_arm *arm);

/* ---- optional readings of an open backend ---- */

/* 1 when the backend reads telemetry (kg_backend_telemetry), resp.
 * reports resource records (kg_backend_resources): the worker writes the
 * telemetry folder only for such a backend. */
int kg_backend_has_telemetry(const kg_backend *be);
int kg_backend_has_resources(const kg_backend *be);

/* Device readings and timing-integrity counters, between samples.
 * KG_EUNSUPPORTED when the backend reads none or the device cannot be
 * read (no NVML). */
int kg_backend_telemetry(kg_backend *be, kg_telemetry *out, kg_err *err);

/* The resource record of launch i (0-based) of a loaded kernel's chain;
 * launch 0's has `launches` set to the chain length.  KG_EUNSUPPORTED
 * when the backend reports no records, or none past the first launch. */
int kg_backend_resources(kg_backend *be, kg_kernel *k, int i, kg_resources *out, kg_err *err);

/* ---- capabilities ---- */

enum {
    /* timed runs execute the kernel (on fake they compute nothing: the
     * outputs are those of the last checked run) */
    KG_CAP_EXECUTES = 1u << 0,
    /* timings depend on the host being quiet: the plan's quiet window and
     * the default list of forbidden processes apply (on fake, scripted
     * timings, there is no window unless one is asked for) */
    KG_CAP_QUIET_HOST = 1u << 1,
    /* the kernel runs on the host's CPUs: steal time, other processes' CPU
     * load and frequency changes are watched (quiet.h) */
    KG_CAP_HOST_CPU = 1u << 2
};

unsigned kg_backend_caps(const kg_backend *be);   /* KG_CAP_* */

/* ---- the registry, by name: what is known without opening a backend ---- */

/* The values of a plan's backend key are kg_plan_backends (kgate/plan.h):
 * "auto" and every backend of the registry. */

/* 1 when name is a backend compiled in ("auto" is a choice, not one). */
int kg_backend_known(const char *name);

/* KG_CAP_* of the backend named name; 0 for an unknown name. */
unsigned kg_backend_caps_of(const char *name);

/* The name of the device lock of a campaign on backend name and the
 * device described by device (kg_backend_describe's text): "cpu",
 * "fake", or the GPU's UUID from the description ("gpu" when it names
 * none).  An unknown name shares the host's lock, "cpu". */
void kg_backend_lock_key(const char *name, const char *device, char *buf, size_t cap);
/* The device model in a description (kg_backend_describe's text): the
 * text before what names one device of that model (", driver ", ", UUID ",
 * ", fake device ").  Two shards of a campaign ran on the same model when
 * these are equal (kgate merge, docs/scale-out.md). */
void kg_backend_device_model(const char *device, char *buf, size_t cap);

/* The compiler command the backend's build runs (cpu: KGATE_CC, else
 * "cc"), for the environment receipt; NULL when it runs none.  s may be
 * NULL (defaults). */
const char *kg_backend_compiler(const char *name, const kg_settings *s);

/* 1 when the backend's libraries are present here (cuda: the driver
 * opens); a look, not an open.  Backends that need nothing: 1; an
 * unknown name: 0.  s may be NULL (defaults). */
int kg_backend_available(const char *name, const kg_settings *s);

/* The backends compiled in, for `kgate list`: the name of the i-th
 * (0-based; NULL past the last) and its one-line description in buf,
 * which says, for a backend that looks for its libraries, whether they
 * are present here (kg_backend_available).  s may be NULL (defaults). */
const char *kg_backend_about(int i, const kg_settings *s, char *buf, size_t cap);

/* A watch on the compute processes running on the device described by
 * device (kg_backend_describe's text), for the quiet-host checks of the
 * supervisor, which holds no backend open meanwhile.  NULL when the
 * backend has no such query (cpu, fake) or the device cannot be read. */
typedef struct kg_procs_watch kg_procs_watch;
kg_procs_watch *kg_backend_procs_open(const char *name, const char *device, const kg_settings *s);
/* The number of compute processes on the device now, and up to cap of
 * their pids; KG_EUNSUPPORTED when they cannot be listed. */
int kg_backend_procs(kg_procs_watch *w, unsigned *count, unsigned *pids, int cap);
void kg_backend_procs_close(kg_procs_watch *w);   /* NULL-safe */

#endif
