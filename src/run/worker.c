/* worker.c: one fresh process of a campaign (`kgate worker`).
 *
 * Loads the plan (refusing it when its hash differs from the one the
 * supervisor recorded), opens the backend, and for each case in the
 * direction's order: prepares inputs once (outside timing), gives every
 * arm its own buffers, checks every arm (outputs poisoned twice with
 * different patterns, guard canaries, inputs verified unchanged), runs
 * the rounds, then checks again (a snapshot of the last timed output and
 * a run on fresh inputs).  Rows are kept in memory and sent at the end
 * to the supervisor through the pipe it passed (--rows-fd, channel.h):
 * the worker writes nothing into the evidence folder, and a worker that
 * dies leaves no partial record.  Before every arm operation it tells
 * its NOW state (case, arm, phase, round), so that the supervisor can
 * name the arm that killed it: on the NOW page the supervisor passed
 * (--now-fd, nowpage.h), and as a NOW frame but before a timed sample,
 * where a frame would wake the supervisor onto the sample's CPU.
 *
 * One case runs as five named phases (run_case): prepare (admission,
 * inputs, references, the weak-case check, every arm loaded), check
 * before timing (two poisons, the numerical negative, parity), time (the
 * rounds), check after timing (escapes, the snapshot, fresh inputs);
 * the worker then sends every row, made by rows.c (send_evidence).
 * Before the process's first timed phase it says it is ready and waits
 * on its go pipe until the supervisor has seen a quiet host (await_go):
 * set-up and the first checks need no quiet host, timing does.
 *
 * An arm that fails a check before timing is not timed in this process.
 * A backend call that fails as the arm's own fault (KG_EARM) records a
 * failed "fault" check and drops the arm for the rest of the process; one
 * the device refuses (KG_EINADMISSIBLE) records a failed "admissible"
 * check on that case.  The other arms go on either way.
 * The worker never judges: the supervisor's analysis does. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "run/worker.h"
#include "run/channel.h"
#include "run/nowpage.h"
#include "kgate/evidence.h"
#include "kgate/backend.h"
#include "kgate/oracle.h"
#include "check/heldout.h"
#include "evidence/outenc.h"
#include "evidence/boundaudit.h"
#include "plan/protocol.h"
#include "plan/shard.h"
#include "evidence/salt.h"
#include "run/token.h"
#include <openssl/crypto.h>
#include "base/util.h"

#define KG_MAX_ROTATE KG_PLAN_MAX_ROTATE   /* input sets an arm rotates through (bounded by the parser) */

typedef struct inst {
    int arm;
    kg_kernel *k;
    kg_dbuf in[KG_MAX_IN];
    kg_dbuf out[KG_MAX_OUT];
    kg_binding b;
    int failed;             /* a check failed before timing: not timed */
    int dropped;            /* the arm faulted or was refused: no more operations on it */
    /* rotate = N: input sets 1..N-1 (set 0 is in[]); the set bound now */
    kg_dbuf rot[KG_MAX_ROTATE][KG_MAX_IN];
    int cur_set;
    /* pack > 1: an input set for each operation of a sample but its
     * last (kg_binding.op_in, bound in b) */
    kg_dbuf ops[KG_BIND_MAX_OP_SETS][KG_MAX_IN];
    /* inputs = fresh, where the backend can: each of those operations'
     * own output (kg_binding.op_out), which the sampled checks may read */
    kg_dbuf op_out[KG_BIND_MAX_OP_SETS][KG_MAX_OUT];
    kg_dbuf pad;            /* the placement pad allocated before its buffers */
    int64_t nexec;          /* timed executions of the case so far, warmups included */
} inst;

/* inputs = fresh: timed executions whose outputs are checked (chosen by a
 * seed of the salt, which arm code never sees), and the input elements the
 * perturbation check changes */
#define KG_SAMPLED_CHECKS 2
/* timing:escape fails when more than one, and more than this fraction,
 * of an arm's timed executions in a process escaped.  Measured on the H200 and on a loaded
 * 2-core host, an honest arm now and then has one sample whose bracket
 * the host's scheduling lengthened (0.3% of floor samples; 1 of 42 in a
 * quickstart process); work outside the timed region that is to move a
 * median must escape in most samples, and does. */
#define KG_ESCAPE_TOLERATED 0.05
#define KG_PERTURB_ELEMS 4

typedef struct wctx {
    const kg_plan *plan;
    const kg_settings *settings;
    kg_backend *be;
    const char *build_dir;
    int proc, dir;
    int seq;                /* the process index of its seeds and load order (worker.h) */
    int progress;           /* report each round on stderr */
    kg_sb rows;             /* the kinds of kgate/evidence.h, written by rows.c */
    kg_sb checks;
    kg_sb telemetry;        /* one row per timed sample, where the backend reads telemetry */
    kg_sb resources;        /* one row per loaded arm, where the backend reports resources */
    kg_outputs outputs;     /* checked outputs kept for replay */
    int rows_fd;            /* the pipe to the supervisor */
    kg_nowpage now;         /* the supervisor's NOW page (nowpage.h); pg NULL: none, every state a frame */
    int *faulted;           /* per arm: 1 + the case it faulted on in this process, 0: none */
    double setup_s, checks_s, timed_s;  /* where the cases' time went (run_case) */
    double warm_s;          /* > 0: warm the device before the first timed phase (warm_clock) */
    int warmed;
    int go_fd;              /* the supervisor's go pipe (await_go); -1: none or already read */
    double ref_s;           /* of setup_s: the float64 references of the checks (phase_prepare) */
    void *host;             /* scratch for downloads */
    size_t host_cap;
    /* every input seed derives from this: the plan's seed salted with the
     * campaign's input salt (kg_protocol_input_base, salt.h) */
    uint64_t input_base;
    /* the one CPU the worker and its arm hosts run on (pin_worker); -1: not
     * pinned (a backend that runs nothing on the host's CPUs) */
    int pin_cpu;
    int ncontaminated;      /* its samples that ran on another CPU (told on stderr, the first 10) */
    /* a screen in screening mode (report/screening.h): the arms left out
     * (per arm), and each (case, arm)'s own wall clock (busy, from one NOW
     * frame to the next that names it), timed seconds and samples */
    int screen;
    unsigned char *skip;
    double *busy, *timed;
    long long *nsamp;
    int acc_case, acc_arm;
    double acc_t;
} wctx;

static void record_check(wctx *w, int c, int a, kg_phase phase, const char *check, int pass,
                         const kg_check *r, const char *detail)
{
    kg_check_rec k;
    memset(&k, 0, sizeof k);
    k.proc = w->proc;
    k.dir = w->dir;
    k.kase = c;
    k.arm = a;
    k.phase = phase;
    snprintf(k.check, sizeof k.check, "%s", check);
    k.pass = pass;
    if (r != NULL) {
        k.has_cmp = 1;
        k.max_abs = r->max_abs;
        k.max_rel = r->max_rel;
        k.worst = (long long)r->worst;
        k.nbad = (long long)r->nbad;
    }
    snprintf(k.detail, sizeof k.detail, "%s", detail != NULL ? detail : (r != NULL ? r->msg : ""));
    kg_rows_put_check(&w->checks, w->plan, &k);
}

/* A screen's cost: the time since the last NOW state goes to the arm it
 * named (nothing when it named none); from now on to arm on case c. */
static void account(wctx *w, int c, int arm)
{
    double t = kg_mono_s();
    if (w->busy != NULL && w->acc_arm >= 0 && w->acc_case >= 0)
        w->busy[(size_t)w->acc_case * (size_t)w->plan->narms + (size_t)w->acc_arm] += t - w->acc_t;
    w->acc_case = c;
    w->acc_arm = arm;
    w->acc_t = t;
}

/* Tells the supervisor which arm the worker is about to run: on its
 * NOW page, and as a NOW frame but for a timed sample's (nowpage.h;
 * best effort: a broken pipe shows at the end, when the rows are sent). */
static void now(wctx *w, int c, int arm, int phase, int round)
{
    account(w, c, arm);
    kg_now_tell(&w->now, w->rows_fd, w->proc, c, arm, phase, round, NULL);
}

/* rc of a backend call for arm instance x: an arm's own fault (KG_EARM)
 * or a launch the device refuses (KG_EINADMISSIBLE) is recorded against
 * the arm (a failed "fault" or "admissible" check with the backend's
 * message), the arm is dropped from this case, and KG_OK is returned so
 * that the process goes on with the other arms.  A fault also drops the
 * arm from the later cases of the process.  Other codes are returned. */
static int arm_failed(wctx *w, int c, struct inst *x, kg_phase phase, int rc, kg_err *err);

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
/* Whether the output of check name is kept (the plan's keep_outputs):
 * replay keeps the first checked run before timing and the run on fresh
 * inputs after it; failing, the failed ones of the checks verify can
 * replay; all, every check verify can replay: those whose inputs are the
 * case's own of a recorded seed (not the held-out shapes, not the
 * perturbed inputs). */
static int keep_output(const wctx *w, int c, const kg_case_data *d, kg_phase phase, const char *name, int pass)
{
    int replay = (phase == KG_PHASE_PRE && strcmp(name, KG_CHECK_POISON0) == 0) ||
                 (phase == KG_PHASE_POST && strcmp(name, KG_CHECK_FRESH) == 0);
    int regenerable = d->kase == &w->plan->cases[c] && !d->stale &&
                      (strcmp(name, KG_CHECK_POISON0) == 0 || strcmp(name, KG_CHECK_POISON1) == 0 ||
                       strcmp(name, KG_CHECK_SNAPSHOT) == 0 || strcmp(name, KG_CHECK_FRESH) == 0 ||
                       strncmp(name, KG_CHECK_SAMPLED "@", sizeof KG_CHECK_SAMPLED) == 0);
    switch (w->plan->campaign.keep_outputs) {
    case KG_KEEP_FAILING: return regenerable && !pass;
    case KG_KEEP_ALL: return regenerable;
    default: return replay;
    }
}

/* Keeps output o (in w->host) for replay: encoded against d's reference
 * (outenc.h), with the digest of its bytes. */
static int keep(wctx *w, int c, const inst *x, const kg_case_data *d, int o, kg_phase phase, const char *name,
                const kg_check *r, kg_err *err)
{
    kg_out_rec k = { .proc = w->proc, .kase = c, .arm = x->arm, .output = o, .phase = phase, .seed = d->seed,
                     .pass = r->pass, .max_abs = r->max_abs, .bytes = d->out_bytes[o] };
    snprintf(k.check, sizeof k.check, "%s", name);
    snprintf(k.encoding, sizeof k.encoding, "%s", KG_OUTENC_ULP);
    kg_sha256_hex(w->host, d->out_bytes[o], k.sha256);
    void *blob = NULL;
    size_t blen = 0;
    const kg_outref ref = { d->out_dtype[o], d->out_elems[o], d->ref[o] };
    int rc = kg_outenc_encode(&ref, w->host, d->out_bytes[o], &blob, &blen, err);
    if (rc != KG_OK) return rc;
    kg_outputs_keep(&w->outputs, &k, blob, blen);
    free(blob);
    return KG_OK;
}

