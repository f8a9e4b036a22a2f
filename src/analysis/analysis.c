/* analysis.c: the analysis of a campaign's timing rows and its gate
 * (statistics-anchors.md §3; the API is in kgate/stats.h).
 *
 * Definitions, per case c and arm a (res[c * narms + a]):
 *   - Only rows of accepted processes count; rows of rejected processes
 *     are skipped without further checks.
 *   - y(p, r, a) = log of the median of arm a's samples in round r of
 *     process p (§3.1).
 *   - The baselines of a case are the arms of role baseline whose state is
 *     KG_ARM_OK there.  Applicability comes from the state table alone
 *     (KG_ARM_ABSENT = the arm does not run on the case).
 *   - Paired round contrast (§3.1): for a candidate or reference arm,
 *     delta = y(a) - y(b) in the same round against one baseline b: the
 *     plan's campaign.reference when it names one, else every baseline
 *     in turn, the arm's result being the contrast with the smallest
 *     lower bound (intersection-union: FASTER than every baseline);
 *     contrast_arm = b.  For a control arm, delta = y(a) - y(of) where
 *     `of` is the baseline it replicates (contrast_arm = of).  A round
 *     counts only when y(a) and its reference both exist.  Baseline arms
 *     get no contrast and no effect.
 *   - D(p) = mean of delta over the counted rounds of process p (§3.2);
 *     the effect, interval and order check come from kg_effect_compute()
 *     on the D(p) with the processes' directions (§3.3, §3.4), and the
 *     verdict from kg_verdict_of(campaign.margin, campaign.equivalence)
 *     (§3.5).  A direction without any process leaves has_effect = 0 and
 *     the verdict INCONCLUSIVE; no D(p) at all gives NO DATA.
 *   - The robust check (docs/statistics.md, item 7): the same effect with
 *     D(p) = kg_huber of the process's deltas; where it lies more than
 *     KG_ROBUST_SHIFT SEs from the mean's, a FASTER or SLOWER it does not
 *     give becomes INCONCLUSIVE (robust_demoted) and the interval gate
 *     also needs its lower bound (robust_shifted, robust_lo).
 *   - Descriptive statistics (§3.2, kept next to theta): the process
 *     median of an arm is the median of all its samples in that process;
 *     med_ns[d] is the median of the process medians over processes of
 *     direction d, med_ns_all over both.  proc_red[d] = 1 - med_ns[d] /
 *     ref[d] where ref[d] is the med_ns[d] of the contrast's baseline
 *     (contrast_arm).  Per counted round the
 *     reduction is 1 - exp(delta); round_red[d] is its median over the
 *     rounds of direction d, round_red_all over all rounds, with their
 *     min and max; wins[d] counts rounds with delta < 0 out of
 *     nrounds[d].  drift (every arm) is the median over processes of
 *     exp(y(last round) - y(first round)) - 1, using the first and last
 *     rounds where the arm has samples.
 *   - An arm whose state is INADMISSIBLE or INCORRECT gets that verdict
 *     and no numbers at all: its timings are never reported as valid.
 *     ABSENT gives NO DATA.  A baseline with samples is not judged: its
 *     verdict is INCONCLUSIVE with has_effect = 0.
 *   - control_valid (§3.6a): a control arm with an interval is invalid
 *     when the interval on its reduction lies wholly outside
 *     [-control_margin, +control_margin].  invalid = a control is
 *     invalid, or no process was accepted.
 *   - order_ok: no candidate arm's effect on a gated case (primary, or
 *     every case with gate.all_cases) is order-flagged where the flag
 *     could change the decision, i.e. where the worse direction's own
 *     lower bound (rho_lo_dir: pooled s, its own n) is below
 *     gate.min_reduction.  Other flags (secondary cases, position
 *     effects far smaller than the gain) are reported but do not fail
 *     the gate.
 *   - The gate applies to candidate arms on primary cases (every case with
 *     gate.all_cases).  Rule interval: each pair has state OK, an interval
 *     and rho_lo >= gate.min_reduction.  Rule classic: in both directions
 *     proc_red[d] >= g, round_red[d] >= g and every round won.  Both rules
 *     then require order_ok (gate.require_order) and control_valid
 *     (gate.require_control), the interval rule also no control on the
 *     case whose interval reaches past g (its reason names the processes
 *     kg_design_control_P gives for that control).  gate_reason holds
 *     the first failure.
 *   - Sequential designs (campaign.looks > 1): see sequential() below.
 *
 *   - Clocks (docs/statistics.md, "Clocks"): each raw row is joined to
 *     its telemetry row by (process, case, round, arm, sample); a clock
 *     is a reading sm_mhz > 0.  A case has clocks when some row of it
 *     has one.  Per cell the median clock of its samples; a round (p, r)
 *     of the case is clock-mismatched when max/min - 1 of its arms'
 *     median clocks exceeds KG_CLOCK_MISMATCH.  The cycles of a sample
 *     are ns x MHz x 1e-3; a cell's cycle value is the log median of its
 *     cycles when every sample has a clock.  Every contrasted arm of a
 *     case with clocks gets the same paired analysis on cycles, against
 *     the same contrast_arm; where every sample of both arms has a clock
 *     (has_cycles), a FASTER verdict (after the family's adjustment)
 *     stays FASTER only if the cycle effect is FASTER too
 *     (kg_verdict_of), else it is INCONCLUSIVE (clock_demoted), and the
 *     interval gate also needs the cycle lower bound >= min_reduction.
 *     Without telemetry nothing of this applies.  The cycle effect's own
 *     verdict (verdict_cycles) and the confirmation (cycles_confirmed) are
 *     the reports' to print, not to re-derive.
 *
 *   - Contaminated samples: a row of a process pinned to one CPU
 *     (pin_cpu >= 0) whose sample ran on another CPU (kg_row_contaminated)
 *     is left out of every cell, as if it had not been taken; a cell
 *     with no sample left is empty (its round does not count).  They are
 *     counted per (case, arm) (ncontaminated) and in all.
 *
 *   - The host watch: a schedule slot whose every process the watch
 *     excluded (processes.csv status contaminated), with a never-quiet row
 *     in watch.csv, makes the campaign INVALID (invalid_why, and the gate
 *     fails with it); a later process that completes the slot lifts it.
 *
 * This file does not read files, choose what is accepted or decide the
 * admission states; those arrive in kg_analysis_in as data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/stats.h"
#include "kgate/varcomp.h"

#define PCT(x) (100.0 * (x))

static const char *case_name(const kg_plan *plan, int c)
{
    return plan->cases[c].name;
}

static const char *arm_name(const kg_plan *plan, int a)
{
    return plan->arms[a].name;
}

/* Resolved here rather than through the plan module so that the analysis
 * depends on the plan's data only. */
static int find_arm(const kg_plan *plan, const char *name)
{
    if (name == NULL || name[0] == '\0') return -1;
    for (int a = 0; a < plan->narms; a++)
        if (strcmp(plan->arms[a].name, name) == 0) return a;
    return -1;
}

static kg_verdict verdict_of_state(kg_arm_state s)
{
    switch (s) {
    case KG_ARM_INADMISSIBLE: return KG_VERDICT_INADMISSIBLE;
    case KG_ARM_INCORRECT: return KG_VERDICT_INCORRECT;
    case KG_ARM_ABSENT: return KG_VERDICT_NODATA;
    case KG_ARM_WEAK: return KG_VERDICT_WEAK;
    case KG_ARM_OK: break;
    }
    return KG_VERDICT_NODATA;
}

static void result_blank(kg_arm_result *r)
{
    r->contrast_arm = -1;
    r->med_ns[0] = r->med_ns[1] = r->med_ns_all = (double)NAN;
    r->proc_red[0] = r->proc_red[1] = (double)NAN;
    r->round_red[0] = r->round_red[1] = r->round_red_all = (double)NAN;
    r->round_red_min = r->round_red_max = (double)NAN;
    r->drift = (double)NAN;
    r->fastest_ns = r->peak_frac = (double)NAN;
    r->impossible = 0;
    r->physics[0] = '\0';
    r->has_effect = 0;
    memset(&r->eff, 0, sizeof r->eff);
    r->verdict = KG_VERDICT_NODATA;
    r->contrast_drift = r->contrast_drift_se = (double)NAN;
    r->ndrift_proc = 0;
    r->drift_fails = 0;
    r->in_family = 0;
    r->p_value = r->p_adj = r->rho_lo_adj = (double)NAN;
    r->has_cycles = r->has_cycle_effect = 0;
    memset(&r->eff_cycles, 0, sizeof r->eff_cycles);
    r->verdict_cycles = KG_VERDICT_INCONCLUSIVE;
    r->cycles_confirmed = 0;
    r->cycle_nrounds = 0;
    r->clock_rounds = r->clock_rounds_flagged = -1;
    r->clock_demoted = 0;
    r->clock_reason[0] = '\0';
    r->has_robust = 0;
    r->robust_lo = r->robust_hi = (double)NAN;
    r->robust_demoted = 0;
    r->robust_shifted = 0;
    r->has_level = 0;
    memset(&r->level, 0, sizeof r->level);
}

/* The timing table, bucketed so that the samples of (case, process, arm)
 * are contiguous and ordered by round. */
typedef struct table {
    int ncases, nproc, narms, nrounds;
    size_t ncells;
    size_t *off;      /* ncells + 1 offsets into val */
    double *val;      /* sample times, ns */
    double *y;        /* per cell: log median, (double)NAN when empty */
    double *pmed;     /* per (case, process, arm): median of all samples, (double)NAN when none */
    int *pdir;        /* per process: direction, -1 when it has no rows */
    /* clocks (NULL without telemetry) */
    double *cyc;      /* per sample, parallel to val: cycles, (double)NAN without a clock */
    double *clk;      /* per sample: SM MHz, (double)NAN without a clock */
    double *yc;       /* per cell: log median of cycles when every sample has a clock, else NAN */
    double *cmed;     /* per cell: median clock of the samples that have one, else NAN */
    int *case_clocks; /* per case: some sample of it has a clock */
} table;

