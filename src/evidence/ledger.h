/* ledger.h: a campaign's ledger of shard attempts (ledger.c,
 * docs/scale-out.md "Campaigns and attempts").
 *
 * The shards of a campaign share one campaign id and one ledger: a text
 * file, one line per event, appended under a lock (run/ledger_append.c).
 * A shard run appends a start line before its first process and an end
 * line once its folder is signed:
 *
 *   kgate-ledger 1 campaign ID shard I/N attempt A started UTC salt SALT prev H
 *   kgate-ledger 1 campaign ID shard I/N attempt A ended UTC sums S prev H
 *
 * A is the shard's attempt: one more than the start lines of shard I/N
 * already in the ledger.  H is the sha256 of the ledger's bytes before
 * the line (a hash chain: a line removed or changed breaks every later
 * line's H).  S is the sha256 of the folder's SHA256SUMS.  Each shard
 * folder keeps, in its signed meta.json, the ledger's lines up to and
 * including its own start line; kgate merge and verify check the set of
 * shards against those records and the ledger file (verify/shards.c).
 * This part only reads, writes text and checks; it never locks. */
#ifndef KGATE_LEDGER_H
#define KGATE_LEDGER_H

#include <stddef.h>
#include "kgate/err.h"

#define KG_CAMPAIGN_ID_MAX 64
#define KG_LEDGER_LINE_MAX 400

typedef struct kg_ledger_line {
    char id[KG_CAMPAIGN_ID_MAX + 1];
    int shard, count, attempt;
    int ended;                /* 0: a start line (salt), 1: an end line (sums) */
    char utc[32];
    char salt[32];            /* start lines */
    char sums[65];            /* end lines */
    char prev[65];
    char text[KG_LEDGER_LINE_MAX]; /* the line without its newline */
} kg_ledger_line;

/* 1 when id can name a campaign: 1..64 characters of [A-Za-z0-9._-]. */
int kg_campaign_id_ok(const char *id);

/* A fresh campaign id: 32 lowercase hex digits from getrandom(2). */
int kg_campaign_id_new(char id[KG_CAMPAIGN_ID_MAX + 1], kg_err *err);

/* Parses a ledger's text (name: for messages): every line well formed
 * and its prev the sha256 of the text before it.  *lines is malloc'd
 * (NULL when empty), *n its count.  KG_EINPUT naming the line otherwise. */
int kg_ledger_parse(const char *name, const char *text, size_t len, kg_ledger_line **lines, int *n, kg_err *err);

/* The start line of shard I/N's attempt A (no newline), chained to the
 * ledger text before it (before, blen). */
void kg_ledger_start_line(char *buf, size_t cap, const char *id, int shard, int count, int attempt, const char *utc,
                          const char *salt, const char *before, size_t blen);

/* The end line of that attempt, sums the sha256 of its SHA256SUMS. */
void kg_ledger_end_line(char *buf, size_t cap, const char *id, int shard, int count, int attempt, const char *utc,
                        const char *sums, const char *before, size_t blen);

/* The attempt that the next start of shard I/N gets in lines[0..n). */
int kg_ledger_next_attempt(const kg_ledger_line *lines, int n, int shard, int count);

#endif