static int verify(wctx *w, int c, inst *x, const kg_case_data *d, kg_phase phase, const char *name,
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
        if ((rc = kg_oracle_compare_ct(d, &w->plan->arms[x->arm].contract, o, w->host, &r, err)) != KG_OK)
            return rc;
        if (r.weak && d->kase != &w->plan->cases[c]) {
            /* a held-out shape kgate derived: a contract too weak there
             * makes the check unable to tell a shortcut, not the arm
             * wrong (the plan's own case refuses it, as the default
             * contract's weak check does); the output was within the
             * contract's bounds, which is what the check can say */
            char note[sizeof r.msg];
            snprintf(note, sizeof note, "within the contract's bounds; %.150s at this derived shape, which "
                     "this check cannot tell from a shortcut", r.msg);
            snprintf(r.msg, sizeof r.msg, "%s", note);
            r.pass = 1;
            r.nbad = 0;
        }
        if (keep_output(w, c, d, phase, name, r.pass) &&
            (rc = keep(w, c, x, d, o, phase, name, &r, err)) != KG_OK)
            return rc;
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
        /* byte for byte against the inputs kgate wrote: exact, and at memory
         * speed (32 MiB: 5 ms, where a byte-wise hash took 48 to 92 ms;
         * docs/measurements/screen-input-check-2026-12-04.md) */
        int same = memcmp(w->host, d->in[i], d->in_bytes[i]) == 0;
        char check[96], detail[160] = "";
        snprintf(check, sizeof check, "%s:input:%s", name, d->op->in_names[i]);
        if (!same) snprintf(detail, sizeof detail, "input %s was modified by the kernel", d->op->in_names[i]);
        record_check(w, c, x->arm, phase, check, same, NULL, detail);
        if (!same) *ok = 0;
    }
    return KG_OK;
}

/* One checked run: poison, run, verify. */
static int checked_run(wctx *w, int c, inst *x, const kg_case_data *d, kg_phase phase, const char *name,
                       int pattern, int *ok, int counts[2], kg_err *err)
{
    int rc;
    if ((rc = poison_outputs(w, x, d, pattern, err)) != KG_OK) return rc;
    if ((rc = kg_backend_run(w->be, x->k, err)) != KG_OK) return rc;
    return verify(w, c, x, d, phase, name, ok, counts, err);
}

static int arm_failed(wctx *w, int c, inst *x, kg_phase phase, int rc, kg_err *err)
{
    if (rc != KG_EARM && rc != KG_EINADMISSIBLE) return rc;
    char detail[KG_DETAIL_MAX];
    snprintf(detail, sizeof detail, "%s%.480s", rc == KG_EINADMISSIBLE ? "INADMISSIBLE: " : "", err->msg);
    record_check(w, c, x->arm, phase, rc == KG_EARM ? KG_CHECK_FAULT : KG_CHECK_ADMISSIBLE, 0, NULL, detail);
    x->failed = 1;
    x->dropped = 1;
    if (rc == KG_EARM && w->faulted[x->arm] == 0) w->faulted[x->arm] = 1 + c;
    kg_err_clear(err);
    return KG_OK;
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
    for (int j = 0; j < KG_BIND_MAX_OP_SETS; j++) {
        for (int i = 0; i < KG_MAX_IN; i++) kg_backend_free(w->be, &x->ops[j][i]);
        for (int o = 0; o < KG_MAX_OUT; o++) kg_backend_free(w->be, &x->op_out[j][o]);
    }
    kg_backend_free(w->be, &x->pad);
}

/* pack > 1: every operation of a timed sample reads inputs of its own.
 * Under inputs = fresh no cache keyed on contents then hits within a pack
 * either; the sets are filled before each sample (fresh_inputs).  Under
 * inputs = resident with l2 = cold they hold d's inputs, the same values
 * at addresses of their own (up to KG_BIND_MAX_OP_SETS; operations before
 * those read in[]), so that no operation finds its inputs in the L2
 * because the one before it read them.  Bound now, outside timing. */
static int opsets_setup(wctx *w, inst *x, const kg_case_data *d, int pack, kg_err *err)
{
    int nop = pack - 1;
    if (nop > KG_BIND_MAX_OP_SETS && w->plan->campaign.inputs == KG_INPUTS_FRESH)
        return kg_errorf(err, KG_EINPUT, "%s: inputs = fresh with pack = %d: at most %d", w->plan->path, pack,
                         KG_PLAN_MAX_FRESH_PACK);
    if (nop > KG_BIND_MAX_OP_SETS) nop = KG_BIND_MAX_OP_SETS;
    for (int j = 0; j < nop; j++)
        for (int i = 0; i < d->nin; i++) {
            int rc = kg_backend_alloc(w->be, d->in_bytes[i], &x->ops[j][i], err);
            if (rc == KG_OK) rc = kg_backend_upload(w->be, &x->ops[j][i], 0, d->in[i], d->in_bytes[i], err);
            if (rc != KG_OK) return rc;
            x->b.op_in[j][i] = x->ops[j][i];
        }
    x->b.nop = nop;
    /* inputs = fresh: an output per operation where the backend can, poisoned and guarded, so that
     * a sampled check can compare any operation of a sample, not only the last (which alone wrote
     * out[] before: a kernel that skipped the others went unseen, tests/attacks/a13_pack_sets.c) */
    if (w->plan->campaign.inputs == KG_INPUTS_FRESH && nop > 0 && d->nout > 0 && kg_backend_op_outputs(w->be, x->k)) {
        size_t g = kg_guard_bytes();
        for (int j = 0; j < nop; j++)
            for (int o = 0; o < d->nout; o++) {
                int rc = scratch(w, d->out_bytes[o] + g, err);
                if (rc == KG_OK) rc = kg_backend_alloc(w->be, d->out_bytes[o] + g, &x->op_out[j][o], err);
                if (rc != KG_OK) return rc;
                kg_poison(w->host, d->out_bytes[o], 0);
                kg_guard_fill((char *)w->host + d->out_bytes[o]);
                if ((rc = kg_backend_upload(w->be, &x->op_out[j][o], 0, w->host, d->out_bytes[o] + g, err)) != KG_OK)
                    return rc;
                x->b.op_out[j][o] = x->op_out[j][o];
            }
        x->b.op_outs = 1;
    }
    return kg_backend_bind(w->be, x->k, &x->b, err);
}

/* l2 = warm with fresh inputs and pack > 1: every input set a sample reads
 * is to be in the cache when the sample starts, so the sample's sets and
 * outputs (one of each per operation) must fit what the backend's cache
 * keeps resident (kg_backend_warm_budget), with the op's workspace.
 * Where they do not, the samples would read part of their inputs from
 * memory under the label warm (docs/measurements/h100-2026-12-05e/: +22%
 * and +35% on an H100 at pack 8; h200-2026-12-05f: up to +36% on an
 * H200): the campaign stops before any sample, naming the pack that
 * fits.  Checked in every process, before the arms' sets are allocated. */
