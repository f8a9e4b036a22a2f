/* kgate/backend.h: the seam between the protocol and the hardware.
 *
 * One struct of function pointers per backend: cpu (C kernels compiled by
 * the system cc into shared objects), fake (scripted timings from the
 * plan, deterministic from the seed, for tests), cuda (NVRTC-compiled
 * kernels timed with events around CUDA-graph replays).  Callers use the
 * kg_backend_* wrappers in backend.c, which own the policy for optional
 * slots.  A backend never prints to stdout.
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
#include "kgate/plan.h"

#define KG_BACKEND_ABI 1

typedef struct kg_backend kg_backend;
typedef struct kg_kernel kg_kernel;   /* one arm loaded for one case; backend-owned */

typedef struct kg_dbuf {
    void *ptr;        /* device address (host address on cpu and fake) */
    size_t bytes;
} kg_dbuf;

/* Buffers an arm's kernel works on for one case.  Output buffers are
 * followed by kg_guard_bytes() of guard (not counted in out_bytes). */
typedef struct kg_binding {
    const kg_case *kase;
    kg_dbuf in[4];  int nin;
    kg_dbuf out[2]; int nout;
    size_t out_bytes[2];
    kg_dbuf ws;            /* workspace, may be empty */
    int pack;              /* operations per timed sample */
} kg_binding;

/* Where a sample sits in the protocol.  The fake backend scripts timings
 * from it; real backends ignore it. */
typedef struct kg_sample_ctx {
    int proc, dir, round, sample;
    int arm, kase;
    int first_arm;         /* arm listed first in this process's arm order */
    int pos;               /* position of the arm in this round's order */
    uint64_t seed;
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
} kg_telemetry;

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
} kg_resources;

typedef struct kg_backend_ops {
    int abi;               /* KG_BACKEND_ABI; new slots are appended only */
    const char *name;
    int  (*open)(kg_backend *be, const kg_plan *plan, kg_err *err);
    void (*close)(kg_backend *be);                 /* accepts a half-open backend */
    int  (*build)(kg_backend *be, const kg_plan *plan, int arm, const char *build_dir,
                  kg_err *err);                    /* optional */
    int  (*alloc)(kg_backend *be, size_t bytes, kg_dbuf *out, kg_err *err);
    void (*free)(kg_backend *be, kg_dbuf *buf);    /* NULL-safe */
    int  (*upload)(kg_backend *be, const kg_dbuf *dst, size_t off, const void *src,
                   size_t n, kg_err *err);
    int  (*download)(kg_backend *be, void *dst, const kg_dbuf *src, size_t off,
                     size_t n, kg_err *err);
    int  (*load)(kg_backend *be, const kg_plan *plan, int arm, int kase,
                 const char *build_dir, kg_kernel **out, kg_err *err);
    void (*unload)(kg_backend *be, kg_kernel *k);  /* NULL-safe */
    int  (*bind)(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err);
    int  (*run)(kg_backend *be, kg_kernel *k, kg_err *err);   /* one operation, waits */
    /* pack operations timed as one sample; *ns is per operation */
    int  (*time)(kg_backend *be, kg_kernel *k, const kg_sample_ctx *ctx, double *ns,
                 kg_err *err);
    int  (*flush)(kg_backend *be, kg_err *err);    /* optional: cold-cache flush */
    /* optional: a one-line description of the device for the run header */
    void (*describe)(kg_backend *be, char *buf, size_t cap);
    /* optional (appended): device readings and timing-integrity counters;
     * KG_EUNSUPPORTED when the device cannot be read (no NVML) */
    int  (*telemetry)(kg_backend *be, kg_telemetry *out, kg_err *err);
    /* optional (appended): the resource record of a loaded kernel */
    int  (*resources)(kg_backend *be, kg_kernel *k, kg_resources *out, kg_err *err);
    /* optional: launch i (0-based) of a chain; launch 0 is what resources gives */
    int  (*resources_launch)(kg_backend *be, kg_kernel *k, int i, kg_resources *out, kg_err *err);
} kg_backend_ops;

struct kg_backend {
    const kg_backend_ops *ops;
    void *ctx;             /* backend-private */
    const kg_plan *plan;
};

/* Opens the backend named name ("auto", "cpu", "fake", "cuda").  "auto"
 * picks cuda when a GPU is usable, else cpu, and writes the reason for
 * the choice into notice (may be NULL). */
int kg_backend_open(const char *name, const kg_plan *plan, kg_backend **out,
                    char *notice, size_t notice_cap, kg_err *err);
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
void kg_backend_describe(kg_backend *be, char *buf, size_t cap);

/* 1 when arm is to be built as the numerical negative: KGATE_NEGATIVE=1,
 * and KGATE_NEGATIVE_ARM unset or naming this arm. */
int kg_backend_negative(const kg_arm *arm);

/* The backends compiled into this library. */
extern const kg_backend_ops kg_backend_cpu;
extern const kg_backend_ops kg_backend_fake;
extern const kg_backend_ops kg_backend_cuda;

#endif