static size_t cell_of(const table *t, int c, int p, int a, int r)
{
    return (((size_t)c * (size_t)t->nproc + (size_t)p) * (size_t)t->narms + (size_t)a)
           * (size_t)t->nrounds + (size_t)r;
}

static void table_free(table *t)
{
    free(t->off);
    free(t->val);
    free(t->y);
    free(t->pmed);
    free(t->pdir);
    free(t->cyc);
    free(t->clk);
    free(t->yc);
    free(t->cmed);
    free(t->case_clocks);
    memset(t, 0, sizeof *t);
}

/* The telemetry join: one key per telemetry row of an accepted process. */
typedef struct tel_key {
    int proc, kase, round, arm, sample, mhz;
} tel_key;

static int key_cmp(const tel_key *x, const tel_key *y)
{
    if (x->proc != y->proc) return x->proc < y->proc ? -1 : 1;
    if (x->kase != y->kase) return x->kase < y->kase ? -1 : 1;
    if (x->round != y->round) return x->round < y->round ? -1 : 1;
    if (x->arm != y->arm) return x->arm < y->arm ? -1 : 1;
    if (x->sample != y->sample) return x->sample < y->sample ? -1 : 1;
    return 0;
}

/* The sort order: the key, then the clock, so that of two rows for one
 * sample (which the worker never writes) the smaller clock is joined,
 * whatever the order of the sort. */
static int tel_key_cmp(const void *a, const void *b)
{
    const tel_key *x = a, *y = b;
    int k = key_cmp(x, y);
    if (k != 0) return k;
    return (x->mhz > y->mhz) - (x->mhz < y->mhz);
}

/* The clock of a sample: its telemetry row's sm_mhz when > 0, else 0. */
static int clock_of(const tel_key *keys, size_t nkeys, const kg_row *w)
{
    tel_key k = { w->proc, w->kase, w->round, w->arm, w->sample, 0 };
    size_t lo = 0, hi = nkeys;
    while (lo < hi) {   /* the first key >= k */
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(&keys[mid], &k) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < nkeys && key_cmp(&keys[lo], &k) == 0 && keys[lo].mhz > 0 ? keys[lo].mhz : 0;
}

/* Joins the telemetry to the samples; leaves t->cyc NULL when no sample
 * has a clock. */
static int table_clocks(const kg_analysis_in *in, table *t, kg_err *err)
{
    const kg_plan *plan = in->plan;
    size_t nkeys = 0, nkept = t->off[t->ncells];
    int rc = KG_OK;
    tel_key *keys = malloc((in->ntel + 1) * sizeof *keys);
    size_t *fill = malloc((t->ncells + 1) * sizeof *fill);
    if (keys == NULL || fill == NULL) { rc = kg_errorf(err, KG_ENOMEM, "analysis: out of memory (telemetry)"); goto done; }
    for (size_t i = 0; i < in->ntel; i++) {
        const kg_tel_rec *w = &in->tel[i];
        if (w->proc < 0 || w->proc >= in->nproc || w->kase < 0 || w->kase >= plan->ncases || w->arm < 0
            || w->arm >= plan->narms) {
            rc = kg_errorf(err, KG_EINPUT, "analysis: telemetry row %zu: process %d, case %d or arm %d is not in the "
                           "campaign", i, w->proc, w->kase, w->arm);
            goto done;
        }
        if (!in->accepted[w->proc]) continue;
        keys[nkeys++] = (tel_key){ w->proc, w->kase, w->round, w->arm, w->sample, w->sm_mhz };
    }
    qsort(keys, nkeys, sizeof *keys, tel_key_cmp);
    int any = 0;
    t->case_clocks = calloc((size_t)t->ncases + 1, sizeof *t->case_clocks);
    t->cyc = malloc((nkept + 1) * sizeof *t->cyc);
    t->clk = malloc((nkept + 1) * sizeof *t->clk);
    t->yc = malloc((t->ncells + 1) * sizeof *t->yc);
    t->cmed = malloc((t->ncells + 1) * sizeof *t->cmed);
    if (t->case_clocks == NULL || t->cyc == NULL || t->clk == NULL || t->yc == NULL || t->cmed == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "analysis: out of memory (clocks)");
        goto done;
    }
    memcpy(fill, t->off, t->ncells * sizeof *fill);
    for (size_t i = 0; i < in->nrows; i++) {
        const kg_row *w = &in->rows[i];
        if (!in->accepted[w->proc] || kg_row_contaminated(w)) continue;
        size_t at = fill[cell_of(t, w->kase, w->proc, w->arm, w->round)]++;
        int mhz = nkeys > 0 ? clock_of(keys, nkeys, w) : 0;
        t->clk[at] = mhz > 0 ? (double)mhz : (double)NAN;
        t->cyc[at] = mhz > 0 ? w->ns * (double)mhz * 1e-3 : (double)NAN;
        if (mhz > 0) {
            t->case_clocks[w->kase] = 1;
            any = 1;
        }
    }
    for (size_t k = 0; k < t->ncells; k++) {
        size_t n = t->off[k + 1] - t->off[k], m = 0;
        double *c = t->cyc + t->off[k], *v = t->clk + t->off[k];
        for (size_t j = 0; j < n; j++) m += !isnan(v[j]);
        t->yc[k] = n > 0 && m == n ? log(kg_median(c, n)) : (double)NAN;
        /* the median clock of the samples with one: compacted in place
         * (clk is not needed afterwards) */
        size_t w = 0;
        for (size_t j = 0; j < n; j++)
            if (!isnan(v[j])) v[w++] = v[j];
        t->cmed[k] = w > 0 ? kg_median(v, w) : (double)NAN;
    }
    if (!any) {
        free(t->cyc); free(t->clk); free(t->yc); free(t->cmed); free(t->case_clocks);
        t->cyc = t->clk = t->yc = t->cmed = NULL;
        t->case_clocks = NULL;
    }
done:
    free(keys);
    free(fill);
    return rc;
}

static int table_build(const kg_analysis_in *in, table *t, kg_err *err)
{
    const kg_plan *plan = in->plan;
    int rc = KG_OK;
    size_t *fill = NULL;
    memset(t, 0, sizeof *t);
    t->ncases = plan->ncases;
    t->narms = plan->narms;
    t->nproc = in->nproc;

    t->pdir = malloc(((size_t)in->nproc + 1) * sizeof *t->pdir);
    if (t->pdir == NULL) { rc = kg_errorf(err, KG_ENOMEM, "analysis: out of memory"); goto done; }
    for (int p = 0; p < in->nproc; p++) t->pdir[p] = -1;

    int maxround = -1;
    size_t nkept = 0;
    for (size_t i = 0; i < in->nrows; i++) {
        const kg_row *w = &in->rows[i];
        if (w->proc < 0 || w->proc >= in->nproc) {
            rc = kg_errorf(err, KG_EINPUT, "analysis: row %zu: process %d is not in 0..%d",
                           i, w->proc, in->nproc - 1);
            goto done;
        }
        if (!in->accepted[w->proc]) continue;
        if (w->kase < 0 || w->kase >= plan->ncases || w->arm < 0 || w->arm >= plan->narms) {
            rc = kg_errorf(err, KG_EINPUT, "analysis: row %zu: case %d or arm %d is not in the plan",
                           i, w->kase, w->arm);
            goto done;
        }
        if (w->dir != KG_DIR_FWD && w->dir != KG_DIR_REV) {
            rc = kg_errorf(err, KG_EINPUT, "analysis: row %zu: direction %d is not 0 or 1", i, w->dir);
            goto done;
        }
        if (w->round < 0 || (plan->campaign.rounds > 0 && w->round >= plan->campaign.rounds)) {
            rc = kg_errorf(err, KG_EINPUT, "analysis: row %zu: round %d is outside the plan's %d rounds",
                           i, w->round, plan->campaign.rounds);
            goto done;
        }
        if (!(isfinite(w->ns) && w->ns > 0.0)) {
            rc = kg_errorf(err, KG_EINPUT, "analysis: row %zu: time %g ns is not a positive number",
                           i, w->ns);
            goto done;
        }
        if (t->pdir[w->proc] < 0) t->pdir[w->proc] = w->dir;
        else if (t->pdir[w->proc] != w->dir) {
            rc = kg_errorf(err, KG_EINPUT, "analysis: row %zu: process %d has rows in both directions",
                           i, w->proc);
            goto done;
        }
        if (w->round > maxround) maxround = w->round;
        if (kg_row_contaminated(w)) continue;
        nkept++;
    }
    t->nrounds = maxround + 1;
    t->ncells = (size_t)t->ncases * (size_t)t->nproc * (size_t)t->narms * (size_t)t->nrounds;

    t->off = calloc(t->ncells + 1, sizeof *t->off);
    t->val = malloc((nkept + 1) * sizeof *t->val);
    t->y = malloc((t->ncells + 1) * sizeof *t->y);
    size_t npm = (size_t)t->ncases * (size_t)t->nproc * (size_t)t->narms;
    t->pmed = malloc((npm + 1) * sizeof *t->pmed);
    fill = malloc((t->ncells + 1) * sizeof *fill);
    if (t->off == NULL || t->val == NULL || t->y == NULL || t->pmed == NULL || fill == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "analysis: out of memory for %zu cells", t->ncells);
        goto done;
    }
    for (size_t i = 0; i < in->nrows; i++) {
        const kg_row *w = &in->rows[i];
        if (!in->accepted[w->proc] || kg_row_contaminated(w)) continue;
        t->off[cell_of(t, w->kase, w->proc, w->arm, w->round) + 1]++;
    }
    for (size_t k = 0; k < t->ncells; k++) t->off[k + 1] += t->off[k];
    memcpy(fill, t->off, t->ncells * sizeof *fill);
    for (size_t i = 0; i < in->nrows; i++) {
        const kg_row *w = &in->rows[i];
        if (!in->accepted[w->proc] || kg_row_contaminated(w)) continue;
        t->val[fill[cell_of(t, w->kase, w->proc, w->arm, w->round)]++] = w->ns;
    }
    for (size_t k = 0; k < t->ncells; k++) {
        size_t n = t->off[k + 1] - t->off[k];
        t->y[k] = n > 0 ? log(kg_median(t->val + t->off[k], n)) : (double)NAN;
    }
    for (size_t k = 0; k < npm; k++) {
        size_t first = k * (size_t)t->nrounds, last = first + (size_t)t->nrounds;
        size_t n = t->off[last] - t->off[first];
        t->pmed[k] = n > 0 ? kg_median(t->val + t->off[first], n) : (double)NAN;
    }
    if (in->ntel > 0 && (rc = table_clocks(in, t, err)) != KG_OK) goto done;

