/* screen.c: kgate screen's ranking and confirmation plan (screen.h).
 * The claim is the confirmation run, `kgate run --frozen CONFIRM.frozen
 * CONFIRM`, not the screen: the lowest of many candidates is a post-hoc
 * minimum, not a validated choice. */
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run/screen.h"
#include "plan/frozen.h"
#include "evidence/salt.h"

static int cmp_ranked(const void *pa, const void *pb)
{
    const kg_screen_rank *a = pa, *b = pb;
    if (a->ok != b->ok) return b->ok - a->ok;
    if (a->incorrect != b->incorrect) return a->incorrect - b->incorrect;
    if (a->worst != b->worst) return (a->worst < b->worst) - (a->worst > b->worst);
    return a->arm - b->arm;
}

/* Candidate a over the gated cases it ran on. */
static kg_screen_rank rank_of(const kg_plan *plan, const kg_analysis *an, int a)
{
    kg_screen_rank r = { .arm = a, .worst = 1.0, .padj = 0.0, .pairs = 0, .ok = 1 };
    for (int c = 0; c < plan->ncases; c++) {
        if (!plan->cases[c].primary && !plan->gate.all_cases) continue;
        if (!kg_plan_arm_applies(plan, a, c)) continue;
        const kg_arm_result *x = &an->res[(size_t)c * (size_t)an->narms + (size_t)a];
        r.pairs++;
        if (x->verdict == KG_VERDICT_INCORRECT) r.incorrect = 1;
        if (!x->in_family) {
            r.ok = 0;
            r.worst = -(double)INFINITY;
            continue;
        }
        if (x->rho_lo_adj < r.worst) r.worst = x->rho_lo_adj;
        if (x->p_adj > r.padj) r.padj = x->p_adj;
        r.ok &= x->verdict == KG_VERDICT_FASTER;
    }
    return r;
}

/* The ranking as report text: the family, then one row per candidate
 * (an INCORRECT one unranked); a screening mode's drops and costs. */
static void rank_table(const kg_plan *plan, const kg_analysis *an, const kg_screening *scr, const char *dir,
                       const kg_screen *sc, kg_sb *out)
{
    const char *mult = plan->gate.multiplicity == KG_MULT_MAXT ? "max-T"
                       : plan->gate.multiplicity == KG_MULT_NONE ? "no adjustment" : "Holm";
    int on = scr != NULL && scr->on;
    kg_sb_printf(out, "# kgate screen: %s\n\nEvidence: %s. Family: %d candidate%s on the gated cases, alpha %.3g "
                 "shared by %s; ranked by the worst adjusted lower bound of the reduction over the gated cases.\n",
                 plan->campaign.name, dir, an->family_size, an->family_size == 1 ? "" : "s", plan->campaign.alpha, mult);
    if (on)
        kg_sb_printf(out, "Screening mode: %d dropped as INCORRECT, %d as futile (report.md, Screening); the run took "
                     "%.1f s of wall, builds included: %.2f s per candidate.\n", scr->nincorrect, scr->nfutile,
                     scr->run_s, scr->ncand > 0 ? scr->run_s / scr->ncand : 0.0);
    if (an->nproc_accepted == 0)
        kg_sb_printf(out, "No process was accepted (%d excluded; report.md says why): the campaign is INVALID and "
                     "no candidate is ranked.\n", an->nproc_rejected);
    kg_sb_printf(out, "\n| rank | arm | worst adjusted lower bound | largest adjusted p | FASTER after adjustment |%s\n"
                 "|---|---|---|---|---|%s\n", on ? " dropped | device s | wall s |" : "", on ? "---|---|---|" : "");
    for (int i = 0, rank = 0; i < sc->nr; i++) {
        const kg_screen_rank *r = &sc->rk[i];
        if (r->incorrect)
            kg_sb_printf(out, "| – | %s | INCORRECT | – | no |", plan->arms[r->arm].name);
        else if (isinf(r->worst))   /* outside the family on a gated case: no interval there */
            kg_sb_printf(out, "| – | %s | no data | – | no |", plan->arms[r->arm].name);
        else
            kg_sb_printf(out, "| %d | %s | %+.2f%% | %.4g | %s |", ++rank, plan->arms[r->arm].name, 100.0 * r->worst,
                         r->padj, r->ok ? "yes" : "no");
        if (on) {
            const kg_screen_arm *x = &scr->arm[r->arm];
            if (x->proc >= 0)
                kg_sb_printf(out, " %s after process %d |", x->why == KG_DROP_FUTILE ? "futile" : "INCORRECT", x->proc);
            else
                kg_sb_puts(out, " no |");
            kg_sb_printf(out, " %.3f | %.3f |", x->busy_s, x->wall_s);
        }
        kg_sb_puts(out, "\n");
    }
}

