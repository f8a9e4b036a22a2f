/* chain_check.c: `kgate verify`'s checks of the chain of processes.csv,
 * the schedule against the plan, the saved outputs' presence and the
 * build provenance (chain_check.h; the chain itself is evidence/chain.c). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "evidence/chain.h"
#include "verify/chain_check.h"
#include "plan/shard.h"
#include "plan/protocol.h"
#include "report/report.h"
#include "base/util.h"

/* The chain and every file digest of processes.csv. */
static void verify_chain(int dirfd, const char *plan_hash, const kg_proc_rec *r, int n, kg_sb *out, int *nbad)
{
    const char *prev = plan_hash;
    for (int p = 0; p < n; p++) {
        int line = p + 2;
        char want[65];
        kg_chain_link(prev, p, &r[p], want);
        if (strcmp(want, r[p].chain) != 0)
            kg_problem(out, nbad, "processes.csv:%d: chain %.16s... is not sha256(the previous row's chain || this row) "
                    "(%.16s...): a process was edited, removed, renumbered or added", line, r[p].chain, want);
        prev = r[p].chain;
        for (int i = 0; i < KG_PROC_NFILES; i++) {
            char rel[64], hex[65];
            kg_chain_file_name(dirfd, i, p, rel, sizeof rel);
            int h = kg_chain_hash_at(dirfd, rel, hex);
            if (h < 0)
                kg_problem(out, nbad, "%s: cannot be read as a regular file: %s", rel, strerror(errno));
            else if (h == 0 && strcmp(r[p].sha[i], "-") != 0)
                kg_problem(out, nbad, "%s: missing, but processes.csv line %d records its SHA-256 (%.16s...)", rel, line,
                        r[p].sha[i]);
            else if (h == 1 && strcmp(r[p].sha[i], "-") == 0)
                kg_problem(out, nbad, "%s: exists, but processes.csv line %d records no such file of process %d", rel,
                        line, p);
            else if (h == 1 && strcmp(r[p].sha[i], hex) != 0)
                kg_problem(out, nbad, "%s: SHA-256 %.16s... differs from processes.csv line %d (%.16s...): the file was "
                        "changed after its process was recorded", rel, hex, line, r[p].sha[i]);
        }
    }
}

/* Files of processes that processes.csv does not have. */
static void verify_strays(const char *dir, int n, kg_sb *out, int *nbad)
{
    char **files = NULL;
    int nf = 0;
    kg_err e = { 0 };
    if (kg_evidence_list(dir, &files, &nf, &e) != KG_OK) return;   /* reported by the SHA256SUMS step */
    static const char *const subs[] = { "raw/", "checks/", "outputs/", "telemetry/", "logs/" };
    for (int i = 0; i < nf; i++)
        for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
            size_t sl = strlen(subs[k]);
            int idx;
            if (strncmp(files[i], subs[k], sl) != 0) continue;
            const char *b = files[i] + sl;
            if ((sscanf(b, "proc-%d.", &idx) == 1 || sscanf(b, "resources-%d.", &idx) == 1) && idx >= n)
                kg_problem(out, nbad, "%s: no process %d in processes.csv (which has %d): a file of no recorded process",
                        files[i], idx, n);
        }
    kg_strlist_free(files, nf);
}

/* The schedule of the plan: slots 0..nslots-1, each with exactly one
 * process that was not contaminated, in its direction, attempts counting
 * the slot's earlier processes; an accepted process has its saved outputs. */