static int warm_fits(wctx *w, const kg_case_data *d, const kg_case *kc, kg_err *err)
{
    const kg_campaign *cp = &w->plan->campaign;
    char why[200];
    uint64_t budget = kg_backend_warm_budget(w->be, why, sizeof why);
    if (budget == 0 || cp->l2 != KG_L2_WARM || cp->inputs != KG_INPUTS_FRESH || cp->pack <= 1) return KG_OK;
    uint64_t per = 0;
    for (int i = 0; i < d->nin; i++) per += d->in_bytes[i];
    for (int o = 0; o < d->nout; o++) per += d->out_bytes[o];
    /* the op's workspace is one per arm, written by every operation of the sample */
    uint64_t ws = d->op->ws_bytes != NULL ? (uint64_t)d->op->ws_bytes(kc) : 0;
    uint64_t total = per * (uint64_t)cp->pack + ws;
    if (total <= budget) return KG_OK;
    uint64_t fit = per > 0 && budget > ws ? (budget - ws) / per : 0;
    char use[96];
    if (fit >= 2) snprintf(use, sizeof use, "pack = %llu or less", (unsigned long long)fit);
    else snprintf(use, sizeof use, "pack = 1 (one operation's set is %.2f MiB)", (double)per / 1048576.0);
    return kg_errorf(err, KG_EINPUT,
                     "%s: case '%s': l2 = warm with inputs = fresh and pack = %d: a timed sample reads %d input sets "
                     "and writes %d outputs%s, %.2f MiB, more than the cache keeps resident (%.2f MiB, %s), so the "
                     "samples would read part of their inputs from memory under the label warm. Use %s, or l2 = cold "
                     "(every set from memory), or inputs = resident (one set, read again by every operation)",
                     w->plan->path, kc->name, cp->pack, cp->pack, cp->pack, ws > 0 ? " and its workspace" : "",
                     (double)total / 1048576.0,
                     (double)budget / 1048576.0, why, use);
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

/* Loads arm a for case c of plan (the campaign's plan, or a copy whose
 * case c is a held-out shape) with buffers of its own, d's inputs in them. */
static int inst_setup_on(wctx *w, const kg_plan *plan, int c, int a, const kg_case_data *d, inst *x, kg_err *err)
{
    int rc;
    memset(x, 0, sizeof *x);
    x->arm = a;
    for (int i = 0; i < d->nin; i++)
        if ((rc = kg_backend_alloc(w->be, d->in_bytes[i], &x->in[i], err)) != KG_OK) return rc;
    for (int o = 0; o < d->nout; o++)
        if ((rc = kg_backend_alloc(w->be, d->out_bytes[o] + kg_guard_bytes(), &x->out[o], err)) != KG_OK)
            return rc;
    if ((rc = upload_inputs(w, x, d, err)) != KG_OK) return rc;
    double t_load = kg_mono_s();
    if ((rc = kg_backend_load(w->be, plan, a, c, w->build_dir, &x->k, err)) != KG_OK) return rc;
    fprintf(stderr, "time: arm %s, case %s: loaded in %.3f s\n", plan->arms[a].name, plan->cases[c].name,
            kg_mono_s() - t_load);
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

static int inst_setup(wctx *w, int c, int a, const kg_case_data *d, inst *x, kg_err *err)
{
    return inst_setup_on(w, w->plan, c, a, d, x, err);
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
    for (int i = 0; i < n; i++) record_check(w, c, order[i], KG_PHASE_PRE, KG_CHECK_WEAK, why[0] == '\0', NULL, detail);
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
    if (j >= 0 && w->skip != NULL && w->skip[xs[j].arm]) {
        /* a screen dropped the other arm: nothing to compare with here */
        char detail[200];
        snprintf(detail, sizeof detail, "not compared in this process: the screen dropped parity arm %s", other);
        record_check(w, c, xs[i].arm, KG_PHASE_PRE, KG_CHECK_PARITY, 1, NULL, detail);
        return KG_OK;
    }
    if (j < 0 || xs[j].dropped) {
        char detail[200];
        snprintf(detail, sizeof detail, j < 0 ? "parity arm %s does not run on this case" :
                 "parity arm %s failed in this process before the comparison", other);
        record_check(w, c, xs[i].arm, KG_PHASE_PRE, KG_CHECK_PARITY, 0, NULL, detail);
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
        snprintf(check, sizeof check, "%s:%s", KG_CHECK_PARITY, d->op->out_names[o]);
        size_t esz = ob / (size_t)(d->out_elems[o] > 0 ? d->out_elems[o] : 1);
        int same = memcmp(mine, theirs, ob) == 0;
        if (!same) {
            size_t b = 0;
            while (b < ob && mine[b] == theirs[b]) b++;
            int64_t e = esz > 0 ? (int64_t)(b / esz) : 0;
            int64_t cols = d->op->out_cols ? d->op->out_cols(d->kase, o) : 0;
            unsigned long long ua = 0, ub = 0;
            memcpy(&ua, mine + (size_t)e * esz, esz < 8 ? esz : 8);
            memcpy(&ub, theirs + (size_t)e * esz, esz < 8 ? esz : 8);
            if (cols > 0)
                snprintf(detail, sizeof detail, "first difference from %s at element %lld (row %lld, col %lld): "
                         "bits %#llx, %s has %#llx", other, (long long)e, (long long)(e / cols),
                         (long long)(e % cols), ua, other, ub);
            else
                snprintf(detail, sizeof detail, "first difference from %s at element %lld: bits %#llx, %s has %#llx",
                         other, (long long)e, ua, other, ub);
            xs[i].failed = 1;
        }
        record_check(w, c, xs[i].arm, KG_PHASE_PRE, check, same, NULL, detail);
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
        kg_res_rec rec = { .proc = w->proc, .kase = c, .arm = x->arm, .launch = i + 1, .regs = r.regs,
                           .static_shared = r.static_shared_bytes, .dynamic_shared = r.dynamic_shared_bytes,
                           .local = r.local_bytes, .const_bytes = r.const_bytes,
                           .max_threads = r.max_threads_per_block, .ptx = r.ptx_version,
                           .binary = r.binary_version, .launches = r.launches, .image_bytes = r.image_bytes };
        for (int k = 0; k < 3; k++) {
            rec.grid[k] = (long long)r.grid[k];
            rec.block[k] = (long long)r.block[k];
        }
        snprintf(rec.arch, sizeof rec.arch, "%s", r.arch);
        snprintf(rec.image_sha256, sizeof rec.image_sha256, "%s", r.image_sha256);
        snprintf(rec.sandbox, sizeof rec.sandbox, "%s", r.sandbox);
        snprintf(rec.library, sizeof rec.library, "%s", r.library);
        kg_rows_put_res(&w->resources, w->plan, &rec);
    }
}

/* Reads telemetry after a timed sample and records it, joined to the
 * sample by (process, case, round, arm, sample).  *escaped is set when
 * the backend's host bracket saw work outside the timed events; *cpu to
 * the CPU the sample ran on (-1: not read). */
static void record_telemetry(wctx *w, int c, int round, int arm, int sample, uint64_t *escapes_seen,
                             int *escaped, int *cpu)
{
    *escaped = 0;
    *cpu = -1;
    if (!kg_backend_has_telemetry(w->be)) return;
    kg_telemetry t;
    kg_err e = { 0 };
    memset(&t, 0, sizeof t);
    if (kg_backend_telemetry(w->be, &t, &e) != KG_OK) return;
    *cpu = t.cpu;
    *escaped = t.escapes > *escapes_seen;
    *escapes_seen = t.escapes;
    kg_tel_rec rec = { .proc = w->proc, .kase = c, .round = round, .arm = arm, .sample = sample,
                       .sm_mhz = t.sm_clock_mhz, .mem_mhz = t.mem_clock_mhz, .power_w = t.power_w,
                       .temp_c = t.temp_c, .reasons = (unsigned long long)t.clock_event_reasons,
                       .foreign_procs = t.foreign_procs, .escaped = *escaped, .event_ns = t.last_event_ns,
                       .host_ns = t.last_host_ns };
    kg_rows_put_tel(&w->telemetry, w->plan, &rec);
}

/* One case of one process: the arms in this direction's order, their
 * instances, the inputs of the three checked phases, and what the rounds
 * leave for the checks after timing.  Arrays are sized from the plan. */
typedef struct case_run {
    int c;
    const kg_case *kc;
    const kg_op *op;
    int *order; int n;      /* arms applying to the case, direction order */
    inst *xs; int nx;       /* instances loaded so far (xs[i] is order[i]) */
    int *live; int nlive;   /* instances that passed the checks before timing */
    int *escapes;           /* per instance: timed samples that escaped */
    int *use;               /* per instance: executions, for the rotation */
    int *rorder;            /* the round's order of live instances */
    kg_step *steps;
    int nset;               /* input sets (rotate) */
    kg_case_data pre, post, fresh;
    const kg_case_data *snap;  /* inputs of the last timed run */
    /* inputs = fresh: the inputs being uploaded (stale: no references),
     * the executions checked, the inputs of the last execution */
    int fresh_mode;
    kg_case_data gen, last;
    int64_t picks[KG_SAMPLED_CHECKS];
    int pick_op[KG_SAMPLED_CHECKS];     /* the operation of the sample checked, 0 .. pack - 1 */
    kg_case_data pick_data[KG_SAMPLED_CHECKS];      /* its inputs and references */
    kg_case_data pick_last[KG_SAMPLED_CHECKS];      /* the last operation's, for arms with one output */
    int npicks;
    double regen_ns;        /* regenerating and uploading, outside timing */
    int64_t nregen;
    /* the backend writes them itself (kg_backend_fill), its bits checked
     * against the host generator's first; fill_note: why not, if not */
    int device_fill;
    char fill_note[KG_TEXT_MAX];
} case_run;

static void case_release(wctx *w, case_run *cr)
{
    for (int i = 0; i < cr->nx; i++) inst_release(w, &cr->xs[i]);
    kg_oracle_release(&cr->pre);
    kg_oracle_release(&cr->post);
    kg_oracle_release(&cr->fresh);
    kg_oracle_release(&cr->gen);
    kg_oracle_release(&cr->last);
    for (int k = 0; k < KG_SAMPLED_CHECKS; k++) {
        kg_oracle_release(&cr->pick_data[k]);
        kg_oracle_release(&cr->pick_last[k]);
    }
    free(cr->order);
    free(cr->xs);
    free(cr->live);
    free(cr->escapes);
    free(cr->use);
    free(cr->rorder);
    free(cr->steps);
}

/* The bound audit (boundaudit.h): every output's bound under each arm's
 * contract must reject mutations of the reference that no correct kernel
 * makes.  One "bound:OUTPUT" row per arm and output, like the weak-case
 * check, so that a weak-bounded op marks the arms it would judge; under
 * bound_audit = off the audit still runs and is recorded, passing, as not
 * audited.  A contract too weak for the case (every comparison under it
 * fails: kg_oracle_compare_ct) is recorded, passing, as not audited. */
static int bound_audit(wctx *w, const case_run *cr, kg_err *err)
{
    const kg_case_data *d = &cr->pre;
    int off = w->plan->campaign.bound_audit_off;
    double out_elems = 0.0;
    for (int o = 0; o < d->nout; o++) out_elems += (double)d->out_elems[o];
    double flops = d->op->flops != NULL ? d->op->flops(cr->kc) : 0.0;
    double row_len = kg_oracle_row_len(d);
    for (int i = 0; i < cr->n; i++) {
        const kg_contract *ct = &w->plan->arms[cr->order[i]].contract;
        for (int o = 0; o < d->nout; o++) {
            const double *bound = NULL;
            int weak = 0;
            int rc = kg_oracle_bounds_ct(d, ct, o, &bound, &weak, err);
            if (rc != KG_OK) return rc;
            kg_audit_in in = { .dtype = d->out_dtype[o], .elems = d->out_elems[o], .ref = d->ref[o],
                               .bound = bound, .seed = kg_bound_audit_seed(d->seed, o) };
            in.cols = d->op->out_cols != NULL ? d->op->out_cols(cr->kc, o) : 0;
            kg_bound_audit_budget(d->in_dtype, d->nin, d->out_dtype[o], ct, flops, out_elems, row_len, &in.budget);
            kg_audit_res res;
            kg_bound_audit(&in, &res);
            char detail[KG_DETAIL_MAX], check[96];
            int pass = 0;
            kg_bound_audit_record(&in, &res, d->op->out_names[o], off, weak, &pass, detail, sizeof detail);
            kg_check r = { .pass = pass, .max_abs = res.loosest_delta, .max_rel = fmin(res.loosest_ratio, 1e300),
                           .worst = res.loosest, .nbad = res.admitted };
            snprintf(check, sizeof check, "%s:%s", KG_CHECK_BOUND, d->op->out_names[o]);
            record_check(w, cr->c, cr->order[i], KG_PHASE_PRE, check, r.pass, &r, detail);
        }
    }
    return KG_OK;
}

/* Phase 1, prepare: admission, the inputs and references before and
 * after timing, the weak-case check, every arm loaded with its own
 * buffers.  *skip is set when the case is inadmissible (recorded). */
static int phase_prepare(wctx *w, case_run *cr, int *skip, kg_err *err)
{
    const kg_plan *plan = w->plan;
    size_t na = (size_t)(plan->narms > 0 ? plan->narms : 1);
    int rc;
    *skip = 0;
    cr->order = calloc(na, sizeof *cr->order);
    cr->xs = calloc(na, sizeof *cr->xs);
    cr->live = calloc(na, sizeof *cr->live);
    cr->escapes = calloc(na, sizeof *cr->escapes);
    cr->use = calloc(na, sizeof *cr->use);
    cr->rorder = calloc(na, sizeof *cr->rorder);
    if (!cr->order || !cr->xs || !cr->live || !cr->escapes || !cr->use || !cr->rorder)
        return kg_errorf(err, KG_ENOMEM, "out of memory for the arms of case %s", cr->kc->name);
    cr->n = kg_protocol_arm_order(plan, cr->c, w->seq, cr->order, plan->narms);
    if (cr->n < 0) return kg_errorf(err, KG_EINTERNAL, "case %s: arm order does not fit", cr->kc->name);
    if (cr->op == NULL) return kg_errorf(err, KG_EINPUT, "%s: unknown op '%s'", plan->path, cr->kc->op);
    char why[256] = "";
    if (cr->op->admissible(cr->kc, why, sizeof why) != 0) {
        for (int i = 0; i < cr->n; i++)
            record_check(w, cr->c, cr->order[i], KG_PHASE_PRE, KG_CHECK_ADMISSIBLE, 0, NULL, why);
        *skip = 1;
        return KG_OK;
    }
    /* the checks' inputs and float64 references: check time, not set-up */
    now(w, cr->c, -1, KG_NOW_PREPARE, -1);
    double tr = kg_mono_s();
    uint64_t seed_pre = kg_protocol_check_seed(w->input_base, w->seq, cr->c, 0);
    if ((rc = kg_oracle_prepare(cr->kc, seed_pre, &cr->pre, err)) != KG_OK) return rc;
    /* post: the inputs of the last timed round (checked by the snapshot),
     * and the "previous output" of the weak-case check */
    uint64_t seed_post = kg_protocol_check_seed(w->input_base, w->seq, cr->c, 1);
    if ((rc = kg_oracle_prepare(cr->kc, seed_post, &cr->post, err)) != KG_OK) return rc;
    weak_check(w, cr->c, cr->order, cr->n, &cr->pre, &cr->post);
    if ((rc = bound_audit(w, cr, err)) != KG_OK) return rc;
    w->ref_s += kg_mono_s() - tr;
    fprintf(stderr, "time: case %s: inputs and float64 references in %.3f s\n", cr->kc->name, kg_mono_s() - tr);
    for (int i = 0; i < cr->n; i++) {
        inst *x = &cr->xs[cr->nx];
        int a = cr->order[i];
        if (w->skip != NULL && w->skip[a]) {
            /* a screen dropped it after an earlier process: not loaded */
            memset(x, 0, sizeof *x);
            x->arm = a;
            x->failed = x->dropped = 1;
            cr->nx++;
            record_check(w, cr->c, a, KG_PHASE_PRE, KG_CHECK_SCREEN_SKIP, 1, NULL, "not run in this process: the "
                         "screen dropped it after an earlier process (report.md, Screening)");
            continue;
        }
        if (w->faulted[a] != 0) {
            /* its own code failed earlier in this process: not run again */
            char detail[200];
            memset(x, 0, sizeof *x);
            x->arm = a;
            x->failed = x->dropped = 1;
            cr->nx++;
            snprintf(detail, sizeof detail, "not run: the arm faulted earlier in this process (case %s)",
                     plan->cases[w->faulted[a] - 1].name);
            record_check(w, cr->c, a, KG_PHASE_PRE, KG_CHECK_FAULT, 0, NULL, detail);
            continue;
        }
        {
            /* outside the arm's requires (the plan's or its kernel
             * contract's): INADMISSIBLE, never loaded nor launched */
            int ok = 1;
            char unmet[KG_TEXT_MAX + 64];
            if ((rc = kg_heldout_supported(&plan->arms[a], cr->kc, &ok, unmet, sizeof unmet, err)) != KG_OK)
                return rc;
            if (!ok) {
                char detail[KG_TEXT_MAX + 128];
                memset(x, 0, sizeof *x);
                x->arm = a;
                x->failed = x->dropped = 1;
                cr->nx++;
                snprintf(detail, sizeof detail, "INADMISSIBLE: the arm requires %s; not loaded, not run", unmet);
                record_check(w, cr->c, a, KG_PHASE_PRE, KG_CHECK_ADMISSIBLE, 0, NULL, detail);
                continue;
            }
        }
        now(w, cr->c, a, KG_NOW_LOAD, -1);
        /* its load slot and placement (kgate/protocol.h), on record */
        kg_dbuf pad = { 0 };
        /* from the plan's seed, not the salted one: placement is
         * reproducible from the plan, and the fake backend's placement
         * model with it */
        size_t pad_bytes = kg_protocol_pad_bytes(kg_protocol_aux_seed(w->plan->campaign.seed, w->seq, cr->c,
                                                                      KG_AUX_PAD + (uint32_t)a));
        if (pad_bytes > 0 && (rc = kg_backend_alloc(w->be, pad_bytes, &pad, err)) != KG_OK) return rc;
        char layout[160];
        int len = snprintf(layout, sizeof layout, "load slot %d of %d; a pad of %zu KiB allocated before its buffers",
                           i, cr->n, pad_bytes >> 10);
        if (w->pin_cpu >= 0 && len > 0 && (size_t)len < sizeof layout)
            snprintf(layout + len, sizeof layout - (size_t)len, "; on CPU %d with the worker and every arm host",
                     w->pin_cpu);
        record_check(w, cr->c, a, KG_PHASE_PRE, KG_CHECK_LAYOUT, 1, NULL, layout);
        rc = inst_setup(w, cr->c, a, &cr->pre, x, err);
        x->pad = pad;
        cr->nx++;   /* released whatever setup reached */
        if ((rc = arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err)) != KG_OK) return rc;
    }
    return KG_OK;
}

/* One held-out check: arm instance x (loaded for the case) run once on
 * derived shape hp->cases[c] in an instance of its own, poisoned,
 * compared in float64.  A failure marks x failed (not timed); a launch
 * the device refuses at the derived shape fails the check (the arm
 * declares what it supports with requires). */
static int heldout_one(wctx *w, const kg_plan *hp, int c, inst *x, const kg_case_data *d, const char *name,
                       kg_err *err)
{
    inst h;
    int ok = 1;
    now(w, c, x->arm, KG_NOW_CHECK_BEFORE, -1);
    int rc = inst_setup_on(w, hp, c, x->arm, d, &h, err);
    if (rc == KG_OK) rc = checked_run(w, c, &h, d, KG_PHASE_PRE, name, 0, &ok, NULL, err);
    inst_release(w, &h);
    if (rc == KG_EINADMISSIBLE) {
        char detail[KG_DETAIL_MAX];
        snprintf(detail, sizeof detail, "the launch is refused at this shape (%.400s): declare the arm's "
                 "preconditions with requires", err->msg);
        record_check(w, c, x->arm, KG_PHASE_PRE, name, 0, NULL, detail);
        kg_err_clear(err);
        x->failed = 1;
        return KG_OK;
    }
    if ((rc = arm_failed(w, c, x, KG_PHASE_PRE, rc, err)) != KG_OK) return rc;
    if (!ok) x->failed = 1;
    return KG_OK;
}

/* Phase 2b, held-out shapes (heldout.h): every arm that passed so far is
 * checked on the shapes derived near the case, each in an instance of
 * its own (launch geometry evaluated for the shape), on inputs of a seed
 * of its own; a derived shape outside an arm's requires is recorded as
 * skipped.  Called from phase_check_before, before the live arms are
 * chosen. */
static int phase_check_heldout(wctx *w, case_run *cr, kg_err *err)
{
    const kg_plan *plan = w->plan;
    kg_case shapes[KG_HELDOUT_MAX];
    int ns = kg_heldout_shapes(cr->kc, cr->op, kg_protocol_heldout_seed(w->input_base, w->seq, cr->c, 0), shapes,
                               KG_HELDOUT_MAX);
    if (ns == 0) return KG_OK;
    kg_case *cases = malloc((size_t)plan->ncases * sizeof *cases);
    if (cases == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory for the held-out shapes of case %s", cr->kc->name);
    memcpy(cases, plan->cases, (size_t)plan->ncases * sizeof *cases);
    kg_plan hp = *plan;
    hp.cases = cases;
    int rc = KG_OK;
    /* the campaign's processes share the shapes out: shape k is checked in
     * the processes whose index is k modulo their planned number, so that
     * every shape is checked at least once per campaign and a process
     * pays for a shape or a few, not for all of them; `kgate check` (one
     * process, no rounds) checks every shape */
    int nproc = plan->campaign.rounds <= 0 ? 1 : 2 * (plan->campaign.processes > 0 ? plan->campaign.processes : 1);
    for (int k = 0; k < ns && rc == KG_OK; k++) {
        if (k % nproc != w->seq % nproc) continue;
        char name[KG_CHECK_NAME_MAX - 16], why[KG_TEXT_MAX + 64];
        kg_case_data d;
        int have = 0;
        cases[cr->c] = shapes[k];
        kg_heldout_name(&shapes[k], cr->op, name, sizeof name);
        for (int i = 0; i < cr->nx && rc == KG_OK; i++) {
            inst *x = &cr->xs[i];
            int ok = 1;
            if (x->dropped || x->failed) continue;
            if ((rc = kg_heldout_supported(&plan->arms[x->arm], &shapes[k], &ok, why, sizeof why, err)) != KG_OK) break;
            if (!ok) {
                char detail[KG_TEXT_MAX + 96];
                snprintf(detail, sizeof detail, "skipped: the arm requires %s", why);
                record_check(w, cr->c, x->arm, KG_PHASE_PRE, name, 1, NULL, detail);
                continue;
            }
            if (!have) {
                kg_err pe = { 0 };
                uint64_t seed = kg_protocol_heldout_seed(w->input_base, w->seq, cr->c, 1 + k);
                if (kg_oracle_prepare(&cases[cr->c], seed, &d, &pe) != KG_OK) {
                    /* kgate's inputs, not the arm: the shape is not checked */
                    char detail[KG_DETAIL_MAX];
                    snprintf(detail, sizeof detail, "skipped: no inputs at this shape (%.400s)", pe.msg);
                    for (int j = i; j < cr->nx; j++)
                        if (!cr->xs[j].dropped && !cr->xs[j].failed)
                            record_check(w, cr->c, cr->xs[j].arm, KG_PHASE_PRE, name, 1, NULL, detail);
                    break;
                }
                have = 1;
            }
            rc = heldout_one(w, &hp, cr->c, x, &d, name, err);
        }
        if (have) kg_oracle_release(&d);
    }
    free(cases);
    return rc;
}

/* Phase 2, check before timing: every arm run twice on the pre inputs
 * with two poison patterns, the numerical negative's summary, then
 * bitwise parity once every arm ran on the same inputs.  Arms that pass
 * go live. */
static int phase_check_before(wctx *w, case_run *cr, kg_err *err)
{
    const kg_plan *plan = w->plan;
    int rc;
    for (int i = 0; i < cr->nx; i++) {
        inst *x = &cr->xs[i];
        int ok0 = 1, ok1 = 1, counts[2] = { 0, 0 };
        if (x->dropped) continue;
        now(w, cr->c, x->arm, KG_NOW_CHECK_BEFORE, -1);
        rc = checked_run(w, cr->c, x, &cr->pre, KG_PHASE_PRE, KG_CHECK_POISON0, 0, &ok0, counts, err);
        if ((rc = arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err)) != KG_OK) return rc;
        if (x->dropped) continue;
        rc = checked_run(w, cr->c, x, &cr->pre, KG_PHASE_PRE, KG_CHECK_POISON1, 1, &ok1, counts, err);
        if ((rc = arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err)) != KG_OK) return rc;
        if (x->dropped) continue;
        x->failed = !(ok0 && ok1);
        if (kg_backend_negative(w->settings, &plan->arms[x->arm])) {
            /* the numerical negative: every output comparison must fail */
            char detail[160];
            snprintf(detail, sizeof detail, "numerical negative (KGATE_NEGATIVE=1): %d of %d output checks "
                     "failed%s", counts[1], counts[0], counts[1] == counts[0] ? "" : ": SOME PASS THE NEGATIVE");
            record_check(w, cr->c, x->arm, KG_PHASE_PRE, KG_CHECK_NEGATIVE, counts[0] > 0 && counts[1] == counts[0],
                         NULL, detail);
        }
    }
    for (int i = 0; i < cr->nx; i++)
        if (!cr->xs[i].dropped && plan->arms[cr->xs[i].arm].parity[0] != '\0' &&
            (rc = parity_check(w, cr->c, cr->xs, cr->nx, i, &cr->pre, err)) != KG_OK)
            return rc;
    if ((rc = phase_check_heldout(w, cr, err)) != KG_OK) return rc;
    cr->nlive = 0;
    for (int i = 0; i < cr->nx; i++)
        if (!cr->xs[i].failed) cr->live[cr->nlive++] = i;
    for (int i = 0; i < cr->nx; i++)
        if (!cr->xs[i].dropped) record_resources(w, cr->c, &cr->xs[i]);
    return KG_OK;
}

