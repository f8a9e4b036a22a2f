/* brief.c: what `kgate run` prints on stdout by default: the answer in a
 * few lines, as hyperfine prints its summary.  It reads the campaign's
 * analysis (the one results.json was written from) and, for how loaded
 * the host was, the folder's watch.csv; it decides nothing.  The full
 * report stays report.md (`kgate run --report`, `kgate report DIR`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "kgate/plan.h"
#include "base/util.h"
#include "brief.h"

/* At most this many candidate lines; the rest are counted. */
#define BRIEF_MAX_PAIRS 30

/* A time in ns, with a unit that keeps 3-4 significant digits. */
static void fmt_time(double ns, char *buf, size_t cap)
{
    if (!isfinite(ns)) snprintf(buf, cap, "-");
    else if (ns < 1e3) snprintf(buf, cap, "%.1f ns", ns);
    else if (ns < 1e6) snprintf(buf, cap, "%.1f µs", ns / 1e3);
    else if (ns < 1e9) snprintf(buf, cap, "%.1f ms", ns / 1e6);
    else snprintf(buf, cap, "%.2f s", ns / 1e9);
}

/* The gate and its rule, as report.md's "Gate" section words them. */
static void gate_lines(FILE *out, const kg_analysis *an)
{
    const kg_plan *plan = an->plan;
    fprintf(out, "%s: gate %s%s: %s\n", plan->campaign.name, an->gate_pass ? "PASS" : "FAIL",
            an->invalid ? " (campaign INVALID)" : "", an->gate_reason);
    if (plan->gate.rule == KG_GATE_INTERVAL)
        fprintf(out, "  rule: lower %.0f%% bound of the reduction >= %.2f%% on every %scase", 100 * (1 - plan->campaign.alpha),
                100 * plan->gate.min_reduction, plan->gate.all_cases ? "" : "primary ");
    else
        fprintf(out, "  rule: process and paired-round reduction >= %.2f%% in both directions, every round won, on "
                "every %scase", 100 * plan->gate.min_reduction, plan->gate.all_cases ? "" : "primary ");
    fprintf(out, "%s%s\n", plan->gate.require_order ? ", order check passes" : "",
            plan->gate.require_control ? ", control valid" : "");
}

/* One line per candidate (and reference) and case. */
static void pair_lines(FILE *out, const kg_analysis *an)
{
    const kg_plan *plan = an->plan;
    int wc = 4, wa = 3, wv = 12, shown = 0, more = 0;
    for (int c = 0; c < an->ncases; c++) {
        int l = (int)strlen(plan->cases[c].name);
        if (l > wc) wc = l;
    }
    for (int a = 0; a < an->narms; a++) {
        int l = (int)strlen(plan->arms[a].name);
        if (l > wa && plan->arms[a].role != KG_ROLE_BASELINE && plan->arms[a].role != KG_ROLE_CONTROL) wa = l;
    }
    /* the labels of the rows shown (a control's row is its own line) */
    for (int i = 0; i < an->ncases * an->narms; i++) {
        const kg_arm_result *r = &an->res[i];
        if (r->state == KG_ARM_ABSENT || r->role == KG_ROLE_BASELINE || r->role == KG_ROLE_CONTROL) continue;
        int l = (int)strlen(kg_result_label(r));
        if (l > wv) wv = l;
    }
    for (int c = 0; c < an->ncases; c++)
        for (int a = 0; a < an->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state == KG_ARM_ABSENT || r->role == KG_ROLE_BASELINE || r->role == KG_ROLE_CONTROL) continue;
            if (shown >= BRIEF_MAX_PAIRS) {
                more++;
                continue;
            }
            shown++;
            char red[96] = "", tb[32], ta[32], times[KG_NAME_MAX + 96] = "";
            if (r->has_effect && r->eff.has_interval)
                snprintf(red, sizeof red, "%+.1f%% [%+.1f%%, %+.1f%%]", 100 * r->eff.rho, 100 * r->eff.rho_lo,
                         100 * r->eff.rho_hi);
            else if (r->has_effect)
                snprintf(red, sizeof red, "%+.1f%% (no interval)", 100 * r->eff.rho);
            if (r->contrast_arm >= 0 && isfinite(r->med_ns_all)) {
                fmt_time(an->res[c * an->narms + r->contrast_arm].med_ns_all, tb, sizeof tb);
                fmt_time(r->med_ns_all, ta, sizeof ta);
                snprintf(times, sizeof times, "  %s %s -> %s", plan->arms[r->contrast_arm].name, tb, ta);
            }
            char line[1024];
            snprintf(line, sizeof line, "  %-*s  %-*s  %-*s  %-23s%s", wc, plan->cases[c].name, wa, plan->arms[a].name,
                     wv, kg_result_label(r), red, times);
            size_t n = strlen(line);
            while (n > 0 && line[n - 1] == ' ') line[--n] = '\0';
            fprintf(out, "%s\n", line);
        }
    if (more > 0) fprintf(out, "  ... and %d more (report.md, Results)\n", more);
}