done:
    free(fill);
    if (rc != KG_OK) table_free(t);
    return rc;
}

/* Scratch arrays reused for every (case, arm). */
typedef struct scratch {
    double *D; int *Ddir; int nD;
    double *Dr;                 /* the robust D(p), beside D */
    double *dl, *dw;            /* one process's deltas, and kg_huber's scratch */
    double *pm[2]; int npm[2];
    double *pm_all; int npm_all;
    double *drift; int ndrift;
    double *red[2]; int nred[2];
    double *red_all; int nred_all;
} scratch;

static void scratch_free(scratch *s)
{
    free(s->D); free(s->Ddir); free(s->Dr); free(s->dl); free(s->dw);
    free(s->pm[0]); free(s->pm[1]); free(s->pm_all);
    free(s->drift);
    free(s->red[0]); free(s->red[1]); free(s->red_all);
    memset(s, 0, sizeof *s);
}

static int scratch_alloc(scratch *s, int nproc, int nrounds)
{
    memset(s, 0, sizeof *s);
    size_t np = (size_t)nproc + 1, nr = (size_t)nproc * (size_t)nrounds + 1;
    s->D = malloc(np * sizeof *s->D);
    s->Ddir = malloc(np * sizeof *s->Ddir);
    s->Dr = malloc(np * sizeof *s->Dr);
    s->dl = malloc(((size_t)nrounds + 1) * sizeof *s->dl);
    s->dw = malloc(((size_t)nrounds + 1) * sizeof *s->dw);
    s->pm[0] = malloc(np * sizeof(double));
    s->pm[1] = malloc(np * sizeof(double));
    s->pm_all = malloc(np * sizeof(double));
    s->drift = malloc(np * sizeof(double));
    s->red[0] = malloc(nr * sizeof(double));
    s->red[1] = malloc(nr * sizeof(double));
    s->red_all = malloc(nr * sizeof(double));
    if (!s->D || !s->Ddir || !s->Dr || !s->dl || !s->dw || !s->pm[0] || !s->pm[1] || !s->pm_all || !s->drift
        || !s->red[0] || !s->red[1] || !s->red_all) {
        scratch_free(s);
        return KG_ENOMEM;
    }
    return KG_OK;
}

static int is_baseline(const kg_analysis_in *in, int c, int a)
{
    return a >= 0 && in->plan->arms[a].role == KG_ROLE_BASELINE
           && in->state[(size_t)c * (size_t)in->plan->narms + (size_t)a] == KG_ARM_OK;
}

/* Reference log time of round r for arm a's contrast; (double)NAN when missing. */
static double reference_y(const kg_analysis_in *in, const table *t, int c, int p, int r,
                          int contrast_arm)
{
    if (contrast_arm >= 0)
        return is_baseline(in, c, contrast_arm) ? t->y[cell_of(t, c, p, contrast_arm, r)] : (double)NAN;
    double best = (double)NAN;
    for (int b = 0; b < t->narms; b++) {
        if (!is_baseline(in, c, b)) continue;
        double yb = t->y[cell_of(t, c, p, b, r)];
        if (!isnan(yb) && (isnan(best) || yb < best)) best = yb;
    }
    return best;
}

/* Descriptive statistics that need only the arm's own samples, and the
 * arm's level: L(p), the mean over the process's rounds of the arm's log
 * round medians, through kg_effect_compute (kgate compare). */
static void describe_own(const kg_campaign *cp, const table *t, int c, int a, kg_arm_result *r, scratch *s)
{
    s->npm[0] = s->npm[1] = s->npm_all = s->ndrift = 0;
    s->nD = 0;
    for (int p = 0; p < t->nproc; p++) {
        int d = t->pdir[p];
        if (d < 0) continue;
        double ysum = 0.0;
        int ny = 0;
        for (int rr = 0; rr < t->nrounds; rr++) {
            double y = t->y[cell_of(t, c, p, a, rr)];
            if (isnan(y)) continue;
            ysum += y;
            ny++;
        }
        if (ny > 0) {
            s->D[s->nD] = ysum / ny;
            s->Ddir[s->nD++] = d;
        }
        double pm = t->pmed[((size_t)c * (size_t)t->nproc + (size_t)p) * (size_t)t->narms + (size_t)a];
        if (isnan(pm)) continue;
        s->pm[d][s->npm[d]++] = pm;
        s->pm_all[s->npm_all++] = pm;
        int first = -1, last = -1;
        for (int rr = 0; rr < t->nrounds; rr++) {
            if (isnan(t->y[cell_of(t, c, p, a, rr)])) continue;
            if (first < 0) first = rr;
            last = rr;
        }
        if (first >= 0 && last > first)
            s->drift[s->ndrift++] = exp(t->y[cell_of(t, c, p, a, last)]
                                        - t->y[cell_of(t, c, p, a, first)]) - 1.0;
    }
    for (int d = 0; d < 2; d++) r->med_ns[d] = kg_median(s->pm[d], (size_t)s->npm[d]);
    r->med_ns_all = kg_median(s->pm_all, (size_t)s->npm_all);
    r->drift = kg_median(s->drift, (size_t)s->ndrift);
    for (int i = 0; i < s->npm_all; i++)
        if (i == 0 || s->pm_all[i] < r->fastest_ns) r->fastest_ns = s->pm_all[i];
    kg_err local = { 0, "" };
    r->has_level = s->nD > 0
                   && kg_effect_compute(s->D, s->Ddir, s->nD, cp->alpha, cp->order_min, &r->level, &local) == KG_OK;
    if (!r->has_level) memset(&r->level, 0, sizeof r->level);
    s->nD = 0;
}

/* The physics limit: the op's minimal bytes and flops over the arm's
 * fastest process median, against the measured peaks.  A part whose
 * peak was not measured does not apply. */
static void physics(const kg_case_limit *lim, const kg_arm *arm, kg_arm_result *r)
{
    if (lim == NULL || !(r->fastest_ns > 0.0)) return;
    /* a reduced contract may run on the matrix unit (TF32, 16-bit inputs) */
    double flop_rate = kg_contract_is_default(&arm->contract) ? lim->flop_rate : lim->flop_rate_mma;
    double t = r->fastest_ns * 1e-9, frac = (double)NAN;
    const char *what = "";
    if (lim->bw > 0.0 && lim->bytes > 0.0) {
        frac = lim->bytes / t / lim->bw;
        what = "bandwidth";
    }
    if (flop_rate > 0.0 && lim->flops > 0.0) {
        double f = lim->flops / t / flop_rate;
        if (isnan(frac) || f > frac) {
            frac = f;
            what = "FMA rate";
        }
    }
    r->peak_frac = frac;
    if (frac > KG_PHYSICS_MARGIN) {
        r->impossible = 1;
        snprintf(r->physics, sizeof r->physics, "impossible: %.1fx the measured %s", frac, what);
    }
}

/* The robust check's threshold: |theta(mean) - theta(Huber)| in SEs of
 * the mean's effect (docs/statistics.md, item 7). */
#ifndef KG_ROBUST_SHIFT
#define KG_ROBUST_SHIFT 1.0
#endif

/* The paired contrasts, D(p), the effect and the round statistics. */
static void contrast_arm_stats(const kg_analysis_in *in, const table *t, int c, int a,
                               kg_arm_result *r, scratch *s)
{
    const kg_campaign *cp = &in->plan->campaign;
    s->nD = 0;
    s->ndrift = 0;
    s->nred[0] = s->nred[1] = s->nred_all = 0;
    for (int p = 0; p < t->nproc; p++) {
        int d = t->pdir[p];
        if (d < 0) continue;
        double sum = 0.0, dfirst = (double)NAN, dlast = (double)NAN;
        int nr = 0;
        for (int rr = 0; rr < t->nrounds; rr++) {
            double ya = t->y[cell_of(t, c, p, a, rr)];
            double yb = reference_y(in, t, c, p, rr, r->contrast_arm);
            if (isnan(ya) || isnan(yb)) continue;
            double delta = ya - yb;
            if (nr == 0) dfirst = delta;
            dlast = delta;
            sum += delta;
            s->dl[nr] = delta;
            nr++;
            double red = 1.0 - exp(delta);
            s->red[d][s->nred[d]++] = red;
            s->red_all[s->nred_all++] = red;
            r->nrounds[d]++;
            if (delta < 0.0) r->wins[d]++;
        }
        if (nr > 0) {
            s->D[s->nD] = sum / nr;
            s->Dr[s->nD] = kg_huber(s->dl, (size_t)nr, s->dw);
            s->Ddir[s->nD] = d;
            s->nD++;
        }
        if (nr > 1) s->drift[s->ndrift++] = dlast - dfirst;
    }
    /* the contrast's drift from the first to the last round */
    r->ndrift_proc = s->ndrift;
    if (s->ndrift >= 1) r->contrast_drift = kg_mean(s->drift, (size_t)s->ndrift);
    /* (drift_fails is judged in check_order_control, over every control) */
    if (s->ndrift >= 2) r->contrast_drift_se = kg_sd(s->drift, (size_t)s->ndrift) / sqrt((double)s->ndrift);
    for (int d = 0; d < 2; d++) r->round_red[d] = kg_median(s->red[d], (size_t)s->nred[d]);
    r->round_red_all = kg_median(s->red_all, (size_t)s->nred_all);
    for (int i = 0; i < s->nred_all; i++) {
        if (i == 0 || s->red_all[i] < r->round_red_min) r->round_red_min = s->red_all[i];
        if (i == 0 || s->red_all[i] > r->round_red_max) r->round_red_max = s->red_all[i];
    }
    if (s->nD == 0) {
        r->verdict = KG_VERDICT_NODATA;
        return;
    }
    kg_err local = {0, ""};
    if (kg_effect_compute(s->D, s->Ddir, s->nD, cp->alpha, cp->order_min, &r->eff, &local)
        == KG_OK) {
        r->has_effect = 1;
        r->verdict = kg_verdict_of(&r->eff, cp->margin, cp->equivalence);
        /* the robust check: a claim of speed must not rest on a few rounds */
        kg_effect er;
        if (kg_effect_compute(s->Dr, s->Ddir, s->nD, cp->alpha, cp->order_min, &er, &local) == KG_OK &&
            er.has_interval) {
            r->has_robust = 1;
            r->robust_lo = er.rho_lo;
            r->robust_hi = er.rho_hi;
            kg_verdict vr = kg_verdict_of(&er, cp->margin, cp->equivalence);
            /* demoted only where the robust estimate moved the effect by
             * more than KG_ROBUST_SHIFT standard errors: on clean rounds
             * the two differ by a fraction of one, and a claim near its
             * margin is left to the mean's interval */
            int shifted = fabs(r->eff.theta - er.theta) > KG_ROBUST_SHIFT * r->eff.se;
            r->robust_shifted = shifted;
            if ((r->verdict == KG_VERDICT_FASTER || r->verdict == KG_VERDICT_SLOWER) && vr != r->verdict && shifted) {
                r->verdict = KG_VERDICT_INCONCLUSIVE;
                r->robust_demoted = 1;
            }
        }
    } else {
        /* Only one direction has data: the point estimates would be
         * confounded with order, so no effect is reported. */
        r->has_effect = 0;
        r->verdict = KG_VERDICT_INCONCLUSIVE;
    }
}