/* inputs = fresh: the inputs of execution n into the set the arm reads
 * now, outside timing.  Every arm's n-th execution gets the same inputs,
 * regenerated before each arm's execution alike: regenerating once per n,
 * before the first arm only, left that arm's caches colder than the
 * others' and biased the comparison by the arm's place in the order
 * (an arm 40% "faster" than an identical one on this 2-core host). */
static int fresh_inputs(wctx *w, case_run *cr, inst *x, int set, int64_t n, kg_err *err)
{
    double t0 = kg_mono_s();
    uint64_t seed = kg_protocol_sample_seed(w->input_base, w->seq, cr->c, n);
    int rc = KG_OK;
    /* the execution's own inputs into the bound set, then those of the
     * operations before its last (pack > 1) into theirs */
    for (int j = -1; j < x->b.nop && rc == KG_OK; j++) {
        uint64_t sj = j < 0 ? seed : kg_protocol_op_seed(w->input_base, w->seq, cr->c, n, j);
        for (int i = 0; i < cr->gen.nin && rc == KG_OK; i++) {
            const kg_dbuf *dst = j >= 0 ? &x->ops[j][i] : set == 0 ? &x->in[i] : &x->rot[set][i];
            if (cr->device_fill) {
                kg_gen_spec s;
                if ((rc = kg_oracle_gen_spec(&cr->gen, i, sj, &s)) != KG_OK)
                    return kg_errorf(err, rc, "case %s: no generator for input %d", cr->kc->name, i);
                rc = kg_backend_fill(w->be, dst, &s, err);
            } else {
                if (i == 0 && (rc = kg_oracle_refill(&cr->gen, sj)) != KG_OK)
                    return kg_errorf(err, rc, "case %s: cannot regenerate the inputs", cr->kc->name);
                rc = kg_backend_upload(w->be, dst, 0, cr->gen.in[i], cr->gen.in_bytes[i], err);
            }
        }
    }
    cr->regen_ns += (kg_mono_s() - t0) * 1e9;
    cr->nregen++;
    return rc;
}

