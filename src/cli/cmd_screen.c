/* cmd_screen.c: `kgate screen PLAN`: an exploration campaign over many
 * candidates, an honest ranking, and a frozen confirmation plan.
 *
 * The screen is an ordinary campaign of PLAN (its evidence folder is
 * complete and verifiable).  Its candidates on the gated cases form the
 * family of the gate's multiplicity rule (Holm by default), so the ranking
 * uses the adjusted lower bounds: a candidate is eligible when it is
 * FASTER after adjustment on every gated case, ranked by its worst
 * adjusted lower bound.  The chosen candidates (--select K, default 1)
 * go into a confirmation plan next to PLAN: the baselines, controls and
 * references, only the chosen candidates, a fresh seed (fresh inputs and
 * fresh processes), and `selected_from` naming the family, which its
 * report prints.  The claim is `kgate run --frozen CONFIRM.frozen
 * CONFIRM`, not the screen: the lowest of many candidates is a post-hoc
 * minimum, not a validated choice. */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/frozen.h"
#include "evidence/salt.h"
#include "run/supervisor.h"
#include "base/util.h"
#include "cli.h"

static const char about[] =
    "Runs PLAN as an exploration campaign (evidence as `kgate run` writes it), ranks its candidates by\n"
    "their lower bounds adjusted over the family (the candidates on the gated cases; [gate]\n"
    "multiplicity), and writes a confirmation plan with the best --select candidates, a fresh seed and\n"
    "the family it was selected from, plus its frozen form.  The claim is the confirmation run:\n"
    "  kgate run --frozen CONFIRM.frozen CONFIRM\n";

static const char footer[] =
    "Exit status: 0 a confirmation plan was written, 1 no candidate is FASTER after adjustment,\n"
    "2 usage or input error, 3 invalid campaign.\n";

typedef struct ranked {
    int arm;
    double worst;     /* smallest adjusted lower bound over the gated cases */
    double padj;      /* largest adjusted p */
    int pairs, ok;    /* gated cases it ran on; FASTER after adjustment on all of them */
} ranked;

static int cmp_ranked(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->ok != b->ok) return b->ok - a->ok;
    if (a->worst != b->worst) return (a->worst < b->worst) - (a->worst > b->worst);
    return a->arm - b->arm;
}

/* The canonical text without the [arm NAME] sections of unchosen
 * candidates, with a fresh seed, a name and selected_from. */
static int confirm_text(const kg_plan *plan, const int *keep, uint64_t seed, const char *from, kg_sb *out)
{
    const char *t = plan->canonical;
    int section_arm = -1, in_campaign = 0, skip = 0;
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
            section_arm = -1;
            skip = 0;
            if (strncmp(line, "[arm ", 5) == 0 && len > 6) {
                char name[KG_NAME_MAX];
                snprintf(name, sizeof name, "%.*s", (int)(len - 6), line + 5);
                section_arm = kg_plan_find_arm(plan, name);
                skip = section_arm >= 0 && plan->arms[section_arm].role == KG_ROLE_CANDIDATE && !keep[section_arm];
            }
            if (!skip) kg_sb_printf(out, "%s\n", line);
            if (in_campaign) kg_sb_printf(out, "selected_from = %s\n", from);
            continue;
        }
        if (skip) continue;
        if (in_campaign && strncmp(line, "seed = ", 7) == 0) {
            kg_sb_printf(out, "seed = %llu\n", (unsigned long long)seed);
            continue;
        }
        if (in_campaign && strncmp(line, "name = ", 7) == 0) {
            kg_sb_printf(out, "name = %.50s-confirm\n", plan->campaign.name);
            continue;
        }
        if (in_campaign && strncmp(line, "selected_from = ", 16) == 0) continue;
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