/* The contrast of arm a against r->contrast_arm in cycles: D(p) over the
 * rounds in which both cells have a cycle value, and its effect
 * (kg_effect_compute, as in time).  has_cycles (the confirmation
 * applies) when every round counted in time is counted in cycles: every
 * sample of both arms has a clock.  With clocks on part of the samples
 * only, the effect is reported and the verdict is that of time. */
static void cycle_stats(const kg_analysis_in *in, const table *t, int c, int a, kg_arm_result *r, scratch *s)
{
    const kg_campaign *cp = &in->plan->campaign;
    int b = r->contrast_arm;
    r->has_cycles = 0;
    r->cycle_nrounds = 0;
    s->nD = 0;
    if (!is_baseline(in, c, b)) return;
    for (int p = 0; p < t->nproc; p++) {
        int d = t->pdir[p];
        if (d < 0) continue;
        double sum = 0.0;
        int nr = 0;
        for (int rr = 0; rr < t->nrounds; rr++) {
            double ya = t->yc[cell_of(t, c, p, a, rr)], yb = t->yc[cell_of(t, c, p, b, rr)];
            if (isnan(ya) || isnan(yb)) continue;
            sum += ya - yb;
            nr++;
        }
        if (nr > 0) {
            s->D[s->nD] = sum / nr;
            s->Ddir[s->nD] = d;
            s->nD++;
            r->cycle_nrounds += nr;
        }
    }
    r->has_cycles = r->cycle_nrounds > 0 && r->cycle_nrounds == r->nrounds[0] + r->nrounds[1];
    if (s->nD == 0) return;
    kg_err local = {0, ""};
    r->has_cycle_effect =
        kg_effect_compute(s->D, s->Ddir, s->nD, cp->alpha, cp->order_min, &r->eff_cycles, &local) == KG_OK;
}

/* The clocks of case c: its rounds with clocks, the clock-mismatched
 * ones, and every contrasted arm's effect in cycles. */
static void case_clocks(const kg_analysis_in *in, const table *t, int c, kg_analysis *out, scratch *s)
{
    int narms = in->plan->narms, rounds = -1, flagged = -1;
    if (t->case_clocks != NULL && t->case_clocks[c]) {
        out->any_clocks = 1;
        rounds = flagged = 0;
        for (int p = 0; p < t->nproc; p++) {
            if (t->pdir[p] < 0) continue;
            for (int rr = 0; rr < t->nrounds; rr++) {
                double lo = (double)INFINITY, hi = -(double)INFINITY;
                int k = 0;
                for (int a = 0; a < narms; a++) {
                    double m = t->cmed[cell_of(t, c, p, a, rr)];
                    if (isnan(m)) continue;
                    lo = fmin(lo, m);
                    hi = fmax(hi, m);
                    k++;
                }
                if (k == 0) continue;
                rounds++;
                if (k >= 2 && hi / lo - 1.0 > KG_CLOCK_MISMATCH) flagged++;
            }
        }
        for (int a = 0; a < narms; a++) {
            kg_arm_result *r = &out->res[(size_t)c * (size_t)narms + (size_t)a];
            if (r->state == KG_ARM_OK && r->role != KG_ROLE_BASELINE && r->contrast_arm >= 0)
                cycle_stats(in, t, c, a, r, s);
        }
    }
    for (int a = 0; a < narms; a++) {
        kg_arm_result *r = &out->res[(size_t)c * (size_t)narms + (size_t)a];
        r->clock_rounds = rounds;
        r->clock_rounds_flagged = flagged;
    }
}

/* Every round with clocks, over the cases, and the clock-mismatched ones
 * (max/min - 1 of its arms' median clocks above KG_CLOCK_MISMATCH) in the
 * order the telemetry first names them. */
static int mismatched_rounds(const kg_analysis_in *in, const table *t, kg_analysis *out, kg_err *err)
{
    if (t->cmed == NULL) return KG_OK;
    size_t nkeys = (size_t)t->ncases * (size_t)t->nproc * (size_t)t->nrounds;
    unsigned char *seen = calloc(nkeys + 1, 1);
    out->mismatched = malloc((nkeys + 1) * sizeof *out->mismatched);
    if (seen == NULL || out->mismatched == NULL) {
        free(seen);
        return kg_errorf(err, KG_ENOMEM, "analysis: out of memory (clocks)");
    }
    for (size_t i = 0; i < in->ntel; i++) {
        const kg_tel_rec *w = &in->tel[i];
        if (!in->accepted[w->proc] || w->round < 0 || w->round >= t->nrounds) continue;
        size_t key = ((size_t)w->kase * (size_t)t->nproc + (size_t)w->proc) * (size_t)t->nrounds + (size_t)w->round;
        if (seen[key]++) continue;
        double lo = (double)INFINITY, hi = -(double)INFINITY;
        int k = 0;
        for (int a = 0; a < t->narms; a++) {
            double m = t->cmed[cell_of(t, w->kase, w->proc, a, w->round)];
            if (isnan(m)) continue;
            lo = fmin(lo, m);
            hi = fmax(hi, m);
            k++;
        }
        if (k == 0) continue;
        out->nclock_rounds++;
        if (k >= 2 && hi / lo - 1.0 > KG_CLOCK_MISMATCH)
            out->mismatched[out->nmismatched++] = (kg_clock_round){ w->proc, w->kase, w->round, lo, hi };
    }
    free(seen);
    return KG_OK;
}

/* The cycle effect's own verdict (the rule of time), and the
 * confirmation: a FASTER verdict of an arm analysed in cycles stays
 * FASTER only if the cycle effect is FASTER too. */
static void apply_clocks(const kg_analysis_in *in, kg_analysis *out)
{
    const kg_campaign *cp = &in->plan->campaign;
    for (int i = 0; i < out->ncases * out->narms; i++) {
        kg_arm_result *r = &out->res[i];
        if (r->has_cycle_effect) r->verdict_cycles = kg_verdict_of(&r->eff_cycles, cp->margin, cp->equivalence);
        if (r->verdict == KG_VERDICT_FASTER && r->has_cycles) {
            int interval = r->has_cycle_effect && r->eff_cycles.has_interval;
            if (!interval || r->verdict_cycles != KG_VERDICT_FASTER) {
                r->verdict = KG_VERDICT_INCONCLUSIVE;
                r->clock_demoted = 1;
                snprintf(r->clock_reason, sizeof r->clock_reason, "%s",
                         interval ? "FASTER in time but not in cycles: the clocks differed"
                                  : "FASTER in time but not confirmed in cycles: samples without a clock");
            }
        }
        r->cycles_confirmed = r->verdict == KG_VERDICT_FASTER && r->has_cycle_effect
                              && r->verdict_cycles == KG_VERDICT_FASTER;
    }
}

static void analyse_case(const kg_analysis_in *in, const table *t, int c, kg_analysis *out,
                         scratch *s)
{
    const kg_plan *plan = in->plan;
    int narms = plan->narms;
    for (int a = 0; a < narms; a++) {
        kg_arm_result *r = &out->res[(size_t)c * (size_t)narms + (size_t)a];
        r->arm = a;
        r->kase = c;
        r->role = plan->arms[a].role;
        r->state = in->state[(size_t)c * (size_t)narms + (size_t)a];
        result_blank(r);
        if (r->role == KG_ROLE_CONTROL) r->contrast_arm = find_arm(plan, plan->arms[a].of);
        if (r->state != KG_ARM_OK) {
            r->verdict = verdict_of_state(r->state);
            continue;
        }
        describe_own(&plan->campaign, t, c, a, r, s);
        physics(in->limits != NULL ? &in->limits[c] : NULL, &plan->arms[a], r);
        if (r->role == KG_ROLE_BASELINE) {
            r->verdict = isnan(r->med_ns_all) ? KG_VERDICT_NODATA : KG_VERDICT_INCONCLUSIVE;
            continue;
        }
        if (r->contrast_arm >= 0) {
            contrast_arm_stats(in, t, c, a, r, s);
            continue;
        }
        /* A candidate or reference: against the declared reference
         * baseline, or against every baseline, keeping the worst contrast
         * (intersection-union: FASTER than every one).  The fastest
         * baseline of each round was an order statistic biased against
         * the candidate (-0.1% on quiet H200 kernels, -0.7% on small ones). */
        int ref = plan->campaign.reference[0] != '\0' ? find_arm(plan, plan->campaign.reference) : -1;
        kg_arm_result blank = *r, best;
        double best_key = (double)INFINITY;
        int have = 0;
        for (int b = 0; b < narms; b++) {
            if (!is_baseline(in, c, b) || (ref >= 0 && b != ref)) continue;
            kg_arm_result cand = blank;
            cand.contrast_arm = b;
            contrast_arm_stats(in, t, c, a, &cand, s);
            double key = cand.has_effect && cand.eff.has_interval && !isnan(cand.eff.rho_lo) ? cand.eff.rho_lo : -(double)INFINITY;
            if (!have || key < best_key) {
                best = cand;
                best_key = key;
                have = 1;
            }
        }
        if (have) {
            *r = best;
        } else {
            r->verdict = KG_VERDICT_NODATA;
        }
    }
    /* Process-median reductions need every baseline's medians first. */
    for (int a = 0; a < narms; a++) {
        kg_arm_result *r = &out->res[(size_t)c * (size_t)narms + (size_t)a];
        if (r->state != KG_ARM_OK) continue;
        for (int d = 0; d < 2; d++) {
            double ref = (double)NAN;
            if (r->contrast_arm >= 0) {
                if (is_baseline(in, c, r->contrast_arm))
                    ref = out->res[(size_t)c * (size_t)narms + (size_t)r->contrast_arm].med_ns[d];
            } else {
                for (int b = 0; b < narms; b++) {
                    if (!is_baseline(in, c, b)) continue;
                    double m = out->res[(size_t)c * (size_t)narms + (size_t)b].med_ns[d];
                    if (!isnan(m) && (isnan(ref) || m < ref)) ref = m;
                }
            }
            r->proc_red[d] = 1.0 - r->med_ns[d] / ref;
        }
        /* an impossible timing is never a verdict on speed */
        if (r->impossible) r->verdict = KG_VERDICT_INVALID;
    }
    case_clocks(in, t, c, out, s);
}

