/* evidence.c: reads an evidence folder back into memory, and keeps the
 * worker's checked outputs for replay.
 *
 * Only what the folder holds is used: the canonical plan, processes.csv,
 * the raw rows and the check records of each process.  The analysis and
 * every report are therefore reproducible from the folder alone.  The
 * reader writes nothing.
 *
 * Saved outputs: a worker hands every checked output to
 * kg_evidence_save_output; the bytes of the pre-timing "poison0" check and
 * the post-timing "fresh" check are kept in memory (one worker is one
 * campaign process, so the store is per OS process) and written at the
 * worker's end as outputs/proc-NNN.bin with the index
 * outputs/proc-NNN.csv, which `kgate verify` replays. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "campaign.h"
#include "util.h"

static int parse_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0') return -1;
    *out = (int)v;
    return 0;
}

static int load_rows(kg_evidence *ev, const char *dir, int proc, kg_err *err)
{
    char path[KG_PATH_MAX + 64], *text = NULL;
    snprintf(path, sizeof path, "%s/raw/proc-%03d.csv", dir, proc);
    int rc = kg_read_file(path, &text, NULL, err);
    if (rc != KG_OK) return rc;
    char *cur = text, *line;
    int lineno = 0;
    kg_next_line(&cur); /* header */
    while ((line = kg_next_line(&cur)) != NULL) {
        lineno++;
        if (line[0] == '\0') continue;
        char *f[9];
        int nf = kg_csv_split(line, f, 9);
        kg_row r;
        char *end;
        if (nf != 8 || parse_int(f[0], &r.proc) || parse_int(f[2], &r.round) || parse_int(f[5], &r.sample)) {
            rc = kg_errorf(err, KG_EINPUT, "%s:%d: malformed row (expected 8 fields)", path, lineno + 1);
            goto done;
        }
        if (strncmp(f[7], ev->plan->hash, 16) != 0) {
            rc = kg_errorf(err, KG_EINPUT, "%s:%d: row of another plan (hash %s, folder's plan %.16s)", path,
                           lineno + 1, f[7], ev->plan->hash);
            goto done;
        }
        r.dir = strcmp(f[1], "rev") == 0 ? KG_DIR_REV : KG_DIR_FWD;
        r.arm = kg_plan_find_arm(ev->plan, f[3]);
        r.kase = kg_plan_find_case(ev->plan, f[4]);
        r.ns = strtod(f[6], &end);
        if (r.arm < 0 || r.kase < 0 || *end != '\0' || r.proc != proc) {
            rc = kg_errorf(err, KG_EINPUT, "%s:%d: unknown arm or case, bad time, or wrong process", path, lineno + 1);
            goto done;
        }
        if (ev->nrows % 4096 == 0) {
            kg_row *p = realloc(ev->rows, (ev->nrows + 4096) * sizeof *p);
            if (p == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
            ev->rows = p;
        }
        ev->rows[ev->nrows++] = r;
    }
done:
    free(text);
    return rc;
}

static int load_checks(kg_evidence *ev, const char *dir, int proc, kg_err *err)
{
    char path[KG_PATH_MAX + 64], *text = NULL;
    snprintf(path, sizeof path, "%s/checks/proc-%03d.csv", dir, proc);
    int rc = kg_read_file(path, &text, NULL, err);
    if (rc != KG_OK) return rc;
    char *cur = text, *line;
    kg_next_line(&cur);
    int na = ev->plan->narms;
    while ((line = kg_next_line(&cur)) != NULL) {
        if (line[0] == '\0') continue;
        char *f[12];
        int nf = kg_csv_split(line, f, 12);
        if (nf != 12) { rc = kg_errorf(err, KG_EINPUT, "%s: malformed check row", path); goto done; }
        int c = kg_plan_find_case(ev->plan, f[2]);
        int a = kg_plan_find_arm(ev->plan, f[3]);
        if (c < 0 || a < 0) { rc = kg_errorf(err, KG_EINPUT, "%s: check names unknown case or arm", path); goto done; }
        ev->nchecks++;
        if (strcmp(f[6], "pass") == 0) continue;
        ev->nchecks_failed++;
        if (strcmp(f[5], "admissible") == 0) ev->state[c * na + a] = KG_ARM_INADMISSIBLE;
        else if (strcmp(f[5], "weak") == 0 && ev->state[c * na + a] == KG_ARM_OK) ev->state[c * na + a] = KG_ARM_WEAK;
        else if (ev->state[c * na + a] == KG_ARM_OK) ev->state[c * na + a] = KG_ARM_INCORRECT;
    }
done:
    free(text);
    return rc;
}

