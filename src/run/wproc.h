/* wproc.h: one worker process of a campaign, from its start to its
 * records (wproc.c), for the supervisor's campaign loop.
 *
 * A worker starts at once and does its set-up and the checks before
 * timing on any host; before its first timed phase it says it is ready
 * and waits on its go pipe.  The supervisor gives the go once the host
 * has been quiet for the window; whatever the watch sees from the go on
 * contaminates the process.  When the worker says its last timed phase
 * is over (KG_NOW_TIMED_DONE), the next worker may be started beside it
 * (kg_wproc_drive reports it): the next one loads, binds and checks while
 * this one runs its last checks, and is given its own go only once this
 * one has ended and been recorded, so no timed phase ever runs beside
 * another process of the campaign. */
#ifndef KGATE_WPROC_H
#define KGATE_WPROC_H

#include <stdint.h>
#include <sys/types.h>
#include "run/channel.h"
#include "run/nowpage.h"
#include "kgate/evidence.h"
#include "kgate/plan.h"
#include "kgate/settings.h"
#include "run/quiet.h"
#include "base/util.h"

/* The host watch while workers run: q (NULL: none, the worker is not
 * gated), its log, the quiet window, the give-up of one process's wait,
 * the budget of the run's waits together (0: none; q->waited_s holds
 * what was spent), and whether a wait is shown as one line rewritten in
 * place (live, a terminal) or once per reason. */
typedef struct kg_watch_ctx {
    kg_quiet *q;
    kg_sb *wl;
    double window_s, give_up_s, budget_s;
    int live;
} kg_watch_ctx;

/* What every worker of a run is started with: the campaign's settings
 * (s->negative, s->negative_arm and the worker wrapper), its plan, the
 * folder, and the run's options a worker is told on its command line. */
typedef struct kg_wspawn {
    const kg_settings *s;
    const kg_plan *plan;
    const char *plan_path;   /* as the user named it, for messages */
    const char *plan_abs, *dir, *backend;
    const char *key_path;    /* the signing key (NULL: none): its folder is hidden from the arms */
    int dirfd, lock_fd, gated, progress;
    int check_only;          /* one process of admission checks */
    int shard_i, shard_n;    /* shard_n > 0: this run's shard of the cases or processes */
    int by_process;          /* a by-process shard: each worker takes the seeds of kg_shard_seq (--seq) */
    int has_device, device;  /* the device that replaces the plan's */
    uint64_t salt;
    double timeout_s;
    /* the supervisor's own image's SHA-256 (kg_exe_sha256), which every
     * worker's hello must report (NULL: not checked); signing: a worker
     * that reports another, or sends records without a hello, stops the
     * run (a "worker" event of the watch either way); *unvouched counts
     * those workers */
    const char *exe_sha256;
    int signing;
    int *unvouched;
    /* a screen in screening mode (report/screening.h): every worker gets
     * --screen, and skip (per arm, 1: not run; NULL: none) the arms its
     * process leaves out, as --skip */
    int screen;
    const unsigned char *skip;
} kg_wspawn;

/* The states of a worker that started beside the one before it, while
 * that one ran: its own start, set-up, checks, and ready and waiting. */
enum { KG_OV_START, KG_OV_SETUP, KG_OV_CHECKS, KG_OV_WAIT, KG_OV_N };

typedef struct kg_wproc {
    int active;              /* started, neither recorded nor discarded */
    int proc;                /* its index in processes.csv */
    kg_proc_rec rec;         /* slot, attempt and direction set by the caller; the rest by finish */
    pid_t pid;
    int pfd, gfd;            /* the rows pipe's read end; the go pipe's write end (-1: none or given) */
    kg_chan ch;
    kg_nowpage now;          /* its NOW page (nowpage.h): what it runs, read with kg_now_latest */
    char log[KG_PATH_MAX + 64];
    double t0, t_ready, t_current, waited, next_poll, next_show, timeout_s;
    int status, exited, timed_out, dirty, stopped, gave_up, gone, said_done, current;
    int budget_spent;        /* gave up because the run's waits passed the budget */
    char why[512], said[512];
    /* beside the one before it: that time of its own by state */
    double ov[KG_OV_N], ov_t;
    int ov_state, ov_open;
    int started_beside;      /* it was started beside the one before it */
    /* its records, checked and written once whole, while it closes: 0 not
     * yet, 1 written, -1 refused (store_why), 2 recorded */
    int stored;
    char store_why[256];
    /* its binary: the hello checked (1); the SHA-256 of the image the
     * supervisor exec'd, read through /proc ("" where it could not be) */
    int hello_done;
    char exe_seen[65];
    /* the worker's input error, sent as a refusal (the plan cannot run
     * here, as in every process): the campaign stops after its record */
    char refused[900];
} kg_wproc;

/* Starts worker proc (w->rec's slot, attempt and dir set); warm_s > 0:
 * it warms the device's clock first.  beside: the worker before it still
 * runs (its time is told by state until that one ends). */
int kg_wproc_start(kg_wproc *w, const kg_wspawn *sp, int proc, double warm_s, int beside, kg_err *err);

/* The worker becomes the current one (the one before it was recorded):
 * its wait for a quiet host, and the give-up, count from now. */
void kg_wproc_promote(kg_wproc *w);

/* Runs cur (and next, when active) until cur ends; cur's records are
 * written as soon as they are whole (sp: the folder) (*said_done 0) or
 * says its last timed phase is over (*said_done 1, once).  A stop
 * request kills both.  Errors: a broken pipe read, a failed wait. */
int kg_wproc_drive(kg_wproc *cur, kg_wproc *next, const kg_wspawn *sp, const kg_watch_ctx *wc, const char *pline,
                   int *said_done, kg_err *err);

/* The ended worker cur: its records checked and written through the
 * folder's descriptor, its outcome in cur->rec.  An error (a failed
 * write, a stop) leaves it unrecorded. */
int kg_wproc_finish(kg_wproc *w, const kg_wspawn *sp, const kg_watch_ctx *wc, kg_err *err);

/* A worker that will not be recorded (the campaign stops): killed,
 * reaped, its log removed. */
void kg_wproc_discard(kg_wproc *w, int dirfd);

/* One row of the host watch's log (watch.csv), dated now. */
void kg_watch_log(kg_sb *wl, double seconds, int proc, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
