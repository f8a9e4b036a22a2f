/* verify.c: `kgate verify DIR`, read only.
 *
 * SHA256SUMS (written by evidence.c) is the last file a campaign writes: one line per other file
 * of the folder, "<sha256 hex>  <relative path>", sorted by path, in the
 * format of coreutils' sha256sum (so `sha256sum -c SHA256SUMS` works in
 * the folder).  kg_verify_dir checks a folder three ways:
 *   1. every listed file exists with its hash, and no file is unlisted;
 *   2. plan.kg hashes to plan.sha256, and the reports recomputed from the
 *      raw samples equal report.md, report.html, results.json and
 *      results.csv byte for byte (the same code the campaign ran, rendered in memory);
 *   3. every saved output (outputs/proc-NNN.*) is compared again with a
 *      float64 reference recomputed on the CPU from its seed, which must be
 *      one the protocol derives for its process and case; the result must agree
 *      with the one recorded in checks/proc-NNN.csv;
 *   4. processes.csv's chain and file digests, the schedule against the
 *      plan, every accepted process's saved outputs, and environment.json's
 *      build and source hashes against build/ and sources/ (chain.c).
 * Any one-byte change to a file fails step 1 at least.
 *
 * It writes nothing into the folder. */
#include <dirent.h>
#include <jansson.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "verify/verify.h"
#include "evidence/attest.h"
#include "evidence/chain.h"
#include "report/report.h"
#include "report/screening.h"
#include "kgate/evidence.h"
#include "evidence/values.h"
#include "verify/replay.h"
#include "verify/chain_check.h"
#include "plan/protocol.h"
#include "base/util.h"
#include "base/safefs.h"
#include "evidence/outenc.h"
#include "verify/shards.h"
#include "evidence/boundaudit.h"


