/* shard.h: which cases a shard of a campaign runs (shard.c).  Pure.
 *
 * `kgate run PLAN --shard I/N` runs the I-th of N shards (0 <= I < N): a
 * set of the plan's cases, never a part of one case's arms, so that every
 * paired comparison stays in one process on one device.  The assignment
 * depends on the canonical plan alone: the cases in canonical order are
 * dealt round-robin, case c to shard c % N.  A shard keeps the plan (the
 * same canonical text and hash), the case indices and the whole schedule
 * of processes, so the seeds of a case's inputs and of the fake backend's
 * timings are those of the unsharded campaign (docs/scale-out.md). */
#ifndef KGATE_SHARD_H
#define KGATE_SHARD_H

#include "kgate/err.h"
#include "kgate/plan.h"

#define KG_SHARD_MAX 4096

/* "I/N" into *i and *n; an error naming the form otherwise. */
int kg_shard_parse(const char *spec, int *i, int *n, kg_err *err);

/* The cases shard i of n runs: on[c] = 1 for each (on has plan->ncases
 * entries).  Returns the count, or an error when i/n is out of range or
 * the shard has no case (the message says to lower N). */
int kg_shard_cases(const kg_plan *plan, int i, int n, unsigned char *on, kg_err *err);

/* The shard that runs case c of n shards. */
int kg_shard_of_case(int c, int n);

#endif