/* inputs = fresh, before the rounds: may the backend write the inputs
 * itself?  Its generator fills a buffer of each input with the inputs of
 * execution 0, which cr->gen holds as the host generated them; a single
 * differing bit, or no generator, and the worker generates on the host
 * and uploads (fill_note says why).  Never an arm's fault: no arm code
 * runs here. */
static int fill_selftest(wctx *w, case_run *cr, kg_err *err)
{
    cr->device_fill = 0;
    cr->fill_note[0] = '\0';
    if (!kg_backend_has_fill(w->be)) {
        snprintf(cr->fill_note, sizeof cr->fill_note, "the %s backend has no generator of its own",
                 kg_backend_name(w->be));
        return KG_OK;
    }
    int ok = 1, rc = KG_OK;
    for (int i = 0; i < cr->gen.nin && ok && rc == KG_OK; i++) {
        kg_dbuf b = { 0 };
        kg_gen_spec s;
        kg_err fe = { 0 };
        unsigned char *back = malloc(cr->gen.in_bytes[i] ? cr->gen.in_bytes[i] : 1);
        if (back == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory checking the input generator");
        if ((rc = kg_backend_alloc(w->be, cr->gen.in_bytes[i], &b, err)) == KG_OK) {
            if (kg_oracle_gen_spec(&cr->gen, i, cr->gen.seed, &s) != KG_OK ||
                kg_backend_fill(w->be, &b, &s, &fe) != KG_OK ||
                kg_backend_download(w->be, back, &b, 0, cr->gen.in_bytes[i], &fe) != KG_OK) {
                snprintf(cr->fill_note, sizeof cr->fill_note, "the backend's generator failed: %.300s", fe.msg);
                ok = 0;
            } else if (memcmp(back, cr->gen.in[i], cr->gen.in_bytes[i]) != 0) {
                size_t at = 0;
                while (at < cr->gen.in_bytes[i] && back[at] == ((const unsigned char *)cr->gen.in[i])[at]) at++;
                snprintf(cr->fill_note, sizeof cr->fill_note,
                         "the backend's generator differs from the host's in input %d at byte %zu", i, at);
                ok = 0;
            }
            kg_backend_free(w->be, &b);
        }
        free(back);
    }
    if (rc != KG_OK) return rc;
    cr->device_fill = ok;
    return KG_OK;
}

/* inputs = fresh: when execution n is one of the picked, the output it
 * left is compared with the reference of its own inputs (no poison went
 * before it, so nothing tells the arm which executions are checked).
 * With pack > 1 the operation compared is picked too where the arm writes
 * an output per operation (kg_binding.op_outs): the first pick's last
 * operation (out[]), each other pick's one of the others
 * ("sampled@N/Q", operation Q); else always the last. */
static int sampled_check(wctx *w, case_run *cr, inst *x, int64_t n, kg_err *err)
{
    int pack = w->plan->campaign.pack > 1 ? w->plan->campaign.pack : 1;
    for (int k = 0; k < cr->npicks; k++) {
        if (cr->picks[k] != n) continue;
        int q = x->b.op_outs ? cr->pick_op[k] : pack - 1;
        int set = q < pack - 1 ? kg_binding_op_set(x->b.nop, q, pack) : 0;
        kg_case_data *pd = set > 0 || cr->pick_op[k] == pack - 1 ? &cr->pick_data[k] : &cr->pick_last[k];
        if (pd->op == NULL) {
            /* the seed fresh_inputs wrote operation q's set from */
            uint64_t seed = kg_protocol_op_input_seed(w->input_base, w->seq, cr->c, n, pack, set > 0 ? q : pack - 1);
            int rc = kg_oracle_prepare(cr->kc, seed, pd, err);
            if (rc != KG_OK) return rc;
        }
        char name[48];
        if (set > 0) snprintf(name, sizeof name, "%s@%lld/%d", KG_CHECK_SAMPLED, (long long)n, q);
        else snprintf(name, sizeof name, "%s@%lld", KG_CHECK_SAMPLED, (long long)n);
        int ok = 1;
        now(w, cr->c, x->arm, KG_NOW_CHECK_AFTER, -1);
        /* the inputs it read are the bound set's (rotate = N) or operation
         * q's, which verify checks as the arm's inputs for the while, and
         * its output operation q's own */
        kg_dbuf saved[KG_MAX_IN], saved_out[KG_MAX_OUT];
        memcpy(saved, x->in, sizeof saved);
        memcpy(saved_out, x->out, sizeof saved_out);
        for (int i = 0; i < x->b.nin && i < KG_MAX_IN; i++) x->in[i] = set > 0 ? x->ops[set - 1][i] : x->b.in[i];
        if (set > 0)
            for (int o = 0; o < x->b.nout && o < KG_MAX_OUT; o++) x->out[o] = x->op_out[set - 1][o];
        int rc = verify(w, cr->c, x, pd, KG_PHASE_POST, name, &ok, NULL, err);
        memcpy(x->in, saved, sizeof saved);
        memcpy(x->out, saved_out, sizeof saved_out);
        /* a screen times an INCORRECT arm no further */
        if (rc == KG_OK && !ok && w->screen) x->dropped = 1;
        return arm_failed(w, cr->c, x, KG_PHASE_POST, rc, err);
    }
    return KG_OK;
}

/* inputs = fresh, before the rounds: the generator's buffers, and which
 * executions (1 .. total - 1; the last one is the snapshot's) are checked. */
static int fresh_setup(wctx *w, case_run *cr, kg_err *err)
{
    const kg_campaign *cp = &w->plan->campaign;
    int rc = kg_oracle_prepare(cr->kc, kg_protocol_sample_seed(w->input_base, w->seq, cr->c, 0), &cr->gen, err);
    if (rc != KG_OK) return rc;
    if ((rc = fill_selftest(w, cr, err)) != KG_OK) return rc;
    int64_t total = (int64_t)cp->rounds * (cp->warmup + cp->samples);
    uint64_t seed = kg_protocol_aux_seed(w->input_base, w->seq, cr->c, KG_AUX_PICK);
    cr->npicks = 0;
    for (int k = 0; k < KG_SAMPLED_CHECKS && total > 1 + k; k++) {
        int64_t pick;
        int again;
        uint64_t t = 0;
        do {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            pick = 1 + (int64_t)((seed >> 11) % (uint64_t)(total - 1));
            again = 0;
            for (int j = 0; j < k; j++) again |= cr->picks[j] == pick;
        } while (again && ++t < 64);
        if (!again) {
            /* the operation of the sample compared, where the arm writes an output per operation:
             * the first pick's last (out[]), every other pick's one of the others, drawn too */
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            cr->pick_op[cr->npicks] = cp->pack <= 1 ? 0 : k == 0 ? cp->pack - 1
                                    : (int)((seed >> 11) % (uint64_t)(cp->pack - 1));
            cr->picks[cr->npicks++] = pick;
        }
    }
    return KG_OK;
}

/* One timed sample (or warmup, sample < 0) of instance xi. */
static int time_one(wctx *w, case_run *cr, int r, const kg_step *st, uint64_t *escapes_seen, kg_err *err)
{
    const kg_plan *plan = w->plan;
    const kg_campaign *cp = &plan->campaign;
    int xi = cr->rorder[st->slot], rc;
    inst *x = &cr->xs[xi];
    if (x->dropped) return KG_OK;   /* faulted earlier in the rounds */
    now(w, cr->c, x->arm, KG_NOW_TIME, r);
    int load_slot = -1;
    for (int i = 0; i < cr->n && load_slot < 0; i++)
        if (cr->order[i] == x->arm) load_slot = i;
    kg_sample_ctx sc = { .proc = w->seq, .dir = w->dir, .round = r, .sample = st->sample, .arm = x->arm,
                         .kase = cr->c, .first_arm = cr->n > 0 ? cr->order[0] : -1, .pos = st->slot,
                         .seed = cp->seed, .load_slot = load_slot,
                         .place_seed = kg_protocol_aux_seed(cp->seed, w->seq, cr->c, KG_AUX_PAD + (uint32_t)x->arm) };
    /* the last execution of an arm uses set 0, which the snapshot reads */
    int last = r == cp->rounds - 1 && st->sample == cp->samples - 1;
    int set = cr->nset > 1 ? (last ? 0 : cr->use[xi]++ % cr->nset) : 0;
    if (cr->nset > 1 && (rc = rotation_bind(w, x, set, err)) != KG_OK)
        return arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err);
    int64_t n = ++x->nexec;
    if (cr->fresh_mode && (rc = fresh_inputs(w, cr, x, set, n, err)) != KG_OK)
        return arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err);
    /* after the regeneration, which a device generator leaves in its cache */
    if (cp->l2 == KG_L2_COLD && (rc = kg_backend_flush(w->be, err)) != KG_OK) return rc;
    double t_ns = 0;
    if ((rc = kg_backend_time(w->be, x->k, &sc, &t_ns, err)) != KG_OK)
        return arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err);
    if (w->timed != NULL && t_ns > 0 && isfinite(t_ns)) {
        size_t cell = (size_t)cr->c * (size_t)plan->narms + (size_t)x->arm;
        w->timed[cell] += t_ns * (cp->pack > 0 ? cp->pack : 1) * 1e-9;
        w->nsamp[cell] += st->sample >= 0;
    }
    if (cr->fresh_mode && (rc = sampled_check(w, cr, x, n, err)) != KG_OK) return rc;
    if (st->sample < 0) return KG_OK;
    if (!(t_ns > 0) || !isfinite(t_ns))
        return kg_errorf(err, KG_EBACKEND, "arm %s returned a non-positive time (%g ns)", plan->arms[x->arm].name,
                         t_ns);
    int escaped = 0, cpu = -1;
    record_telemetry(w, cr->c, r, x->arm, st->sample, escapes_seen, &escaped, &cpu);
    cr->escapes[xi] += escaped;
    /* the sample's CPU against the process's: a contaminated sample is
     * recorded as such and left out by the analysis (kg_row_contaminated) */
    kg_row row = { .proc = w->proc, .dir = w->dir, .round = r, .arm = x->arm, .kase = cr->c, .sample = st->sample,
                   .ns = t_ns, .cpu = cpu, .pin_cpu = w->pin_cpu };
    if (w->pin_cpu >= 0 && cpu != w->pin_cpu && ++w->ncontaminated <= 10)
        fprintf(stderr, "arm %s: contaminated sample (round %d, sample %d): it ran on CPU %d, not on the "
                "process's CPU %d%s\n", plan->arms[x->arm].name, r, st->sample, cpu, w->pin_cpu,
                w->ncontaminated == 10 ? " (the next are not told here; raw rows record them all)" : "");
    kg_rows_put_raw(&w->rows, plan, &row);
    return KG_OK;
}

/* Phase 3, time: the rounds over the live arms, the arm order rotating
 * per round, the steps interleaved as the plan says.  The last round
 * runs on the post inputs (written between rounds, outside timing). */
