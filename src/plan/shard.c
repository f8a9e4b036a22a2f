/* shard.c: what a shard runs (shard.h).  Round-robin over the cases in
 * canonical order, or over the schedule's pairs of slots: cheap to state,
 * to recompute and to check; by case it spreads the cases of one op or
 * dtype (listed together in most plans) over the shards, by process it
 * gives every shard as many forward as reverse processes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/shard.h"

int kg_shard_parse(const char *spec, int *i, int *n, kg_err *err)
{
    char *end = NULL;
    long a, b;
    if (spec == NULL || spec[0] < '0' || spec[0] > '9') goto bad;
    a = strtol(spec, &end, 10);
    if (end == NULL || *end != '/' || end[1] < '0' || end[1] > '9') goto bad;
    b = strtol(end + 1, &end, 10);
    if (*end != '\0') goto bad;
    if (b < 1 || b > KG_SHARD_MAX)
        return kg_errorf(err, KG_EUSAGE, "--shard %s: N must be in [1, %d]", spec, KG_SHARD_MAX);
    if (a < 0 || a >= b)
        return kg_errorf(err, KG_EUSAGE, "--shard %s: I must be in [0, %ld] (shards are numbered from 0)", spec, b - 1);
    *i = (int)a;
    *n = (int)b;
    return KG_OK;
bad:
    return kg_errorf(err, KG_EUSAGE, "--shard '%s': expected I/N, the I-th of N shards counted from 0 (e.g. 0/4)",
                     spec != NULL ? spec : "");
}

int kg_shard_by(const kg_plan *plan, int n)
{
    if (plan->campaign.shard_by == KG_SHARD_BY_CASE || plan->campaign.shard_by == KG_SHARD_BY_PROCESS)
        return plan->campaign.shard_by;
    return plan->ncases < n ? KG_SHARD_BY_PROCESS : KG_SHARD_BY_CASE;
}

int kg_shard_of_case(int c, int n)
{
    return n > 0 ? c % n : 0;
}

int kg_shard_of_slot(int s, int n)
{
    return n > 0 && s >= 0 ? (s / 2) % n : 0;
}

int kg_shard_seq(int slot, int attempt, int nslots)
{
    return slot + attempt * nslots;
}

int kg_shard_cases(const kg_plan *plan, int i, int n, unsigned char *on, kg_err *err)
{
    if (n < 1 || i < 0 || i >= n) return kg_errorf(err, KG_EUSAGE, "shard %d/%d: I must be in [0, N)", i, n);
    if (kg_shard_by(plan, n) == KG_SHARD_BY_PROCESS) {
        int pairs = plan->campaign.processes;
        if (i >= pairs)
            return kg_errorf(err, KG_EUSAGE, "shard %d/%d has no process: the plan's %d pair(s) of processes (one "
                             "per direction) are dealt round-robin over the shards; lower N to at most %d", i, n,
                             pairs, pairs);
        for (int c = 0; c < plan->ncases; c++) on[c] = 1;
        return plan->ncases;
    }
    int k = 0;
    for (int c = 0; c < plan->ncases; c++) {
        on[c] = kg_shard_of_case(c, n) == i;
        k += on[c];
    }
    if (k == 0)
        return kg_errorf(err, KG_EUSAGE, "shard %d/%d has no case: the plan has %d case(s), dealt round-robin over the "
                         "shards; lower N to at most %d, or shard by process ([campaign] shard = process)", i, n,
                         plan->ncases, plan->ncases);
    return k;
}
