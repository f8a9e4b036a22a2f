/* worker.c: one fresh process of a campaign (`kgate worker`).
 *
 * Loads the plan (refusing it when its hash differs from the one the
 * supervisor recorded), opens the backend, and for each case in the
 * direction's order: prepares inputs once (outside timing), gives every
 * arm its own buffers, checks every arm (outputs poisoned twice with
 * different patterns, guard canaries, inputs verified unchanged), runs
 * the rounds, then checks again (a snapshot of the last timed output and
 * a run on fresh inputs).  Rows are kept in memory and written at the end
 * through atomic renames; a worker that dies leaves no partial file.
 *
 * An arm that fails a check before timing is not timed in this process.
 * The worker never judges: the supervisor's analysis does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "campaign.h"
#include "kgate/backend.h"
#include "kgate/oracle.h"
#include "protocol.h"
#include "util.h"

#define KG_MAX_ROTATE 16   /* input sets an arm can rotate through (campaign key rotate) */

typedef struct inst {
    int arm;
    kg_kernel *k;
    kg_dbuf in[KG_MAX_IN];
    kg_dbuf out[KG_MAX_OUT];
    kg_binding b;
    int failed;             /* a check failed before timing: not timed */
    /* rotate = N: input sets 1..N-1 (set 0 is in[]); the set bound now */
    kg_dbuf rot[KG_MAX_ROTATE][KG_MAX_IN];
    int cur_set;
} inst;

typedef struct wctx {
    const kg_plan *plan;
    const kg_settings *settings;
    kg_backend *be;
    const char *build_dir;
    int proc, dir;
    int progress;           /* report each round on stderr */
    kg_sb rows;
    kg_sb checks;
    kg_sb telemetry;        /* one row per timed sample, where the backend reads telemetry */
    kg_sb resources;        /* one row per loaded arm, where the backend reports resources */
    void *host;             /* scratch for downloads */
    size_t host_cap;
} wctx;

static const char *dir_name(int dir)
{
    return dir == KG_DIR_FWD ? "fwd" : "rev";
}

static void csv_text(kg_sb *sb, const char *s)
{
    kg_sb_puts(sb, "\"");
    for (; *s; s++) {
        if (*s == '"') kg_sb_puts(sb, "\"\"");
        else if (*s == '\n' || *s == '\r') kg_sb_puts(sb, " ");
        else kg_sb_printf(sb, "%c", *s);
    }
    kg_sb_puts(sb, "\"");
}

static void record_check(wctx *w, int c, int a, const char *phase, const char *check, int pass,
                         const kg_check *r, const char *detail)
{
    kg_sb_printf(&w->checks, "%d,%s,%s,%s,%s,%s,%s,", w->proc, dir_name(w->dir), w->plan->cases[c].name,
                 a >= 0 ? w->plan->arms[a].name : "", phase, check, pass ? "pass" : "fail");
    if (r != NULL)
        kg_sb_printf(&w->checks, "%.6g,%.6g,%lld,%lld,", r->max_abs, r->max_rel, (long long)r->worst,
                     (long long)r->nbad);
    else
        kg_sb_puts(&w->checks, ",,,,");
    csv_text(&w->checks, detail != NULL ? detail : (r != NULL ? r->msg : ""));
    kg_sb_puts(&w->checks, "\n");
}