int kg_screen_rank_arms(const kg_plan *plan, const kg_analysis *an, const kg_screening *scr, const char *dir,
                        int select, kg_screen *sc, kg_err *err)
{
    memset(sc, 0, sizeof *sc);
    sc->rk = calloc((size_t)plan->narms + 1, sizeof *sc->rk);
    sc->keep = calloc((size_t)plan->narms + 1, sizeof *sc->keep);
    if (sc->rk == NULL || sc->keep == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory ranking the candidates");
    for (int a = 0; a < plan->narms; a++) {
        if (plan->arms[a].role != KG_ROLE_CANDIDATE) continue;
        kg_screen_rank r = rank_of(plan, an, a);
        /* a dropped candidate is out of the choice, whatever its figures */
        if (scr != NULL && scr->on && a < scr->narms && scr->arm[a].proc >= 0) r.ok = 0;
        if (r.pairs > 0) sc->rk[sc->nr++] = r;
    }
    qsort(sc->rk, (size_t)sc->nr, sizeof *sc->rk, cmp_ranked);
    for (int i = 0; i < sc->nr && sc->chosen < select; i++)
        if (sc->rk[i].ok) {
            sc->keep[sc->rk[i].arm] = 1;
            sc->chosen++;
        }
    for (int i = 0, n = 0; i < sc->nr; i++)
        if (sc->keep[sc->rk[i].arm]) {
            size_t l = strlen(sc->chosen_names);
            snprintf(sc->chosen_names + l, sizeof sc->chosen_names - l, "%s%s", n++ ? ", " : "",
                     plan->arms[sc->rk[i].arm].name);
        }
    rank_table(plan, an, scr, dir, sc, &sc->table);
    return sc->table.oom ? kg_errorf(err, KG_ENOMEM, "out of memory ranking the candidates") : KG_OK;
}

/* The confirmation plan's processes per direction: the screen's, raised
 * to the next multiple that completes the load-order square of the arms
 * it keeps in every look (the plan check refuses any other). */
static int confirm_processes(const kg_plan *plan, const int *keep)
{
    long long sq = 1;
    for (int c = 0; c < plan->ncases; c++) {
        long long n = 0;
        for (int a = 0; a < plan->narms; a++)
            n += kg_plan_arm_applies(plan, a, c) && (plan->arms[a].role != KG_ROLE_CANDIDATE || keep[a]);
        if (n < 1) continue;
        long long g = sq, h = n;
        while (h != 0) {
            long long r = g % h;
            g = h;
            h = r;
        }
        sq = sq / g * n;
        if (sq > KG_PLAN_MAX_PROCESSES) return plan->campaign.processes;   /* the plan check names it */
    }
    int K = plan->campaign.looks > 1 ? plan->campaign.looks : 1, P = plan->campaign.processes;
    long long step = (long long)K * (sq >= 2 ? sq : 2);
    if (K == 1 && (P % sq == 0 || P == 1)) return P;
    long long whole = (P + step - 1) / step * step;
    return whole <= KG_PLAN_MAX_PROCESSES ? (int)whole : P;
}

/* The canonical text without the [arm NAME] sections of unchosen
 * candidates, with a fresh seed, a name, selected_from and processes that
 * complete its load-order square; -1 for a line too long to rewrite. */
static int confirm_text(const kg_plan *plan, const int *keep, uint64_t seed, const char *from, kg_sb *out)
{
    const char *t = plan->canonical;
    int in_campaign = 0, skip = 0;
    while (*t) {
        const char *nl = strchr(t, '\n');
        size_t len = nl ? (size_t)(nl - t) : strlen(t);
        char line[4096];
        if (len >= sizeof line) return -1;
        memcpy(line, t, len);
        line[len] = '\0';
        t += len + (nl ? 1 : 0);
        if (line[0] == '[') {
            in_campaign = strcmp(line, "[campaign]") == 0;
            skip = 0;
            if (strncmp(line, "[arm ", 5) == 0 && len > 6) {
                char name[KG_NAME_MAX];
                snprintf(name, sizeof name, "%.*s", (int)(len - 6), line + 5);
                int a = kg_plan_find_arm(plan, name);
                skip = a >= 0 && plan->arms[a].role == KG_ROLE_CANDIDATE && !keep[a];
            }
            if (!skip) kg_sb_printf(out, "%s\n", line);
            if (in_campaign) kg_sb_printf(out, "selected_from = %s\n", from);
            continue;
        }
        /* the confirmation is no screen: its processes complete the square */
        if (skip || (in_campaign && (strncmp(line, "selected_from = ", 16) == 0 || strcmp(line, "screen = yes") == 0)))
            continue;
        if (in_campaign && strncmp(line, "seed = ", 7) == 0)
            kg_sb_printf(out, "seed = %llu\n", (unsigned long long)seed);
        else if (in_campaign && strncmp(line, "name = ", 7) == 0)
            kg_sb_printf(out, "name = %.50s-confirm\n", plan->campaign.name);
        else if (in_campaign && strncmp(line, "processes = ", 12) == 0)
            kg_sb_printf(out, "processes = %d\n", confirm_processes(plan, keep));
        else
            kg_sb_printf(out, "%s\n", line);
    }
    return 0;
}

static int write_file(const char *path, const char *text, kg_err *err)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) return kg_errorf(err, KG_EIO, "%s: cannot write the confirmation plan (choose --confirm FILE)", path);
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    return bad ? kg_errorf(err, KG_EIO, "%s: write failed (disk full?)", path) : KG_OK;
}