int kg_cmd_screen(int argc, char **argv, const kg_settings *env)
{
    kg_run_opts o = { 0 };
    o.progress = 0;
    o.argc = argc;
    o.argv = argv;
    o.settings = env;
    int select = 1;
    const char *confirm = NULL;
    const kg_cli_opt opts[] = {
        { .name = "out", .short_name = 'o', .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.out_dir,
          .help = "the screen's evidence folder (must not hold a campaign already)" },
        { .name = "backend", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &o.backend,
          .help = "override the plan's backend: auto, cpu, fake, cuda" },
        { .name = "progress", .kind = KG_CLI_FLAG, .dst = &o.progress, .value = 1, .help = "progress line on stderr" },
        { .name = "quiet-window", .arg = "S", .kind = KG_CLI_REAL, .dst = &o.quiet_s, .min = 0, .max = 1e9,
          .seen = &o.has_quiet, .help = "quiet window before each process, s (default: the plan's quiet key)" },
        { .name = "select", .arg = "K", .kind = KG_CLI_INT, .dst = &select, .min = 1, .max = 1000,
          .help = "candidates to confirm (default 1: the best)" },
        { .name = "confirm", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &confirm,
          .help = "the confirmation plan (default: next to PLAN, NAME-confirm.kg; FILE.frozen beside it)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "screen", .args = "PLAN", .about = about, .opts = opts, .footer = footer };
    int parsed = kg_cli_parse(&spec, argc, argv, &o.plan_path);
    if (parsed != KG_CLI_GO) return parsed;

    char dir[1024] = "";
    kg_analysis an;
    kg_err err = { 0 };
    int rc = kg_campaign_run(&o, dir, sizeof dir, &an, &err);
    if (rc != KG_OK) {
        int st = kg_cli_fail(rc, err.msg);
        if (dir[0] != '\0') fprintf(stderr, "kgate: evidence so far is in %s\n", dir);
        return st;
    }
    kg_plan *plan = NULL;
    if ((rc = kg_plan_load(o.plan_path, &plan, &err)) != KG_OK) {
        kg_analysis_free(&an);
        return kg_cli_fail(rc, err.msg);
    }
    int status = KG_EXIT_PASS;
    ranked *rk = calloc((size_t)plan->narms + 1, sizeof *rk);
    int *keep = calloc((size_t)plan->narms + 1, sizeof *keep);
    kg_sb text = { 0 };
    if (rk == NULL || keep == NULL) {
        status = kg_cli_fail(KG_ENOMEM, "out of memory ranking the candidates");
        goto done;
    }
    int nr = 0;
    for (int a = 0; a < plan->narms; a++) {
        if (plan->arms[a].role != KG_ROLE_CANDIDATE) continue;
        ranked r = { .arm = a, .worst = 1.0, .padj = 0.0, .pairs = 0, .ok = 1 };
        for (int c = 0; c < plan->ncases; c++) {
            if (!plan->cases[c].primary && !plan->gate.all_cases) continue;
            if (!kg_plan_arm_applies(plan, a, c)) continue;
            const kg_arm_result *x = &an.res[(size_t)c * (size_t)an.narms + (size_t)a];
            r.pairs++;
            if (!x->in_family) {
                r.ok = 0;
                r.worst = -(double)INFINITY;
                continue;
            }
            if (x->rho_lo_adj < r.worst) r.worst = x->rho_lo_adj;
            if (x->p_adj > r.padj) r.padj = x->p_adj;
            r.ok &= x->verdict == KG_VERDICT_FASTER;
        }
        if (r.pairs == 0) continue;
        rk[nr++] = r;
    }
    qsort(rk, (size_t)nr, sizeof *rk, cmp_ranked);
    printf("# kgate screen: %s\n\nEvidence: %s. Family: %d candidate%s on the gated cases, alpha %.3g shared by %s; "
           "ranked by the worst adjusted lower bound of the reduction over the gated cases.\n\n"
           "| rank | arm | worst adjusted lower bound | largest adjusted p | FASTER after adjustment |\n"
           "|---|---|---|---|---|\n",
           plan->campaign.name, dir, an.family_size, an.family_size == 1 ? "" : "s", plan->campaign.alpha,
           plan->gate.multiplicity == KG_MULT_MAXT ? "max-T" : plan->gate.multiplicity == KG_MULT_NONE ? "no adjustment"
                                                                                                        : "Holm");
    int chosen = 0;
    for (int i = 0; i < nr; i++) {
        printf("| %d | %s | %+.2f%% | %.4g | %s |\n", i + 1, plan->arms[rk[i].arm].name, 100.0 * rk[i].worst,
               rk[i].padj, rk[i].ok ? "yes" : "no");
        if (rk[i].ok && chosen < select) {
            keep[rk[i].arm] = 1;
            chosen++;
        }
    }
    if (chosen == 0) {
        printf("\nNo candidate is FASTER after the family's adjustment: nothing to confirm.\n");
        fprintf(stderr, "kgate: screen: no candidate to confirm\nkgate: evidence in %s\n", dir);
        status = KG_EXIT_FAIL;
        goto done;
    }
    uint64_t seed = 0;
    if ((rc = kg_salt_draw(&seed, &err)) != KG_OK) {
        status = kg_cli_fail(rc, err.msg);
        goto done;
    }
    char from[KG_TEXT_MAX], chosen_names[KG_TEXT_MAX] = "";
    for (int i = 0, n = 0; i < nr; i++)
        if (keep[rk[i].arm]) {
            size_t l = strlen(chosen_names);
            snprintf(chosen_names + l, sizeof chosen_names - l, "%s%s", n++ ? ", " : "", plan->arms[rk[i].arm].name);
        }
    /* a plan's value holds at most 160 characters (the parser's limit):
     * the evidence folder's path is shortened from the left to fit */
    int fixed = snprintf(from, sizeof from, "%.120s chosen by kgate screen from a family of %d candidate%s (plan "
                         "sha256 %.16s, evidence ", chosen_names, nr, nr == 1 ? "" : "s", plan->hash);
    size_t room = fixed > 0 && fixed + 1 < 160 ? (size_t)(160 - fixed - 1) : 0, dl = strlen(dir);
    if (dl <= room) snprintf(from + fixed, sizeof from - (size_t)fixed, "%s)", dir);
    else if (room > 3) snprintf(from + fixed, sizeof from - (size_t)fixed, "...%s)", dir + dl - (room - 3));
    else snprintf(from + fixed, sizeof from - (size_t)fixed, "...)");
    if (confirm_text(plan, keep, seed, from, &text) != 0 || text.buf == NULL) {
        status = kg_cli_fail(KG_EINTERNAL, "the plan's canonical text has a line too long to rewrite");
        goto done;
    }
    char def[1100], frozen[1200], base[1024];
    if (confirm == NULL) {
        snprintf(def, sizeof def, "%s", o.plan_path);
        size_t l = strlen(def);
        if (l > 3 && strcmp(def + l - 3, ".kg") == 0) def[l - 3] = '\0';
        strncat(def, "-confirm.kg", sizeof def - strlen(def) - 1);
        confirm = def;
    }
    /* the sources stay relative to PLAN's folder, so the plan goes there */
    snprintf(base, sizeof base, "%s", plan->base_dir);
    char cdir[1100];
    snprintf(cdir, sizeof cdir, "%s", confirm);
    char *cd = dirname(cdir), rp1[4096], rp2[4096];
    if (realpath(cd, rp1) == NULL || realpath(base, rp2) == NULL || strcmp(rp1, rp2) != 0) {
        status = kg_cli_fail(KG_EUSAGE, "--confirm: the confirmation plan must be in PLAN's folder (its sources are "
                                        "relative to it)");
        goto done;
    }
    kg_plan *cplan = NULL;
    if ((rc = kg_plan_parse(text.buf, text.len, confirm, base, &cplan, &err)) != KG_OK ||
        (rc = write_file(confirm, text.buf, &err)) != KG_OK) {
        kg_plan_free(cplan);
        status = kg_cli_fail(rc, err.msg);
        goto done;
    }
    snprintf(frozen, sizeof frozen, "%s.frozen", confirm);
    rc = kg_frozen_write(cplan, frozen, &err);
    kg_plan_free(cplan);
    if (rc != KG_OK) {
        status = kg_cli_fail(rc, err.msg);
        goto done;
    }
    printf("\nConfirmation plan: %s (frozen: %s), with %s and a fresh seed. The claim is its run:\n\n"
           "    kgate run --frozen %s %s\n", confirm, frozen, chosen_names, frozen, confirm);
    fprintf(stderr, "kgate: screen: %d of %d candidate%s to confirm; evidence in %s\n", chosen, nr, nr == 1 ? "" : "s", dir);
done:
    free(text.buf);
    free(rk);
    free(keep);
    kg_plan_free(plan);
    kg_analysis_free(&an);
    return status;
}
