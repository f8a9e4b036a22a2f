/* screening.c: the screen's drops and costs from an evidence folder
 * (screening.h).  Pure: the folder's records in, figures out; the
 * supervisor, report.md and `kgate verify` all call it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/screening.h"
#include "kgate/stats.h"
#include "base/util.h"

static int is_candidate(const kg_plan *plan, int a)
{
    return plan->arms[a].role == KG_ROLE_CANDIDATE;
}

static int gated(const kg_plan *plan, int c)
{
    return plan->cases[c].primary || plan->gate.all_cases;
}

/* The first failed check of arm a on case c in processes 0..upto that
 * makes it INCORRECT (as kg_evidence_state_upto folds them). */
static void first_failure(const kg_evidence *ev, int a, int upto, kg_screen_arm *x)
{
    for (size_t i = 0; i < ev->nchecks_all; i++) {
        const kg_check_rec *k = &ev->checks[i];
        if (k->arm != a || k->pass || k->proc > upto || k->proc < 0 || k->proc >= ev->nproc) continue;
        if (!ev->accepted[k->proc] && strcmp(k->check, KG_CHECK_FAULT) != 0) continue;
        if (strcmp(k->check, KG_CHECK_ADMISSIBLE) == 0 || strcmp(k->check, KG_CHECK_WEAK) == 0 ||
            kg_check_is_bound(k->check))
            continue;
        x->kase = k->kase;
        snprintf(x->check, sizeof x->check, "%s", k->check);
        return;
    }
}

int kg_screening_futile(const kg_effect *e, double alpha, int looks, int ncases, double margin, double *ucb)
{
    *ucb = (double)NAN;
    if (!e->has_interval || !(e->df > 0)) return 0;
    double level = alpha / ((double)(looks > 0 ? looks : 1) * (double)(ncases > 0 ? ncases : 1));
    *ucb = 1.0 - exp(e->theta - kg_t_quantile(1.0 - level, e->df) * e->se);
    return *ucb < margin;
}

/* After process p: the candidates still in whose state is INCORRECT. */
static void drop_incorrect(const kg_evidence *ev, const kg_arm_state *state, int p, kg_screening *s)
{
    const kg_plan *plan = ev->plan;
    for (int a = 0; a < plan->narms; a++) {
        kg_screen_arm *x = &s->arm[a];
        if (!is_candidate(plan, a) || x->why != KG_DROP_NONE) continue;
        for (int c = 0; c < plan->ncases; c++)
            if (state[c * plan->narms + a] == KG_ARM_INCORRECT) {
                x->why = KG_DROP_INCORRECT;
                x->proc = p;
                first_failure(ev, a, p, x);
                if (x->kase < 0) x->kase = c;
                s->nincorrect++;
                break;
            }
    }
}

/* After accepted process p: the analysis of the accepted processes 0..p,
 * and the candidates still in whose upper bound is below the margin on a
 * gated case. */
static int drop_futile(const kg_evidence *ev, const kg_arm_state *state, int p, int *acc, kg_screening *s,
                       kg_err *err)
{
    const kg_plan *plan = ev->plan;
    for (int q = 0; q < ev->nproc; q++) acc[q] = q <= p && ev->accepted[q];
    kg_analysis_in in = { .plan = plan, .rows = ev->rows, .nrows = ev->nrows, .accepted = acc, .nproc = ev->nproc,
                          .state = state, .procs = ev->procs };
    kg_analysis an;
    int rc = kg_analyse(&in, &an, err);
    if (rc != KG_OK) return rc;
    for (int a = 0; a < plan->narms; a++) {
        kg_screen_arm *x = &s->arm[a];
        if (!is_candidate(plan, a) || x->why != KG_DROP_NONE) continue;
        int ncases = 0;
        for (int c = 0; c < plan->ncases; c++) ncases += gated(plan, c) && kg_plan_arm_applies(plan, a, c);
        for (int c = 0; c < plan->ncases && x->why == KG_DROP_NONE; c++) {
            const kg_arm_result *r = &an.res[(size_t)c * (size_t)an.narms + (size_t)a];
            if (!gated(plan, c) || !kg_plan_arm_applies(plan, a, c) || !r->has_effect || !r->eff.has_interval)
                continue;
            double ucb = 0;
            if (kg_screening_futile(&r->eff, s->alpha, s->looks, ncases, s->margin, &ucb)) {
                x->why = KG_DROP_FUTILE;
                x->proc = p;
                x->kase = c;
                x->ucb = ucb;
                s->nfutile++;
            }
        }
    }
    kg_analysis_free(&an);
    return KG_OK;
}