static int phase_time(wctx *w, case_run *cr, kg_err *err)
{
    const kg_plan *plan = w->plan;
    const kg_campaign *cp = &plan->campaign;
    int rc;
    int per_round = cr->nlive * (cp->warmup + cp->samples);
    cr->steps = calloc((size_t)(per_round > 0 ? per_round : 1), sizeof *cr->steps);
    if (cr->steps == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    cr->nset = cp->rotate;
    if (cr->nset > KG_MAX_ROTATE)
        return kg_errorf(err, KG_EINPUT, "%s: rotate = %d: at most %d input sets", plan->path, cr->nset,
                         KG_MAX_ROTATE);
    if (cp->rounds > 0)
        for (int i = 0; i < cr->nlive && cr->nset > 1; i++) {
            inst *x = &cr->xs[cr->live[i]];
            now(w, cr->c, x->arm, KG_NOW_TIME, -1);
            rc = rotation_setup(w, x, &cr->pre, cr->nset, err);
            if ((rc = arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err)) != KG_OK) return rc;
        }
    /* a backend whose timed runs execute nothing (fake) leaves the output
     * of the last checked run: its snapshot is of the pre inputs */
    int executes = (kg_backend_caps(w->be) & KG_CAP_EXECUTES) != 0;
    cr->fresh_mode = cp->inputs == KG_INPUTS_FRESH && executes && cp->rounds > 0;
    int switch_inputs = executes && !cr->fresh_mode;
    cr->snap = switch_inputs ? &cr->post : &cr->pre;
    if (cr->fresh_mode && (rc = warm_fits(w, &cr->pre, cr->kc, err)) != KG_OK) return rc;
    if (cr->fresh_mode && (rc = fresh_setup(w, cr, err)) != KG_OK) return rc;
    if (executes && cp->pack > 1 && cp->rounds > 0 && (cr->fresh_mode || cp->l2 == KG_L2_COLD))
        for (int i = 0; i < cr->nlive; i++) {
            inst *x = &cr->xs[cr->live[i]];
            now(w, cr->c, x->arm, KG_NOW_TIME, -1);
            rc = opsets_setup(w, x, &cr->pre, cp->pack, err);
            if ((rc = arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err)) != KG_OK) return rc;
        }
    uint64_t escapes_seen = 0;
    for (int r = 0; r < cp->rounds && cr->nlive > 0; r++) {
        /* The last round runs on the post inputs: its snapshot then
         * catches a kernel that keeps an old output (pointer-keyed
         * caches, poison detection, honest only on its first calls). */
        if (r == cp->rounds - 1 && switch_inputs)
            for (int i = 0; i < cr->nlive; i++) {
                inst *x = &cr->xs[cr->live[i]];
                if (x->dropped) continue;
                now(w, cr->c, x->arm, KG_NOW_TIME, r);
                rc = rotation_upload(w, x, &cr->post, cr->nset, err);
                if ((rc = arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err)) != KG_OK) return rc;
            }
        kg_protocol_round_order(cr->live, cr->nlive, r, cr->rorder);
        int ns = kg_protocol_round_steps(cr->nlive, cp->warmup, cp->samples, cp->interleave, cr->steps);
        /* the progress line: the round, and the arm being timed (each
         * arm's block in turn, or every arm at once when samples
         * interleave) */
        char arms[160] = "";
        if (w->progress && cp->interleave == KG_INTERLEAVE_SAMPLE) {
            for (int i = 0; i < cr->nlive; i++) {
                size_t len = strlen(arms);
                snprintf(arms + len, sizeof arms - len, "%s%s", i ? ", " : "",
                         w->plan->arms[cr->xs[cr->rorder[i]].arm].name);
            }
            fprintf(stderr, "progress: case %s round %d/%d, arms %s interleaved\n", cr->kc->name, r + 1, cp->rounds,
                    arms);
        }
        int shown = -1;
        for (int s = 0; s < ns; s++) {
            if (w->progress && cp->interleave == KG_INTERLEAVE_BLOCK && cr->steps[s].slot != shown) {
                shown = cr->steps[s].slot;
                fprintf(stderr, "progress: case %s round %d/%d, arm %s\n", cr->kc->name, r + 1, cp->rounds,
                        w->plan->arms[cr->xs[cr->rorder[shown]].arm].name);
            }
            if ((rc = time_one(w, cr, r, &cr->steps[s], &escapes_seen, err)) != KG_OK) return rc;
        }
    }
    for (int i = 0; i < cr->nlive; i++) {
        inst *x = &cr->xs[cr->live[i]];
        if (x->dropped) continue;
        rc = rotation_bind(w, x, 0, err);
        if ((rc = arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err)) != KG_OK) return rc;
    }
    if (cr->fresh_mode) {
        /* the snapshot's inputs: those of every arm's last execution */
        int64_t total = (int64_t)cp->rounds * (cp->warmup + cp->samples);
        rc = kg_oracle_prepare(cr->kc, kg_protocol_sample_seed(w->input_base, w->seq, cr->c, total), &cr->last, err);
        if (rc != KG_OK) return rc;
        cr->snap = &cr->last;
        char detail[KG_DETAIL_MAX];
        char how[320];
        if (cr->device_fill)
            snprintf(how, sizeof how, "generating them in place with the %s backend's generator (kgate/gen.h; its bits "
                     "matched the host's before use)", kg_backend_name(w->be));
        else
            snprintf(how, sizeof how, "generating them on the host and uploading them (%.200s)", cr->fill_note);
        snprintf(detail, sizeof detail, "%lld timed executions of the case's arms on inputs no earlier execution saw; "
                 "%.300s took %.3f ms in all (%.1f us each), outside the timed events; executions checked:",
                 (long long)cr->nregen, how, cr->regen_ns / 1e6,
                 cr->nregen > 0 ? cr->regen_ns / 1e3 / (double)cr->nregen : 0.0);
        for (int k = 0; k < cr->npicks; k++) {
            size_t len = strlen(detail);
            snprintf(detail + len, sizeof detail - len, " %lld", (long long)cr->picks[k]);
        }
        for (int i = 0; i < cr->nlive; i++) {
            const inst *x = &cr->xs[cr->live[i]];
            if (!x->dropped) record_check(w, cr->c, x->arm, KG_PHASE_POST, KG_CHECK_FRESH_COST, 1, NULL, detail);
        }
    }
    /* how the plan's l2 was honoured before each arm's samples */
    for (int i = 0; i < cr->nlive && executes && cp->rounds > 0; i++) {
        inst *x = &cr->xs[cr->live[i]];
        if (x->dropped) continue;
        char note[KG_DETAIL_MAX];
        kg_backend_cache_note(w->be, x->k, note, sizeof note);
        record_check(w, cr->c, x->arm, KG_PHASE_POST, KG_CHECK_CACHE, 1, NULL, note);
    }
    /* an arm that faulted in the rounds is checked no further */
    int nl = 0;
    for (int i = 0; i < cr->nlive; i++)
        if (!cr->xs[cr->live[i]].dropped) cr->live[nl++] = cr->live[i];
    cr->nlive = nl;
    return KG_OK;
}

/* After the snapshot: a few input elements of the inputs every live arm
 * holds now (the snapshot's) change in place, in the same buffers; the
 * outputs are poisoned, the arm runs once and is checked against the
 * perturbed inputs' reference.  A cache keyed on pointers, on a few
 * positions or on a stale fingerprint returns the old output and fails. */
static int perturbation_check(wctx *w, case_run *cr, kg_err *err)
{
    kg_case_data dp;
    int64_t where[KG_PERTURB_ELEMS];
    int which[KG_PERTURB_ELEMS];
    int rc = kg_oracle_prepare(cr->kc, cr->snap->seed, &dp, err);
    if (rc != KG_OK) return rc;
    if (dp.nin == 0) {
        /* an op without inputs (noop) has nothing to perturb */
        kg_oracle_release(&dp);
        return KG_OK;
    }
    if ((rc = kg_oracle_perturb(&dp, kg_protocol_aux_seed(w->input_base, w->seq, cr->c, KG_AUX_PERTURB),
                                KG_PERTURB_ELEMS, where, which, err)) != KG_OK) {
        kg_oracle_release(&dp);
        return rc;
    }
    for (int i = 0; i < cr->nlive && rc == KG_OK; i++) {
        int ok = 1;
        inst *x = &cr->xs[cr->live[i]];
        if (x->dropped) continue;
        now(w, cr->c, x->arm, KG_NOW_CHECK_AFTER, -1);
        for (int j = 0; j < KG_PERTURB_ELEMS && rc == KG_OK; j++) {
            /* the element size of that input (inputs may differ in dtype) */
            int q = which[j];
            size_t es = dp.in_elems[q] > 0 ? dp.in_bytes[q] / (size_t)dp.in_elems[q] : 4;
            size_t off = (size_t)where[j] * es;
            rc = kg_backend_upload(w->be, &x->in[which[j]], off, (const char *)dp.in[which[j]] + off, es, err);
        }
        if (rc == KG_OK) rc = checked_run(w, cr->c, x, &dp, KG_PHASE_POST, KG_CHECK_PERTURBED, 1, &ok, NULL, err);
        rc = arm_failed(w, cr->c, x, KG_PHASE_POST, rc, err);
    }
    kg_oracle_release(&dp);
    return rc;
}

/* Phase 4, check after timing: escaped work, the output the last timed
 * run left behind, then a run on fresh inputs. */
static int phase_check_after(wctx *w, case_run *cr, kg_err *err)
{
    const kg_plan *plan = w->plan;
    const kg_campaign *cp = &plan->campaign;
    int rc;
    if (cp->rounds <= 0 || cr->nlive == 0) return KG_OK;
    if (kg_backend_has_telemetry(w->be)) {
        /* Work that outlives the timed events (a side stream, a host
         * thread) makes every sample of the arm a lie. */
        for (int i = 0; i < cr->nlive; i++) {
            char detail[300] = "";
            int e = cr->escapes[cr->live[i]];
            int64_t n = cr->xs[cr->live[i]].nexec;
            int64_t tolerated = (int64_t)(KG_ESCAPE_TOLERATED * (double)n);
            if (tolerated < 1) tolerated = 1;
            if (e > 0)
                snprintf(detail, sizeof detail, "%d of %lld timed executions escaped (work outside the timed "
                         "region, or a bracket the host's scheduling lengthened)%s", e, (long long)n,
                         e > tolerated ? "" : "; tolerated: at most one, or 5% of the executions, too few to move a median");
            record_check(w, cr->c, cr->xs[cr->live[i]].arm, KG_PHASE_POST, KG_CHECK_ESCAPE, e <= tolerated, NULL,
                         detail);
        }
    }
    for (int i = 0; i < cr->nlive; i++) {
        int ok = 1;
        inst *x = &cr->xs[cr->live[i]];
        now(w, cr->c, x->arm, KG_NOW_CHECK_AFTER, -1);
        rc = verify(w, cr->c, x, cr->snap, KG_PHASE_POST, KG_CHECK_SNAPSHOT, &ok, NULL, err);
        if ((rc = arm_failed(w, cr->c, x, KG_PHASE_POST, rc, err)) != KG_OK) return rc;
    }
    if ((rc = perturbation_check(w, cr, err)) != KG_OK) return rc;
    uint64_t seed_fresh = kg_protocol_check_seed(w->input_base, w->seq, cr->c, 2);
    if ((rc = kg_oracle_prepare(cr->kc, seed_fresh, &cr->fresh, err)) != KG_OK) return rc;
    for (int i = 0; i < cr->nlive; i++) {
        int ok = 1;
        inst *x = &cr->xs[cr->live[i]];
        if (x->dropped) continue;
        now(w, cr->c, x->arm, KG_NOW_CHECK_AFTER, -1);
        rc = upload_inputs(w, x, &cr->fresh, err);
        if (rc == KG_OK) rc = checked_run(w, cr->c, x, &cr->fresh, KG_PHASE_POST, KG_CHECK_FRESH, 0, &ok, NULL, err);
        if ((rc = arm_failed(w, cr->c, x, KG_PHASE_POST, rc, err)) != KG_OK) return rc;
    }
    return KG_OK;
}

/* The device's clock, warmed before the first timed phase of a run's
 * first process: the case's first live arm runs until the SM clock has
 * not risen (by more than 0.5%) for 0.5 s, or for w->warm_s at most.  A
 * device that has idled (or never ran) boosts its clocks over its first
 * tenths of a second of work; the first arm timed would otherwise run
 * slower than the others.  Recorded as a passing "clock:warm" check of
 * that arm: the clocks, the time and whether the clock settled.  Nothing
 * happens where the backend reads no SM clock (cpu, fake). */