/* D(p) of arm a against baseline b in process p: the mean of the paired
 * round contrasts, (double)NAN when there is none. */
static double process_D(const table *t, int c, int p, int a, int b)
{
    double sum = 0.0;
    int nr = 0;
    for (int rr = 0; rr < t->nrounds; rr++) {
        double ya = t->y[cell_of(t, c, p, a, rr)], yb = t->y[cell_of(t, c, p, b, rr)];
        if (isnan(ya) || isnan(yb)) continue;
        sum += ya - yb;
        nr++;
    }
    return nr > 0 ? sum / nr : (double)NAN;
}

/* The family: every candidate with an interval on a gated case.  Each
 * gets the one-sided p of "reduction <= margin" and an adjusted p (Holm,
 * or max-T over the candidates' joint t statistics, which share the
 * baselines' and the processes' noise); a FASTER verdict then needs the
 * adjusted p below alpha.  The gate (every pair above g) is an
 * intersection-union test and needs no adjustment. */
static int apply_multiplicity(const kg_analysis_in *in, const table *t, kg_analysis *out, kg_err *err)
{
    const kg_plan *plan = in->plan;
    const kg_campaign *cp = &plan->campaign;
    out->family_size = 0;
    out->maxt_crit = (double)NAN;
    int cap = plan->ncases * plan->narms;
    int *who = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *who);
    double *tv = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *tv), *pv = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *pv);
    double *padj = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *padj);
    int rc = KG_OK, m = 0;
    if (who == NULL || tv == NULL || pv == NULL || padj == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "analysis: out of memory");
        goto done;
    }
    double lm = log(1.0 - cp->margin);
    for (int c = 0; c < plan->ncases; c++) {
        if (!plan->cases[c].primary && !plan->gate.all_cases) continue;
        for (int a = 0; a < plan->narms; a++) {
            kg_arm_result *r = &out->res[(size_t)c * (size_t)plan->narms + (size_t)a];
            if (r->role != KG_ROLE_CANDIDATE || r->state != KG_ARM_OK || r->impossible || !r->has_effect ||
                !r->eff.has_interval || !(r->eff.se > 0.0))
                continue;
            r->in_family = 1;
            tv[m] = (lm - r->eff.theta) / r->eff.se;
            pv[m] = kg_t_sf(tv[m], r->eff.df);
            r->p_value = pv[m];
            who[m++] = c * plan->narms + a;
        }
    }
    out->family_size = m;
    if (m == 0) goto done;
    kg_multiplicity mode = plan->gate.multiplicity;
    if (mode == KG_MULT_MAXT && m > 1) {
        /* the joint correlation of the t statistics, from the processes'
         * direction-centred D(p) of each pair (common processes) */
        double *R = calloc((size_t)m * (size_t)m, sizeof *R), *E = malloc((size_t)m * (size_t)t->nproc * sizeof *E);
        double dfmin = INFINITY;
        if (R == NULL || E == NULL) {
            free(R);
            free(E);
            rc = kg_errorf(err, KG_ENOMEM, "analysis: out of memory");
            goto done;
        }
        for (int i = 0; i < m; i++) {
            const kg_arm_result *r = &out->res[who[i]];
            for (int p = 0; p < t->nproc; p++) {
                double D = t->pdir[p] < 0 ? (double)NAN : process_D(t, r->kase, p, r->arm, r->contrast_arm);
                E[(size_t)i * (size_t)t->nproc + (size_t)p] = isnan(D) ? (double)NAN : D - r->eff.theta_dir[t->pdir[p]];
            }
            if (r->eff.df < dfmin) dfmin = r->eff.df;
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                double sij = 0, sii = 0, sjj = 0;
                for (int p = 0; p < t->nproc; p++) {
                    double ei = E[(size_t)i * (size_t)t->nproc + (size_t)p], ej = E[(size_t)j * (size_t)t->nproc + (size_t)p];
                    if (isnan(ei) || isnan(ej)) continue;
                    sij += ei * ej;
                    sii += ei * ei;
                    sjj += ej * ej;
                }
                R[i * m + j] = i == j ? 1.0 : (sii > 0 && sjj > 0 ? sij / sqrt(sii * sjj) : 0.0);
            }
        free(E);
        uint64_t seed = cp->seed ^ 0x6d617874ull;   /* "maxt": reproducible from the plan */
        rc = kg_maxt(R, m, dfmin, cp->alpha, seed, KG_MAXT_DRAWS, tv, &out->maxt_crit, padj, err);
        free(R);
        if (rc != KG_OK) goto done;
    } else if (mode == KG_MULT_NONE || m == 1) {
        for (int i = 0; i < m; i++) padj[i] = pv[i];
    } else {
        kg_holm(pv, m, padj);
    }
    for (int i = 0; i < m; i++) {
        kg_arm_result *r = &out->res[who[i]];
        r->p_adj = padj[i];
        double q = mode == KG_MULT_MAXT && m > 1 ? out->maxt_crit
                   : mode == KG_MULT_NONE || m == 1 ? r->eff.tq
                                                    : kg_t_quantile(1.0 - cp->alpha / (double)m, r->eff.df);
        r->rho_lo_adj = 1.0 - exp(r->eff.theta + q * r->eff.se);
        if (r->verdict == KG_VERDICT_FASTER && !(r->p_adj < cp->alpha)) r->verdict = KG_VERDICT_INCONCLUSIVE;
    }
done:
    free(who);
    free(tv);
    free(pv);
    free(padj);
    return rc;
}

/* A control's label: how its A/A interval stands against the control
 * margin m and the gate's reduction g. */
static void control_label(const kg_plan *plan, kg_arm_result *r)
{
    double cm = plan->campaign.control_margin, g = plan->gate.min_reduction;
    double reach = r->has_effect && r->eff.has_interval ? fmax(fabs(r->eff.rho_lo), fabs(r->eff.rho_hi)) : 0.0;
    /* its verdict says it: an arm that failed, and a folder without timing (kgate check) */
    if (r->state != KG_ARM_OK || r->verdict == KG_VERDICT_INVALID || r->verdict == KG_VERDICT_NODATA) return;
    if (!r->has_effect || !r->eff.has_interval)
        snprintf(r->label, sizeof r->label, "control: no interval");
    else if (r->drift_fails)
        snprintf(r->label, sizeof r->label, "control: DRIFTED (%+.2f%% first to last round)", PCT(r->contrast_drift));
    else if (r->control == KG_CONTROL_INVALID)
        snprintf(r->label, sizeof r->label, "control: INVALID, outside \xc2\xb1%.2f%%", PCT(cm));
    else if (r->control == KG_CONTROL_VALID)
        snprintf(r->label, sizeof r->label, "control: EQUIVALENT within \xc2\xb1%.2f%%", PCT(cm));
    else if (g > 0 && reach > g)
        snprintf(r->label, sizeof r->label, "control: reaches %.2f%%, past the gate's %.2f%%", PCT(reach), PCT(g));
    else
        snprintf(r->label, sizeof r->label, "control: within \xc2\xb1%.2f%%, wider than \xc2\xb1%.2f%%", PCT(reach),
                 PCT(cm));
}