/* The cost rows: each arm's own seconds, and the candidates' shares of
 * the rest of the processes they ran in. */
static void costs(const kg_evidence *ev, kg_screening *s)
{
    const kg_plan *plan = ev->plan;
    int na = plan->narms;
    double *own = calloc((size_t)(ev->nproc > 0 ? ev->nproc : 1), sizeof *own);
    int *ran = calloc((size_t)(ev->nproc > 0 ? ev->nproc : 1) * (size_t)(na > 0 ? na : 1), sizeof *ran);
    if (own == NULL || ran == NULL) {
        free(own);
        free(ran);
        return;
    }
    for (size_t i = 0; i < ev->nchecks_all; i++) {
        const kg_check_rec *k = &ev->checks[i];
        if (strcmp(k->check, KG_CHECK_SCREEN_COST) != 0 || k->arm < 0 || k->proc < 0 || k->proc >= ev->nproc) continue;
        double busy = 0, timed = 0;
        long long n = 0;
        if (sscanf(k->detail, "busy %lf s; timed %lf s in %lld samples", &busy, &timed, &n) != 3) continue;
        kg_screen_arm *x = &s->arm[k->arm];
        x->busy_s += busy;
        x->timed_s += timed;
        x->nsamples += n;
        own[k->proc] += busy;
        s->busy_s += busy;
        if (!ran[(size_t)k->proc * (size_t)na + (size_t)k->arm]++) x->nproc++;
    }
    for (int p = 0; p < ev->nproc; p++) {
        double secs = ev->procs[p].seconds > 0 ? ev->procs[p].seconds : 0;
        s->wall_s += secs;
        int nc = 0;
        for (int a = 0; a < na; a++) nc += is_candidate(plan, a) && ran[(size_t)p * (size_t)na + (size_t)a];
        double rest = secs > own[p] ? secs - own[p] : 0;
        for (int a = 0; a < na; a++)
            if (is_candidate(plan, a) && ran[(size_t)p * (size_t)na + (size_t)a]) s->arm[a].wall_s += rest / nc;
    }
    for (int a = 0; a < na; a++)
        if (is_candidate(plan, a)) s->arm[a].wall_s += s->arm[a].busy_s;
    for (size_t i = 0; i < ev->nwatch; i++)
        if (strcmp(ev->watch[i].event, "end") == 0 && ev->watch[i].seconds > 0) s->run_s += ev->watch[i].seconds;
    free(own);
    free(ran);
}

int kg_screening_derive(const kg_evidence *ev, kg_screening *out, kg_err *err)
{
    const kg_plan *plan = ev->plan;
    memset(out, 0, sizeof *out);
    if (!ev->screen) return KG_OK;
    out->on = 1;
    out->narms = plan->narms;
    out->alpha = plan->campaign.alpha;
    out->margin = plan->campaign.margin;
    int P = plan->campaign.processes > 0 ? plan->campaign.processes : 1;
    out->looks = 2 * P - 3 > 1 ? 2 * P - 3 : 1;
    size_t ncell = (size_t)(plan->ncases > 0 ? plan->ncases : 1) * (size_t)(plan->narms > 0 ? plan->narms : 1);
    out->arm = calloc((size_t)(plan->narms > 0 ? plan->narms : 1), sizeof *out->arm);
    kg_arm_state *state = calloc(ncell, sizeof *state);
    int *acc = calloc((size_t)(ev->nproc > 0 ? ev->nproc : 1), sizeof *acc);
    int rc = KG_OK;
    if (out->arm == NULL || state == NULL || acc == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "out of memory deriving the screen's drops");
        goto done;
    }
    for (int a = 0; a < plan->narms; a++) {
        out->arm[a].proc = out->arm[a].kase = -1;
        out->ncand += is_candidate(plan, a);
    }
    for (int p = 0; p < ev->nproc && rc == KG_OK; p++) {
        kg_evidence_state_upto(ev, p, state);
        drop_incorrect(ev, state, p, out);
        if (ev->accepted[p]) rc = drop_futile(ev, state, p, acc, out, err);
    }
    if (rc == KG_OK) costs(ev, out);
done:
    free(state);
    free(acc);
    if (rc != KG_OK) kg_screening_free(out);
    return rc;
}