/* Each control arm's status over the cases: one line per control. */
static void control_lines(FILE *out, const kg_analysis *an)
{
    const kg_plan *plan = an->plan;
    for (int a = 0; a < an->narms; a++) {
        if (plan->arms[a].role != KG_ROLE_CONTROL) continue;
        int valid = 0, wide = 0, bad = 0;
        double reach = 0;
        const char *worst = NULL;
        for (int c = 0; c < an->ncases; c++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state == KG_ARM_ABSENT) continue;
            double m = r->has_effect && r->eff.has_interval ? fmax(fabs(r->eff.rho_lo), fabs(r->eff.rho_hi)) : 0;
            if (r->control == KG_CONTROL_VALID) valid++;
            else if (r->control == KG_CONTROL_WIDE) wide++;
            else if (r->control == KG_CONTROL_INVALID || r->drift_fails) bad++;
            if (m > reach) {
                reach = m;
                worst = plan->cases[c].name;
            }
        }
        int n = valid + wide + bad;
        fprintf(out, "  control %s (A/A of %s): ", plan->arms[a].name, plan->arms[a].of);
        if (bad) fprintf(out, "INVALID on %d of %d case(s)", bad, n);
        else if (wide) fprintf(out, "valid, wide on %d of %d case(s)", wide, n);
        else if (valid) fprintf(out, "valid on %d case(s)", valid);
        else fprintf(out, "no interval");
        if (worst != NULL) fprintf(out, " (reach %.1f%% on %s", 100 * reach, worst);
        fprintf(out, "%smargin +-%.2f%%)\n", worst != NULL ? "; " : " (", 100 * plan->campaign.control_margin);
    }
}

/* How loaded the host was while kgate timed: the host-load notes of
 * watch.csv (one per process), their mean and largest figures; 0 when
 * there is none. */
static int host_load(const char *dir, double *mean, double *max)
{
    char path[KG_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/watch.csv", dir);
    kg_watch_rec *w = NULL;
    size_t nw = 0;
    kg_err e = { 0 };
    *mean = *max = 0;
    if (kg_rows_read_watch(path, &w, &nw, &e) != KG_OK) return 0;
    int n = 0;
    for (size_t i = 0; i < nw; i++) {
        double m, x;
        if (strcmp(w[i].event, "note") != 0 ||
            sscanf(w[i].detail, "host load: processes that are not kgate's used %lf cores on average, %lf at most",
                   &m, &x) != 2)
            continue;
        *mean += m;
        if (x > *max) *max = x;
        n++;
    }
    free(w);
    if (n > 0) *mean /= n;
    return n;
}

/* The processes, the host, and what a reader must not miss. */
static void warning_lines(FILE *out, const kg_analysis *an, const char *dir)
{
    double mean, max;
    int n = host_load(dir, &mean, &max);
    fprintf(out, "  processes: %d accepted, %d excluded", an->nproc_accepted, an->nproc_rejected);
    if (n > 0) fprintf(out, "; other work on the host: %.2f cores on average, %.2f at most", mean, max);
    fprintf(out, "\n");
    if (n > 0 && mean >= 0.5)
        fprintf(out, "  warning: a busy host (%.1f cores of other work): wider intervals than on a quiet one\n", mean);
    if (an->nproc_rejected > 0)
        fprintf(out, "  warning: %d process(es) excluded: their reasons are in processes.csv and report.md\n",
                an->nproc_rejected);
    if (an->invalid && an->invalid_why[0] != '\0' && strcmp(an->invalid_why, an->gate_reason) != 0)
        fprintf(out, "  warning: the campaign is INVALID: %s\n", an->invalid_why);
    if (!an->order_ok) fprintf(out, "  warning: the order check failed (report.md, Order)\n");
    /* a candidate that is the user's Python code timed by kgate's own
     * helper is not confined as a candidate is (docs/security.md) */
    int npy = 0;
    for (int a = 0; a < an->plan->narms; a++) {
        if (an->plan->arms[a].role != KG_ROLE_CANDIDATE || !kg_arm_is_pycall(&an->plan->arms[a])) continue;
        if (npy++ == 0) fprintf(out, "  note: python call, timed in kgate's helper: trusted as the plan, not confined "
                                "(docs/security.md): candidate");
        if (npy <= 4) fprintf(out, " %s", an->plan->arms[a].name);
    }
    if (npy > 4) fprintf(out, " and %d more", npy - 4);
    if (npy > 0) fprintf(out, "\n");
}

int kg_cli_contracts(const kg_plan *plan, const char *dir, char (*out)[96])
{
    for (int c = 0; c < plan->ncases; c++) out[c][0] = '\0';
    if (dir == NULL || dir[0] == '\0') return 0;
    char path[1200], *text = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, KG_FACTS_FILE);
    kg_case_facts *f = NULL;
    kg_err e = { 0 };
    int any = 0;
    if (kg_read_file(path, &text, NULL, &e) == KG_OK && kg_facts_parse(path, text, plan, &f, &e) == KG_OK)
        for (int c = 0; c < plan->ncases; c++) {
            snprintf(out[c], 96, "%s", f[c].contract);
            any |= f[c].contract[0] != '\0';
        }
    free(f);
    free(text);
    return any;
}

/* The bound each case's op declared in Python states: one line per case. */
static void contract_lines(FILE *out, const kg_analysis *an, const char *dir)
{
    char (*ct)[96] = calloc((size_t)(an->plan->ncases > 0 ? an->plan->ncases : 1), sizeof *ct);
    if (ct != NULL && kg_cli_contracts(an->plan, dir, ct))
        for (int c = 0; c < an->plan->ncases; c++)
            if (ct[c][0] != '\0')
                fprintf(out, "  checked against: case %s, op %s: %s\n", an->plan->cases[c].name,
                        an->plan->cases[c].op, ct[c]);
    free(ct);
}

void kg_cli_brief(FILE *out, const kg_analysis *an, const char *dir, const char *signed_by)
{
    if (an == NULL || an->plan == NULL) return;
    gate_lines(out, an);
    pair_lines(out, an);
    contract_lines(out, an, dir);
    control_lines(out, an);
    warning_lines(out, an, dir);
    fprintf(out, "report:   %s/report.html\n", dir);
    if (signed_by != NULL)
        fprintf(out, "evidence: %s (signed, key %.16s; full report: kgate report DIR)\n", dir, signed_by);
    else
        fprintf(out, "evidence: %s (unsigned; full report: kgate report DIR)\n", dir);
    fflush(out);
}