static void verify_schedule(const char *dir, int dirfd, const kg_plan *plan, const kg_proc_rec *r, int n,
                            kg_sb *out, int *nbad)
{
    char path[KG_PATH_MAX + 32], *mj = NULL;
    int check_only = 0;
    kg_shard_meta sm = { 0 };
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (kg_read_file(path, &mj, NULL, NULL) == KG_OK) {
        json_t *m = json_loads(mj, 0, NULL);
        check_only = m != NULL && json_is_true(json_object_get(m, "check_only"));
        json_decref(m);
        kg_err se = { 0 };
        if (kg_evidence_shard_meta(mj, &sm, &se) != KG_OK) sm.by_process = 0;
    }
    free(mj);
    int nslots = check_only ? 1 : 2 * plan->campaign.processes;
    int *clean = calloc((size_t)(nslots > 0 ? nslots : 1), sizeof *clean);
    int *tries = calloc((size_t)(nslots > 0 ? nslots : 1), sizeof *tries);
    if (clean == NULL || tries == NULL) {
        kg_problem(out, nbad, "out of memory checking the schedule");
        goto done;
    }
    /* a by-process shard's schedule is its own slots: the others' are another shard's */
    unsigned char *own = calloc((size_t)(nslots > 0 ? nslots : 1), 1);
    if (own == NULL) {
        kg_problem(out, nbad, "out of memory checking the schedule");
        goto done;
    }
    for (int s = 0; s < nslots; s++) {
        own[s] = !sm.by_process || sm.count <= 0 || kg_shard_of_slot(s, sm.count) == sm.index;
        clean[s] = !own[s];
    }
    for (int p = 0; p < n; p++) {
        int line = p + 2, s = r[p].slot, dirty = strcmp(r[p].status, "contaminated") == 0;
        if (s < 0 || s >= nslots) {
            kg_problem(out, nbad, "processes.csv:%d: slot %d is outside the plan's schedule (slots 0..%d)", line, s,
                    nslots - 1);
            continue;
        }
        if (!own[s]) {
            kg_problem(out, nbad, "processes.csv:%d: slot %d is shard %d/%d's, not this shard's (%d/%d): a process of "
                    "another shard", line, s, kg_shard_of_slot(s, sm.count), sm.count, sm.index, sm.count);
            continue;
        }
        if (r[p].dir != kg_protocol_direction(s))
            kg_problem(out, nbad, "processes.csv:%d: direction %s is not that of slot %d", line,
                    r[p].dir == KG_DIR_REV ? "rev" : "fwd", s);
        if (r[p].attempt != tries[s])
            kg_problem(out, nbad, "processes.csv:%d: attempt %d, but slot %d has %d earlier process(es)", line,
                    r[p].attempt, s, tries[s]);
        if (clean[s])
            kg_problem(out, nbad, "processes.csv:%d: slot %d already has a process that was not contaminated", line, s);
        if (r[p].accepted && (dirty || strcmp(r[p].status, "ok") != 0))
            kg_problem(out, nbad, "processes.csv:%d: accepted with status %s", line, r[p].status);
        tries[s]++;
        clean[s] |= !dirty;
        if (r[p].accepted)
            for (int i = 2; i <= 3; i++) {
                char rel[64], hex[65];
                kg_chain_file_name(dirfd, i, p, rel, sizeof rel);
                if (kg_chain_hash_at(dirfd, rel, hex) != 1) {
                    kg_chain_file_name(dirfd, 3, p, rel, sizeof rel);
                    kg_problem(out, nbad, "%s: process %d was accepted but its saved outputs are missing", rel, p);
                    break;
                }
            }
    }
    int m = 0;
    while (m < nslots && clean[m]) m++;
    if (m < nslots) {
        /* the campaign may have ended early: its sequential design decided
         * at a look, or the host never let slot m run (watch.csv) */
        int later = 0;
        for (int s = m + 1; s < nslots; s++) later |= tries[s] > 0;
        int early = 0;
        if (!later && tries[m] == 0 && plan->campaign.looks > 1) {
            kg_analysis an;
            char *texts[KG_REPORT_MAX];
            kg_err e = { 0 };
            if (kg_report_render(dir, &an, texts, &e) == KG_OK) {
                early = an.seq_look > 0 && an.seq_look < an.seq_looks &&
                        m == 2 * (plan->campaign.processes / plan->campaign.looks) * an.seq_look;
                kg_report_texts_free(texts);
                kg_analysis_free(&an);
            }
        }
        /* a slot given up: later slots may have run beside its repeats
         * (a worker starts beside the one before it, wproc.h) */
        if (tries[m] > 0) {
            kg_watch_rec *w = NULL;
            size_t nw = 0;
            kg_err e = { 0 };
            snprintf(path, sizeof path, "%s/watch.csv", dir);
            if (kg_rows_read_watch(path, &w, &nw, &e) == KG_OK)
                for (size_t i = 0; i < nw && !early; i++) early = strcmp(w[i].event, "never-quiet") == 0;
            free(w);
        }
        if (!early && sm.by_process)
            kg_problem(out, nbad, "processes.csv: slot %d (process %d of the schedule) has no process that was not "
                    "contaminated: shard %d/%d's processes are incomplete (and it gave no slot up); kgate run --resume "
                    "runs the rest", m, m, sm.index, sm.count);
        else if (!early)
            kg_problem(out, nbad, "processes.csv: slot %d has no process that was not contaminated: the schedule of %d "
                    "slots is incomplete (and the campaign neither decided early nor gave a slot up)", m, nslots);
    }
    free(own);
done:
    free(clean);
    free(tries);
}

