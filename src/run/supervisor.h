/* supervisor.h: a campaign, run end to end (supervisor.c).
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
 * from the device's peaks on (lock.c); a quiet-host window precedes every process and a poller
 * watches it (quiet.c), a contaminated process is excluded and repeated
 * in the same direction; every file is written under a temporary name and
 * renamed, so `kgate run --resume DIR` continues a campaign killed at any
 * point; SHA256SUMS is written last and `kgate verify DIR` (verify.c)
 * checks the folder.
 *
 * The evidence folder, its rows and its writers: kgate/evidence.h. */
#ifndef KGATE_SUPERVISOR_H
#define KGATE_SUPERVISOR_H

#include "kgate/err.h"
#include "kgate/settings.h"
#include "kgate/stats.h"
#include <stddef.h>

typedef struct kg_run_opts {
    const char *plan_path;
    const char *out_dir;      /* NULL: kgate-out/<name>-<utc time> */
    const char *backend;      /* overrides the plan's backend when not NULL */
    int check_only;           /* admission checks only: one process, no rounds */
    int smoke;                /* the plan's smoke run (kg_plan_smoke): a few samples, no verdict */
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
    int has_quiet_budget;     /* 0: the plan's quiet_budget */
    double quiet_budget_s;    /* the run's waits for a quiet host together, s (0: no budget) */
    int progress_lines;       /* 1: a line per process on stderr (progress 0: not a terminal) */
    const char *forbid;       /* comma-separated process names; NULL: the settings' (KGATE_FORBID), else
                               * the default list */
    double max_load;          /* 1-minute load average bound; 0: none */
    int max_repeats;          /* repeats of a contaminated slot; 0: 3, negative: none */
    int archive;              /* 1: write DIR.tar.gz next to the folder at the end */
    const kg_settings *settings; /* from the environment, read once by the CLI; NULL: defaults */
    /* the private key that signs the folder (attest.h), read once every
     * worker has ended and never passed to a child; NULL: the folder is
     * unsigned (a stale envelope is removed) */
    const char *key_path;
    /* shard_n > 0: run only the cases of shard shard_i of shard_n
     * (shard.h), recorded in meta.json */
    int shard_i, shard_n;
    /* a shard's campaign (docs/scale-out.md): its id (required with
     * shard_n > 0 for a new folder; a resumed one keeps its own and must
     * match when given) and its ledger (NULL: kgate-ID.ledger beside the
     * folder), where the run's attempt is numbered (attempt.h) */
    const char *campaign_id, *ledger_path;
    /* has_device: open device `device` instead of the plan's (kgate run
     * --device, --devices) */
    int has_device, device;
    /* 0: kgate run (a plan with screen = yes is refused); 1: kgate screen
     * in screening mode (report/screening.h: recorded in meta.json; each
     * worker is told the candidates the folder so far drops, and records
     * its arms' own time); 2: kgate screen --full */
    int screen;
} kg_run_opts;

/* Runs a campaign end to end, as a sequence of stages over one campaign
 * (supervisor.c): options and signals; the plan and its ops (the arms'
 * files included); the folder (new or resumed); the backend and the lock
 * (for a new campaign on a lock of the user's own, taken after the
 * builds); the salt and meta.json; the folder's logs and watch log; the
 * arms' builds, sources and op modules; the peaks; the host watch; the schedule loop with its
 * sequential looks; the reports; SHA256SUMS; the signature; the archive.
 * *out_dir_used receives the folder.  The
 * analysis result is returned in *an (free with kg_analysis_free; on an
 * error it is freed here, and *an left empty).
 * Returns KG_OK when the campaign completed (whatever its verdict). */
int kg_campaign_run(const kg_run_opts *o, char *out_dir_used, size_t cap,
                    kg_analysis *an, kg_err *err);

#endif
