/* shard.h: what a shard of a campaign runs (shard.c).  Pure.
 *
 * `kgate run PLAN --shard I/N` runs the I-th of N shards (0 <= I < N).  A
 * plan is split one of two ways (kg_shard_by), never through one
 * process, so that every paired comparison stays in one process on one
 * device:
 *
 * - by case: the cases in canonical order dealt round-robin, case c to
 *   shard c % N; each shard runs the whole schedule of processes with its
 *   cases only;
 * - by process: the schedule's slots dealt in pairs (slots 2q and 2q + 1,
 *   one process of each direction) round-robin, pair q to shard q % N;
 *   each shard runs its slots' processes with every arm and case.
 *
 * A shard keeps the plan (the same canonical text and hash) and the case
 * indices; a by-process shard's worker of slot s, attempt a takes the
 * seeds of process kg_shard_seq(s, a, slots), which is the unsharded
 * campaign's process index s for a slot's first run.  The inputs' and the
 * fake backend's timing seeds, the arms' load orders and the directions
 * are therefore those of the unsharded campaign (docs/scale-out.md). */
#ifndef KGATE_SHARD_H
#define KGATE_SHARD_H

#include "kgate/err.h"
#include "kgate/plan.h"

#define KG_SHARD_MAX 4096

/* The values of the plan's `[campaign] shard` (kg_campaign.shard_by). */
enum { KG_SHARD_BY_AUTO = 0, KG_SHARD_BY_CASE = 1, KG_SHARD_BY_PROCESS = 2 };

/* "I/N" into *i and *n; an error naming the form otherwise. */
int kg_shard_parse(const char *spec, int *i, int *n, kg_err *err);

/* How n shards split plan: KG_SHARD_BY_CASE or KG_SHARD_BY_PROCESS (the
 * plan's key; auto: by process when the plan has fewer cases than n). */
int kg_shard_by(const kg_plan *plan, int n);

/* The cases shard i of n runs: on[c] = 1 for each (on has plan->ncases
 * entries; every case for a by-process shard).  Returns the count, or an
 * error when i/n is out of range or the shard has no case or no process
 * (the message says to lower N). */
int kg_shard_cases(const kg_plan *plan, int i, int n, unsigned char *on, kg_err *err);

/* The shard that runs case c of n by-case shards. */
int kg_shard_of_case(int c, int n);

/* The shard that runs schedule slot s of n by-process shards. */
int kg_shard_of_slot(int s, int n);

/* The process index whose seeds and load order a by-process shard's run
 * of slot s, attempt a (0: its first) takes, of a schedule of nslots
 * slots: s for a first run (the unsharded campaign's index when no
 * process was repeated), s + a * nslots for a repeat (one no other run
 * of the campaign takes). */
int kg_shard_seq(int slot, int attempt, int nslots);

#endif