/* environment.json's build_sha256 against build/, and its sources'
 * copies against sources/. */
static void verify_build(const char *dir, int dirfd, const kg_plan *plan, kg_sb *out, int *nbad)
{
    char path[KG_PATH_MAX + 32], *text = NULL, **files = NULL;
    int nf = 0;
    snprintf(path, sizeof path, "%s/environment.json", dir);
    if (kg_read_file(path, &text, NULL, NULL) != KG_OK) {
        kg_problem(out, nbad, "environment.json: missing or unreadable: the build is not recorded");
        return;
    }
    json_t *m = json_loads(text, 0, NULL);
    free(text);
    json_t *built = m != NULL ? json_object_get(m, "build_sha256") : NULL;
    json_t *srcs = m != NULL ? json_object_get(m, "sources") : NULL;
    if (!json_is_object(built) || !json_is_object(srcs)) {
        kg_problem(out, nbad, "environment.json: no build_sha256 or sources record");
        goto done;
    }
    kg_err e = { 0 };
    if (kg_evidence_list(dir, &files, &nf, &e) != KG_OK) goto done;
    const char *key;
    json_t *v;
    json_object_foreach(built, key, v) {
        char rel[KG_PATH_MAX], hex[65];
        snprintf(rel, sizeof rel, "build/%s", key);
        int h = strstr(key, "..") != NULL || key[0] == '/' ? -1 : kg_chain_hash_at(dirfd, rel, hex);
        if (!json_is_string(v) || h != 1)
            kg_problem(out, nbad, "%s: recorded in environment.json but missing", rel);
        else if (strcmp(hex, json_string_value(v)) != 0)
            kg_problem(out, nbad, "%s: SHA-256 %.16s... differs from environment.json's build_sha256 (%.16s...): a "
                    "built arm was replaced", rel, hex, json_string_value(v));
    }
    for (int i = 0; i < nf; i++)
        if (strncmp(files[i], "build/", 6) == 0 && json_object_get(built, files[i] + 6) == NULL)
            kg_problem(out, nbad, "%s: not recorded in environment.json's build_sha256", files[i]);
    for (int a = 0; a < plan->narms; a++) {
        char rel[128], hex[65];
        kg_chain_source_copy(plan, a, rel, sizeof rel);
        json_t *s = json_object_get(srcs, plan->arms[a].name);
        json_t *copy = s != NULL ? json_object_get(s, "copy") : NULL, *sha = s != NULL ? json_object_get(s, "sha256") : NULL;
        if (rel[0] == '\0' || !json_is_string(copy)) continue;
        if (strcmp(json_string_value(copy), rel) != 0) {
            kg_problem(out, nbad, "environment.json: arm %s's source copy is named %s, not %s", plan->arms[a].name,
                    json_string_value(copy), rel);
            continue;
        }
        if (kg_chain_hash_at(dirfd, rel, hex) != 1)
            kg_problem(out, nbad, "%s: recorded in environment.json but missing", rel);
        else if (!json_is_string(sha) || strcmp(hex, json_string_value(sha)) != 0)
            kg_problem(out, nbad, "%s: SHA-256 %.16s... differs from environment.json's record of arm %s's %s", rel,
                    hex, plan->arms[a].name, kg_arm_is_image(&plan->arms[a]) ? "image" : "source");
    }
    for (int i = 0; i < nf; i++) {
        if (strncmp(files[i], "sources/", 8) != 0) continue;
        int named = 0;
        for (int a = 0; a < plan->narms && !named; a++) {
            char rel[128];
            kg_chain_source_copy(plan, a, rel, sizeof rel);
            json_t *s = json_object_get(srcs, plan->arms[a].name);
            named = rel[0] != '\0' && strcmp(rel, files[i]) == 0 && s != NULL && json_object_get(s, "copy") != NULL;
        }
        /* a declared op's source: its hash is the plan's [op] sha256 */
        for (int o = 0; o < plan->nops && !named; o++) {
            char rel[KG_NAME_MAX + 32], name[KG_NAME_MAX + 16], hex[65];
            kg_plan_op_copy_name(plan, o, name, sizeof name);
            snprintf(rel, sizeof rel, "sources/%s", name);
            if (strcmp(rel, files[i]) != 0) continue;
            named = 1;
            if (kg_chain_hash_at(dirfd, rel, hex) != 1 || strcmp(hex, plan->ops[o].sha256) != 0)
                kg_problem(out, nbad, "%s: SHA-256 %.16s... is not the plan's [op %s] sha256 %.16s...", rel, hex,
                           plan->ops[o].name, plan->ops[o].sha256);
        }
        /* a python call's file: its hash is the plan's call_sha256 */
        for (int a = 0; a < plan->narms && !named; a++) {
            char rel[KG_NAME_MAX + 32], hex[65] = "";
            kg_plan_call_copy(plan, a, rel, sizeof rel);
            if (rel[0] == '\0' || strcmp(rel, files[i]) != 0) continue;
            named = 1;
            if (kg_chain_hash_at(dirfd, rel, hex) != 1 || strcmp(hex, plan->arms[a].call_sha256) != 0)
                kg_problem(out, nbad, "%s: SHA-256 %.16s... is not the plan's call_sha256 of arm %s (%.16s...)", rel,
                           hex, plan->arms[a].name, plan->arms[a].call_sha256);
        }
        if (!named) kg_problem(out, nbad, "%s: not an arm's source copy recorded in environment.json", files[i]);
    }
    for (int a = 0; a < plan->narms; a++) {
        char rel[KG_NAME_MAX + 32], hex[65] = "";
        kg_plan_call_copy(plan, a, rel, sizeof rel);
        if (rel[0] != '\0' && kg_chain_hash_at(dirfd, rel, hex) != 1)
            kg_problem(out, nbad, "%s: missing: the python call of arm %s is not in the folder", rel,
                       plan->arms[a].name);
    }
    for (int o = 0; o < plan->nops; o++) {
        char rel[KG_NAME_MAX + 32], name[KG_NAME_MAX + 16], hex[65];
        kg_plan_op_copy_name(plan, o, name, sizeof name);
        snprintf(rel, sizeof rel, "sources/%s", name);
        if (kg_chain_hash_at(dirfd, rel, hex) != 1)
            kg_problem(out, nbad, "%s: missing: the source of the plan's op %s is not in the folder", rel,
                       plan->ops[o].name);
    }
done:
    kg_strlist_free(files, nf);
    json_decref(m);
}