static int scratch(wctx *w, size_t bytes, kg_err *err)
{
    if (bytes <= w->host_cap) return KG_OK;
    void *p = realloc(w->host, bytes);
    if (p == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory (%zu bytes)", bytes);
    w->host = p;
    w->host_cap = bytes;
    return KG_OK;
}

static int upload_inputs(wctx *w, inst *x, const kg_case_data *d, kg_err *err)
{
    for (int i = 0; i < d->nin; i++) {
        int rc = kg_backend_upload(w->be, &x->in[i], 0, d->in[i], d->in_bytes[i], err);
        if (rc != KG_OK) return rc;
    }
    return KG_OK;
}

/* Poisons the outputs with pattern and refreshes the guards. */
static int poison_outputs(wctx *w, inst *x, const kg_case_data *d, int pattern, kg_err *err)
{
    size_t g = kg_guard_bytes();
    for (int o = 0; o < d->nout; o++) {
        int rc = scratch(w, d->out_bytes[o] + g, err);
        if (rc != KG_OK) return rc;
        kg_poison(w->host, d->out_bytes[o], pattern);
        kg_guard_fill((char *)w->host + d->out_bytes[o]);
        if ((rc = kg_backend_upload(w->be, &x->out[o], 0, w->host, d->out_bytes[o] + g, err)) != KG_OK)
            return rc;
    }
    /* the workspace too: a kernel must not rely on what it held before */
    if (x->b.ws.ptr != NULL && x->b.ws.bytes > 0) {
        int rc = scratch(w, x->b.ws.bytes, err);
        if (rc != KG_OK) return rc;
        kg_poison(w->host, x->b.ws.bytes, pattern);
        if ((rc = kg_backend_upload(w->be, &x->b.ws, 0, w->host, x->b.ws.bytes, err)) != KG_OK) return rc;
    }
    return KG_OK;
}

/* Downloads outputs, compares them and verifies guards and inputs.
 * Returns KG_OK with *ok = 0 when a check failed (recorded), or an error
 * when the backend failed.  counts (may be NULL) accumulates the output
 * comparisons made and failed, for the numerical negative. */
static int verify(wctx *w, int c, inst *x, const kg_case_data *d, const char *phase, const char *name,
                  int *ok, int counts[2], kg_err *err)
{
    size_t g = kg_guard_bytes();
    int rc;
    *ok = 1;
    for (int o = 0; o < d->nout; o++) {
        if ((rc = scratch(w, d->out_bytes[o] + g, err)) != KG_OK) return rc;
        if ((rc = kg_backend_download(w->be, w->host, &x->out[o], 0, d->out_bytes[o] + g, err)) != KG_OK)
            return rc;
        kg_check r;
        kg_oracle_compare(d, o, w->host, &r);
        kg_evidence_save_output(w->proc, c, x->arm, phase, name, o, w->host, d->out_bytes[o], d->seed, r.pass, r.max_abs);
        char check[96];
        snprintf(check, sizeof check, "%s:%s", name, d->op->out_names[o]);
        record_check(w, c, x->arm, phase, check, r.pass, &r, NULL);
        if (!r.pass) *ok = 0;
        if (counts != NULL) {
            counts[0]++;
            counts[1] += !r.pass;
        }
        long bad = kg_guard_verify((char *)w->host + d->out_bytes[o]);
        char detail[160] = "";
        if (bad >= 0)
            snprintf(detail, sizeof detail, "guard after output %s damaged at byte %ld: a write past the end",
                     d->op->out_names[o], bad);
        snprintf(check, sizeof check, "%s:guard:%s", name, d->op->out_names[o]);
        record_check(w, c, x->arm, phase, check, bad < 0, NULL, detail);
        if (bad >= 0) *ok = 0;
    }
    for (int i = 0; i < d->nin; i++) {
        if ((rc = scratch(w, d->in_bytes[i], err)) != KG_OK) return rc;
        if ((rc = kg_backend_download(w->be, w->host, &x->in[i], 0, d->in_bytes[i], err)) != KG_OK) return rc;
        int same = kg_checksum(w->host, d->in_bytes[i]) == d->in_sum[i];
        char check[96], detail[160] = "";
        snprintf(check, sizeof check, "%s:input:%s", name, d->op->in_names[i]);
        if (!same) snprintf(detail, sizeof detail, "input %s was modified by the kernel", d->op->in_names[i]);
        record_check(w, c, x->arm, phase, check, same, NULL, detail);
        if (!same) *ok = 0;
    }
    return KG_OK;
}

/* One checked run: poison, run, verify. */
static int checked_run(wctx *w, int c, inst *x, const kg_case_data *d, const char *phase, const char *name,
                       int pattern, int *ok, int counts[2], kg_err *err)
{
    int rc;
    if ((rc = poison_outputs(w, x, d, pattern, err)) != KG_OK) return rc;
    if ((rc = kg_backend_run(w->be, x->k, err)) != KG_OK) return rc;
    return verify(w, c, x, d, phase, name, ok, counts, err);
}

static void inst_release(wctx *w, inst *x)
{
    kg_backend_unload(w->be, x->k);
    x->k = NULL;
    for (int i = 0; i < KG_MAX_IN; i++) kg_backend_free(w->be, &x->in[i]);
    for (int o = 0; o < KG_MAX_OUT; o++) kg_backend_free(w->be, &x->out[o]);
    kg_backend_free(w->be, &x->b.ws);
    for (int r = 0; r < KG_MAX_ROTATE; r++)
        for (int i = 0; i < KG_MAX_IN; i++) kg_backend_free(w->be, &x->rot[r][i]);
}

/* Allocates input sets 1..nset-1 of an arm and fills them with d's inputs
 * (rotate = N: the same values at N addresses, so that repeated samples
 * do not find their inputs in cache). */
static int rotation_setup(wctx *w, inst *x, const kg_case_data *d, int nset, kg_err *err)
{
    for (int r = 1; r < nset; r++)
        for (int i = 0; i < d->nin; i++) {
            int rc = kg_backend_alloc(w->be, d->in_bytes[i], &x->rot[r][i], err);
            if (rc == KG_OK) rc = kg_backend_upload(w->be, &x->rot[r][i], 0, d->in[i], d->in_bytes[i], err);
            if (rc != KG_OK) return rc;
        }
    return KG_OK;
}

/* Binds input set r of an arm (0 = the checked buffers), outside timing. */
static int rotation_bind(wctx *w, inst *x, int r, kg_err *err)
{
    if (x->cur_set == r) return KG_OK;
    for (int i = 0; i < x->b.nin; i++) x->b.in[i] = r == 0 ? x->in[i] : x->rot[r][i];
    x->cur_set = r;
    return kg_backend_bind(w->be, x->k, &x->b, err);
}

/* Writes d's inputs into every input set of an arm. */
static int rotation_upload(wctx *w, inst *x, const kg_case_data *d, int nset, kg_err *err)
{
    int rc = upload_inputs(w, x, d, err);
    for (int r = 1; r < nset && rc == KG_OK; r++)
        for (int i = 0; i < d->nin && rc == KG_OK; i++)
            rc = kg_backend_upload(w->be, &x->rot[r][i], 0, d->in[i], d->in_bytes[i], err);
    return rc;
}

static int inst_setup(wctx *w, int c, int a, const kg_case_data *d, inst *x, kg_err *err)
{
    const kg_plan *plan = w->plan;
    int rc;
    memset(x, 0, sizeof *x);
    x->arm = a;
    for (int i = 0; i < d->nin; i++)
        if ((rc = kg_backend_alloc(w->be, d->in_bytes[i], &x->in[i], err)) != KG_OK) return rc;
    for (int o = 0; o < d->nout; o++)
        if ((rc = kg_backend_alloc(w->be, d->out_bytes[o] + kg_guard_bytes(), &x->out[o], err)) != KG_OK)
            return rc;
    if ((rc = upload_inputs(w, x, d, err)) != KG_OK) return rc;
    if ((rc = kg_backend_load(w->be, plan, a, c, w->build_dir, &x->k, err)) != KG_OK) return rc;
    x->b.kase = &plan->cases[c];
    x->b.nin = d->nin;
    x->b.nout = d->nout;
    for (int i = 0; i < d->nin; i++) x->b.in[i] = x->in[i];
    for (int o = 0; o < d->nout; o++) {
        x->b.out[o] = x->out[o];
        x->b.out_bytes[o] = d->out_bytes[o];
    }
    x->b.pack = plan->campaign.pack;
    /* a per-arm workspace (split-K partials), poisoned like the outputs */
    size_t wsb = d->op->ws_bytes != NULL ? d->op->ws_bytes(&plan->cases[c]) : 0;
    if (wsb > 0 && (rc = kg_backend_alloc(w->be, wsb, &x->b.ws, err)) != KG_OK) return rc;
    return kg_backend_bind(w->be, x->k, &x->b, err);
}


/* The weak-case check: zeros, a copy of an input, the row mean and the
 * output of another seed (other) must each fail every output's check.
 * One row per arm, so that a weak case marks its arms and the gate fails
 * on it when it is primary. */
static void weak_check(wctx *w, int c, const int *order, int n, const kg_case_data *d,
                       const kg_case_data *other)
{
    char why[320] = "";
    for (int o = 0; o < d->nout && why[0] == '\0'; o++) {
        if (d->weak[o]) snprintf(why, sizeof why, "%s", d->weak_why);
        else if (other->weak[o]) snprintf(why, sizeof why, "%s", other->weak_why);
        else if (kg_oracle_stale(d, other, o, why, sizeof why) ||
                 kg_oracle_stale(other, d, o, why, sizeof why)) {
            size_t len = strlen(why);
            snprintf(why + len, sizeof why - len, ": the output does not depend on the inputs "
                     "enough for this check (change the shape or scale)");
        }
    }
    const char *detail = why[0] ? why : "zeros, input copies, the row mean and another seed's output all fail";
    for (int i = 0; i < n; i++) record_check(w, c, order[i], "pre", "weak", why[0] == '\0', NULL, detail);
}

/* Bitwise parity: an arm declaring parity = OTHER must leave exactly
 * OTHER's bytes in every output, on the same inputs (both arms' last
 * checked run). */
static int parity_check(wctx *w, int c, inst *xs, int nx, int i, const kg_case_data *d, kg_err *err)
{
    const kg_plan *plan = w->plan;
    const char *other = plan->arms[xs[i].arm].parity;
    int j = -1, rc;
    for (int k = 0; k < nx; k++)
        if (strcmp(plan->arms[xs[k].arm].name, other) == 0) j = k;
    if (j < 0) {
        char detail[200];
        snprintf(detail, sizeof detail, "parity arm %s does not run on this case", other);
        record_check(w, c, xs[i].arm, "pre", "parity", 0, NULL, detail);
        xs[i].failed = 1;
        return KG_OK;
    }
    for (int o = 0; o < d->nout; o++) {
        size_t ob = d->out_bytes[o];
        if ((rc = scratch(w, 2 * ob, err)) != KG_OK) return rc;
        unsigned char *mine = w->host, *theirs = (unsigned char *)w->host + ob;
        if ((rc = kg_backend_download(w->be, mine, &xs[i].out[o], 0, ob, err)) != KG_OK) return rc;
        if ((rc = kg_backend_download(w->be, theirs, &xs[j].out[o], 0, ob, err)) != KG_OK) return rc;
        char check[96], detail[256] = "";
        snprintf(check, sizeof check, "parity:%s", d->op->out_names[o]);
        size_t esz = ob / (size_t)(d->out_elems[o] > 0 ? d->out_elems[o] : 1);
        int same = memcmp(mine, theirs, ob) == 0;
        if (!same) {
            size_t b = 0;
            while (b < ob && mine[b] == theirs[b]) b++;
            int64_t e = esz > 0 ? (int64_t)(b / esz) : 0;
            int64_t cols = d->op->out_cols ? d->op->out_cols(d->kase, o) : 0;
            uint32_t ua = 0, ub = 0;
            memcpy(&ua, mine + (size_t)e * esz, esz < 4 ? esz : 4);
            memcpy(&ub, theirs + (size_t)e * esz, esz < 4 ? esz : 4);
            if (cols > 0)
                snprintf(detail, sizeof detail, "first difference from %s at element %lld (row %lld, col %lld): "
                         "bits %#x, %s has %#x", other, (long long)e, (long long)(e / cols),
                         (long long)(e % cols), ua, other, ub);
            else
                snprintf(detail, sizeof detail, "first difference from %s at element %lld: bits %#x, %s has %#x",
                         other, (long long)e, ua, other, ub);
            xs[i].failed = 1;
        }
        record_check(w, c, xs[i].arm, "pre", check, same, NULL, detail);
    }
    return KG_OK;
}

/* Records what a loaded arm uses (registers, shared and local bytes...),
 * for every launch of its chain, when the backend can say. */
static void record_resources(wctx *w, int c, const inst *x)
{
    if (!kg_backend_has_resources(w->be)) return;
    kg_resources r;
    kg_err e = { 0 };
    memset(&r, 0, sizeof r);
    if (kg_backend_resources(w->be, x->k, 0, &r, &e) != KG_OK) return;
    int n = r.launches > 1 ? r.launches : 1;
    for (int i = 0; i < n; i++) {
        if (i > 0 && kg_backend_resources(w->be, x->k, i, &r, &e) != KG_OK) return;
        kg_sb_printf(&w->resources, "%d,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%lldx%lldx%lld,%lldx%lldx%lld,%d,%s,%zu,%s\n",
                 w->proc, w->plan->cases[c].name, w->plan->arms[x->arm].name, i + 1, r.regs, r.static_shared_bytes,
                 r.dynamic_shared_bytes, r.local_bytes, r.const_bytes, r.max_threads_per_block, r.ptx_version,
                 r.binary_version, (long long)r.grid[0], (long long)r.grid[1], (long long)r.grid[2],
                 (long long)r.block[0], (long long)r.block[1], (long long)r.block[2], r.launches, r.arch,
                 r.image_bytes, r.image_sha256);
    }
}

/* Reads telemetry after a timed sample and records it, joined to the
 * sample by (process, case, round, arm, sample).  *escaped is set when
 * the backend's host bracket saw work outside the timed events. */
static void record_telemetry(wctx *w, int c, int round, int arm, int sample, uint64_t *escapes_seen,
                             int *escaped)
{
    *escaped = 0;
    if (!kg_backend_has_telemetry(w->be)) return;
    kg_telemetry t;
    kg_err e = { 0 };
    memset(&t, 0, sizeof t);
    if (kg_backend_telemetry(w->be, &t, &e) != KG_OK) return;
    *escaped = t.escapes > *escapes_seen;
    *escapes_seen = t.escapes;
    kg_sb_printf(&w->telemetry, "%d,%s,%d,%s,%d,%d,%d,%.1f,%d,0x%llx,%d,%d,%.0f,%.0f\n", w->proc,
                 w->plan->cases[c].name, round, w->plan->arms[arm].name, sample, t.sm_clock_mhz,
                 t.mem_clock_mhz, t.power_w, t.temp_c, (unsigned long long)t.clock_event_reasons,
                 t.foreign_procs, *escaped, t.last_event_ns, t.last_host_ns);
}

static int run_case(wctx *w, int c, kg_err *err)
{
    const kg_plan *plan = w->plan;
    const kg_campaign *cp = &plan->campaign;
    const kg_case *kc = &plan->cases[c];
    const kg_op *op = kg_op_find(kc->op);
    int order[64], n, rc = KG_OK;
    inst xs[64];
    int nx = 0;
    kg_case_data pre = { 0 }, post = { 0 }, fresh = { 0 };
    kg_step *steps = NULL;

    n = kg_protocol_arm_order(plan, c, w->dir, order);
    if (n > 64) return kg_errorf(err, KG_EINPUT, "%s: case %s has more than 64 arms", plan->path, kc->name);
    char why[256] = "";
    if (op == NULL) return kg_errorf(err, KG_EINPUT, "%s: unknown op '%s'", plan->path, kc->op);
    if (op->admissible(kc, why, sizeof why) != 0) {
        for (int i = 0; i < n; i++) record_check(w, c, order[i], "pre", "admissible", 0, NULL, why);
        return KG_OK;
    }
    uint64_t seed_pre = kg_protocol_check_seed(cp->seed, w->proc, c, 0);
    if ((rc = kg_oracle_prepare(kc, seed_pre, &pre, err)) != KG_OK) goto done;
    /* post: the inputs of the last timed round (checked by the snapshot),
     * and the "previous output" of the weak-case check */
    uint64_t seed_post = kg_protocol_check_seed(cp->seed, w->proc, c, 1);
    if ((rc = kg_oracle_prepare(kc, seed_post, &post, err)) != KG_OK) goto done;
    weak_check(w, c, order, n, &pre, &post);

    /* Load every arm with its own buffers, then check each one twice,
     * with two poison patterns. */
    for (int i = 0; i < n; i++) {
        if ((rc = inst_setup(w, c, order[i], &pre, &xs[nx], err)) != KG_OK) { nx++; goto done; }
        nx++;
    }
    for (int i = 0; i < nx; i++) {
        int ok0 = 1, ok1 = 1, counts[2] = { 0, 0 };
        if ((rc = checked_run(w, c, &xs[i], &pre, "pre", "poison0", 0, &ok0, counts, err)) != KG_OK) goto done;
        if ((rc = checked_run(w, c, &xs[i], &pre, "pre", "poison1", 1, &ok1, counts, err)) != KG_OK) goto done;
        xs[i].failed = !(ok0 && ok1);
        if (kg_backend_negative(w->settings, &plan->arms[xs[i].arm])) {
            /* the numerical negative: every output comparison must fail */
            char detail[160];
            snprintf(detail, sizeof detail, "numerical negative (KGATE_NEGATIVE=1): %d of %d output checks "
                     "failed%s", counts[1], counts[0], counts[1] == counts[0] ? "" : ": SOME PASS THE NEGATIVE");
            record_check(w, c, xs[i].arm, "pre", "negative", counts[0] > 0 && counts[1] == counts[0], NULL, detail);
        }
    }
    /* parity after every arm ran on the same inputs */
    for (int i = 0; i < nx; i++)
        if (plan->arms[xs[i].arm].parity[0] != '\0' &&
            (rc = parity_check(w, c, xs, nx, i, &pre, err)) != KG_OK) goto done;
    /* Rounds: only arms that passed their checks are timed. */
    int live[64], nlive = 0;
    for (int i = 0; i < nx; i++) if (!xs[i].failed) live[nlive++] = i;
    int per_round = nlive * (cp->warmup + cp->samples);
    steps = calloc((size_t)(per_round > 0 ? per_round : 1), sizeof *steps);
    if (steps == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    int first_arm = n > 0 ? order[0] : -1;
    for (int i = 0; i < nx; i++) record_resources(w, c, &xs[i]);
    uint64_t escapes_seen = 0;
    int escapes[64] = { 0 }, nset = cp->rotate;
    if (nset > KG_MAX_ROTATE) {
        rc = kg_errorf(err, KG_EINPUT, "%s: rotate = %d: at most %d input sets", plan->path, nset, KG_MAX_ROTATE);
        goto done;
    }
    if (cp->rounds > 0)
        for (int i = 0; i < nlive && nset > 1; i++)
            if ((rc = rotation_setup(w, &xs[live[i]], &pre, nset, err)) != KG_OK) goto done;
    int use[64] = { 0 };    /* executions per arm, for the rotation */
    /* the fake backend's timed runs execute nothing: its snapshot is of
     * the last checked run, on the pre inputs */
    int switch_inputs = (kg_backend_caps(w->be) & KG_CAP_EXECUTES) != 0;
    const kg_case_data *snap = switch_inputs ? &post : &pre;
    for (int r = 0; r < cp->rounds && nlive > 0; r++) {
        int rorder[64];
        /* The last round runs on the post inputs, written between rounds
         * (outside timing): its snapshot then catches a kernel that keeps
         * an old output (pointer-keyed caches, poison detection, honest
         * only on its first calls). */
        if (r == cp->rounds - 1 && switch_inputs)
            for (int i = 0; i < nlive; i++)
                if ((rc = rotation_upload(w, &xs[live[i]], &post, nset, err)) != KG_OK) goto done;
        if (w->progress) fprintf(stderr, "progress: case %s round %d/%d\n", kc->name, r + 1, cp->rounds);
        kg_protocol_round_order(live, nlive, r, rorder);
        int ns = kg_protocol_round_steps(nlive, cp->warmup, cp->samples, cp->interleave, steps);
        for (int s = 0; s < ns; s++) {
            inst *x = &xs[rorder[steps[s].slot]];
            kg_sample_ctx sc = { .proc = w->proc, .dir = w->dir, .round = r, .sample = steps[s].sample,
                                 .arm = x->arm, .kase = c, .first_arm = first_arm, .pos = steps[s].slot,
                                 .seed = cp->seed };
            if (cp->l2 == KG_L2_COLD && (rc = kg_backend_flush(w->be, err)) != KG_OK) goto done;
            /* the last execution of an arm uses set 0, which the snapshot reads */
            int last = r == cp->rounds - 1 && steps[s].sample == cp->samples - 1;
            if (nset > 1 &&
                (rc = rotation_bind(w, x, last ? 0 : use[rorder[steps[s].slot]]++ % nset, err)) != KG_OK)
                goto done;
            double t_ns = 0;
            if (steps[s].sample < 0) {
                if ((rc = kg_backend_time(w->be, x->k, &sc, &t_ns, err)) != KG_OK) goto done;
                continue;
            }
            if ((rc = kg_backend_time(w->be, x->k, &sc, &t_ns, err)) != KG_OK) goto done;
            if (!(t_ns > 0) || !isfinite(t_ns)) {
                rc = kg_errorf(err, KG_EBACKEND, "arm %s returned a non-positive time (%g ns)",
                               plan->arms[x->arm].name, t_ns);
                goto done;
            }
            kg_sb_printf(&w->rows, "%d,%s,%d,%s,%s,%d,%.3f,%.16s\n", w->proc, dir_name(w->dir), r,
                         plan->arms[x->arm].name, kc->name, steps[s].sample, t_ns, plan->hash);
            int escaped = 0;
            record_telemetry(w, c, r, x->arm, steps[s].sample, &escapes_seen, &escaped);
            escapes[rorder[steps[s].slot]] += escaped;
        }
    }

    for (int i = 0; i < nlive; i++)
        if ((rc = rotation_bind(w, &xs[live[i]], 0, err)) != KG_OK) goto done;
    /* After timing: the output the last timed run left behind, then a run
     * on fresh inputs. */
    if (cp->rounds > 0 && nlive > 0 && kg_backend_has_telemetry(w->be)) {
        /* Work that outlives the timed events (a side stream, a host
         * thread) makes every sample of the arm a lie. */
        for (int i = 0; i < nlive; i++) {
            char detail[160] = "";
            int e = escapes[live[i]];
            if (e > 0)
                snprintf(detail, sizeof detail, "%d timed samples left work running after their end event "
                         "(host bracket after a device-wide sync far exceeds the event time)", e);
            record_check(w, c, xs[live[i]].arm, "post", "timing:escape", e == 0, NULL, detail);
        }
    }
    if (cp->rounds > 0 && nlive > 0) {
        for (int i = 0; i < nlive; i++) {
            int ok = 1;
            if ((rc = verify(w, c, &xs[live[i]], snap, "post", "snapshot", &ok, NULL, err)) != KG_OK) goto done;
        }
        uint64_t seed_fresh = kg_protocol_check_seed(cp->seed, w->proc, c, 2);
        if ((rc = kg_oracle_prepare(kc, seed_fresh, &fresh, err)) != KG_OK) goto done;
        for (int i = 0; i < nlive; i++) {
            int ok = 1;
            if ((rc = upload_inputs(w, &xs[live[i]], &fresh, err)) != KG_OK) goto done;
            if ((rc = checked_run(w, c, &xs[live[i]], &fresh, "post", "fresh", 0, &ok, NULL, err)) != KG_OK) goto done;
        }
    }
done:
    for (int i = 0; i < nx; i++) inst_release(w, &xs[i]);
    kg_oracle_release(&pre);
    kg_oracle_release(&post);
    kg_oracle_release(&fresh);
    free(steps);
    return rc;
}

int kg_worker_main(const kg_worker_opts *o, kg_err *err)
{
    kg_plan *plan = NULL;
    wctx w = { 0 };
    char path[KG_PATH_MAX + 64], build_dir[KG_PATH_MAX + 16];
    char *want = NULL;
    int rc;
    if ((rc = kg_plan_load(o->plan_path, &plan, err)) != KG_OK) goto done;
    snprintf(path, sizeof path, "%s/plan.sha256", o->out_dir);
    if ((rc = kg_read_file(path, &want, NULL, err)) != KG_OK) goto done;
    if (strncmp(want, plan->hash, 64) != 0) {
        rc = kg_errorf(err, KG_EINPUT, "%s changed since the campaign started (hash %.12s, recorded %.12s): "
                       "restore it or start a new campaign", o->plan_path, plan->hash, want);
        goto done;
    }
    char notice[512];
    w.settings = o->settings != NULL ? o->settings : kg_settings_defaults();
    if ((rc = kg_backend_open(o->backend, plan, w.settings, &w.be, notice, sizeof notice, err)) != KG_OK) goto done;
    snprintf(build_dir, sizeof build_dir, "%s/build", o->out_dir);
    w.plan = plan;
    w.build_dir = build_dir;
    w.proc = o->proc;
    w.progress = o->progress;
    /* a repeat of a contaminated process keeps the direction of the
     * schedule slot it fills (the supervisor says which) */
    w.dir = kg_protocol_direction(o->slot >= 0 ? o->slot : o->proc);
    kg_sb_puts(&w.rows, "process,direction,round,arm,case,sample,ns,plan\n");
    kg_sb_puts(&w.checks, "process,direction,case,arm,phase,check,result,max_abs,max_rel,worst,nbad,detail\n");
    kg_sb_puts(&w.telemetry, "process,case,round,arm,sample,sm_mhz,mem_mhz,power_w,temp_c,clock_event_reasons,"
                             "foreign_procs,escaped,event_ns,host_ns\n");
    kg_sb_puts(&w.resources, "process,case,arm,launch,registers,static_shared,dynamic_shared,local,const,max_threads,"
                             "ptx,binary,grid,block,launches,arch,image_bytes,image_sha256\n");

    int corder[256];
    if (plan->ncases > 256) { rc = kg_errorf(err, KG_EINPUT, "%s: more than 256 cases", plan->path); goto done; }
    kg_protocol_case_order(plan, w.dir, corder);
    kg_campaign cp_saved = plan->campaign;
    if (o->check_only) plan->campaign.rounds = 0;
    for (int i = 0; i < plan->ncases; i++)
        if ((rc = run_case(&w, corder[i], err)) != KG_OK) goto done;
    plan->campaign = cp_saved;
    if (w.rows.oom || w.checks.oom) { rc = kg_errorf(err, KG_ENOMEM, "out of memory recording rows"); goto done; }

    char sub[KG_PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s/raw", o->out_dir);
    if ((rc = kg_mkdir_p(sub, err)) != KG_OK) goto done;
    snprintf(sub, sizeof sub, "%s/checks", o->out_dir);
    if ((rc = kg_mkdir_p(sub, err)) != KG_OK) goto done;
    /* Checks first: a process whose raw file exists is complete. */
    snprintf(path, sizeof path, "%s/checks/proc-%03d.csv", o->out_dir, o->proc);
    if ((rc = kg_write_atomic(path, w.checks.buf, w.checks.len, err)) != KG_OK) goto done;
    if ((rc = kg_evidence_flush_outputs(plan, o->out_dir, o->proc, err)) != KG_OK) goto done;
    if (kg_backend_has_telemetry(w.be) || kg_backend_has_resources(w.be)) {
        snprintf(sub, sizeof sub, "%s/telemetry", o->out_dir);
        if ((rc = kg_mkdir_p(sub, err)) != KG_OK) goto done;
        snprintf(path, sizeof path, "%s/telemetry/proc-%03d.csv", o->out_dir, o->proc);
        if ((rc = kg_write_atomic(path, w.telemetry.buf, w.telemetry.len, err)) != KG_OK) goto done;
        snprintf(path, sizeof path, "%s/telemetry/resources-%03d.csv", o->out_dir, o->proc);
        if ((rc = kg_write_atomic(path, w.resources.buf, w.resources.len, err)) != KG_OK) goto done;
    }
    snprintf(path, sizeof path, "%s/raw/proc-%03d.csv", o->out_dir, o->proc);
    if ((rc = kg_write_atomic(path, w.rows.buf, w.rows.len, err)) != KG_OK) goto done;
done:
    kg_backend_close(w.be);
    kg_sb_free(&w.rows);
    kg_sb_free(&w.checks);
    kg_sb_free(&w.telemetry);
    kg_sb_free(&w.resources);
    free(w.host);
    free(want);
    kg_plan_free(plan);
    return rc;
}
