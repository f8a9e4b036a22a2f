/* campaign.h: the supervisor, the worker and the evidence folder.
 *
 * The supervisor (kg_campaign_run) validates the plan, creates the
 * evidence folder, builds every arm, then starts `kgate worker` as a
 * fresh child process for each process of the schedule (directions
 * alternating), one at a time, with a wall-clock timeout.  A worker that
 * crashes, exits non-zero or times out is recorded with its reason and
 * the campaign goes on.  Afterwards the analysis and the reports are
 * made from the folder alone (kg_report_build), the same code that
 * `kgate report DIR` runs, so the two give identical bytes.
 *
 * Campaign integrity: one lock per device is held for the whole campaign
 * (lock.c); a quiet-host window precedes every process and a poller
 * watches it (quiet.c), a contaminated process is excluded and repeated
 * in the same direction; every file is written under a temporary name and
 * renamed, so `kgate run --resume DIR` continues a campaign killed at any
 * point; SHA256SUMS is written last and `kgate verify DIR` (verify.c)
 * checks the folder.
 *
 * The evidence folder, its rows and its writers: kgate/evidence.h. */
#ifndef KGATE_CAMPAIGN_H
#define KGATE_CAMPAIGN_H

#include "kgate/err.h"
#include "kgate/evidence.h"
#include "kgate/plan.h"
#include "kgate/settings.h"
#include "kgate/stats.h"
#include <stddef.h>
#include <stdint.h>


typedef struct kg_run_opts {
    const char *plan_path;
    const char *out_dir;      /* NULL: kgate-out/<name>-<utc time> */
    const char *backend;      /* overrides the plan's backend when not NULL */
    int check_only;           /* admission checks only: one process, no rounds */
    int negative;             /* build arms with KGATE_NEGATIVE=1 (the workers get --negative) */
    const char *negative_arm; /* only this arm is built as the negative */
    int progress;             /* 1: progress line on stderr */
    int argc; char **argv;    /* recorded in meta.json */
    /* integrity (zero means the default) */
    const char *frozen_path;  /* refuse a plan whose hash differs from this frozen plan's */
    int resume;               /* 1: continue the campaign in out_dir */
    int has_lock_timeout;     /* 0: wait for the device lock as long as it takes */
    double lock_timeout_s;    /* give up after this long (0: at once) */
    int has_quiet;            /* 0: the plan's quiet window */
    double quiet_s;           /* quiet window before each process */
    const char *forbid;       /* comma-separated process names; NULL: the settings' (KGATE_FORBID), else
                               * the default list */
    double max_load;          /* 1-minute load average bound; 0: none */
    int max_repeats;          /* repeats of a contaminated slot; 0: 3, negative: none */
    int archive;              /* 1: write DIR.tar.gz next to the folder at the end */
    const kg_settings *settings; /* from the environment, read once by the CLI; NULL: defaults */
} kg_run_opts;

/* Runs a campaign end to end.  *out_dir_used receives the folder.  The
 * analysis result is returned in *an (free with kg_analysis_free).
 * Returns KG_OK when the campaign completed (whatever its verdict). */
int kg_campaign_run(const kg_run_opts *o, char *out_dir_used, size_t cap,
                    kg_analysis *an, kg_err *err);

typedef struct kg_worker_opts {
    const char *plan_path;
    const char *out_dir;
    const char *backend;      /* resolved backend name */
    int proc;                 /* process index */
    int slot;                 /* schedule slot it fills (a repeat keeps its slot's direction); -1: proc */
    int progress;             /* 1: "progress: case C round r/R" lines on stderr (its log) */
    int check_only;
    const kg_settings *settings; /* from the environment, read once by the CLI; NULL: defaults */
} kg_worker_opts;

/* The body of `kgate worker`: one fresh process of the campaign. */
int kg_worker_main(const kg_worker_opts *o, kg_err *err);

#include "report.h"   /* kg_report_build (the reports are their own module) */

/* ---- device lock (lock.c) ---- */

/* Lock file name for a backend and its description: "cpu", "fake", or
 * the GPU UUID found in the description ("gpu" when there is none). */
void kg_lock_name(const char *backend, const char *device, char *buf, size_t cap);

/* Takes the exclusive lock LOCK_DIR/NAME, LOCK_DIR being s->lock_dir
 * (KGATE_LOCK_DIR; s may be NULL), default /tmp/kgate-locks.  While
 * another campaign holds it, says so on stderr once and waits; with
 * timeout_s >= 0 gives up after that long with an error naming the
 * holder.  *fd receives the open lock file: it is
 * inherited by worker processes, so a worker orphaned by a killed
 * supervisor keeps the device locked until it ends. */
int kg_lock_acquire(const kg_settings *s, const char *name, double timeout_s, int *fd, kg_err *err);
void kg_lock_release(int fd); /* -1 is ignored */

/* ---- quiet host (quiet.c) ---- */

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

/* Foreign compute processes on the device.  Returns KG_EUNSUPPORTED ("not
 * available") on backends without a process query (cpu, fake); else
 * KG_OK with *n the number of foreign processes and why naming one. */
int kg_quiet_device_foreign(const kg_quiet *q, int expected, int *n, char *why, size_t cap);
/* Releases what kg_quiet_init opened (the process watch); NULL-safe. */
void kg_quiet_free(kg_quiet *q);

/* Waits until the host has been quiet for window_s (a window of 0 is one
 * look), polling every KG_QUIET_POLL_S; says why on stderr while it
 * waits.  Fails after give_up_s. */
int kg_quiet_wait(const kg_quiet *q, double window_s, double give_up_s, kg_err *err);

/* ---- frozen plans (frozen.c) ---- */

/* Writes the frozen form of plan to path: a header comment
 * "# kgate frozen plan sha256 HEX" then the canonical text. */
int kg_frozen_write(const kg_plan *plan, const char *path, kg_err *err);

/* Compares plan with the frozen file: KG_OK when the canonical hashes
 * agree, else KG_EINPUT with a message listing the changed keys. */
int kg_frozen_check(const kg_plan *plan, const char *frozen_path, kg_err *err);

/* Lists, line by line, how canonical text b differs from a
 * ("[campaign] samples: 10 -> 20; + [arm x] ..."), into sb. */
struct kg_sb;
void kg_frozen_diff(const char *a, const char *b, struct kg_sb *sb);

/* ---- verify and archive (verify.c, archive.c) ---- */

/* Checks a folder: SHA256SUMS, the reports recomputed from the raw
 * samples, the saved outputs replayed against fresh float64 references.
 * Every problem is appended to problems (one line each).  Returns KG_OK
 * when the checks ran (*nbad counts problems), an error when they could
 * not. */
int kg_verify_dir(const char *dir, struct kg_sb *problems, int *nbad, kg_err *err);

/* Writes DIR.tar.gz (next to the folder) with libarchive loaded at run
 * time; a missing libarchive is a clear error. */
int kg_archive_write(const char *dir, char *out_path, size_t cap, kg_err *err);

#endif