/* The confirmation plan's path: confirm, or PLAN-confirm.kg beside
 * plan_path; it must be in the plan's folder (its sources are relative
 * to it). */
static int confirm_path(const kg_plan *plan, const char *plan_path, const char *confirm, char *out, size_t cap,
                        kg_err *err)
{
    if (confirm == NULL) {
        char def[1100];
        snprintf(def, sizeof def, "%s", plan_path);
        size_t l = strlen(def);
        if (l > 3 && strcmp(def + l - 3, ".kg") == 0) def[l - 3] = '\0';
        strncat(def, "-confirm.kg", sizeof def - strlen(def) - 1);
        snprintf(out, cap, "%s", def);
    } else {
        snprintf(out, cap, "%s", confirm);
    }
    char cdir[1100], rp1[PATH_MAX], rp2[PATH_MAX];
    snprintf(cdir, sizeof cdir, "%s", out);
    if (realpath(dirname(cdir), rp1) == NULL || realpath(plan->base_dir, rp2) == NULL || strcmp(rp1, rp2) != 0)
        return kg_errorf(err, KG_EUSAGE, "--confirm: the confirmation plan must be in PLAN's folder (its sources are "
                         "relative to it)");
    return KG_OK;
}

int kg_screen_write_confirm(const kg_plan *plan, const kg_screen *sc, const char *dir, const char *plan_path,
                            const char *confirm, char *confirm_out, char *frozen_out, size_t cap, kg_err *err)
{
    uint64_t seed = 0;
    int rc = kg_salt_draw(&seed, err);
    if (rc != KG_OK) return rc;
    char from[KG_TEXT_MAX], tail[160];
    /* a plan's value holds at most PLAN_VALUE_MAX (160) characters: the
     * chosen names are cut to leave the family, the plan's hash and at
     * least the end of the evidence folder's path, which is shortened from
     * the left to fit what is left (the confirmation plan's own candidate
     * sections name every chosen arm in full) */
    int tl = snprintf(tail, sizeof tail, " chosen by kgate screen from a family of %d candidate%s (plan sha256 %.16s, "
                      "evidence ", sc->nr, sc->nr == 1 ? "" : "s", plan->hash);
    size_t dl = strlen(dir), keep_dir = dl + 1 < 24 ? dl + 1 : 24;
    size_t names_room = tl > 0 && (size_t)tl + keep_dir < 159 ? 159 - (size_t)tl - keep_dir : 0;
    int fixed = strlen(sc->chosen_names) <= names_room
                    ? snprintf(from, sizeof from, "%s%s", sc->chosen_names, tail)
                    : snprintf(from, sizeof from, "%.*s...%s", names_room > 3 ? (int)(names_room - 3) : 0,
                               sc->chosen_names, tail);
    size_t room = fixed > 0 && fixed + 1 < 160 ? (size_t)(160 - fixed - 1) : 0;
    if (dl <= room) snprintf(from + fixed, sizeof from - (size_t)fixed, "%s)", dir);
    else if (room > 3) snprintf(from + fixed, sizeof from - (size_t)fixed, "...%s)", dir + dl - (room - 3));
    else snprintf(from + fixed, sizeof from - (size_t)fixed, "...)");
    kg_sb text = { 0 };
    kg_plan *cplan = NULL;
    if (confirm_text(plan, sc->keep, seed, from, &text) != 0 || text.buf == NULL) {
        rc = kg_errorf(err, KG_EINTERNAL, "the plan's canonical text has a line too long to rewrite");
        goto done;
    }
    if ((rc = confirm_path(plan, plan_path, confirm, confirm_out, cap, err)) != KG_OK) goto done;
    if ((rc = kg_plan_parse(text.buf, text.len, confirm_out, plan->base_dir, &cplan, err)) != KG_OK ||
        (rc = write_file(confirm_out, text.buf, err)) != KG_OK)
        goto done;
    snprintf(frozen_out, cap, "%s.frozen", confirm_out);
    rc = kg_frozen_write(cplan, frozen_out, err);
done:
    kg_plan_free(cplan);
    kg_sb_free(&text);
    return rc;
}

void kg_screen_free(kg_screen *sc)
{
    free(sc->rk);
    free(sc->keep);
    kg_sb_free(&sc->table);
    memset(sc, 0, sizeof *sc);
}
