/* screening.h: kgate screen's screening mode, re-derived from an evidence
 * folder (screening.c).  docs/statistics.md, "Screening: what a
 * candidate costs", states the rules.
 *
 * A screen in screening mode (meta.json "screen": true) stops spending
 * time on a candidate once it is clearly out:
 *   - INCORRECT: after the first process in which one of its checks
 *     failed (the arm's state, folded as kg_evidence_load folds it, is
 *     INCORRECT on some case it runs on);
 *   - futile: after an accepted process where, on some gated case, the
 *     upper confidence bound of its reduction against the baseline over
 *     the accepted processes so far is below the campaign's margin.  The
 *     bound is one-sided at level alpha / (L C), L = 2 P - 3 (the looks
 *     that can have an interval: P processes per direction, at least 2
 *     per direction) and C the gated cases it runs on, so that a
 *     candidate whose true reduction is at least the margin everywhere is
 *     dropped with probability at most alpha (a union bound over the
 *     looks and cases).
 * A dropped candidate is not loaded in the later processes: each of them
 * records one passing KG_CHECK_SCREEN_SKIP row for it per case.  The
 * supervisor starts process p with the drops of the processes recorded
 * before it (p - 1 of them, or p - 2 when p was started beside p - 1), and
 * kg_screening_audit holds the folder to exactly that.
 *
 * The cost: each process records per case and arm a KG_CHECK_SCREEN_COST
 * row, the worker's wall clock in that arm's own operations (load,
 * checks, warm-ups, timed samples: the device served that arm alone).
 * An arm's device seconds are their sum; its wall seconds add its share
 * of the rest of each process it ran in (start-up, references, the
 * baseline's and the controls' operations: processes.csv's seconds less
 * every arm's own), split evenly over the candidates the process ran.
 * A worker started beside the one before it overlaps it, so the column
 * sums to the processes' seconds, more than the run's wall (run_s). */
#ifndef KGATE_SCREENING_H
#define KGATE_SCREENING_H

#include "kgate/err.h"
#include "kgate/evidence.h"
#include "kgate/stats.h"

struct kg_sb;

typedef enum { KG_DROP_NONE = 0, KG_DROP_INCORRECT, KG_DROP_FUTILE } kg_drop_why;

/* One arm of the screen (every arm of the plan; only candidates drop). */
typedef struct kg_screen_arm {
    kg_drop_why why;
    int proc;            /* the process after which it was dropped; -1: kept */
    int kase;            /* the case of its failed check or of its futile bound; -1: none */
    char check[KG_CHECK_NAME_MAX];  /* the failed check (INCORRECT) */
    double ucb;          /* the futile bound of its reduction (FUTILE) */
    int nproc;           /* processes that ran it (recorded a cost row for it) */
    double busy_s;       /* device seconds: its own operations' wall, over the processes */
    double timed_s;      /* of which timed samples and warm-ups (the device's own clock) */
    long long nsamples;  /* its timed samples */
    double wall_s;       /* busy_s plus its share of the processes' other time (candidates only) */
} kg_screen_arm;

typedef struct kg_screening {
    int on;              /* the folder is a screen in screening mode */
    kg_screen_arm *arm;  /* per arm of the plan */
    int narms;
    int ncand, nincorrect, nfutile;
    int looks;           /* L */
    double alpha;        /* the futility rule's error rate per candidate (the campaign's alpha) */
    double margin;       /* the threshold (the campaign's margin) */
    double wall_s;       /* the processes' seconds together (overlapping workers each counted whole) */
    double busy_s;       /* every arm's own seconds together */
    double run_s;        /* the runs' wall, builds included: watch.csv's "end" rows (0: none yet) */
} kg_screening;

/* The futility rule on one effect (a candidate against its baseline on
 * a gated case, kg_effect_compute): *ucb, the upper bound of its
 * reduction at one-sided level alpha / (looks ncases); 1 when it is below
 * margin (NAN and 0 without an interval). */
int kg_screening_futile(const kg_effect *e, double alpha, int looks, int ncases, double margin, double *ucb);

/* The drops and the costs of folder ev (all zero, on = 0, when it is not
 * a screen in screening mode).  Analyses the accepted processes up to
 * each accepted one in turn. */
int kg_screening_derive(const kg_evidence *ev, kg_screening *out, kg_err *err);

/* Whether the folder's processes honoured the drops: each skip record
 * must follow its arm's drop, and each arm dropped before process p - 1
 * must have no sample in p.  Each problem goes to out (kg_problem). */
void kg_screening_audit(const kg_evidence *ev, const kg_screening *s, struct kg_sb *out, int *nbad);

/* report.md's "## Screening" section (nothing when s->on is 0). */
void kg_screening_md(struct kg_sb *sb, const kg_evidence *ev, const kg_screening *s);

void kg_screening_free(kg_screening *s);

#endif
