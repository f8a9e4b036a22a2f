/* shards.c: the shard folders of a campaign read and checked as one
 * campaign (shards.h): what kgate merge checks before it writes, and what
 * kgate verify checks again in a merged folder. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verify/shards.h"
#include "kgate/evidence.h"
#include "base/util.h"
#include "plan/shard.h"



void kg_shard_read(const char *dir, const char *name, kg_shard_rec *r, kg_sb *out, int *nbad)
{
    char path[KG_PATH_MAX + 32], *text = NULL;
    kg_err e = { 0 };
    memset(r, 0, sizeof *r);
    snprintf(path, sizeof path, "%s/plan.sha256", dir);
    if (kg_read_file(path, &text, NULL, &e) != KG_OK || strlen(text) < 64) {
        kg_problem(out, nbad, "%s: no plan.sha256: not an evidence folder (kgate run --shard I/N writes one)", name);
        free(text);
        return;
    }
    memcpy(r->hash, text, 64);
    r->hash[64] = '\0';
    free(text);
    text = NULL;
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (kg_read_file(path, &text, NULL, &e) != KG_OK || kg_evidence_shard_meta(text, &r->sm, &e) != KG_OK) {
        kg_problem(out, nbad, "%s: meta.json: %s", name, e.msg);
        free(text);
        return;
    }
    json_t *m = json_loads(text, 0, NULL);
    free(text);
    const char *s;
    if ((s = json_string_value(json_object_get(m, "host"))) != NULL) snprintf(r->host, sizeof r->host, "%s", s);
    if ((s = json_string_value(json_object_get(m, "started_utc"))) != NULL)
        snprintf(r->started, sizeof r->started, "%s", s);
    if ((s = json_string_value(json_object_get(m, "input_salt"))) != NULL) snprintf(r->salt, sizeof r->salt, "%s", s);
    if ((s = json_string_value(json_object_get(m, "plan_path"))) != NULL)
        snprintf(r->plan_path, sizeof r->plan_path, "%s", s);
    r->cases = json_deep_copy(json_object_get(json_object_get(m, "shard"), "cases"));
    json_decref(m);
    if (r->sm.merged > 0) {
        kg_problem(out, nbad, "%s: is a merged folder, not a shard: merge the shard folders it holds (%s/shards/I)",
                   name, name);
        return;
    }
    if (r->sm.count == 0) {
        kg_problem(out, nbad, "%s: is a whole campaign, not a shard: its meta.json records no shard (run kgate run "
                   "PLAN --shard I/N)", name);
        return;
    }
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    kg_plan *plan = NULL;
    if (kg_read_file(path, &text, NULL, &e) == KG_OK &&
        kg_plan_parse_recorded(text, strlen(text), path, dir, &plan, &e) == KG_OK)
        r->devices_any = plan->campaign.devices_any;
    kg_plan_free(plan);
    free(text);
    r->ok = 1;
}

void kg_shard_check_recs(kg_shard_rec *r, const char *const *names, int n, const char *want, kg_sb *out, int *nbad)
{
    int first = -1;
    for (int i = 0; i < n && first < 0; i++)
        if (r[i].ok) first = i;
    if (first < 0) return;
    const char *hash = want != NULL ? want : r[first].hash;
    int count = r[first].sm.count;
    for (int i = 0; i < n; i++) {
        if (!r[i].ok) continue;
        if (strcmp(r[i].hash, hash) != 0)
            kg_problem(out, nbad, "%s: ran plan %.12s, the campaign's plan is %.12s: shards of different plans do not "
                       "merge (run every shard from one plan file)", names[i], r[i].hash, hash);
        if (r[i].sm.count != count)
            kg_problem(out, nbad, "%s: is shard %d/%d, %s is shard %d/%d: every shard of a campaign has one N", names[i],
                       r[i].sm.index, r[i].sm.count, names[first], r[first].sm.index, count);
        for (int j = 0; j < i; j++)
            if (r[j].ok && r[j].sm.index == r[i].sm.index)
                kg_problem(out, nbad, "%s: shard %d/%d twice (also %s): give each shard once", names[i],
                           r[i].sm.index, r[i].sm.count, names[j]);
        if (strcmp(r[i].sm.backend, r[first].sm.backend) != 0)
            kg_problem(out, nbad, "%s: ran on backend %s, %s on %s: one campaign runs on one backend", names[i],
                       r[i].sm.backend, names[first], r[first].sm.backend);
        else if (!r[first].devices_any && strcmp(r[i].sm.device_model, r[first].sm.device_model) != 0)
            kg_problem(out, nbad, "%s: ran on device model '%s', %s on '%s': shards of different device models merge "
                       "only when the plan declares the device a case variable ([campaign] devices = any)", names[i],
                       r[i].sm.device_model, names[first], r[first].sm.device_model);
    }
    for (int k = 0; k < count && count <= KG_SHARD_MAX; k++) {
        int found = 0;
        for (int i = 0; i < n && !found; i++) found = r[i].ok && r[i].sm.index == k && r[i].sm.count == count;
        if (!found)
            kg_problem(out, nbad, "shard %d/%d is missing: run kgate run PLAN --shard %d/%d and merge its folder too", k,
                       count, k, count);
    }
}

void kg_merge_check(const char *const *dirs, const char *const *names, int n, const char *want, kg_sb *out, int *nbad)
{
    kg_shard_rec *r = calloc((size_t)(n > 0 ? n : 1), sizeof *r);
    if (r == NULL) {
        kg_problem(out, nbad, "out of memory checking %d shard(s)", n);
        return;
    }
    for (int i = 0; i < n; i++) kg_shard_read(dirs[i], names[i], &r[i], out, nbad);
    kg_shard_check_recs(r, names, n, want, out, nbad);
    for (int i = 0; i < n; i++) json_decref(r[i].cases);
    free(r);
}