#define KG_WARM_SETTLE_S 0.5
#define KG_WARM_POLL_S 0.05
static int warm_clock(wctx *w, case_run *cr, kg_err *err)
{
    if (w->warm_s <= 0 || w->warmed || cr->nlive <= 0 || w->plan->campaign.rounds <= 0) return KG_OK;
    w->warmed = 1;
    if (!kg_backend_has_telemetry(w->be)) return KG_OK;
    kg_telemetry t;
    kg_err e = { 0 };
    if (kg_backend_telemetry(w->be, &t, &e) != KG_OK || t.sm_clock_mhz <= 0) return KG_OK;
    inst *x = &cr->xs[cr->live[0]];
    now(w, cr->c, x->arm, KG_NOW_TIME, -1);
    int first = t.sm_clock_mhz, best = first, last = first, steady = 0;
    long runs = 0;
    double t0 = kg_mono_s(), rise = t0, next = t0 + KG_WARM_POLL_S, now_s = t0;
    while ((now_s = kg_mono_s()) - t0 < w->warm_s) {
        int rc = kg_backend_run(w->be, x->k, err);
        if (rc != KG_OK) return arm_failed(w, cr->c, x, KG_PHASE_PRE, rc, err);
        runs++;
        if (now_s < next) continue;
        next = now_s + KG_WARM_POLL_S;
        if (kg_backend_telemetry(w->be, &t, &e) == KG_OK && t.sm_clock_mhz > 0) {
            last = t.sm_clock_mhz;
            if (last > best * 1.005) rise = now_s;
            if (last > best) best = last;
        }
        if (now_s - rise >= KG_WARM_SETTLE_S) {
            steady = 1;
            break;
        }
    }
    char detail[KG_DETAIL_MAX];
    snprintf(detail, sizeof detail, "SM clock %d MHz before, %d MHz after %ld runs of arm %s in %.2f s (highest %d "
             "MHz): %s", first, last, runs, w->plan->arms[x->arm].name, now_s - t0, best,
             steady ? "steady for 0.5 s" : "still rising at the bound (warm)");
    record_check(w, cr->c, x->arm, KG_PHASE_PRE, KG_CHECK_WARM, 1, NULL, detail);
    return KG_OK;
}

/* Before the first timed phase of the process: the worker says it is
 * ready (its set-up and checks before timing are done, on a host that
 * need not be quiet for them) and waits for the supervisor's byte on the
 * go pipe, written once nothing forbidden has been seen for the plan's
 * quiet window.  The worker's own time limit does not run while it
 * waits (the supervisor's give-up bounds the wait).  A pipe closed
 * without the byte ends the worker: the supervisor gave up on the host. */
static int await_go(wctx *w, double *waited, kg_err *err)
{
    *waited = 0;
    if (w->go_fd < 0) return KG_OK;
    account(w, -1, -1);   /* the wait for a quiet host is no arm's */
    int fd = w->go_fd;
    w->go_fd = -1;
    double t0 = kg_mono_s();
    unsigned left = alarm(0);
    int rc = kg_now_tell(&w->now, w->rows_fd, w->proc, -1, -1, KG_NOW_READY, -1, err);
    char b = 0;
    ssize_t got = -1;
    if (rc == KG_OK) {
        do got = read(fd, &b, 1);
        while (got < 0 && errno == EINTR);
    }
    close(fd);
    if (left > 0) alarm(left);
    *waited = kg_mono_s() - t0;
    if (rc != KG_OK) return rc;
    if (got != 1 || b != 'g')
        return kg_errorf(err, KG_EIO, "the supervisor closed the go pipe before the host became quiet: no arm was "
                         "timed");
    return KG_OK;
}

/* A screen's cost rows of the case: each arm the process ran, its own
 * wall clock, timed seconds and samples (report/screening.h). */
static void screen_costs(wctx *w, const case_run *cr)
{
    if (w->busy == NULL) return;
    account(w, -1, -1);
    for (int i = 0; i < cr->n; i++) {
        int a = cr->order[i];
        if (w->skip != NULL && w->skip[a]) continue;
        size_t cell = (size_t)cr->c * (size_t)w->plan->narms + (size_t)a;
        char detail[160];
        snprintf(detail, sizeof detail, "busy %.6f s; timed %.6f s in %lld samples", w->busy[cell], w->timed[cell],
                 w->nsamp[cell]);
        record_check(w, cr->c, a, KG_PHASE_POST, KG_CHECK_SCREEN_COST, 1, NULL, detail);
    }
}

/* A case, phase by phase; last: no case is timed after it in this
 * process (its end of timing is said, KG_NOW_TIMED_DONE). */
static int run_case(wctx *w, int c, int last, kg_err *err)
{
    case_run cr;
    int skip = 0, rc;
    memset(&cr, 0, sizeof cr);
    cr.c = c;
    cr.kc = &w->plan->cases[c];
    cr.op = kg_op_find(cr.kc->op);
    /* where the time goes (the supervisor records it in processes.csv) */
    double t0 = kg_mono_s(), t1 = t0, t2 = t0, t3 = t0, gated = 0, ref0 = w->ref_s;
    if ((rc = phase_prepare(w, &cr, &skip, err)) == KG_OK && !skip) {
        t1 = kg_mono_s();
        if ((rc = phase_check_before(w, &cr, err)) == KG_OK) {
            t2 = kg_mono_s();
            int first = w->go_fd >= 0;
            if (cr.nlive > 0 && w->plan->campaign.rounds > 0 && (rc = await_go(w, &gated, err)) == KG_OK) {
                t2 = kg_mono_s();
                /* the system's monotonic clock, comparable across processes */
                if (first) fprintf(stderr, "time: timing began at monotonic %.6f s\n", t2);
            }
            if (rc == KG_OK && (rc = warm_clock(w, &cr, err)) == KG_OK && (rc = phase_time(w, &cr, err)) == KG_OK) {
                t3 = kg_mono_s();
                if (last) {
                    fprintf(stderr, "time: timing ended at monotonic %.6f s\n", t3);
                    now(w, c, -1, KG_NOW_TIMED_DONE, -1);
                }
                rc = phase_check_after(w, &cr, err);
            }
        }
    }
    double t4 = kg_mono_s();
    if (t1 == t0) t1 = t4;
    if (t2 < t1) t2 = t4;
    if (t3 < t2) t3 = t4;
    double ref = w->ref_s - ref0;
    w->setup_s += t1 - t0 - ref;
    w->checks_s += ref + (t2 - gated - t1) + (t4 - t3);
    w->timed_s += t3 - t2;
    fprintf(stderr, "time: case %s: set-up %.3f s, float64 references %.3f s, checks before timing %.3f s, "
            "timed %.3f s, checks after timing %.3f s\n", cr.kc->name, t1 - t0 - ref, ref, t2 - gated - t1, t3 - t2,
            t4 - t3);
    if (rc == KG_OK) screen_costs(w, &cr);
    case_release(w, &cr);
    return rc;
}

/* Phase 5, record: every row of the process sent to the supervisor,
 * checks first and raw last (the supervisor writes them in this order:
 * a process whose raw file exists is complete). */
static int send_evidence(wctx *w, kg_err *err)
{
    kg_sb idx = { 0 };
    int rc;
    if (w->rows.oom || w->checks.oom || w->telemetry.oom || w->resources.oom || w->outputs.oom)
        return kg_errorf(err, KG_ENOMEM, "out of memory recording rows");
    kg_outputs_index(&w->outputs, w->plan, w->proc, &idx);
    if (idx.oom) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    if ((rc = kg_frame_send(w->rows_fd, KG_FRAME_CHECKS, w->proc, w->checks.buf, w->checks.len, err)) != KG_OK)
        goto done;
    if ((rc = kg_frame_send(w->rows_fd, KG_FRAME_OUTPUTS_BIN, w->proc, w->outputs.data, w->outputs.len, err)) !=
        KG_OK)
        goto done;
    if ((rc = kg_frame_send(w->rows_fd, KG_FRAME_OUTPUTS, w->proc, idx.buf, idx.len, err)) != KG_OK) goto done;
    if (kg_backend_has_telemetry(w->be) || kg_backend_has_resources(w->be)) {
        if ((rc = kg_frame_send(w->rows_fd, KG_FRAME_TELEMETRY, w->proc, w->telemetry.buf, w->telemetry.len,
                                err)) != KG_OK)
            goto done;
        if ((rc = kg_frame_send(w->rows_fd, KG_FRAME_RESOURCES, w->proc, w->resources.buf, w->resources.len,
                                err)) != KG_OK)
            goto done;
    }
    char ph[96];
    int phn = snprintf(ph, sizeof ph, "%.6f %.6f %.6f\n", w->setup_s, w->checks_s, w->timed_s);
    if ((rc = kg_frame_send(w->rows_fd, KG_FRAME_PHASES, w->proc, ph, (size_t)phn, err)) != KG_OK) goto done;
    /* the MAC under the supervisor's token, then the raw rows (channel.h) */
    rc = kg_frame_send_raw_mac(w->rows_fd, w->proc, w->rows.buf, w->rows.len, err);
done:
    kg_sb_free(&idx);
    return rc;
}

/* The worker ends itself when the supervisor is gone (PR_SET_PDEATHSIG)
 * or when it runs past the plan's timeout with a grace (its own alarm),
 * so that neither needs a live supervisor.  Nothing it holds can be
 * read through /proc or a core by another process (PR_SET_DUMPABLE 0). */
static int self_limits(const kg_worker_opts *o, const kg_plan *plan, kg_err *err)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return kg_errorf(err, KG_EIO, "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
    /* the supervisor may have died before the line above */
    if (o->parent > 0 && getppid() != (pid_t)o->parent)
        return kg_errorf(err, KG_EIO, "the supervisor (pid %ld) is gone: nothing to do", o->parent);
    (void)prctl(PR_SET_DUMPABLE, 0);
    double t = plan->campaign.timeout_s;
    if (t > 0) {
        double grace = 2 + 0.1 * t;
        alarm((unsigned)(t + grace) + 1u);   /* SIGALRM's default action ends the worker */
    }
    return KG_OK;
}

/* Reads the supervisor's token (its pipe is closed before any arm
 * exists) and keys the rows' MAC with it. */
/* One CPU per process: before the backend opens and any arm host
 * exists, the worker pins itself to one of the CPUs kgate was started
 * with (its affinity mask, which the supervisor passed on), chosen by
 * kg_protocol_cpu from the salted input base and the process index; every
 * host it starts inherits the pin (docs/cpu-backend.md).  Only for a
 * backend whose arms run on the host's CPUs. */
static int pin_worker(wctx *w, const kg_worker_opts *o, kg_err *err)
{
    w->pin_cpu = -1;
    if (!(kg_backend_caps_of(o->backend) & KG_CAP_HOST_CPU)) return KG_OK;
    static int cpus[CPU_SETSIZE];
    int n = kg_cpus_allowed(cpus, CPU_SETSIZE);
    if (n <= 0)
        return kg_errorf(err, KG_EIO, "worker %d: cannot read the CPUs it may run on (sched_getaffinity): %s", o->proc,
                         strerror(errno));
    int cpu = cpus[kg_protocol_cpu(w->input_base, w->seq, w->dir, n)];
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0)
        return kg_errorf(err, KG_EIO, "worker %d: cannot pin itself to CPU %d (sched_setaffinity: %s): a container's "
                         "cpuset that changed since kgate started? Start kgate with the CPUs it may use (taskset -c)",
                         o->proc, cpu, strerror(errno));
    w->pin_cpu = cpu;
    fprintf(stderr, "pinned: the worker and its arm hosts on CPU %d (%d CPUs allowed)\n", cpu, n);
    return KG_OK;
}