/* Order and control checks over every case; the first offender is named. */
static void check_order_control(const kg_analysis_in *in, kg_analysis *out,
                                char *order_why, char *control_why, size_t cap)
{
    const kg_plan *plan = in->plan;
    double cm = plan->campaign.control_margin;
    out->order_ok = 1;
    out->control_valid = 1;
    /* The drift test of every control with an interval: |mean drift| above
     * max(t SE, KG_DRIFT_MIN), t the two-sided quantile of level
     * KG_DRIFT_ALPHA shared by the m controls tested (Bonferroni) at the
     * control's n - 1 degrees of freedom.  A fixed 3 SE with 3 processes
     * per direction (5 df) alarms 3% of the time per control, 11% for the
     * four controlled cases of the quickstart. */
    int m = 0;
    for (size_t i = 0; i < (size_t)out->ncases * (size_t)out->narms; i++) {
        const kg_arm_result *r = &out->res[i];
        m += r->role == KG_ROLE_CONTROL && r->has_effect && r->eff.has_interval && r->ndrift_proc >= 2;
    }
    for (size_t i = 0; i < (size_t)out->ncases * (size_t)out->narms && m > 0; i++) {
        kg_arm_result *r = &out->res[i];
        if (!(r->role == KG_ROLE_CONTROL && r->has_effect && r->eff.has_interval && r->ndrift_proc >= 2)) continue;
        r->drift_crit = kg_t_quantile(1.0 - KG_DRIFT_ALPHA / (2.0 * m), (double)(r->ndrift_proc - 1));
        r->drift_fails = fabs(r->contrast_drift) > fmax(r->drift_crit * r->contrast_drift_se, KG_DRIFT_MIN);
    }
    for (int c = 0; c < out->ncases; c++) {
        for (int a = 0; a < out->narms; a++) {
            kg_arm_result *r = &out->res[(size_t)c * (size_t)out->narms + (size_t)a];
            if (!r->has_effect || !r->eff.has_interval) continue;
            if (r->role == KG_ROLE_CONTROL)
                r->control = r->eff.rho_lo > cm || r->eff.rho_hi < -cm  ? KG_CONTROL_INVALID
                             : r->eff.rho_lo < -cm || r->eff.rho_hi > cm ? KG_CONTROL_WIDE
                                                                         : KG_CONTROL_VALID;
            int gated = plan->cases[c].primary || plan->gate.all_cases;
            /* An order effect matters to the gate when it could change the
             * decision: when the worse direction's own lower bound (pooled
             * s, its own n, t at the analysis' df) falls short of the
             * gate's reduction.  Its point estimate passed half the time
             * with the truth at g; a 0.5% position effect on a 60% gain is
             * still reported, not held against the candidate. */
            double worse_lo = fmin(r->eff.rho_lo_dir[0], r->eff.rho_lo_dir[1]);
            int decisive = !(worse_lo >= plan->gate.min_reduction);
            if (r->role == KG_ROLE_CANDIDATE && gated && decisive && r->eff.order_flag && out->order_ok) {
                out->order_ok = 0;
                snprintf(order_why, cap,
                         "order check failed: case %s, arm %s: forward and reverse log ratios "
                         "differ by %.2f%% (t %.2f SE = %.2f%%, order_min %.2f%%), and the worse "
                         "direction's lower bound %.2f%% is below the gate's %.2f%%",
                         case_name(plan, c), arm_name(plan, a), PCT(r->eff.order_diff), r->eff.order_tq,
                         PCT(r->eff.order_tq * r->eff.order_se), PCT(plan->campaign.order_min), PCT(worse_lo),
                         PCT(plan->gate.min_reduction));
            }
            if (r->control == KG_CONTROL_INVALID && out->control_valid) {
                out->control_valid = 0;
                snprintf(control_why, cap,
                         "control invalid: case %s, arm %s: reduction interval "
                         "[%.3f%%, %.3f%%] lies outside +-%.3f%%",
                         case_name(plan, c), arm_name(plan, a), PCT(r->eff.rho_lo),
                         PCT(r->eff.rho_hi), PCT(cm));
            }
            if (r->role == KG_ROLE_CONTROL) {
                double reach = fmax(fabs(r->eff.rho_lo), fabs(r->eff.rho_hi));
                if (out->control_reach != NULL && reach > out->control_reach[c]) out->control_reach[c] = reach;
                if (r->drift_fails && out->control_valid) {
                    out->control_valid = 0;
                    snprintf(control_why, cap,
                             "control drifted: case %s, arm %s: its contrast moved %+.3f%% from the first to "
                             "the last round (SE %.3f%%; the limit is max(%.2f SE, %.2f%%))",
                             case_name(plan, c), arm_name(plan, a), PCT(r->contrast_drift),
                             PCT(r->contrast_drift_se), r->drift_crit, PCT(KG_DRIFT_MIN));
                }
            }
        }
    }
}

static const char *dir_name(int d)
{
    return d == KG_DIR_FWD ? "forward" : "reverse";
}

/* Returns 1 and fills why when the candidate's precision contract is
 * weaker than a baseline's and the gate refuses that (same_precision). */
static int contract_fails(const kg_plan *plan, const kg_arm_result *r, char *why, size_t cap)
{
    if (!plan->gate.same_precision) return 0;
    const char *cn = case_name(plan, r->kase), *an = arm_name(plan, r->arm);
    const kg_arm *arm = &plan->arms[r->arm];
    kg_dtype dt = plan->cases[r->kase].dtype;
    for (int b = 0; b < plan->narms; b++) {
        if (plan->arms[b].role != KG_ROLE_BASELINE || !kg_plan_arm_applies(plan, b, r->kase)) continue;
        char w[160];
        if (kg_contract_weaker(&arm->contract, &plan->arms[b].contract, dt, w, sizeof w)) {
            snprintf(why, cap, "case %s, arm %s: %s of baseline %s (same_precision = yes; "
                     "same_precision = no in [gate] accepts it)", cn, an, w, plan->arms[b].name);
            return 1;
        }
    }
    return 0;
}

/* Returns 1 and fills why when the gate requires the numerical negative
 * (require_negative) and the candidate is an arm kgate cannot build as
 * one: a precompiled image, or a builtin. */
static int negative_fails(const kg_plan *plan, const kg_arm_result *r, char *why, size_t cap)
{
    if (!plan->gate.require_negative) return 0;
    const kg_arm *arm = &plan->arms[r->arm];
    const char *what = kg_arm_is_image(arm) ? "precompiled image" : arm->builtin[0] != '\0' ? "builtin arm" : NULL;
    if (what == NULL) return 0;
    snprintf(why, cap, "case %s, arm %s: negative: not applicable (%s), and the gate requires it "
             "(require_negative = yes; a source arm can be rebuilt as the negative)",
             case_name(plan, r->kase), arm_name(plan, r->arm), what);
    return 1;
}

/* How far a control's interval reaches from 0. */
static double control_reach_of(const kg_arm_result *ctl)
{
    return fmax(fabs(ctl->eff.rho_lo), fabs(ctl->eff.rho_hi));
}

/* The control of case c whose interval reaches furthest, NULL when no
 * control there has one. */
static const kg_arm_result *widest_control(const kg_analysis *out, int c)
{
    const kg_arm_result *w = NULL;
    for (int a = 0; a < out->narms; a++) {
        const kg_arm_result *x = &out->res[(size_t)c * (size_t)out->narms + (size_t)a];
        if (x->role == KG_ROLE_CONTROL && x->has_effect && x->eff.has_interval &&
            (w == NULL || control_reach_of(x) > control_reach_of(w)))
            w = x;
    }
    return w;
}

/* The gate's reason when control ctl's interval reaches past g.  An
 * interval around 0 is the control's noise, not a difference between two
 * loads: the reason then gives the processes per direction at which an
 * A/A control of the same spread (its process means' pooled SD s, at the
 * campaign's rounds and samples) stays within +-g with probability
 * KG_DESIGN_POWER (kg_design_control_P, what kgate size prints for the
 * control). */
static void control_reach_why(const kg_plan *plan, const kg_arm_result *r, const kg_arm_result *ctl, char *why,
                              size_t cap)
{
    const char *cn = case_name(plan, r->kase), *an = arm_name(plan, r->arm), *ctn = arm_name(plan, ctl->arm);
    double g = plan->gate.min_reduction, lo = ctl->eff.rho_lo, hi = ctl->eff.rho_hi;
    if (!(lo <= 0.0 && hi >= 0.0)) {
        snprintf(why, cap, "case %s, arm %s: the control %s's interval [%+.2f%%, %+.2f%%] reaches past g = %.2f%% "
                 "and excludes 0: two loads of one kernel differ here, so a claim of %.2f%% is unsupported (raise "
                 "min_reduction, or find what tells the loads apart)", cn, an, ctn, PCT(lo), PCT(hi), PCT(g),
                 PCT(g));
        return;
    }
    double w = 1.0 / (4.0 * ctl->eff.n[0]) + 1.0 / (4.0 * ctl->eff.n[1]);
    double var_D = ctl->eff.se * ctl->eff.se / w;
    int P = kg_design_control_P(var_D, plan->campaign.alpha, g, KG_DESIGN_POWER, KG_DESIGN_PMAX, NULL);
    char need[96];
    if (P > 0) snprintf(need, sizeof need, "processes = %d per direction", P);
    else snprintf(need, sizeof need, "more than %d processes per direction", KG_DESIGN_PMAX);
    snprintf(why, cap, "case %s, arm %s: the control %s's interval [%+.2f%%, %+.2f%%] reaches past g = %.2f%%: noise, "
             "not a difference; `kgate size PLAN EVIDENCE` says %s would keep it within +-%.2f%% (power %.2f; the "
             "campaign has %d), or raise min_reduction", cn, an, ctn, PCT(lo), PCT(hi), PCT(g), need, PCT(g),
             KG_DESIGN_POWER, plan->campaign.processes);
}

/* Returns 1 and fills why when the pair fails the gate's per-pair rule;
 * ctl is the case's widest control (NULL: none). */