int kg_evidence_load(const char *dir, kg_evidence *ev, kg_err *err)
{
    char path[KG_PATH_MAX + 64], *text = NULL;
    int rc;
    memset(ev, 0, sizeof *ev);
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    if ((rc = kg_read_file(path, &text, NULL, err)) != KG_OK) goto done;
    if ((rc = kg_plan_parse(text, strlen(text), path, dir, &ev->plan, err)) != KG_OK) goto done;
    free(text);
    text = NULL;
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if ((rc = kg_read_file(path, &ev->meta_json, NULL, err)) != KG_OK) goto done;

    int nc = ev->plan->ncases, na = ev->plan->narms;
    ev->state = calloc((size_t)(nc * na > 0 ? nc * na : 1), sizeof *ev->state);
    if (ev->state == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    for (int c = 0; c < nc; c++)
        for (int a = 0; a < na; a++)
            ev->state[c * na + a] = kg_plan_arm_applies(ev->plan, a, c) ? KG_ARM_OK : KG_ARM_ABSENT;

    snprintf(path, sizeof path, "%s/processes.csv", dir);
    if ((rc = kg_read_file(path, &text, NULL, err)) != KG_OK) goto done;
    char *cur = text, *line;
    kg_next_line(&cur);
    int cap = 0;
    while ((line = kg_next_line(&cur)) != NULL) {
        if (line[0] == '\0') continue;
        char *f[10];
        int nf = kg_csv_split(line, f, 10), idx, acc, slot = 0;
        if ((nf != 7 && nf != 9) || parse_int(f[0], &idx) || parse_int(f[3], &acc) || idx != ev->nproc ||
            (nf == 9 && (parse_int(f[7], &slot) || slot < 0 || slot > idx))) {
            rc = kg_errorf(err, KG_EINPUT, "%s: malformed row for process %d", path, ev->nproc);
            goto done;
        }
        if (ev->nproc == cap) {
            cap = cap ? 2 * cap : 16;
            int *a1 = realloc(ev->accepted, (size_t)cap * sizeof *a1);
            if (a1) ev->accepted = a1;
            int *a2 = realloc(ev->dir, (size_t)cap * sizeof *a2);
            if (a2) ev->dir = a2;
            char (*a3)[32] = realloc(ev->status, (size_t)cap * sizeof *a3);
            if (a3) ev->status = a3;
            char (*a4)[256] = realloc(ev->reason, (size_t)cap * sizeof *a4);
            if (a4) ev->reason = a4;
            int *a5 = realloc(ev->slot, (size_t)cap * sizeof *a5);
            if (a5) ev->slot = a5;
            if (!a1 || !a2 || !a3 || !a4 || !a5) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
        }
        ev->accepted[idx] = acc;
        ev->dir[idx] = strcmp(f[1], "rev") == 0 ? KG_DIR_REV : KG_DIR_FWD;
        snprintf(ev->status[idx], sizeof ev->status[idx], "%s", f[2]);
        snprintf(ev->reason[idx], sizeof ev->reason[idx], "%s", f[6]);
        ev->slot[idx] = nf == 9 ? slot : idx;
        ev->nproc++;
    }
    for (int p = 0; p < ev->nproc; p++) {
        if (!ev->accepted[p]) continue;
        if ((rc = load_checks(ev, dir, p, err)) != KG_OK) goto done;
        if ((rc = load_rows(ev, dir, p, err)) != KG_OK) goto done;
    }
done:
    free(text);
    if (rc != KG_OK) kg_evidence_free(ev);
    return rc;
}

void kg_evidence_free(kg_evidence *ev)
{
    if (ev == NULL) return;
    kg_plan_free(ev->plan);
    free(ev->rows);
    free(ev->accepted);
    free(ev->dir);
    free(ev->status);
    free(ev->reason);
    free(ev->slot);
    free(ev->state);
    free(ev->meta_json);
    memset(ev, 0, sizeof *ev);
}

/* ---- saved outputs ---- */

typedef struct saved {
    int kase, arm, o, pass;
    char phase[8], name[16];
    uint64_t seed;
    double max_abs;
    size_t off, bytes;
} saved;

static struct {
    int proc;
    saved *v;
    size_t n, cap;
    char *data;
    size_t len, dcap;
    int oom;
} g_out = { .proc = -1 };

void kg_evidence_save_output(int proc, int kase, int arm, const char *phase, const char *name, int o,
                             const void *bytes, size_t nbytes, uint64_t seed, int pass, double max_abs)
{
    if (g_out.oom) return;
    if (!((strcmp(phase, "pre") == 0 && strcmp(name, "poison0") == 0) ||
          (strcmp(phase, "post") == 0 && strcmp(name, "fresh") == 0)))
        return;
    g_out.proc = proc;
    if (g_out.n == g_out.cap) {
        size_t cap = g_out.cap ? 2 * g_out.cap : 32;
        saved *p = realloc(g_out.v, cap * sizeof *p);
        if (p == NULL) { g_out.oom = 1; return; }
        g_out.v = p;
        g_out.cap = cap;
    }
    if (g_out.len + nbytes > g_out.dcap) {
        size_t cap = g_out.dcap ? g_out.dcap : 65536;
        while (cap < g_out.len + nbytes) cap *= 2;
        char *p = realloc(g_out.data, cap);
        if (p == NULL) { g_out.oom = 1; return; }
        g_out.data = p;
        g_out.dcap = cap;
    }
    saved *s = &g_out.v[g_out.n++];
    memset(s, 0, sizeof *s);
    s->kase = kase;
    s->arm = arm;
    s->o = o;
    s->pass = pass;
    snprintf(s->phase, sizeof s->phase, "%s", phase);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->seed = seed;
    s->max_abs = max_abs;
    s->off = g_out.len;
    s->bytes = nbytes;
    memcpy(g_out.data + g_out.len, bytes, nbytes);
    g_out.len += nbytes;
}

int kg_evidence_flush_outputs(const kg_plan *plan, const char *dir, int proc, kg_err *err)
{
    char path[KG_PATH_MAX + 64];
    kg_sb idx = { 0 };
    int rc;
    if (g_out.oom) { rc = kg_errorf(err, KG_ENOMEM, "out of memory saving checked outputs"); goto done; }
    snprintf(path, sizeof path, "%s/outputs", dir);
    if ((rc = kg_mkdir_p(path, err)) != KG_OK) goto done;
    kg_sb_puts(&idx, "process,case,arm,phase,check,output,seed,offset,bytes,result,max_abs\n");
    for (size_t i = 0; i < g_out.n; i++) {
        const saved *s = &g_out.v[i];
        kg_sb_printf(&idx, "%d,%s,%s,%s,%s,%d,%" PRIu64 ",%zu,%zu,%s,%.6g\n", proc, plan->cases[s->kase].name,
                     plan->arms[s->arm].name, s->phase, s->name, s->o, s->seed, s->off, s->bytes,
                     s->pass ? "pass" : "fail", s->max_abs);
    }
    if (idx.oom) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    /* the data first: an index never names bytes that are not there */
    snprintf(path, sizeof path, "%s/outputs/proc-%03d.bin", dir, proc);
    if ((rc = kg_write_atomic(path, g_out.data ? g_out.data : "", g_out.len, err)) != KG_OK) goto done;
    snprintf(path, sizeof path, "%s/outputs/proc-%03d.csv", dir, proc);
    rc = kg_write_atomic(path, idx.buf, idx.len, err);
done:
    kg_sb_free(&idx);
    free(g_out.v);
    free(g_out.data);
    memset(&g_out, 0, sizeof g_out);
    g_out.proc = -1;
    return rc;
}
