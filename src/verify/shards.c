/* shards.c: the shard folders of a campaign read and checked as one
 * campaign (shards.h): what kgate merge checks before it writes, and what
 * kgate verify checks again in a merged folder. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "verify/shards.h"
#include "kgate/evidence.h"
#include "base/util.h"
#include "plan/shard.h"


void kg_merge_folder(int index, int attempt, char *buf, size_t cap)
{
    if (attempt <= 1) snprintf(buf, cap, "shards/%d", index);
    else snprintf(buf, cap, "shards/%d.%d", index, attempt);
}

void kg_shard_rec_free(kg_shard_rec *r)
{
    json_decref(r->cases);
    json_decref(r->slots);
    r->slots = NULL;
    free(r->lines);
    free(r->clean);
    r->clean = NULL;
    r->cases = NULL;
    r->lines = NULL;
    r->nlines = 0;
}

/* meta.json's campaign object into r (nothing when it has none). */
static void read_campaign(json_t *m, const char *name, kg_shard_rec *r, kg_sb *out, int *nbad)
{
    json_t *cp = json_object_get(m, "campaign"), *lines = json_object_get(cp, "ledger_lines");
    const char *id = json_string_value(json_object_get(cp, "id"));
    const char *ledger = json_string_value(json_object_get(cp, "ledger"));
    if (cp == NULL) return;
    if (id == NULL || !kg_campaign_id_ok(id) || !json_is_integer(json_object_get(cp, "attempt")) ||
        json_integer_value(json_object_get(cp, "attempt")) < 1 || ledger == NULL || !json_is_array(lines)) {
        kg_problem(out, nbad, "%s: meta.json: campaign must hold an id, an attempt from 1, a ledger and its "
                   "ledger_lines (restore meta.json from the shard's run)", name);
        return;
    }
    kg_sb text = { 0 };
    for (size_t i = 0; i < json_array_size(lines); i++) {
        const char *l = json_string_value(json_array_get(lines, i));
        kg_sb_printf(&text, "%s\n", l != NULL && strchr(l, '\n') == NULL ? l : "(not a line)");
    }
    kg_err e = { 0 };
    char what[KG_PATH_MAX + 64];
    snprintf(what, sizeof what, "%s/meta.json: campaign.ledger_lines", name);
    if (text.oom || kg_ledger_parse(what, text.buf != NULL ? text.buf : "", text.len, &r->lines, &r->nlines, &e) != KG_OK)
        kg_problem(out, nbad, "%s", text.oom ? "out of memory" : e.msg);
    kg_sb_free(&text);
    snprintf(r->id, sizeof r->id, "%s", id);
    snprintf(r->ledger, sizeof r->ledger, "%s", ledger);
    r->attempt = (int)json_integer_value(json_object_get(cp, "attempt"));
}

/* A by-process shard's processes: per slot, how many were not contaminated. */
static int read_slots(const char *dir, const char *name, kg_shard_rec *r, kg_sb *out, int *nbad)
{
    char path[KG_PATH_MAX + 32];
    kg_proc_rec *pr = NULL;
    int np = 0, legacy = 0;
    kg_err e = { 0 };
    snprintf(path, sizeof path, "%s/processes.csv", dir);
    if (r->nslots <= 0 || (r->clean = calloc((size_t)r->nslots, sizeof *r->clean)) == NULL ||
        kg_rows_read_procs(path, &pr, &np, &legacy, &e) != KG_OK) {
        kg_problem(out, nbad, "%s: processes.csv: %s", name, e.msg[0] ? e.msg : "unreadable, or out of memory");
        free(pr);
        return KG_EINPUT;
    }
    for (int p = 0; p < np; p++)
        if (pr[p].slot >= 0 && pr[p].slot < r->nslots && strcmp(pr[p].status, "contaminated") != 0)
            r->clean[pr[p].slot]++;
    free(pr);
    return KG_OK;
}

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
    json_t *slots = json_object_get(json_object_get(m, "shard"), "slots");
    r->slots = slots != NULL ? json_deep_copy(slots) : NULL;
    read_campaign(m, name, r, out, nbad);
    json_decref(m);
    snprintf(path, sizeof path, "%s/SHA256SUMS", dir);
    if (kg_sha256_file(path, r->sums, &e) != KG_OK) r->sums[0] = '\0';
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
        kg_plan_parse_recorded(text, strlen(text), path, dir, &plan, &e) == KG_OK) {
        r->devices_any = plan->campaign.devices_any;
        r->nslots = 2 * plan->campaign.processes;
    }
    kg_plan_free(plan);
    free(text);
    if (r->sm.by_process && read_slots(dir, name, r, out, nbad) != KG_OK) return;
    r->ok = 1;
}