static int gate_pair_fails(const kg_plan *plan, const kg_arm_result *r, const kg_arm_result *ctl, char *why,
                           size_t cap)
{
    const kg_gate *g = &plan->gate;
    const char *cn = case_name(plan, r->kase), *an = arm_name(plan, r->arm);
    if (negative_fails(plan, r, why, cap)) return 1;
    if (r->state != KG_ARM_OK) {
        snprintf(why, cap, "case %s, arm %s: %s", cn, an, kg_verdict_name(r->verdict));
        return 1;
    }
    if (r->impossible) {
        snprintf(why, cap, "case %s, arm %s: INVALID (%s)", cn, an, r->physics);
        return 1;
    }
    if (contract_fails(plan, r, why, cap)) return 1;
    if (plan->campaign.smoke) return 0; /* its times decide nothing: apply_gate says so */
    if (g->rule == KG_GATE_INTERVAL) {
        if (!r->has_effect || !r->eff.has_interval) {
            snprintf(why, cap, "case %s, arm %s: no confidence interval "
                     "(%d forward and %d reverse processes; at least 2 per direction needed)",
                     cn, an, r->eff.n[0], r->eff.n[1]);
            return 1;
        }
        if (!(r->eff.rho_lo >= g->min_reduction)) {
            snprintf(why, cap, "case %s, arm %s: lower bound of reduction %.2f%% < %.2f%%",
                     cn, an, PCT(r->eff.rho_lo), PCT(g->min_reduction));
            return 1;
        }
        if (r->has_robust && r->robust_shifted && !(r->robust_lo >= g->min_reduction)) {
            snprintf(why, cap, "case %s, arm %s: the robust check: with each process's Huber estimate of its rounds "
                     "the lower bound of reduction is %.2f%% < %.2f%% (a few rounds carry the mean's %.2f%%)",
                     cn, an, PCT(r->robust_lo), PCT(g->min_reduction), PCT(r->eff.rho_lo));
            return 1;
        }
        if (r->has_cycles && !(r->has_cycle_effect && r->eff_cycles.has_interval)) {
            snprintf(why, cap, "case %s, arm %s: no confidence interval in cycles (samples without a clock)",
                     cn, an);
            return 1;
        }
        if (r->has_cycles && !(r->eff_cycles.rho_lo >= g->min_reduction)) {
            snprintf(why, cap, "case %s, arm %s: lower bound of reduction in cycles %.2f%% < %.2f%% "
                     "(the SM clocks differed between the arms: %d of %d rounds clock-mismatched)",
                     cn, an, PCT(r->eff_cycles.rho_lo), PCT(g->min_reduction), r->clock_rounds_flagged,
                     r->clock_rounds);
            return 1;
        }
        if (g->require_control && ctl != NULL && control_reach_of(ctl) > g->min_reduction) {
            control_reach_why(plan, r, ctl, why, cap);
            return 1;
        }
        return 0;
    }
    for (int d = 0; d < 2; d++) {
        if (r->nrounds[d] == 0) {
            snprintf(why, cap, "case %s, arm %s: no paired rounds in the %s direction",
                     cn, an, dir_name(d));
            return 1;
        }
        if (!(r->proc_red[d] >= g->min_reduction)) {
            snprintf(why, cap, "case %s, arm %s: process-median reduction (%s) %.2f%% < %.2f%%",
                     cn, an, dir_name(d), PCT(r->proc_red[d]), PCT(g->min_reduction));
            return 1;
        }
        if (!(r->round_red[d] >= g->min_reduction)) {
            snprintf(why, cap, "case %s, arm %s: paired-round reduction (%s) %.2f%% < %.2f%%",
                     cn, an, dir_name(d), PCT(r->round_red[d]), PCT(g->min_reduction));
            return 1;
        }
        if (r->wins[d] != r->nrounds[d]) {
            snprintf(why, cap, "case %s, arm %s: won %d/%d rounds (%s); every round must be won",
                     cn, an, r->wins[d], r->nrounds[d], dir_name(d));
            return 1;
        }
    }
    return 0;
}

static void apply_gate(const kg_analysis_in *in, kg_analysis *out,
                       const char *order_why, const char *control_why)
{
    const kg_plan *plan = in->plan;
    const kg_gate *g = &plan->gate;
    char why[KG_TEXT_MAX] = "";
    int ncand = 0, npairs = 0, failed = 0;
    for (int a = 0; a < plan->narms; a++) ncand += plan->arms[a].role == KG_ROLE_CANDIDATE;

    if (out->nproc_accepted == 0) {
        snprintf(why, sizeof why, "no accepted process");
        failed = 1;
    } else if (ncand == 0) {
        snprintf(why, sizeof why, "no candidate arm");
        failed = 1;
    }
    int early = failed;
    /* every gated pair is tested (each keeps its own reason); the first
     * failure, in plan order, is the campaign's */
    for (int c = 0; c < plan->ncases; c++) {
        if (!g->all_cases && !plan->cases[c].primary) continue;
        char base_why[KG_TEXT_MAX] = "";
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &out->res[(size_t)c * (size_t)plan->narms + (size_t)a];
            if (r->role == KG_ROLE_BASELINE && r->impossible && base_why[0] == '\0') {
                snprintf(base_why, sizeof base_why, "case %s, baseline %s: INVALID (%s)", plan->cases[c].name,
                         plan->arms[a].name, r->physics);
                if (!failed) snprintf(why, sizeof why, "%s", base_why);
                failed = 1;
            }
        }
        for (int a = 0; a < plan->narms; a++) {
            kg_arm_result *r = &out->res[(size_t)c * (size_t)plan->narms + (size_t)a];
            if (r->role != KG_ROLE_CANDIDATE || r->state == KG_ARM_ABSENT) continue;
            npairs++;
            r->gated = 1;
            r->gate_why[0] = '\0';
            if (base_why[0] != '\0') {
                snprintf(r->gate_why, sizeof r->gate_why, "%s", base_why);
                continue;
            }
            if (gate_pair_fails(plan, r, widest_control(out, c), r->gate_why, sizeof r->gate_why)) {
                if (!failed) snprintf(why, sizeof why, "%s", r->gate_why);
                failed = 1;
            } else {
                r->gate_why[0] = '\0';
            }
        }
    }
    if (early) /* no process or no candidate: every pair fails for that reason */
        for (size_t i = 0; i < (size_t)plan->ncases * (size_t)plan->narms; i++)
            if (out->res[i].gated) snprintf(out->res[i].gate_why, sizeof out->res[i].gate_why, "%s", why);
    if (!failed && plan->campaign.smoke) {
        /* every arm on every case, gated or not: a smoke run is its checks */
        const kg_arm_result *bad = NULL;
        for (size_t i = 0; i < (size_t)plan->ncases * (size_t)plan->narms && bad == NULL; i++)
            if (out->res[i].state == KG_ARM_INCORRECT) bad = &out->res[i];
        if (bad != NULL)
            snprintf(why, sizeof why, "a smoke run: case %s, arm %s: INCORRECT", case_name(plan, bad->kase),
                     arm_name(plan, bad->arm));
        else
            snprintf(why, sizeof why, "a smoke run (kgate run --smoke: %d process per direction, %d rounds of %d "
                     "samples): the plan runs and its arms pass their checks; its times decide nothing (run it "
                     "without --smoke for a verdict)", plan->campaign.processes, plan->campaign.rounds,
                     plan->campaign.samples);
        failed = 1;
        for (size_t i = 0; i < (size_t)plan->ncases * (size_t)plan->narms; i++)
            if (out->res[i].gated) snprintf(out->res[i].gate_why, sizeof out->res[i].gate_why, "%s", why);
    }
    if (!failed && npairs == 0) {
        snprintf(why, sizeof why, "no candidate arm runs on a %s case",
                 g->all_cases ? "gated" : "primary");
        failed = 1;
    }
    if (!failed && g->require_order && !out->order_ok) {
        snprintf(why, sizeof why, "%s", order_why);
        failed = 1;
    }
    if (!failed && g->require_control && !out->control_valid) {
        snprintf(why, sizeof why, "%s", control_why);
        failed = 1;
    }
    out->gate_pass = !failed;
    snprintf(out->gate_reason, sizeof out->gate_reason, "%s", failed ? why : "passed");
}

/* The schedule slot process p filled. */
static int slot_of(const kg_analysis_in *in, int p)
{
    return in->procs != NULL ? in->procs[p].slot : p;
}

/* Why the host made the campaign INVALID, or NULL: some slot's every
 * process was excluded by the host watch (contaminated), and the watch
 * gave a slot up (its first never-quiet row says why). */
static const char *host_never_quiet(const kg_analysis_in *in)
{
    if (in->procs == NULL) return NULL;
    int given_up = 0;
    for (int p = 0; p < in->nproc && !given_up; p++) {
        int clean = 0;
        for (int j = 0; j < in->nproc && !clean; j++)
            clean = in->procs[j].slot == in->procs[p].slot && strcmp(in->procs[j].status, "contaminated") != 0;
        given_up = !clean;
    }
    for (size_t i = 0; i < in->nwatch && given_up; i++)
        if (strcmp(in->watch[i].event, "never-quiet") == 0) return in->watch[i].detail;
    return NULL;
}

/* A sequential design (campaign.looks = K > 1): look k analyses the
 * processes of the first 2 k P / K schedule slots (P per direction).  At
 * each look every gated candidate's z statistic of "reduction <= g"
 * (from its one-sided t p-value, so that the boundaries live on the z
 * scale) is compared with the O'Brien-Fleming boundary c_k: the gate
 * passes at the first look where every pair is above it and the order and
 * control checks hold (efficacy); a look before the last where some pair
 * has z < 0, its estimate below g, or fails outright (INCORRECT, a
 * contract), stops the campaign for futility (non-binding: the boundaries
 * do not count on it); a pair without an interval at a look (fewer than
 * 2 processes in a direction, which the plan check refuses but a partial
 * campaign can give) is undecided there, never futile; the last look
 * decides.  The supervisor stops running processes at the look that
 * decides; the same function on the evidence then finds the same look. */