void kg_screening_audit(const kg_evidence *ev, const kg_screening *s, kg_sb *out, int *nbad)
{
    const kg_plan *plan = ev->plan;
    int na = plan->narms;
    for (size_t i = 0; i < ev->nchecks_all; i++) {
        const kg_check_rec *k = &ev->checks[i];
        if (strcmp(k->check, KG_CHECK_SCREEN_SKIP) != 0 || k->arm < 0) continue;
        if (!s->on) {
            kg_problem(out, nbad, "checks/proc-%03d.csv: arm %s was dropped by a screen, but the folder is no screen "
                         "in screening mode (meta.json)", k->proc, plan->arms[k->arm].name);
        } else if (s->arm[k->arm].proc < 0 || s->arm[k->arm].proc >= k->proc) {
            kg_problem(out, nbad, "checks/proc-%03d.csv: arm %s was not run, but the evidence before that process "
                         "does not drop it (the screen's rules, docs/statistics.md)", k->proc,
                       plan->arms[k->arm].name);
        }
    }
    if (!s->on) return;
    unsigned char *seen = calloc((size_t)(ev->nproc > 0 ? ev->nproc : 1) * (size_t)(na > 0 ? na : 1), 1);
    if (seen == NULL) {
        kg_problem(out, nbad, "out of memory auditing the screen's drops");
        return;
    }
    for (size_t i = 0; i < ev->nrows; i++) {
        const kg_row *r = &ev->rows[i];
        if (r->proc < 0 || r->proc >= ev->nproc || r->arm < 0 || r->arm >= na) continue;
        const kg_screen_arm *x = &s->arm[r->arm];
        unsigned char *f = &seen[(size_t)r->proc * (size_t)na + (size_t)r->arm];
        if (x->proc >= 0 && x->proc < r->proc - 1 && !*f) {
            *f = 1;
            kg_problem(out, nbad, "raw/proc-%03d: arm %s was timed after the screen dropped it (%s after process %d)",
                         r->proc, plan->arms[r->arm].name, x->why == KG_DROP_FUTILE ? "futile" : "INCORRECT",
                         x->proc);
        }
    }
    free(seen);
}

void kg_screening_md(kg_sb *sb, const kg_evidence *ev, const kg_screening *s)
{
    const kg_plan *plan = ev->plan;
    if (!s->on) return;
    kg_sb_printf(sb, "\n## Screening\n\nScreening mode: a candidate is dropped after the first process in which "
                 "a check of it failed (INCORRECT), or after the first accepted process where the upper bound of "
                 "its reduction on a gated case, at one-sided level %.3g / (%d looks x its gated cases), is below "
                 "the margin %+.2f%% (futile: a candidate at least that much faster is dropped with probability "
                 "at most %.3g). %d candidate%s: %d dropped as INCORRECT, %d as futile. The processes took %.1f s "
                 "together (overlapping workers each counted whole), %.1f s of it in the arms' own operations.",
                 s->alpha, s->looks, 100.0 * s->margin, s->alpha, s->ncand, s->ncand == 1 ? "" : "s",
                 s->nincorrect, s->nfutile, s->wall_s, s->busy_s);
    if (s->run_s > 0)
        kg_sb_printf(sb, " The run took %.1f s of wall, builds included: %.2f s per candidate.", s->run_s,
                     s->ncand > 0 ? s->run_s / s->ncand : 0.0);
    kg_sb_puts(sb, "\n\n| arm | processes | dropped | why | device s | timed s | samples | wall s |\n"
                   "|---|---|---|---|---|---|---|---|\n");
    for (int a = 0; a < plan->narms; a++) {
        const kg_screen_arm *x = &s->arm[a];
        if (!is_candidate(plan, a)) continue;
        kg_sb_printf(sb, "| %s | %d | ", plan->arms[a].name, x->nproc);
        if (x->proc >= 0) kg_sb_printf(sb, "after process %d | ", x->proc);
        else kg_sb_puts(sb, "no | ");
        if (x->why == KG_DROP_INCORRECT)
            kg_sb_printf(sb, "INCORRECT: %s failed on case %s", x->check[0] ? x->check : "a check",
                         x->kase >= 0 ? plan->cases[x->kase].name : "?");
        else if (x->why == KG_DROP_FUTILE)
            kg_sb_printf(sb, "futile: upper bound %+.2f%% on case %s", 100.0 * x->ucb, plan->cases[x->kase].name);
        kg_sb_printf(sb, " | %.3f | %.3f | %lld | %.3f |\n", x->busy_s, x->timed_s, x->nsamples, x->wall_s);
    }
}

void kg_screening_free(kg_screening *s)
{
    free(s->arm);
    memset(s, 0, sizeof *s);
}
