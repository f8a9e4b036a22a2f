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
 * Evidence folder layout (docs/evidence.md):
 *   plan.kg          canonical plan;  plan.sha256
 *   meta.json        kgate version, git SHA, host, backend, device, compiler
 *   processes.csv    one row per started process: status, reason, accepted
 *   raw/proc-NNN.csv every timed sample of process NNN
 *   checks/proc-NNN.csv  every correctness check of process NNN
 *   logs/proc-NNN.log    the worker's stderr
 *   build/           compiled arms
 *   report.md, results.json, results.csv */
#ifndef KGATE_CAMPAIGN_H
#define KGATE_CAMPAIGN_H

#include "kgate/err.h"
#include "kgate/plan.h"
#include "kgate/stats.h"

#define KG_EVIDENCE_SCHEMA 1

typedef struct kg_run_opts {
    const char *plan_path;
    const char *out_dir;      /* NULL: kgate-out/<name>-<utc time> */
    const char *backend;      /* overrides the plan's backend when not NULL */
    int check_only;           /* admission checks only: one process, no rounds */
    int negative;             /* build arms with KGATE_NEGATIVE=1 */
    const char *negative_arm; /* only this arm is built as the negative */
    int progress;             /* 1: progress line on stderr */
    int argc; char **argv;    /* recorded in meta.json */
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
    int check_only;
} kg_worker_opts;

/* The body of `kgate worker`: one fresh process of the campaign. */
int kg_worker_main(const kg_worker_opts *o, kg_err *err);

/* Everything the analysis needs, read back from an evidence folder. */
typedef struct kg_evidence {
    kg_plan *plan;            /* parsed from plan.kg */
    kg_row *rows; size_t nrows;
    int nproc;
    int *accepted;            /* per process */
    int *dir;                 /* per process */
    char (*status)[32];       /* per process: ok, crashed, exit N, timeout */
    char (*reason)[256];
    kg_arm_state *state;      /* per (case, arm) */
    char *meta_json;          /* meta.json text */
    /* check records, as read */
    int nchecks, nchecks_failed;
} kg_evidence;

int kg_evidence_load(const char *dir, kg_evidence *ev, kg_err *err);
void kg_evidence_free(kg_evidence *ev);

/* Reads the folder, analyses it and writes report.md, results.json and
 * results.csv there.  When md is not NULL it receives report.md's text
 * (caller frees).  *an receives the analysis. */
int kg_report_build(const char *dir, kg_analysis *an, char **md, kg_err *err);

#endif