static int is_hex64(const char *s)
{
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

static void check_sums(const char *dir, int (*hash_it)(const char *rel), kg_sb *out, int *nbad, int *nfiles)
{
    char path[KG_PATH_MAX * 3], *text = NULL, **files = NULL, hex[65];
    int nf = 0;
    kg_strlist listed = { 0 };
    kg_err e = { 0 };
    snprintf(path, sizeof path, "%s/SHA256SUMS", dir);
    if (kg_read_file(path, &text, NULL, &e) != KG_OK) {
        kg_problem(out, nbad, "SHA256SUMS: missing or unreadable (%s): the campaign did not finish, or the file was removed", e.msg);
        goto done;
    }
    char *cur = text, *line;
    int lineno = 0;
    size_t tlen = strlen(text);
    if (tlen == 0 || text[tlen - 1] != '\n') kg_problem(out, nbad, "SHA256SUMS: does not end with a newline");
    while ((line = kg_next_line(&cur)) != NULL) {
        lineno++;
        if (strlen(line) < 67 || !is_hex64(line) || line[64] != ' ' || line[65] != ' ') {
            kg_problem(out, nbad, "SHA256SUMS:%d: malformed line (expected '<64 lowercase hex>  <path>')", lineno);
            continue;
        }
        const char *rel = line + 66;
        if (rel[0] == '/' || strstr(rel, "..") != NULL || strcmp(rel, "SHA256SUMS") == 0) {
            kg_problem(out, nbad, "SHA256SUMS:%d: path '%s' is not a file of the folder", lineno, rel);
            continue;
        }
        for (int i = 0; i < listed.n; i++)
            if (strcmp(listed.v[i], rel) == 0) kg_problem(out, nbad, "SHA256SUMS:%d: %s listed twice", lineno, rel);
        kg_strlist_add(&listed, rel);
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        if (hash_it != NULL && !hash_it(rel)) {   /* a file the caller does not read: there, not hashed */
            if (!kg_path_exists(path))
                kg_problem(out, nbad, "%s: listed in SHA256SUMS (line %d) but missing", rel, lineno);
            continue;
        }
        kg_err fe = { 0 };
        if (kg_sha256_file(path, hex, &fe) != KG_OK) {
            kg_problem(out, nbad, "%s: listed in SHA256SUMS (line %d) but missing: %s", rel, lineno, fe.msg);
            continue;
        }
        if (strncmp(hex, line, 64) != 0)
            kg_problem(out, nbad, "%s: SHA-256 %.16s... differs from SHA256SUMS line %d (%.16s...): the file or SHA256SUMS "
                    "was changed", rel, hex, lineno, line);
        (*nfiles)++;
    }
    if (kg_evidence_list(dir, &files, &nf, &e) != KG_OK) {
        kg_problem(out, nbad, "%s: cannot list the folder: %s", dir, e.msg);
        goto done;
    }
    for (int i = 0; i < nf; i++) {
        /* the signed envelope comes after SHA256SUMS (attest.h) */
        if (strcmp(files[i], "SHA256SUMS") == 0 || strcmp(files[i], KG_ATTEST_FILE) == 0) continue;
        int found = 0;
        for (int k = 0; k < listed.n && !found; k++) found = strcmp(listed.v[k], files[i]) == 0;
        if (!found) kg_problem(out, nbad, "%s: not listed in SHA256SUMS (added after the campaign)", files[i]);
    }
done:
    kg_strlist_free(listed.v, listed.n);
    kg_strlist_free(files, nf);
    free(text);
}

/* Compares stored file name with the text recomputed. */
static void same_bytes(const char *dir, const char *name, const char *want, kg_sb *out, int *nbad)
{
    char path[KG_PATH_MAX + 32], *have = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (kg_read_file(path, &have, &len, NULL) != KG_OK) {
        kg_problem(out, nbad, "%s: missing", name);
        return;
    }
    size_t wl = strlen(want), i = 0;
    int line = 1;
    while (i < len && i < wl && have[i] == want[i]) {
        if (have[i] == '\n') line++;
        i++;
    }
    if (i != len || i != wl)
        kg_problem(out, nbad, "%s: differs from the report recomputed from the raw samples (byte %zu, line %d)", name, i, line);
    free(have);
}

/* The reports are compared with this kgate's rendering, byte for byte:
 * a folder another kgate wrote may differ in form only.  Says so when
 * meta.json names another git revision than this binary's. */
static void version_hint(const char *dir, kg_sb *out)
{
    char path[KG_PATH_MAX + 32], *text = NULL;
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (kg_read_file(path, &text, NULL, NULL) != KG_OK) return;
    json_error_t je;
    json_t *m = json_loads(text, 0, &je);
    free(text);
    const char *sha = m != NULL ? json_string_value(json_object_get(m, "kgate_git_sha")) : NULL;
    if (sha != NULL && strcmp(sha, kg_git_sha()) != 0)
        kg_sb_printf(out, "note: the folder was written by kgate at git %s and this kgate is %s: its reports are "
                     "recomputed in this kgate's form, so a difference may be one of form only; verify with the kgate "
                     "that wrote it (environment.json names its binary)\n", sha, kg_git_sha());
    json_decref(m);
}

void kg_refs_free(kg_refs *r)
{
    if (r == NULL) return;
    for (int o = 0; o < KG_MAX_OUT; o++) {
        free(r->out[o].ref);
        free(r->out[o].bound);
    }
    memset(r, 0, sizeof *r);
}

/* What the replay of one folder knows and has: the reference source, the
 * references last fetched (for case, seed and contract), and whether the
 * source has failed (then nothing more is asked of it). */
typedef struct replay {
    const char *dir;
    const kg_plan *plan;
    const kg_case_facts *facts;
    const kg_evidence *ev;  /* the folder: the process index each process's seeds took (kg_evidence_seq) */
    const kg_ref_source *src;
    uint64_t base;
    kg_refs refs;
    int have, kase;
    uint64_t seed;
    kg_contract ct;
    int failed;
    int nreplayed, nskipped;
    int naudits;            /* bound audits recomputed */
} replay;

/* 1 when seed is one the protocol derives from the campaign seed and the
 * recorded input salt for process p, case c and the check x (the phase
 * numbers are the worker's; a sampled@N check's is timed execution N's;
 * inputs = fresh: the snapshot's inputs are the last execution's). */
static int seed_derived(const kg_plan *plan, uint64_t base, int p, int c, const kg_out_rec *x)
{
    long long nth = -1;
    int q = -1;
    char tail = 0;
    if (sscanf(x->check, KG_CHECK_SAMPLED "@%lld%c", &nth, &tail) == 1 && nth >= 0)
        return x->seed == kg_protocol_sample_seed(base, p, c, (int64_t)nth);
    /* sampled@N/Q: operation Q of execution N (pack > 1, not the last) */
    int pack = plan->campaign.pack;
    if (sscanf(x->check, KG_CHECK_SAMPLED "@%lld/%d%c", &nth, &q, &tail) == 2 && nth >= 0 && q >= 0 &&
        q < pack - 1 && pack <= KG_PLAN_MAX_FRESH_PACK)
        return x->seed == kg_protocol_op_input_seed(base, p, c, (int64_t)nth, pack, q);
    for (int k = 0; k < 4; k++)
        if (x->seed == kg_protocol_check_seed(base, p, c, k)) return 1;
    if (strcmp(x->check, KG_CHECK_SNAPSHOT) == 0) {
        const kg_campaign *cp = &plan->campaign;
        return x->seed == kg_protocol_sample_seed(base, p, c, (int64_t)cp->rounds * (cp->warmup + cp->samples));
    }
    return 0;
}

/* The references for x: fetched from the source unless they are the last
 * ones.  0, or -1 with a problem recorded. */
static int refs_for(replay *rp, const kg_out_rec *x, const char *ipath, int lineno, kg_sb *out, int *nbad)
{
    const kg_contract *ct = &rp->plan->arms[x->arm].contract;
    if (rp->have && rp->kase == x->kase && rp->seed == x->seed && rp->ct.precision == ct->precision &&
        rp->ct.tolerance == ct->tolerance)
        return 0;
    kg_refs_free(&rp->refs);
    rp->have = 0;
    kg_err e = { 0 };
    const kg_case_facts *f = &rp->facts[x->kase];
    uint64_t max_bytes = 4;
    for (int o = 0; o < f->nout; o++) max_bytes += 16 + 16 * (uint64_t)f->out[o].elems;
    int rc = rp->src->get(rp->src->ctx, rp->dir, x->kase, x->seed, ct, max_bytes, &rp->refs, &e);
    if (rc == KG_EINPUT) {
        kg_problem(out, nbad, "%s:%d: cannot recompute the reference: %s", ipath, lineno, e.msg);
        return -1;
    }
    if (rc != KG_OK) {
        kg_problem(out, nbad, "%s:%d: %s: no saved output is replayed further", ipath, lineno, e.msg);
        rp->failed = 1;
        return -1;
    }
    /* the reply's shapes are the folder's facts, or nothing of it is used */
    int ok = rp->refs.nout == f->nout;
    for (int o = 0; ok && o < f->nout; o++)
        ok = rp->refs.out[o].dtype == f->out[o].dtype && rp->refs.out[o].elems == f->out[o].elems;
    if (!ok) {
        kg_problem(out, nbad, "%s:%d: the op server's references for case %s do not have the outputs ops.json "
                   "records (%d outputs): no saved output is replayed further", ipath, lineno,
                   rp->plan->cases[x->kase].name, f->nout);
        rp->failed = 1;
        kg_refs_free(&rp->refs);
        return -1;
    }
    rp->have = 1;
    rp->kase = x->kase;
    rp->seed = x->seed;
    rp->ct = *ct;
    return 0;
}

/* One saved output x (line lineno of ipath) replayed: decoded against its
 * reference, its digest checked, compared within the bounds, and the
 * result matched with the worker's records (cr). */
static void replay_one(replay *rp, int p, const kg_out_rec *x, const char *ipath, int lineno, const char *bin,
                       size_t blen, const kg_check_rec *cr, size_t ncr, kg_sb *out, int *nbad)
{
    const kg_plan *plan = rp->plan;
    int c = x->kase, o = x->output;
    const char *cname = plan->cases[c].name, *aname = plan->arms[x->arm].name;
    if (refs_for(rp, x, ipath, lineno, out, nbad) != 0) return;
    const kg_ref_out *r = &rp->refs.out[o];
    size_t off = x->offset, nb = x->bytes, st = x->stored, want = (size_t)r->elems * kg_dtype_size(r->dtype);
    if (nb != want || off > blen || st > blen - off) {
        kg_problem(out, nbad, "%s:%d: %zu bytes (%zu stored) at offset %zu do not fit the output (%zu bytes) or "
                   "the .bin (%zu bytes)", ipath, lineno, nb, st, off, want, blen);
        return;
    }
    /* the output's bytes, decoded against the reference, and their digest */
    char *bytes = malloc(nb ? nb : 1);
    kg_err de = { 0 };
    if (bytes == NULL) {
        kg_problem(out, nbad, "%s:%d: out of memory for %zu bytes", ipath, lineno, nb);
        return;
    }
    const kg_outref oref = { r->dtype, r->elems, r->ref };
    if (kg_outenc_decode(&oref, x->encoding, bin + off, st, bytes, nb, &de) != KG_OK) {
        kg_problem(out, nbad, "%s:%d: %s", ipath, lineno, de.msg);
        free(bytes);
        return;
    }
    char hex[65];
    kg_sha256_hex(bytes, nb, hex);
    if (x->sha256[0] != '\0' ? strcmp(hex, x->sha256) != 0 : strcmp(x->encoding, KG_OUTENC_RAW) != 0) {
        if (x->sha256[0] != '\0')
            kg_problem(out, nbad, "%s:%d: the stored output decodes to bytes of SHA-256 %s, the index records %s",
                       ipath, lineno, hex, x->sha256);
        else
            kg_problem(out, nbad, "%s:%d: an encoded output without the digest of its bytes", ipath, lineno);
        free(bytes);
        return;
    }
    kg_values_cmp v;
    kg_values_compare(r->dtype, r->elems, r->ref, r->bound, bytes, &v);
    free(bytes);
    int pass = v.pass && !r->weak;
    char mabs[32], rec_abs[32];
    snprintf(mabs, sizeof mabs, "%.6g", v.max_abs);
    snprintf(rec_abs, sizeof rec_abs, "%.6g", x->max_abs);
    const char *res = pass ? "pass" : "fail", *rec_res = x->pass ? "pass" : "fail";
    if (strcmp(res, rec_res) != 0 || strcmp(mabs, rec_abs) != 0)
        kg_problem(out, nbad, "%s:%d: replay of %s/%s %s gives %s (max_abs %s), the worker recorded %s (max_abs %s)",
                   ipath, lineno, cname, aname, x->check, res, mabs, rec_res, rec_abs);
    char check[96 + KG_FACT_NAME];
    snprintf(check, sizeof check, "%s:%s", x->check, rp->facts[c].out[o].name);
    int found = 0;
    for (size_t k = 0; k < ncr && !found; k++) {
        const kg_check_rec *q = &cr[k];
        if (q->kase != c || q->arm != x->arm || q->phase != x->phase || strcmp(q->check, check) != 0) continue;
        found = 1;
        char q_abs[32];
        snprintf(q_abs, sizeof q_abs, "%.6g", q->max_abs);
        if (q->pass != pass || !q->has_cmp || strcmp(q_abs, mabs) != 0)
            kg_problem(out, nbad, "checks/proc-%03d.csv: %s/%s %s %s recorded %s (max_abs %s), replay gives %s "
                       "(max_abs %s)", p, cname, aname, kg_phase_name(x->phase), check, q->pass ? "pass" : "fail",
                       q->has_cmp ? q_abs : "", res, mabs);
    }
    if (!found)
        kg_problem(out, nbad, "checks/proc-%03d.csv: no record of %s/%s %s %s", p, cname, aname,
                   kg_phase_name(x->phase), check);
    rp->nreplayed++;
}

/* The bound audit of check record q (a "bound:OUTPUT" row of process p)
 * recomputed from the references and bounds the source gives for the
 * inputs the worker audited (the process's check seed, phase 0): the
 * result, the admitted count, the loosest position and the detail must be
 * the worker's. */
static void replay_bound(replay *rp, int p, const kg_check_rec *q, kg_sb *out, int *nbad)
{
    const kg_case_facts *f = &rp->facts[q->kase];
    const char *name = q->check + sizeof KG_CHECK_BOUND, *cname = rp->plan->cases[q->kase].name;
    int o = -1;
    for (int k = 0; k < f->nout; k++)
        if (strcmp(f->out[k].name, name) == 0) o = k;
    if (o < 0 || q->arm < 0) {
        kg_problem(out, nbad, "checks/proc-%03d.csv: %s names an output case %s does not have", p, q->check, cname);
        return;
    }
    double row_len = 0.0, out_elems = 0.0;
    kg_dtype in_dt[KG_MAX_IN];
    for (int i = 0; i < f->nin; i++) {
        in_dt[i] = f->in[i].dtype;
        if ((double)f->in[i].cols > row_len) row_len = (double)f->in[i].cols;
    }
    for (int k = 0; k < f->nout; k++) out_elems += (double)f->out[k].elems;
    if (!(row_len > 0.0)) {
        kg_problem(out, nbad, "%s: case %s: no input row lengths (written by an older kgate), so %s of process %d "
                   "cannot be recomputed", KG_FACTS_FILE, cname, q->check, p);
        return;
    }
    kg_out_rec x = { .proc = p, .kase = q->kase, .arm = q->arm, .output = o,
                     .seed = kg_protocol_check_seed(rp->base, kg_evidence_seq(rp->ev, p), q->kase, 0) };
    char where[64];
    snprintf(where, sizeof where, "checks/proc-%03d.csv", p);
    if (refs_for(rp, &x, where, 0, out, nbad) != 0) return;
    const kg_ref_out *r = &rp->refs.out[o];
    const kg_contract *ct = &rp->plan->arms[q->arm].contract;
    kg_audit_in in = { .dtype = r->dtype, .elems = r->elems, .cols = f->out[o].cols, .ref = r->ref,
                       .bound = r->bound, .seed = kg_bound_audit_seed(x.seed, o) };
    kg_bound_audit_budget(in_dt, f->nin, r->dtype, ct, f->flops, out_elems, row_len, &in.budget);
    kg_audit_res res;
    kg_bound_audit(&in, &res);
    int pass = 0;
    char detail[KG_DETAIL_MAX];
    kg_bound_audit_record(&in, &res, name, rp->plan->campaign.bound_audit_off, r->weak, &pass, detail,
                          sizeof detail);
    char mabs[32], q_abs[32];
    snprintf(mabs, sizeof mabs, "%.6g", res.loosest_delta);
    snprintf(q_abs, sizeof q_abs, "%.6g", q->max_abs);
    if (pass != q->pass || !q->has_cmp || q->nbad != res.admitted || q->worst != res.loosest ||
        strcmp(mabs, q_abs) != 0 || strcmp(detail, q->detail) != 0)
        kg_problem(out, nbad, "checks/proc-%03d.csv: %s/%s %s recorded %s (%lld admitted, loosest at %lld), the "
                   "recomputed audit gives %s (%d admitted, loosest at %lld): %.300s", p, cname,
                   rp->plan->arms[q->arm].name, q->check, q->pass ? "pass" : "fail", q->nbad, q->worst,
                   pass ? "pass" : "fail", res.admitted, (long long)res.loosest, detail);
    rp->naudits++;
}

/* Replays outputs/proc-NNN.{csv,bin} of process p. */
static void replay_proc(replay *rp, int p, kg_sb *out, int *nbad)
{
    char ipath[64], bpath[KG_PATH_MAX + 64], cpath[KG_PATH_MAX + 64], full[KG_PATH_MAX + 64];
    char *bin = NULL;
    size_t blen = 0, nidx = 0, ncr = 0;
    kg_out_rec *idx = NULL;
    kg_check_rec *cr = NULL;
    kg_err e = { 0 };
    const char *dir = rp->dir;
    snprintf(ipath, sizeof ipath, "outputs/proc-%03d.csv", p);
    snprintf(bpath, sizeof bpath, "%s/outputs/proc-%03d.bin", dir, p);
    snprintf(cpath, sizeof cpath, "%s/checks/proc-%03d.csv", dir, p);
    snprintf(full, sizeof full, "%s/%s", dir, ipath);
    if (!kg_path_exists(full)) return; /* a process that ended before writing (crashed, timed out) */
    if (kg_rows_read_out(full, rp->plan, p, &idx, &nidx, &e) != KG_OK) {
        kg_problem(out, nbad, "%s", e.msg);
        goto done;
    }
    if (kg_read_file_cap(bpath, KG_CAP_BIN, &bin, &blen, NULL) != KG_OK) {
        kg_problem(out, nbad, "%s: its .bin is missing or unreadable", ipath);
        goto done;
    }
    if (kg_path_exists(cpath) && kg_rows_read_checks(cpath, rp->plan, p, &cr, &ncr, &e) != KG_OK) {
        kg_problem(out, nbad, "%s", e.msg);
        goto done;
    }
    for (size_t k = 0; k < ncr && rp->src != NULL; k++)
        if (kg_check_is_bound(cr[k].check) && !rp->failed) replay_bound(rp, p, &cr[k], out, nbad);
    for (size_t i = 0; i < nidx; i++) {
        const kg_out_rec *x = &idx[i];
        int lineno = (int)i + 2;
        if (x->output < 0 || x->output >= rp->facts[x->kase].nout) {
            kg_problem(out, nbad, "%s:%d: names an output case %s does not have", ipath, lineno,
                       rp->plan->cases[x->kase].name);
            continue;
        }
        if (!seed_derived(rp->plan, rp->base, kg_evidence_seq(rp->ev, p), x->kase, x)) {
            kg_problem(out, nbad, "%s:%d: seed %" PRIu64 " is not a seed the protocol derives for process %d, case %s",
                       ipath, lineno, x->seed, p, rp->plan->cases[x->kase].name);
            continue;
        }
        if (rp->src == NULL || rp->failed) {
            rp->nskipped++;
            continue;
        }
        replay_one(rp, p, x, ipath, lineno, bin, blen, cr, ncr, out, nbad);
    }
done:
    free(cr);
    free(idx);
    free(bin);
}

/* A folder with a link, FIFO, socket or device in it is not read further:
 * nothing is followed, nothing blocks.  Returns 1 when so. */
static int refuse_special(const char *dir, kg_sb *out, int *nbad)
{
    kg_err fe = { 0 };
    if (kg_folder_check(dir, &fe) == KG_OK) return 0;
    kg_problem(out, nbad, "%s", fe.msg);
    kg_sb_printf(out, "not verified further: no file of the folder was read\n");
    return 1;
}

int kg_verify_sums(const char *dir, int (*hash_it)(const char *rel), kg_sb *out, int *nbad, int *nhashed,
                   kg_err *err)
{
    *nbad = 0;
    *nhashed = 0;
    if (refuse_special(dir, out, nbad)) return out->oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : KG_OK;
    check_sums(dir, hash_it, out, nbad, nhashed);
    char path[KG_PATH_MAX + 32], *text = NULL, *rec = NULL, hex[65];
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    if (kg_read_file(path, &text, NULL, NULL) == KG_OK) {
        kg_sha256_hex(text, strlen(text), hex);
        snprintf(path, sizeof path, "%s/plan.sha256", dir);
        if (kg_read_file(path, &rec, NULL, NULL) != KG_OK || strlen(rec) != 65 || strncmp(rec, hex, 64) != 0)
            kg_problem(out, nbad, "plan.sha256: does not hold the SHA-256 of plan.kg (%.16s...)", hex);
    } else {
        kg_problem(out, nbad, "plan.kg: missing or unreadable");
    }
    free(text);
    free(rec);
    return out->oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : KG_OK;
}

/* One shard folder of a merged folder verified as a folder of its own
 * (and its signature with pub); its lines named by name. */
static void verify_one_shard(const char *path, const char *name, const char *pub, const kg_ref_source *refs, kg_sb *out,
                             int *nbad)
{
    kg_sb sub = { 0 };
    int sbad = 0;
    kg_err e = { 0 };
    if (pub != NULL) {
        kg_attest_state st;
        char keyid[65];
        if (kg_attest_check(path, pub, NULL, &st, keyid, &sub, &sbad, &e) != KG_OK)
            kg_problem(out, nbad, "%s: %s", name, e.msg);
        else if (st != KG_ATTEST_GOOD && sbad == 0)
            kg_problem(out, nbad, "%s: %s", name, st == KG_ATTEST_UNSIGNED ? "unsigned" : "signature not checked");
    }
    if (kg_verify_dir_key(path, pub, refs, &sub, &sbad, &e) != KG_OK) kg_problem(out, nbad, "%s: %s", name, e.msg);
    /* the shard's lines, named by its folder; its summary line is dropped */
    char *line = sub.buf;
    while (line != NULL && *line != '\0') {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (nl != NULL && nl[1] != '\0') {
            if (strncmp(line, "note: ", 6) == 0) kg_sb_printf(out, "note: %s: %s\n", name, line + 6);
            else kg_problem(out, nbad, "%s: %s", name, line);
        }
        line = nl ? nl + 1 : NULL;
    }
    kg_sb_free(&sub);
}

/* A merged folder's shards: attempt 1 of each at shards/I and the later
 * attempts meta.json lists (merged.attempts) at shards/I.A, each verified
 * as a folder of its own, then as one campaign with the folder's ledger
 * (shards.c); each attempt's recorded verdicts are its folder's. */
static void verify_shards(const char *dir, const kg_plan *plan, int n, const char *pub, const kg_ref_source *refs,
                          kg_sb *out, int *nbad)
{
    char path[KG_PATH_MAX + 64], *mj = NULL;
    kg_err e = { 0 };
    snprintf(path, sizeof path, "%s/meta.json", dir);
    json_t *m = kg_read_file(path, &mj, NULL, &e) == KG_OK ? json_loads(mj, 0, NULL) : NULL;
    free(mj);
    json_t *att = json_object_get(json_object_get(m, "merged"), "attempts");
    size_t na = json_array_size(att), cap = (size_t)n + na;
    char **dirs = calloc(cap + 1, sizeof *dirs), **names = calloc(cap + 1, sizeof *names);
    int nd = 0;
    if (dirs == NULL || names == NULL) {
        kg_problem(out, nbad, "out of memory verifying %d shards", n);
        goto done;
    }
    for (size_t k = 0; k < (size_t)n + na; k++) {
        int index = (int)k, attempt = 1;
        json_t *a = k >= (size_t)n ? json_array_get(att, k - (size_t)n) : NULL;
        if (a != NULL) {
            index = (int)json_integer_value(json_object_get(a, "index"));
            attempt = (int)json_integer_value(json_object_get(a, "attempt"));
            if (index < 0 || index >= n || attempt < 1 || attempt > 100000) {
                kg_problem(out, nbad, "meta.json: merged.attempts[%zu]: no shard %d attempt %d", k - (size_t)n, index,
                           attempt);
                continue;
            }
        }
        char name[32], verdicts[2048];
        kg_merge_folder(index, attempt, name, sizeof name);
        size_t dcap = strlen(dir) + 40;
        if ((dirs[nd] = malloc(dcap)) == NULL || (names[nd] = strdup(name)) == NULL) {
            kg_problem(out, nbad, "out of memory");
            nd++;
            break;
        }
        snprintf(dirs[nd], dcap, "%s/%s", dir, name);
        if (a != NULL) {
            const char *rec = json_string_value(json_object_get(a, "verdicts"));
            kg_shard_verdicts(dirs[nd], verdicts, sizeof verdicts);
            if (rec == NULL || strcmp(rec, verdicts) != 0)
                kg_problem(out, nbad, "meta.json: merged.attempts[%zu] records the verdicts '%s', %s's are '%s'",
                           k - (size_t)n, rec != NULL ? rec : "", name, verdicts);
            if (attempt == 1) { /* attempt 1 is shards/I, verified above */
                free(dirs[nd]);
                free(names[nd]);
                dirs[nd] = names[nd] = NULL;
                continue;
            }
        }
        if (!kg_path_exists(dirs[nd]))
            kg_problem(out, nbad, "%s: missing: the merged folder records shard %d attempt %d there", name, index, attempt);
        else
            verify_one_shard(dirs[nd], name, pub, refs, out, nbad);
        nd++;
    }
    snprintf(path, sizeof path, "%s/ledger", dir);
    kg_merge_check((const char *const *)dirs, (const char *const *)names, nd, plan != NULL ? plan->hash : NULL, path,
                   out, nbad);
done:
    for (int i = 0; dirs != NULL && names != NULL && i < nd; i++) {
        free(dirs[i]);
        free(names[i]);
    }
    free(dirs);
    free(names);
    json_decref(m);
}

int kg_verify_dir(const char *dir, kg_sb *out, int *nbad, kg_err *err)
{
    return kg_verify_dir_key(dir, NULL, NULL, out, nbad, err);
}

int kg_verify_dir_key(const char *dir, const char *pub, const kg_ref_source *refs, kg_sb *out, int *nbad, kg_err *err)
{
    char path[KG_PATH_MAX + 32], *text = NULL;
    kg_plan *plan = NULL;
    kg_evidence ev = { 0 };
    int nfiles = 0;
    replay rp = { 0 };
    *nbad = 0;
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    if (!kg_path_exists(path))
        return kg_errorf(err, KG_EUSAGE, "%s is not an evidence folder (no plan.kg)", dir);
    if (refuse_special(dir, out, nbad)) return out->oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : KG_OK;
    check_sums(dir, NULL, out, nbad, &nfiles);

    if (kg_read_file(path, &text, NULL, NULL) == KG_OK) {
        char hex[65], *rec = NULL;
        kg_sha256_hex(text, strlen(text), hex);
        snprintf(path, sizeof path, "%s/plan.sha256", dir);
        if (kg_read_file(path, &rec, NULL, NULL) != KG_OK || strlen(rec) != 65 || strncmp(rec, hex, 64) != 0)
            kg_problem(out, nbad, "plan.sha256: does not hold the SHA-256 of plan.kg (%.16s...)", hex);
        free(rec);
        kg_err pe = { 0 };
        if (kg_plan_parse_recorded(text, strlen(text), "plan.kg", dir, &plan, &pe) != KG_OK)
            kg_problem(out, nbad, "plan.kg: %s", pe.msg);
        else if (strcmp(plan->canonical, text) != 0)
            kg_problem(out, nbad, "plan.kg: is not in canonical form");
    }

    kg_err re = { 0 };
    char *texts[KG_REPORT_MAX];
    /* the folder loaded once: the reports made from it, the outputs replayed from it */
    int loaded = 0;
    if (kg_report_render_ev(dir, &ev, NULL, texts, &re) != KG_OK) {
        kg_problem(out, nbad, "analysis: cannot recompute the reports: %s", re.msg);
    } else {
        int nf = 0;
        const kg_report_fmt *fmts = kg_report_formats(&nf);
        int before = *nbad;
        for (int i = 0; i < nf; i++) same_bytes(dir, fmts[i].file, texts[i], out, nbad);
        if (*nbad > before) version_hint(dir, out);
        kg_report_texts_free(texts);
        loaded = 1;
    }

    /* a merged folder: its shards, each a campaign of its own */
    kg_shard_meta sm = { 0 };
    char *mj = NULL;
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (kg_read_file(path, &mj, NULL, NULL) == KG_OK) {
        kg_err me = { 0 };
        if (kg_evidence_shard_meta(mj, &sm, &me) != KG_OK) kg_problem(out, nbad, "%s", me.msg);
    }
    free(mj);
    if (sm.merged > 0) {
        verify_shards(dir, plan, sm.merged, pub, refs, out, nbad);
        kg_sb_printf(out, "%s%d files hashed, reports recomputed, %d shards verified\n", *nbad ? "" : "ok: ", nfiles,
                     sm.merged);
        kg_evidence_free(&ev);
        kg_plan_free(plan);
        free(text);
        return out->oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : KG_OK;
    }
    if (plan != NULL) {
        kg_err ee = { 0 };
        if (loaded || kg_evidence_load(dir, &ev, &ee) == KG_OK) {
            rp.dir = dir;
            rp.plan = plan;
            rp.facts = ev.facts;
            rp.ev = &ev;
            rp.src = refs;
            rp.base = kg_protocol_input_base(plan->campaign.seed, ev.input_salt);
            if (ev.facts == NULL && refs != NULL && ev.out_rows > 0) {
                kg_problem(out, nbad, "%s: missing: the folder does not say what its ops' outputs are (written by an "
                           "older kgate), so its saved outputs are not replayed", KG_FACTS_FILE);
                rp.failed = 1;
            }
            /* the plan read with the evidence: its cases are the folder's */
            rp.plan = ev.plan;
            for (int p = 0; p < ev.nproc && ev.facts != NULL; p++) replay_proc(&rp, p, out, nbad);
            kg_refs_free(&rp.refs);
            /* a screen's drops re-derived, and the processes held to them */
            kg_screening sc;
            kg_err se = { 0 };
            if (kg_screening_derive(&ev, &sc, &se) != KG_OK) {
                kg_problem(out, nbad, "screening: cannot re-derive the drops: %s", se.msg);
            } else {
                kg_screening_audit(&ev, &sc, out, nbad);
                kg_screening_free(&sc);
            }
        }
        /* a failed load was reported by the analysis step already */
        /* 4. the chain of processes and their files, the schedule, the
         * saved outputs' presence, the build provenance (chain.c) */
        kg_chain_verify(dir, plan, out, nbad);
    }
    if (refs == NULL && rp.nskipped > 0)
        kg_sb_printf(out, "%s%d files hashed, reports recomputed, %d saved outputs not replayed (kgate verify replays "
                     "them)\n", *nbad ? "" : "ok: ", nfiles, rp.nskipped);
    else
        kg_sb_printf(out, "%s%d files hashed, reports recomputed, %d saved outputs replayed, %d bound audits "
                     "recomputed\n", *nbad ? "" : "ok: ", nfiles, rp.nreplayed, rp.naudits);
    kg_evidence_free(&ev);
    kg_plan_free(plan);
    free(text);
    return out->oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : KG_OK;
}
