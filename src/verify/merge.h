/* merge.h: one evidence folder from the shards of a campaign (merge.c).
 *
 * kg_merge_write checks every shard folder (verify, its signature when a
 * public key is given, kg_merge_check: one campaign, every attempt the
 * ledger names) and writes OUT: the shards' complete folders as
 * OUT/shards/I (attempt 1, which the merged verdict uses) and
 * OUT/shards/I.A (later attempts, listed with their own verdicts), the
 * campaign's ledger as OUT/ledger, the plan (plan.kg, plan.sha256), a
 * meta.json that records the merge, an environment.json, the reports of
 * every case from the shards' rows (evidence.c's merged reader),
 * SHA256SUMS over everything and its own signature.  kgate verify of OUT
 * verifies every shard again (verify.c).  docs/scale-out.md. */
#ifndef KGATE_MERGE_H
#define KGATE_MERGE_H

#include "kgate/err.h"
#include "kgate/stats.h"

struct kg_sb;

typedef struct kg_merge_opts {
    const char *out;          /* the merged folder: new, empty, or holding only shards/ (the shards in place) */
    const char *const *dirs;  /* the shard folders */
    int n;
    const char *key_path;     /* private key that signs OUT; NULL: unsigned */
    const char *pub_path;     /* public key each shard's signature must verify with; NULL: not checked */
    int argc; char **argv;    /* recorded in meta.json */
    /* the campaign's ledger file (NULL: OUT/ledger, else the one the
     * shards recorded, when there); kept as OUT/ledger */
    const char *ledger_path;
} kg_merge_opts;

/* Returns KG_OK once OUT is written (whatever its verdict), *an its
 * analysis; KG_EINPUT with the problems when a shard is refused. */
int kg_merge_write(const kg_merge_opts *o, kg_analysis *an, kg_err *err);

#endif