static int sequential(const kg_analysis_in *in, kg_analysis *out, kg_err *err)
{
    const kg_plan *plan = in->plan;
    int K = plan->campaign.looks, P = plan->campaign.processes;
    out->seq_looks = K;
    out->seq_look = 0;
    out->seq_stop[0] = '\0';
    out->seq_procs_planned = P;
    out->seq_procs_used = 0;
    int rc = kg_seq_bounds(K, plan->campaign.alpha, out->seq_bound, err);
    if (rc != KG_OK) return rc;
    int *acc = malloc((size_t)(in->nproc > 0 ? in->nproc : 1) * sizeof *acc);
    if (acc == NULL) return kg_errorf(err, KG_ENOMEM, "analysis: out of memory");
    kg_plan one = *plan;
    one.campaign.looks = 1;
    double lg = log(1.0 - plan->gate.min_reduction);
    char why[KG_TEXT_MAX] = "", nwhy[KG_TEXT_MAX] = "";
    int pass = 0;
    for (int k = 1; k <= K && out->seq_look == 0; k++) {
        int lim = 2 * (P / K) * k, have = 0;
        /* the look exists when every slot below lim has an accepted process */
        for (int sl = 0; sl < lim; sl++) {
            int found = 0;
            for (int p = 0; p < in->nproc && !found; p++)
                found = in->accepted[p] && slot_of(in, p) == sl;
            have += found;
        }
        if (have < lim) {
            snprintf(why, sizeof why, "the campaign ended before look %d of %d (%d of its %d processes)", k, K, have, lim);
            break;
        }
        for (int p = 0; p < in->nproc; p++) acc[p] = in->accepted[p] && slot_of(in, p) < lim;
        kg_analysis_in ik = *in;
        ik.plan = &one;
        ik.accepted = acc;
        kg_analysis ak;
        if ((rc = kg_analyse(&ik, &ak, err)) != KG_OK) break;
        int all_above = 1, npairs = 0, fnone = 0;
        const char *fa = "", *fc = "";
        double fz = 0;
        char fut[KG_TEXT_MAX] = "";
        for (int c = 0; c < plan->ncases; c++) {
            if (!plan->cases[c].primary && !plan->gate.all_cases) continue;
            for (int a = 0; a < plan->narms; a++) {
                const kg_arm_result *r = &ak.res[(size_t)c * (size_t)plan->narms + (size_t)a];
                if (r->role != KG_ROLE_CANDIDATE || r->state == KG_ARM_ABSENT) continue;
                npairs++;
                if (nwhy[0] == '\0' && negative_fails(plan, r, nwhy, sizeof nwhy)) all_above = 0;
                double z = -(double)INFINITY;
                char cw[KG_TEXT_MAX];
                /* a pair that fails outright (not OK, impossible, a contract
                 * or negative refusal) has z = -inf and stops the campaign;
                 * one that is fine but has no interval at this look (too few
                 * processes: a resumed or partial campaign) is undecided */
                int ok = r->state == KG_ARM_OK && !r->impossible && !contract_fails(plan, r, cw, sizeof cw) &&
                         !negative_fails(plan, r, cw, sizeof cw);
                int none = ok && !(r->has_effect && r->eff.has_interval && r->eff.se > 0);
                if (ok && !none) z = kg_z_of_p(kg_t_sf((lg - r->eff.theta) / r->eff.se, r->eff.df));
                if (!(z >= out->seq_bound[k - 1])) {
                    if (all_above) { fa = plan->arms[a].name; fc = plan->cases[c].name; fz = z; fnone = none; }
                    all_above = 0;
                }
                if (z < 0.0 && !none && fut[0] == '\0') {
                    if (ok)
                        snprintf(fut, sizeof fut, "case %s, arm %s: its estimate %.2f%% is below the gate's %.2f%% "
                                 "(z %.2f)", plan->cases[c].name, plan->arms[a].name, PCT(r->eff.rho),
                                 PCT(plan->gate.min_reduction), z);
                    else
                        snprintf(fut, sizeof fut, "%s", r->gate_why[0] != '\0' ? r->gate_why : "a gated pair fails");
                }
            }
        }
        int checks_ok = (!plan->gate.require_order || ak.order_ok) && (!plan->gate.require_control || ak.control_valid) &&
                        !ak.invalid && npairs > 0;
        if (all_above && checks_ok) {
            out->seq_look = k;
            snprintf(out->seq_stop, sizeof out->seq_stop, "efficacy");
            pass = 1;
        } else if (k == K) {
            out->seq_look = k;
            snprintf(out->seq_stop, sizeof out->seq_stop, "final");
            if (all_above) snprintf(why, sizeof why, "%s", ak.gate_reason);
            else if (nwhy[0] != '\0') snprintf(why, sizeof why, "%s", nwhy);
            else if (fnone) snprintf(why, sizeof why, "case %s, arm %s: no interval at the last look", fc, fa);
            else snprintf(why, sizeof why, "case %s, arm %s: z %.2f below the last boundary %.2f", fc, fa, fz,
                          out->seq_bound[k - 1]);
        } else if (fut[0] != '\0') {
            out->seq_look = k;
            snprintf(out->seq_stop, sizeof out->seq_stop, "futility");
            snprintf(why, sizeof why, "stopped for futility at look %d of %d: %.400s", k, K, fut);
        }
        if (out->seq_look == k) out->seq_procs_used = lim / 2;
        kg_analysis_free(&ak);
    }
    free(acc);
    if (rc != KG_OK) return rc;
    out->gate_pass = pass;
    if (pass)
        snprintf(out->gate_reason, sizeof out->gate_reason, "passed at look %d of %d (efficacy, z above %.3f)",
                 out->seq_look, K, out->seq_bound[out->seq_look - 1]);
    else if (why[0] != '\0')
        snprintf(out->gate_reason, sizeof out->gate_reason, "%s", why);
    return KG_OK;
}

/* The contaminated samples of accepted processes, per (case, arm) and
 * in all, and whether any accepted row records a pinned process
 * (table_build has checked every accepted row's indices). */
static void count_contaminated(const kg_analysis_in *in, kg_analysis *out)
{
    for (size_t i = 0; i < in->nrows; i++) {
        const kg_row *w = &in->rows[i];
        if (!in->accepted[w->proc]) continue;
        if (w->pin_cpu >= 0) out->pinned = 1;
        if (!kg_row_contaminated(w)) continue;
        out->ncontaminated++;
        out->res[w->kase * out->narms + w->arm].ncontaminated++;
    }
}

int kg_analyse(const kg_analysis_in *in, kg_analysis *out, kg_err *err)
{
    int rc = KG_OK;
    table t;
    scratch s;
    memset(&t, 0, sizeof t);
    memset(&s, 0, sizeof s);
    if (out == NULL) return kg_errorf(err, KG_EINTERNAL, "analysis: no output record");
    memset(out, 0, sizeof *out);
    if (in == NULL || in->plan == NULL || in->state == NULL || in->nproc < 0
        || (in->nproc > 0 && in->accepted == NULL) || (in->nrows > 0 && in->rows == NULL)
        || (in->ntel > 0 && in->tel == NULL) || (in->nwatch > 0 && in->watch == NULL)
        || in->plan->ncases < 0 || in->plan->narms < 0)
        return kg_errorf(err, KG_EINTERNAL, "analysis: incomplete input");
    const kg_plan *plan = in->plan;

    rc = table_build(in, &t, err);
    if (rc != KG_OK) goto done;
    if (scratch_alloc(&s, t.nproc, t.nrounds) != KG_OK) {
        rc = kg_errorf(err, KG_ENOMEM, "analysis: out of memory");
        goto done;
    }
    out->plan = plan;
    out->ncases = plan->ncases;
    out->narms = plan->narms;
    out->res = calloc((size_t)plan->ncases * (size_t)plan->narms + 1, sizeof *out->res);
    out->control_reach = calloc((size_t)plan->ncases + 1, sizeof *out->control_reach);
    if (out->res == NULL || out->control_reach == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "analysis: out of memory");
        goto done;
    }
    for (int p = 0; p < in->nproc; p++) {
        if (in->accepted[p]) out->nproc_accepted++;
        else out->nproc_rejected++;
    }
    for (int c = 0; c < plan->ncases; c++) analyse_case(in, &t, c, out, &s);
    count_contaminated(in, out);

    if ((rc = apply_multiplicity(in, &t, out, err)) != KG_OK) goto done;
    if ((rc = mismatched_rounds(in, &t, out, err)) != KG_OK) goto done;
    apply_clocks(in, out);
    char order_why[KG_TEXT_MAX] = "", control_why[KG_TEXT_MAX] = "";
    check_order_control(in, out, order_why, control_why, sizeof order_why);
    for (size_t i = 0; i < (size_t)out->ncases * (size_t)out->narms; i++) {
        kg_arm_result *r = &out->res[i];
        if (r->role == KG_ROLE_CONTROL) control_label(plan, r);
        /* a smoke run's candidate that passed its checks has no verdict */
        if (plan->campaign.smoke && r->role == KG_ROLE_CANDIDATE && r->state == KG_ARM_OK &&
            r->verdict != KG_VERDICT_INVALID && r->verdict != KG_VERDICT_NODATA) {
            r->smoke = 1;
            snprintf(r->label, sizeof r->label, "SMOKE (a smoke run: no verdict)");
        }
    }
    if (!out->control_valid) snprintf(out->invalid_why, sizeof out->invalid_why, "%s", control_why);
    out->invalid = !out->control_valid || out->nproc_accepted == 0;
    apply_gate(in, out, order_why, control_why);
    if (plan->campaign.looks > 1 && (rc = sequential(in, out, err)) != KG_OK) goto done;
    const char *never_quiet = host_never_quiet(in);
    if (never_quiet != NULL) {
        out->invalid = 1;
        out->gate_pass = 0;
        snprintf(out->invalid_why, sizeof out->invalid_why, "the device never became quiet: %.400s", never_quiet);
        snprintf(out->gate_reason, sizeof out->gate_reason, "%s", out->invalid_why);
    }

done:
    scratch_free(&s);
    table_free(&t);
    if (rc != KG_OK) kg_analysis_free(out);
    return rc;
}

void kg_analysis_own_plan(kg_analysis *a, kg_plan *plan)
{
    a->own_plan = plan;
    a->plan = plan;
}

void kg_analysis_free(kg_analysis *a)
{
    if (a == NULL) return;
    free(a->res);
    free(a->control_reach);
    free(a->mismatched);
    kg_plan_free(a->own_plan);
    memset(a, 0, sizeof *a);
}

const char *kg_result_word(const kg_arm_result *r)
{
    if (r->smoke) return "SMOKE";
    if (r->state == KG_ARM_OK && r->verdict != KG_VERDICT_INVALID && r->verdict != KG_VERDICT_NODATA) {
        if (r->role == KG_ROLE_BASELINE) return "BASELINE";
        if (r->role == KG_ROLE_CONTROL) return "CONTROL";
    }
    return kg_verdict_name(r->verdict);
}

const char *kg_result_label(const kg_arm_result *r)
{
    if (r->label[0] != '\0') return r->label;
    if (r->role == KG_ROLE_BASELINE)
        return r->state == KG_ARM_OK && r->verdict != KG_VERDICT_INVALID ? "baseline" : kg_verdict_name(r->verdict);
    /* a claim the robust check took back says so where verdicts are read */
    if (r->robust_demoted) return "INCONCLUSIVE (robust check)";
    return kg_verdict_label(r->verdict, r->has_effect && r->eff.has_interval && r->eff.order_flag);
}
