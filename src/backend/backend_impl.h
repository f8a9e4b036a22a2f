/* backend_impl.h: what a backend implements, private to src/backend/.
 *
 * One const table of function pointers per backend (cpu.c, fake.c,
 * cuda.c) and the handle the wrappers of backend.c pass to it.  The rest
 * of kgate sees an opaque kg_backend and calls the kg_backend_* wrappers
 * of kgate/backend.h, which own the policy for optional slots; only
 * backend.c calls through the table.
 *
 * Besides the slots of an open backend, the table says what kgate may
 * assume about a backend before opening it (capabilities, lock key,
 * compiler, device processes, availability), because the supervisor
 * knows only the backend's name while no backend is open. */
#ifndef KGATE_BACKEND_IMPL_H
#define KGATE_BACKEND_IMPL_H

#include <stddef.h>
#include "kgate/backend.h"
#include "kgate/settings.h"

#define KG_BACKEND_ABI 1

struct kg_backend {
    const struct kg_backend_ops *ops;
    void *ctx;             /* backend-private */
    const kg_plan *plan;
    const kg_settings *settings;   /* never NULL once opened (defaults) */
};

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
    /* optional: device readings and timing-integrity counters;
     * KG_EUNSUPPORTED when the device cannot be read (no NVML) */
    int  (*telemetry)(kg_backend *be, kg_telemetry *out, kg_err *err);
    /* optional: the resource record of a loaded kernel */
    int  (*resources)(kg_backend *be, kg_kernel *k, kg_resources *out, kg_err *err);
    /* optional: launch i (0-based) of a chain; launch 0 is what resources gives */
    int  (*resources_launch)(kg_backend *be, kg_kernel *k, int i, kg_resources *out, kg_err *err);

    /* ---- what is known without opening the backend ---- */
    unsigned caps;         /* KG_CAP_* (kgate/backend.h) */
    /* optional: the name of the device lock for the device described
     * (kg_backend_describe's text); NULL: the backend's name */
    void (*lock_key)(const char *device, char *buf, size_t cap);
    /* optional: the compiler command build() runs, for the environment
     * receipt; NULL: none is recorded */
    const char *(*compiler)(const kg_settings *s);
    /* optional: a watch on the compute processes of the device described;
     * NULL from procs_open when they cannot be listed */
    void *(*procs_open)(const char *device, const kg_settings *s);
    int  (*procs_list)(void *watch, unsigned *count, unsigned *pids, int cap);
    void (*procs_close)(void *watch);
    /* optional: 1 when the backend's libraries are present here (a cheap
     * look, not an open); NULL: always */
    int  (*probe)(const kg_settings *s);
    /* optional: measure the device's peaks (kgate/peaks.h);
     * called by the supervisor with the device lock held, before the
     * first process; a failure is recorded, never guessed around */
    int  (*peaks)(kg_backend *be, kg_peaks *out, kg_err *err);
    /* optional: write the input stream of spec (kgate/gen.h)
     * into buf in trusted code, the bits kg_oracle_generate gives; the
     * worker uses it for fresh inputs and checks it against the host's
     * bits first */
    int  (*fill)(kg_backend *be, const kg_dbuf *buf, const kg_gen_spec *spec, kg_err *err);
    /* optional: the worker, once the backend is open, starts
     * the arms' hosts side by side instead of one at each first load; a
     * host that fails to start is started again (and its failure told)
     * at its arm's first load */
    void (*prestart)(kg_backend *be, const unsigned char *skip);
    /* one line for `kgate list`; with a probe slot, what the list adds in
     * parentheses when the backend's libraries are found here and when
     * they are not */
    const char *summary;
    const char *probe_found, *probe_missing;
    /* optional: what the backend did about the cache before k's timed
     * samples (the plan's l2), one sentence for the evidence; NULL: the
     * wrapper says that it did nothing */
    void (*cache_note)(kg_backend *be, kg_kernel *k, char *buf, size_t cap);
    /* optional: the bytes of buffers a warm sample may read and still find
     * every one in the cache the plan's l2 governs (kg_backend_warm_budget);
     * NULL: not known, nothing is refused */
    uint64_t (*warm_budget)(kg_backend *be, char *why, size_t cap);
    /* optional: 1 when loaded kernel k honours kg_binding's op_out (an
     * output per operation of a sample); NULL: never */
    int (*op_outputs)(const kg_backend *be, const kg_kernel *k);
} kg_backend_ops;

/* The backends compiled into this library. */
extern const kg_backend_ops kg_backend_cpu;
extern const kg_backend_ops kg_backend_fake;
extern const kg_backend_ops kg_backend_cuda;

/* The peak measurements (cpu_peaks.c, cuda_peaks.c), the backends' peaks slots. */
int kg_cpu_peaks(kg_backend *be, kg_peaks *out, kg_err *err);
int kg_cuda_peaks(kg_backend *be, kg_peaks *out, kg_err *err);
/* The cuda backend's fill slot: the generator of kgate/gen.h as a kernel (cuda_fill.c). */
int kg_cuda_fill(kg_backend *be, const kg_dbuf *buf, const kg_gen_spec *spec, kg_err *err);

#endif