static int take_token(const kg_worker_opts *o, kg_err *err)
{
    unsigned char tok[KG_TOKEN_BYTES];
    if (o->token_fd < 0)
        return kg_errorf(err, KG_EUSAGE, "kgate worker needs --token-fd (it is started by kgate run)");
    int rc = kg_token_read_fd(o->token_fd, tok, err);
    if (rc == KG_OK) rc = kg_frame_mac_begin(tok, sizeof tok, err);
    OPENSSL_cleanse(tok, sizeof tok);
    return rc;
}

/* The hello frame, the first under the MAC: the SHA-256 of the image
 * this worker runs and its path, which the supervisor compares with its
 * own (the binary that measures is the binary that signs). */
static int send_hello(const kg_worker_opts *o, kg_err *err)
{
    char hex[65], exe[PATH_MAX], text[PATH_MAX + 80];
    int rc = kg_exe_sha256(0, hex, err);
    if (rc != KG_OK) return rc;
    if (kg_self_exe(exe, sizeof exe, NULL) != KG_OK) snprintf(exe, sizeof exe, "?");
    int n = snprintf(text, sizeof text, "%s %s\n", hex, exe);
    return kg_frame_send(o->rows_fd, KG_FRAME_HELLO, o->proc, text, (size_t)(n < (int)sizeof text ? n :
                         (int)sizeof text - 1), err);
}

/* A screen's worker: the arms it leaves out (--skip, plan indices) and
 * the accounts of each (case, arm)'s own time. */
static int screen_setup(wctx *w, const kg_worker_opts *o, const kg_plan *plan, kg_err *err)
{
    size_t na = (size_t)(plan->narms > 0 ? plan->narms : 1), ncell = na * (size_t)(plan->ncases > 0 ? plan->ncases : 1);
    w->screen = o->screen;
    w->acc_case = w->acc_arm = -1;
    if (o->skip != NULL && o->skip[0] != '\0') {
        if ((w->skip = calloc(na, 1)) == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
        for (const char *p = o->skip; *p != '\0';) {
            char *end = NULL;
            long a = strtol(p, &end, 10);
            if (end == p || a < 0 || a >= plan->narms || (*end != ',' && *end != '\0'))
                return kg_errorf(err, KG_EUSAGE, "--skip %s: arm indices of the plan (0 to %d), comma-separated",
                                 o->skip, plan->narms - 1);
            w->skip[a] = 1;
            p = *end == ',' ? end + 1 : end;
        }
    }
    if (!o->screen) return KG_OK;
    w->busy = calloc(ncell, sizeof *w->busy);
    w->timed = calloc(ncell, sizeof *w->timed);
    w->nsamp = calloc(ncell, sizeof *w->nsamp);
    if (w->busy == NULL || w->timed == NULL || w->nsamp == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    return KG_OK;
}

int kg_worker_main(const kg_worker_opts *o, kg_err *err)
{
    kg_plan *plan = NULL;
    wctx w = { 0 };
    char path[KG_PATH_MAX + 64], build_dir[KG_PATH_MAX + 16];
    char *want = NULL;
    int *corder = NULL;
    int rc;
    w.rows_fd = o->rows_fd;
    w.now.fd = -1;
    w.pin_cpu = -1;
    if (o->rows_fd < 0) {
        rc = kg_errorf(err, KG_EUSAGE, "kgate worker needs --rows-fd (it is started by kgate run)");
        goto done;
    }
    /* the salt first: its pipe is closed before any arm exists */
    uint64_t salt = 0;
    if (o->salt_fd < 0) {
        rc = kg_errorf(err, KG_EUSAGE, "kgate worker needs --salt-fd (it is started by kgate run)");
        goto done;
    }
    if ((rc = kg_salt_read_fd(o->salt_fd, &salt, err)) != KG_OK) goto done;
    /* the NOW page: mapped, its descriptor closed before any arm exists */
    if (o->now_fd >= 0 && (rc = kg_nowpage_attach(&w.now, o->now_fd, err)) != KG_OK) goto done;
    /* no arm host inherits the go pipe (one could take the byte) */
    if (o->go_fd >= 0 && fcntl(o->go_fd, F_SETFD, FD_CLOEXEC) != 0) {
        rc = kg_errorf(err, KG_EIO, "the go pipe (fd %d): %s", o->go_fd, strerror(errno));
        goto done;
    }
    /* the token: every frame from here on is authenticated under it (token.h) */
    if ((rc = take_token(o, err)) != KG_OK) goto done;
    if ((rc = send_hello(o, err)) != KG_OK) goto done;
    if ((rc = kg_plan_load(o->plan_path, &plan, err)) != KG_OK) goto done;
    if ((o->smoke || plan->campaign.smoke) && (rc = kg_plan_smoke(plan, err)) != KG_OK) goto done;
    if ((rc = self_limits(o, plan, err)) != KG_OK) goto done;
    /* the shard's device; the canonical plan and its hash stay the plan's */
    if (o->device >= 0) plan->campaign.device = o->device;
    w.input_base = kg_protocol_input_base(plan->campaign.seed, salt);
    snprintf(path, sizeof path, "%s/plan.sha256", o->out_dir);
    if ((rc = kg_read_file(path, &want, NULL, err)) != KG_OK) goto done;
    if (strncmp(want, plan->hash, 64) != 0) {
        rc = kg_errorf(err, KG_EINPUT, "%s changed since the campaign started (hash %.12s, recorded %.12s): "
                       "restore it or start a new campaign", o->plan_path, plan->hash, want);
        goto done;
    }
    char notice[512];
    w.settings = o->settings != NULL ? o->settings : kg_settings_defaults();
    /* a repeat of a contaminated process keeps the direction of the
     * schedule slot it fills (the supervisor says which) */
    w.dir = kg_protocol_direction(o->slot >= 0 ? o->slot : o->proc);
    w.seq = o->seq >= 0 ? o->seq : o->proc;
    if ((rc = pin_worker(&w, o, err)) != KG_OK) goto done;
    /* the plan's own ops, as the supervisor built them (no compiler runs
     * while a campaign times) */
    snprintf(path, sizeof path, "%s/build", o->out_dir);
    /* a reference call's limit: a quarter of the process's timeout (at
     * least 5 s), so that a reference that never returns is the op's error,
     * not the whole process's timeout */
    double pylimit = plan->campaign.timeout_s > 0 ? plan->campaign.timeout_s / 4 : 150;
    kg_pyops_conf pyconf = { .python = w.settings->python, .limit_s = pylimit > 5 ? pylimit : 5 };
    kg_pyops_configure(&pyconf);
    if ((rc = kg_ops_load_built(plan, path, err)) != KG_OK) goto done;
    double t_open = kg_mono_s();
    if ((rc = kg_backend_open(o->backend, plan, w.settings, &w.be, notice, sizeof notice, err)) != KG_OK) goto done;
    /* where a worker's set-up time goes, on its log */
    fprintf(stderr, "time: backend %s opened in %.3f s\n", o->backend, kg_mono_s() - t_open);
    if ((rc = screen_setup(&w, o, plan, err)) != KG_OK) goto done;
    corder = calloc((size_t)(plan->ncases > 0 ? plan->ncases : 1), sizeof *corder);
    w.faulted = calloc((size_t)(plan->narms > 0 ? plan->narms : 1), sizeof *w.faulted);
    if (corder == NULL || w.faulted == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    int ncases = kg_protocol_case_order(plan, w.dir, corder, plan->ncases);
    /* a shard runs its own cases only, in the same order and with the
     * same indices (so the same seeds) as the whole campaign's processes */
    if (o->shard_n > 0) {
        unsigned char *on = calloc((size_t)plan->ncases + 1, 1);
        if (on == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
        int k = 0, got = kg_shard_cases(plan, o->shard_i, o->shard_n, on, err);
        for (int i = 0; got > 0 && i < ncases; i++)
            if (on[corder[i]]) corder[k++] = corder[i];
        free(on);
        if (got < 0) { rc = got; goto done; }
        ncases = k;
    }
    /* the arms' hosts open the device side by side (their hellos are
     * read at each arm's first load) and the library arms' helpers import
     * their library meanwhile, but those of arms left out or of no case
     * this worker runs: set-up time */
    double t_pre = kg_mono_s();
    /* the ops' Python helper imports meanwhile too, where a case this
     * worker runs has an op declared in Python */
    int py_used = 0;
    for (int i = 0; i < ncases && !py_used; i++)
        for (int k = 0; k < plan->nops && !py_used; k++)
            py_used = plan->ops[k].python && strcmp(plan->ops[k].name, plan->cases[corder[i]].op) == 0;
    if (py_used) kg_pyops_prestart();
    unsigned char *pre_skip = calloc((size_t)(plan->narms > 0 ? plan->narms : 1), 1);
    if (pre_skip == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    for (int a = 0; a < plan->narms; a++) {
        int runs = 0;
        for (int i = 0; i < ncases && !runs; i++) runs = kg_plan_arm_applies(plan, a, corder[i]);
        pre_skip[a] = !runs || (w.skip != NULL && w.skip[a]);
    }
    kg_backend_prestart(w.be, pre_skip);
    free(pre_skip);
    w.setup_s += kg_mono_s() - t_pre;
    fprintf(stderr, "time: arm hosts and library helpers started in %.3f s\n", kg_mono_s() - t_pre);
    snprintf(build_dir, sizeof build_dir, "%s/build", o->out_dir);
    w.plan = plan;
    w.build_dir = build_dir;
    w.proc = o->proc;
    w.progress = o->progress;
    w.warm_s = o->check_only ? 0 : o->warm_s;
    w.go_fd = o->check_only ? -1 : o->go_fd;
    kg_rows_begin(&w.rows, KG_ROWS_RAW);
    kg_rows_begin(&w.checks, KG_ROWS_CHECKS);
    kg_rows_begin(&w.telemetry, KG_ROWS_TELEMETRY);
    kg_rows_begin(&w.resources, KG_ROWS_RESOURCES);

    kg_campaign cp_saved = plan->campaign;
    if (o->check_only) plan->campaign.rounds = 0;
    for (int i = 0; i < ncases; i++)
        if ((rc = run_case(&w, corder[i], i == ncases - 1, err)) != KG_OK) goto done;
    plan->campaign = cp_saved;
    rc = send_evidence(&w, err);
    if (rc == KG_OK) fprintf(stderr, "time: records sent at monotonic %.6f s\n", kg_mono_s());
done:
    /* the worker's own error, so that the supervisor does not blame an arm */
    if (rc != KG_OK && o->rows_fd >= 0) kg_frame_send(o->rows_fd, KG_FRAME_FAIL, o->proc, err->msg, strlen(err->msg), NULL);
    /* an input error is the plan's on this device, the same in every process: the campaign stops */
    if (rc == KG_EINPUT && o->rows_fd >= 0)
        kg_frame_send(o->rows_fd, KG_FRAME_REFUSE, o->proc, err->msg, strlen(err->msg), NULL);
    double t_close = kg_mono_s();
    if (w.be != NULL) {
        kg_backend_close(w.be);
        fprintf(stderr, "time: backend closed in %.3f s\n", kg_mono_s() - t_close);
    }
    kg_pyops_stop();
    kg_nowpage_destroy(&w.now);
    kg_sb_free(&w.rows);
    kg_sb_free(&w.checks);
    kg_sb_free(&w.telemetry);
    kg_sb_free(&w.resources);
    kg_outputs_free(&w.outputs);
    free(w.host);
    free(want);
    free(corder);
    free(w.faulted);
    free(w.skip);
    free(w.busy);
    free(w.timed);
    free(w.nsamp);
    kg_plan_free(plan);
    return rc;
}