int kg_shard_ledger_read(const char *path, kg_ledger_line **lines, int *n, int *present, kg_err *err)
{
    *lines = NULL;
    *n = 0;
    *present = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return KG_OK;
        return kg_errorf(err, KG_EIO, "ledger %s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
        close(fd);
        return kg_errorf(err, KG_EINPUT, "ledger %s: not a regular file of at most 64 MiB", path);
    }
    size_t len = (size_t)st.st_size, got = 0;
    char *text = malloc(len + 1);
    if (text == NULL) {
        close(fd);
        return kg_errorf(err, KG_ENOMEM, "out of memory reading %s", path);
    }
    while (got < len) {
        ssize_t k = read(fd, text + got, len - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    int rc = got == len ? kg_ledger_parse(path, text, len, lines, n, err)
                        : kg_errorf(err, KG_EIO, "ledger %s: short read", path);
    free(text);
    *present = rc == KG_OK;
    return rc;
}

/* The shard of r that is (index, attempt), -1: none. */
static int rec_of(const kg_shard_rec *r, int n, int index, int attempt)
{
    for (int i = 0; i < n; i++)
        if (r[i].ok && r[i].id[0] != '\0' && r[i].sm.index == index && r[i].attempt == attempt) return i;
    return -1;
}

/* The campaign's ledger as the shards and the file know it: the longest
 * of the shards' records, which every other must begin, extended by the
 * file, which must begin with it.  Returns it (owned by r or by ledger),
 * *nl its lines. */
static const kg_ledger_line *known_ledger(const kg_shard_rec *r, const char *const *names, int n,
                                          const kg_ledger_line *ledger, int nledger, int *nl, kg_sb *out, int *nbad)
{
    int longest = -1;
    for (int i = 0; i < n; i++)
        if (r[i].ok && r[i].id[0] != '\0' && (longest < 0 || r[i].nlines > r[longest].nlines)) longest = i;
    *nl = 0;
    if (longest < 0) return NULL;
    const kg_shard_rec *L = &r[longest];
    for (int i = 0; i < n; i++) {
        if (!r[i].ok || r[i].id[0] == '\0') continue;
        for (int k = 0; k < r[i].nlines; k++)
            if (strcmp(r[i].lines[k].text, L->lines[k].text) != 0) {
                kg_problem(out, nbad, "%s: its ledger record differs from %s's at line %d: the ledger was edited, or "
                           "the shards numbered their attempts in different ledgers (one ledger per campaign)", names[i],
                           names[longest], k + 1);
                break;
            }
    }
    if (ledger == NULL) {
        *nl = L->nlines;
        return L->lines;
    }
    int k = 0;
    while (k < L->nlines && k < nledger && strcmp(L->lines[k].text, ledger[k].text) == 0) k++;
    if (k < L->nlines) {
        kg_problem(out, nbad, "the ledger file does not hold line %d of what %s recorded when it started: the ledger "
                   "was edited or replaced since", k + 1, names[longest]);
        *nl = L->nlines;
        return L->lines;
    }
    *nl = nledger;
    return ledger;
}

/* The shards as attempts of one campaign (kg_merge_check). */
static void check_attempts(kg_shard_rec *r, const char *const *names, int n, int first, const kg_ledger_line *ledger,
                           int nledger, kg_sb *out, int *nbad)
{
    const kg_shard_rec *f = NULL;
    for (int i = 0; i < n; i++) {
        if (!r[i].ok) continue;
        if (r[i].id[0] == '\0') {
            kg_problem(out, nbad, "%s: records no campaign id and attempt (a shard of an older kgate): run it again "
                       "with the campaign's --campaign ID", names[i]);
            continue;
        }
        if (f == NULL) f = &r[i];
        if (strcmp(r[i].id, f->id) != 0)
            kg_problem(out, nbad, "%s: is of campaign %s, %s of campaign %s: shards of different campaigns do not merge "
                       "(give every shard of one campaign --campaign ID; a shard run again is an attempt of its "
                       "campaign, not a campaign of its own)", names[i], r[i].id, names[first], f->id);
        else if (strcmp(r[i].ledger, f->ledger) != 0)
            kg_problem(out, nbad, "%s: numbered its attempt in ledger %s, %s in %s: the shards of a campaign share one "
                       "ledger (--ledger)", names[i], r[i].ledger, names[first], f->ledger);
        char salt[32];
        snprintf(salt, sizeof salt, "%s", r[i].salt);
        const kg_ledger_line *own = r[i].nlines > 0 ? &r[i].lines[r[i].nlines - 1] : NULL;
        if (own == NULL || own->ended || strcmp(own->id, r[i].id) != 0 || own->shard != r[i].sm.index ||
            own->count != r[i].sm.count || own->attempt != r[i].attempt || strcmp(own->salt, salt) != 0)
            kg_problem(out, nbad, "%s: its ledger record does not end with its own start (campaign %s shard %d/%d "
                       "attempt %d salt %s): restore meta.json from the shard's run", names[i], r[i].id,
                       r[i].sm.index, r[i].sm.count, r[i].attempt, salt);
    }
    if (f == NULL || *nbad > 0) return;
    int nl = 0;
    const kg_ledger_line *L = known_ledger(r, names, n, ledger, nledger, &nl, out, nbad);
    for (int k = 0; k < nl; k++) {
        const kg_ledger_line *l = &L[k];
        if (strcmp(l->id, f->id) != 0 || l->count != f->sm.count) {
            kg_problem(out, nbad, "ledger line %d: campaign %s shard %d/%d is not of this campaign (%s, %d shards): the "
                       "ledger was edited", k + 1, l->id, l->shard, l->count, f->id, f->sm.count);
            continue;
        }
        int i = rec_of(r, n, l->shard, l->attempt);
        if (!l->ended && i < 0)
            kg_problem(out, nbad, "shard %d/%d attempt %d (started %s, salt %s) is left out: give its folder to kgate "
                       "merge too; the merged verdict takes attempt 1 of every shard and the report lists every "
                       "attempt (docs/scale-out.md)", l->shard, l->count, l->attempt, l->utc, l->salt);
        else if (!l->ended && strcmp(l->salt, r[i].salt) != 0)
            kg_problem(out, nbad, "%s: is not the folder of shard %d/%d attempt %d: the ledger's line %d has salt %s, "
                       "the folder %s", names[i], l->shard, l->count, l->attempt, k + 1, l->salt, r[i].salt);
        else if (l->ended && i >= 0 && strcmp(l->sums, r[i].sums) != 0) {
            int later = 0;
            for (int j = k + 1; j < nl; j++)
                later |= L[j].ended && L[j].shard == l->shard && L[j].attempt == l->attempt;
            if (!later)
                kg_problem(out, nbad, "%s: its SHA256SUMS is not the one shard %d/%d attempt %d ended with (ledger "
                           "line %d): the folder was changed or replaced after its run", names[i], l->shard, l->count,
                           l->attempt, k + 1);
        }
    }
    for (int i = 0; i < n; i++)
        for (int a = 1; r[i].ok && r[i].id[0] != '\0' && a < r[i].attempt; a++)
            if (rec_of(r, n, r[i].sm.index, a) < 0) {
                int named = 0;
                for (int k = 0; k < nl && !named; k++)
                    named = !L[k].ended && L[k].shard == r[i].sm.index && L[k].attempt == a;
                if (!named)
                    kg_problem(out, nbad, "%s: is attempt %d of shard %d/%d, and no ledger record names its attempt %d: "
                               "the ledger was edited; give every attempt", names[i], r[i].attempt, r[i].sm.index,
                               r[i].sm.count, a);
            }
}

void kg_shard_verdicts(const char *dir, char *buf, size_t cap)
{
    char path[KG_PATH_MAX + 32], *text = NULL;
    kg_err e = { 0 };
    kg_sb sb = { 0 };
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *j = kg_read_file(path, &text, NULL, &e) == KG_OK ? json_loads(text, 0, NULL) : NULL;
    free(text);
    text = NULL;
    json_t *gp = json_object_get(j, "gate_pass"), *inv = json_object_get(j, "invalid");
    kg_sb_printf(&sb, "gate %s", json_is_true(inv) ? "INVALID" : json_is_true(gp) ? "PASS" : json_is_false(gp) ? "FAIL" : "?");
    json_decref(j);
    snprintf(path, sizeof path, "%s/results.csv", dir);
    if (kg_read_file(path, &text, NULL, &e) == KG_OK) {
        /* case,arm,role,state,verdict,...: the candidates' verdicts */
        char *save = NULL;
        int first = 1;
        for (char *line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
            char *f[5] = { 0 }, *p = line;
            int k = 0;
            for (; k < 5 && p != NULL; k++) {
                f[k] = p;
                p = strchr(p, ',');
                if (p != NULL) *p++ = '\0';
            }
            if (first || k < 5 || strcmp(f[2], "candidate") != 0) {
                first = 0;
                continue;
            }
            kg_sb_printf(&sb, "%s %s %s %s", sb.len > 0 && strchr(sb.buf, ';') ? "," : ";", f[0], f[1], f[4]);
        }
    }
    free(text);
    snprintf(buf, cap, "%s", sb.buf != NULL && !sb.oom ? sb.buf : "?");
    kg_sb_free(&sb);
}

/* By-process shards: every process of the schedule (a slot's run that was
 * not contaminated) in exactly one shard's attempt 1. */
static void check_processes(const kg_shard_rec *r, const char *const *names, int n, int first, kg_sb *out, int *nbad)
{
    if (!r[first].sm.by_process) return;
    int nslots = r[first].nslots, count = r[first].sm.count;
    for (int s = 0; s < nslots; s++) {
        int have = 0, at = -1;
        for (int i = 0; i < n; i++) {
            if (!r[i].ok || r[i].attempt > 1 || r[i].clean == NULL || r[i].nslots != nslots || r[i].clean[s] == 0)
                continue;
            if (have > 0 || r[i].clean[s] > 1)
                kg_problem(out, nbad, "%s: process %d (slot %d) of the schedule is also in %s: each process runs in "
                           "exactly one shard", names[i], s, s, at >= 0 && at != i ? names[at] : "this shard");
            have += r[i].clean[s];
            at = i;
        }
        if (have == 0)
            kg_problem(out, nbad, "process %d (slot %d) of the schedule is in no shard: shard %d/%d runs it (kgate run "
                       "PLAN --shard %d/%d --resume DIR completes a shard)", s, s, kg_shard_of_slot(s, count), count,
                       kg_shard_of_slot(s, count), count);
    }
}

void kg_shard_check_recs(kg_shard_rec *r, const char *const *names, int n, const char *want,
                         const kg_ledger_line *ledger, int nledger, kg_sb *out, int *nbad)
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
            if (r[j].ok && r[j].sm.index == r[i].sm.index && r[j].attempt == r[i].attempt)
                kg_problem(out, nbad, "%s: shard %d/%d attempt %d twice (also %s): give each attempt once", names[i],
                           r[i].sm.index, r[i].sm.count, r[i].attempt, names[j]);
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
    check_processes(r, names, n, first, out, nbad);
    check_attempts(r, names, n, first, ledger, nledger, out, nbad);
}

void kg_merge_check(const char *const *dirs, const char *const *names, int n, const char *want,
                    const char *ledger_path, kg_sb *out, int *nbad)
{
    kg_shard_rec *r = calloc((size_t)(n > 0 ? n : 1), sizeof *r);
    if (r == NULL) {
        kg_problem(out, nbad, "out of memory checking %d shard(s)", n);
        return;
    }
    for (int i = 0; i < n; i++) kg_shard_read(dirs[i], names[i], &r[i], out, nbad);
    kg_ledger_line *ledger = NULL;
    int nledger = 0, present = 0;
    kg_err e = { 0 };
    if (ledger_path != NULL && kg_shard_ledger_read(ledger_path, &ledger, &nledger, &present, &e) != KG_OK)
        kg_problem(out, nbad, "%s", e.msg);
    kg_shard_check_recs(r, names, n, want, present ? ledger : NULL, nledger, out, nbad);
    free(ledger);
    for (int i = 0; i < n; i++) kg_shard_rec_free(&r[i]);
    free(r);
}

