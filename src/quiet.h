/* quiet.h: the quiet-host window before each process and the watch
 * while it runs (quiet.c): forbidden process names, the load average and
 * foreign compute processes on the device. */
#ifndef KGATE_QUIET_H
#define KGATE_QUIET_H

#include "kgate/err.h"
#include "kgate/settings.h"
#include <stddef.h>

typedef struct kg_quiet {
    char forbid[1024];        /* comma-separated process names (comm) */
    double max_load;          /* 1-minute load average bound; 0: none */
    const char *device;       /* for the foreign-compute-process check */
    const char *backend;
    void *procs;              /* the device's compute processes (kg_backend_procs_open) and their
                               * baseline, where the backend lists them (cuda); owned */
} kg_quiet;

#define KG_QUIET_DEFAULT_FORBID "cc1,cc1plus,nvcc,ptxas,cicc,rustc,ld"
#define KG_QUIET_POLL_S 0.25

/* Fills q from the options: forbid (NULL: s->forbid, KGATE_FORBID, else
 * the default list when a quiet window is declared (window_s > 0) on a
 * backend with KG_CAP_QUIET_HOST, cpu and cuda; none on fake).  With a
 * window, the device's compute processes are watched where the backend
 * can list them (kg_backend_procs_open).  s may be NULL (defaults). */
void kg_quiet_init(kg_quiet *q, const kg_settings *s, const char *forbid, double max_load, const char *backend,
                   const char *device, double window_s);

/* One look at the host: returns 1 and a reason ("process cc1 (pid 812)
 * running", "load 9.1 above 4") when it is not quiet, else 0.  Process
 * ignore (and the caller) is not considered. */
int kg_quiet_scan(const kg_quiet *q, int ignore, char *why, size_t cap);

/* Foreign compute processes on the device: those that are neither the
 * caller (the supervisor) nor its descendants, or, where the device's
 * process IDs are another namespace's, more than were there when the
 * last window ended (in_process 0 notes that count) plus the worker.
 * Returns KG_EUNSUPPORTED ("not available") on backends without a
 * process query (cpu, fake); else KG_OK with *n the number of foreign
 * processes and why naming them. */
int kg_quiet_device_foreign(const kg_quiet *q, int in_process, int *n, char *why, size_t cap);
/* Releases what kg_quiet_init opened (the process watch); NULL-safe. */
void kg_quiet_free(kg_quiet *q);

/* Waits until the host has been quiet for window_s (a window of 0 is one
 * look), polling every KG_QUIET_POLL_S; says why on stderr while it
 * waits.  Fails after give_up_s. */
int kg_quiet_wait(const kg_quiet *q, double window_s, double give_up_s, kg_err *err);

#endif
