/* quiet.h: the host watch of a campaign (quiet.c): forbidden process
 * names, the load average, foreign compute processes on the device, and
 * on CPU hosts steal time, other processes' CPU load and frequency
 * changes.  The watch runs for the whole campaign; a process starts once
 * nothing forbidden has been seen for the quiet window. */
#ifndef KGATE_QUIET_H
#define KGATE_QUIET_H

#include "kgate/err.h"
#include "kgate/settings.h"
#include <stddef.h>

/* The CPU-host bounds (0: not watched), from the plan's max_steal,
 * max_foreign_cpu and max_freq_change. */
typedef struct kg_quiet_limits {
    double max_steal;         /* steal time over a window, a fraction of busy + steal time */
    double max_foreign_cpu;   /* CPU used by processes that are not kgate's, in cores over a window */
    double max_freq_change;   /* fall of the fastest core's clock below its highest value in the process */
} kg_quiet_limits;

/* The defaults (kg_quiet_init uses them where lim is NULL). */
#define KG_QUIET_MAX_STEAL 0.10
#define KG_QUIET_MAX_FOREIGN_CPU 0.0   /* measured and recorded, not judged */
#define KG_QUIET_MAX_FREQ_CHANGE 0.15
/* The window over which steal and foreign CPU are judged, s. */
#define KG_QUIET_CPU_WINDOW_S 1.0

typedef struct kg_quiet {
    char forbid[1024];        /* comma-separated process names (comm) */
    double max_load;          /* 1-minute load average bound; 0: none */
    const char *device;       /* for the foreign-compute-process check */
    const char *backend;
    void *procs;              /* the device's compute processes (kg_backend_procs_open) and their
                               * baseline, where the backend lists them (cuda); owned */
    kg_quiet_limits lim;      /* the CPU-host bounds in force (all 0 when not watched) */
    void *cpu;                /* the CPU-host watch's last readings; owned */
    double quiet_since;       /* kg_mono_s() since which nothing forbidden was seen; < 0: not quiet */
    double watched_from;      /* kg_mono_s() when the watch began */
    char last_why[512];       /* the last reason the host was not quiet */
    double last_bad;          /* kg_mono_s() of that reason; < 0: none yet */
    /* reasons not yet taken by kg_quiet_take (a new one each time the
     * reason, without its time, changes), oldest first */
    int nnew, dropped;
    char new_why[8][512];
    double waited_s;          /* this run's waits for a quiet host so far, s (the campaign's budget) */
    /* CPU used by processes that are not kgate's, in cores, over the CPU
     * windows since the current process began (kg_quiet_load) */
    double load_sum, load_max;
    int load_n;
    /* the cpu backend's default list, watched but not judged (the host's
     * CPUs are the device: a compiler is other work, which the load
     * record counts): the names seen since the process began */
    char observe[1024];
    char seen[256];
    double next_observe;
} kg_quiet;

#define KG_QUIET_DEFAULT_FORBID "cc1,cc1plus,nvcc,ptxas,cicc,rustc,ld"
#define KG_QUIET_POLL_S 0.25

/* Fills q from the options: forbid (NULL: s->forbid, KGATE_FORBID, else
 * the default list when a quiet window is declared (window_s > 0) on a
 * backend with KG_CAP_QUIET_HOST, cpu and cuda; none on fake; on the cpu
 * backend the default list is observed, not judged: kg_quiet_seen).  With a
 * window, the device's compute processes are watched where the backend
 * can list them (kg_backend_procs_open), and on the cpu backend steal,
 * foreign CPU and frequency are watched with lim (NULL: the defaults):
 * foreign CPU is measured and kept (kg_quiet_load) even where no bound
 * judges it.
 * s may be NULL (defaults).  The watch begins now: the quiet time counts
 * the quiet time from here. */
void kg_quiet_init(kg_quiet *q, const kg_settings *s, const char *forbid, double max_load, const char *backend,
                   const char *device, double window_s, const kg_quiet_limits *lim);

/* One look at the host: returns 1 and a reason ("process cc1 (pid 812)
 * running", "load 9.1 above 4") when it is not quiet, else 0.  Process
 * ignore (and the caller) is not considered.  The CPU-host watch is not
 * part of it (kg_quiet_poll). */
int kg_quiet_scan(const kg_quiet *q, int ignore, char *why, size_t cap);