void kg_chain_verify(const char *dir, const kg_plan *plan, kg_sb *out, int *nbad)
{
    char path[KG_PATH_MAX + 32];
    kg_proc_rec *r = NULL;
    int n = 0, legacy = 0;
    kg_err e = { 0 };
    int dirfd = kg_open_dir(AT_FDCWD, dir, 0, &e);
    if (dirfd < 0) {
        kg_problem(out, nbad, "%s", e.msg);
        return;
    }
    snprintf(path, sizeof path, "%s/processes.csv", dir);
    if (kg_rows_read_procs(path, &r, &n, &legacy, &e) != KG_OK) {
        kg_problem(out, nbad, "%s", e.msg);
    } else {
        int chained = 1;
        for (int p = 0; p < n && chained; p++) chained = r[p].chain[0] != '\0';
        if (!chained)
            kg_problem(out, nbad, "processes.csv: records no file digests and chain (a folder of an older kgate, or one "
                    "rewritten in an older schema): its processes cannot be proved");
        else
            verify_chain(dirfd, plan->hash, r, n, out, nbad);
        verify_strays(dir, n, out, nbad);
        verify_schedule(dir, dirfd, plan, r, n, out, nbad);
    }
    verify_build(dir, dirfd, plan, out, nbad);
    free(r);
    close(dirfd);
}
