/* worker.h: one fresh process of a campaign, `kgate worker` (worker.c).
 * It checks and times every arm of its schedule slot and sends its rows
 * to the supervisor through an inherited pipe (channel.h); the supervisor
 * validates and writes them, and never loads candidate code itself. */
#ifndef KGATE_WORKER_H
#define KGATE_WORKER_H

#include "kgate/err.h"
#include "kgate/settings.h"

typedef struct kg_worker_opts {
    const char *plan_path;
    const char *out_dir;
    const char *backend;      /* resolved backend name */
    int proc;                 /* process index: its files' and rows' number in the folder */
    int seq;                  /* the process index of its seeds, load order and CPU (a by-process
                               * shard's kg_shard_seq); -1: proc */
    int slot;                 /* schedule slot it fills (a repeat keeps its slot's direction); -1: proc */
    int progress;             /* 1: "progress: case C round r/R" lines on stderr (its log) */
    int check_only;
    int smoke;                /* the plan's smoke run (kg_plan_smoke), as the supervisor made it */
    int rows_fd;              /* the pipe to the supervisor (channel.h); -1: none (refused) */
    int now_fd;               /* the supervisor's NOW page (nowpage.h), mapped and closed at once; -1: none
                               * (every NOW state goes as a frame) */
    long parent;              /* the supervisor's pid, checked after PR_SET_PDEATHSIG; 0: not checked */
    const kg_settings *settings; /* from the environment, read once by the CLI; NULL: defaults */
    int salt_fd;              /* the pipe holding the campaign's input salt (salt.h); -1: none (refused) */
    double warm_s;            /* > 0: before its first timed phase, warm the device until its SM
                               * clock stops rising, for at most this long (the first process of a run) */
    int token_fd;             /* the pipe holding the supervisor's token (token.h); -1: none (refused) */
    int go_fd;                /* before its first timed phase the worker says it is ready (a NOW
                               * frame, KG_NOW_READY) and reads one byte here: the supervisor writes it once
                               * the host has been quiet for the plan's window; -1: no wait (check-only) */
    int shard_i, shard_n;     /* shard_n > 0: only the cases of shard shard_i of shard_n (shard.h) */
    int device;               /* >= 0: the device to open instead of the plan's `device` */
    int screen;               /* a screen in screening mode (report/screening.h): each arm's own time is
                               * recorded (KG_CHECK_SCREEN_COST), and an arm whose sampled check fails is
                               * timed no further in the process */
    const char *skip;         /* "3,17": arms (plan indices) this process leaves out, a screen's drops
                               * (one passing KG_CHECK_SCREEN_SKIP row per case); NULL: none */
} kg_worker_opts;

/* The body of `kgate worker`: one fresh process of the campaign. */
int kg_worker_main(const kg_worker_opts *o, kg_err *err);

#endif