/* One poll of the whole watch: kg_quiet_scan, then the CPU-host watch
 * (a verdict once per KG_QUIET_CPU_WINDOW_S).  Updates quiet_since and
 * last_why; returns 1 with why when the host is not quiet. */
int kg_quiet_poll(kg_quiet *q, int ignore, char *why, size_t cap);

/* The oldest reason kg_quiet_poll found that was not taken yet: 1 and
 * why, or 0 when there is none. */
int kg_quiet_take(kg_quiet *q, char *why, size_t cap);

/* A worker starts: the frequency reference and the load record begin
 * again. */
void kg_quiet_process_begins(kg_quiet *q);

/* The names of the observed list (the cpu backend's default forbidden
 * list, not judged) seen running since the process began, comma-separated
 * ("" none). */
const char *kg_quiet_seen(const kg_quiet *q);

/* What the CPU-host watch saw of the host's other work since the process
 * began: the number of full windows, and over them the mean and the
 * largest CPU used by processes that are not kgate's, in cores (whether
 * or not max_foreign_cpu judges it).  0: no window (not a cpu host, or no
 * watch). */
int kg_quiet_load(const kg_quiet *q, double *mean, double *max);

/* Cores used by processes that are not kgate's over one window, from the
 * two readings of /proc/stat's first line and kgate's own ticks
 * meanwhile (as kg_quiet_cpu_judge counts them); 0 when the window is
 * empty.  Pure. */
double kg_quiet_foreign_cores(const unsigned long long a[8], const unsigned long long b[8], double own_ticks,
                              double seconds, double hz);

/* How the device's compute processes are told kgate's or foreign, for
 * the evidence: "by process ID" (identity), "by count (...)" (NVML's
 * process IDs were not this PID namespace's: counted), "not at all (...)"
 * (the backend lists none). */
const char *kg_quiet_match(const kg_quiet *q);

/* Foreign compute processes on the device: those that are neither the
 * caller (the supervisor) nor its descendants, or, where the device's
 * process IDs are another namespace's, more than the baseline (a scan
 * with in_process 0 notes it) plus kgate's own device processes (its
 * descendants that hold a GPU's device node; at least the worker).
 * Returns KG_EUNSUPPORTED ("not available") on backends without a
 * process query (cpu, fake without a device list); else KG_OK with *n
 * the number of foreign processes and why naming them. */
int kg_quiet_device_foreign(const kg_quiet *q, int in_process, int *n, char *why, size_t cap);
/* Releases what kg_quiet_init opened (the process watch); NULL-safe. */
void kg_quiet_free(kg_quiet *q);

/* The wait's verdict after one poll (bad: what kg_quiet_poll returned),
 * waited_s into a wait that may last give_up_s: KG_QUIET_GO once nothing
 * forbidden has been seen for window_s, KG_QUIET_GIVE_UP when the host
 * is still not quiet after give_up_s, else KG_QUIET_HOLD. */
enum { KG_QUIET_GO, KG_QUIET_HOLD, KG_QUIET_GIVE_UP };

/* "kgate: waiting for a quiet host: WHY" on stderr, once per reason (its
 * text without the time; last holds the one said before); live (a
 * terminal): one line rewritten in place at every call, with the time
 * waited and the time left before kgate gives up (left_s < 0: none). */
void kg_quiet_say(const char *why, char *last, size_t cap, int live, double waited_s, double left_s);
int kg_quiet_judge(const kg_quiet *q, int bad, double now, double window_s, double waited_s, double give_up_s);


/* The CPU-host verdict over one window, from two readings of /proc/stat's
 * first line (user, nice, system, idle, iowait, irq, softirq, steal, in
 * ticks), the ticks kgate's own processes used meanwhile, the window's
 * length and the ticks per second: 1 with why when steal or foreign CPU
 * passes its bound in lim (a bound of 0 is not judged).  Pure: the unit
 * tests drive it. */
int kg_quiet_cpu_judge(const unsigned long long a[8], const unsigned long long b[8], double own_ticks,
                       double seconds, double hz, const kg_quiet_limits *lim, char *why, size_t cap);

/* The clock verdict of one reading f (kHz) of the fastest core: 1 when
 * it lies more than bound below *fmax, the highest reading since the
 * process began (then *fmax restarts from f), else 0 with *fmax raised
 * to f where f is higher.  Pure: the unit tests drive it. */
int kg_quiet_freq_judge(double *fmax, double f, double bound);

#endif
