/* shards.h: the shard folders of a campaign as one campaign (shards.c). */
#ifndef KGATE_SHARDS_H
#define KGATE_SHARDS_H

#include <jansson.h>
#include "kgate/evidence.h"
#include "evidence/ledger.h"

struct kg_sb;

/* What a merge needs of one shard folder. */
typedef struct kg_shard_rec {
    char hash[65];
    kg_shard_meta sm;
    char host[256], started[64], salt[32], plan_path[KG_PATH_MAX];
    json_t *cases;          /* meta.json's shard.cases */
    json_t *slots;          /* meta.json's shard.slots (a by-process shard; NULL otherwise) */
    int devices_any;        /* the plan's [campaign] devices */
    /* meta.json's campaign: id, attempt, ledger path and the ledger's
     * lines through the shard's own start line (evidence/ledger.h);
     * id[0] == '\0' when it records none */
    char id[KG_CAMPAIGN_ID_MAX + 1], ledger[KG_PATH_MAX];
    int attempt;
    kg_ledger_line *lines;
    int nlines;
    char sums[65];          /* sha256 of its SHA256SUMS ("" when it has none) */
    /* a by-process shard: the schedule's slot count, and per slot how
     * many of its processes were not contaminated (processes.csv) */
    int nslots;
    int *clean;
    int ok;
} kg_shard_rec;

/* The folder of shard index's attempt in a merged folder: "shards/I" for
 * attempt 1 (the one the merged verdict uses), "shards/I.A" for a later
 * attempt A. */
void kg_merge_folder(int index, int attempt, char *buf, size_t cap);

/* Frees what kg_shard_read allocated in r. */
void kg_shard_rec_free(kg_shard_rec *r);

/* Reads the shard folder dir (named name in messages) into r; problems
 * appended to out, counted in *nbad (r->ok stays 0). */
void kg_shard_read(const char *dir, const char *name, kg_shard_rec *r, struct kg_sb *out, int *nbad);

/* The ledger file at path, read safely (a regular file of at most 64 MiB,
 * no link followed) and checked (kg_ledger_parse).  *present = 0 and
 * KG_OK when there is no file at path. */
int kg_shard_ledger_read(const char *path, kg_ledger_line **lines, int *n, int *present, kg_err *err);

/* The shards read into r[0..n) (those with ok set) as one campaign, as
 * kg_merge_check says; ledger[0..nledger) the campaign's ledger file
 * when one was read (NULL: the shards' own records only). */
void kg_shard_check_recs(kg_shard_rec *r, const char *const *names, int n, const char *want,
                         const kg_ledger_line *ledger, int nledger, struct kg_sb *out, int *nbad);

/* The verdicts of a shard folder from its own results (results.csv and
 * results.json, which verify recomputes): "gate PASS; a fast FASTER, ...",
 * into buf. */
void kg_shard_verdicts(const char *dir, char *buf, size_t cap);

/* The shard folders dirs[0..n) as one campaign: each a shard (not a
 * whole campaign nor a merged folder), of the plan hash want (NULL: the
 * first's), all of one shard count, each index present, one backend, and
 * one device model unless the plan says devices = any; and as attempts
 * (docs/scale-out.md): one campaign id and one ledger, each (index,
 * attempt) once, the ledger records of the shards consistent with one
 * another and with the ledger file at ledger_path (NULL or absent: not
 * read), and every attempt that those records name given.  names[i]
 * names dirs[i] in messages.  Problems appended, counted in *nbad. */
void kg_merge_check(const char *const *dirs, const char *const *names, int n, const char *want,
                    const char *ledger_path, struct kg_sb *out, int *nbad);

#endif
