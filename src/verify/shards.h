/* shards.h: the shard folders of a campaign as one campaign (shards.c). */
#ifndef KGATE_SHARDS_H
#define KGATE_SHARDS_H

#include <jansson.h>
#include "kgate/evidence.h"

struct kg_sb;

/* What a merge needs of one shard folder. */
typedef struct kg_shard_rec {
    char hash[65];
    kg_shard_meta sm;
    char host[256], started[64], salt[32], plan_path[KG_PATH_MAX];
    json_t *cases;          /* meta.json's shard.cases */
    int devices_any;        /* the plan's [campaign] devices */
    int ok;
} kg_shard_rec;

/* Reads the shard folder dir (named name in messages) into r; problems
 * appended to out, counted in *nbad (r->ok stays 0). */
void kg_shard_read(const char *dir, const char *name, kg_shard_rec *r, struct kg_sb *out, int *nbad);

/* The shards read into r[0..n) (those with ok set) as one campaign, as
 * kg_merge_check says. */
void kg_shard_check_recs(kg_shard_rec *r, const char *const *names, int n, const char *want, struct kg_sb *out,
                         int *nbad);

/* The shard folders dirs[0..n) as one campaign: each a shard (not a
 * whole campaign nor a merged folder), of the plan hash want (NULL: the
 * first's), all of one shard count equal to n, each index exactly once,
 * one backend, and one device model unless the plan says devices = any.
 * names[i] names dirs[i] in messages.  Problems appended, counted in
 * *nbad. */
void kg_merge_check(const char *const *dirs, const char *const *names, int n, const char *want, struct kg_sb *out,
                    int *nbad);

#endif
