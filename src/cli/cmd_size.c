/* cmd_size.c: `kgate size PLAN EVIDENCE`: from the variance components of
 * a pilot campaign's evidence folder (kgate/varcomp.h), the processes per
 * direction a campaign run as PLAN needs for its FASTER verdict to reach a
 * power at a minimal detectable effect.  Reads, prints, writes nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "kgate/evidence.h"
#include "kgate/varcomp.h"

#define SIZE_PMAX KG_DESIGN_PMAX

static const char about[] =
    "EVIDENCE is the folder of a pilot campaign (kgate run); PLAN the campaign to size, whose cases\n"
    "and arms are matched with the pilot's by name.  For every candidate of PLAN, the pilot's\n"
    "variance components of the paired contrast (process, round, sample) give the standard error\n"
    "of a design with P processes per direction, R rounds and S samples, and the power of its\n"
    "FASTER verdict (the lower bound of the reduction above the margin) when the true reduction\n"
    "is the minimal detectable effect.  Prints the smallest P at PLAN's rounds and samples, and\n"
    "P for R and 2R rounds and S and 2S samples with the timed samples per arm; and for every A/A\n"
    "control on a gated case, the P at which its interval stays within the gate's min_reduction\n"
    "with that power when its two loads are equal (the gate's control rule).\n"
    "docs/statistics.md, \"Variance components and the size of a design\", derives it.\n";

static const char footer[] = "Exit status: 0 sized, 2 usage or input error.\n";

/* "0.02" or "2%", in [0, 1) */
static int read_frac(const char *s, double *out)
{
    size_t n = strlen(s);
    char buf[64];
    if (n == 0 || n >= sizeof buf) return KG_EUSAGE;
    memcpy(buf, s, n + 1);
    double scale = 1.0;
    if (buf[n - 1] == '%') {
        buf[n - 1] = '\0';
        scale = 100.0;
    }
    double v;
    if (kg_cli_read_real(buf, 0.0, 1e9, &v) != KG_OK) return KG_EUSAGE;
    v /= scale;
    if (!(v >= 0.0 && v < 1.0)) return KG_EUSAGE;
    *out = v;
    return KG_OK;
}

/* The positions of the positional arguments in argv[1..argc), given
 * which of the table's long options take a value; kg_cli_parse takes one
 * positional only, so the second is lifted out before it parses. */
static int second_positional(const kg_cli_opt *opts, int argc, char **argv)
{
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            for (int j = i + 1; j < argc; j++)
                if (++npos == 2) return j;
            return -1;
        }
        if (a[0] == '-' && a[1] != '\0') {
            if (a[1] == '-' && strchr(a, '=') == NULL)
                for (const kg_cli_opt *o = opts; o->name != NULL; o++)
                    if (o->kind != KG_CLI_FLAG && strcmp(a + 2, o->name) == 0) {
                        i++; /* its value */
                        break;
                    }
            continue;
        }
        if (++npos == 2) return i;
    }
    return -1;
}

static int find_case(const kg_plan *p, const char *name)
{
    for (int c = 0; c < p->ncases; c++)
        if (strcmp(p->cases[c].name, name) == 0) return c;
    return -1;
}

static void pilot_notes(const kg_plan *plan, const kg_plan *pilot)
{
    const kg_campaign *a = &plan->campaign, *b = &pilot->campaign;
    if (strcmp(a->backend, b->backend) != 0)
        printf("note: the pilot ran on backend %s, the plan names %s: its components may not carry over\n", b->backend,
               a->backend);
    if (a->pack != b->pack)
        printf("note: the pilot ran with pack %d, the plan has pack %d: a sample's noise depends on it\n", b->pack,
               a->pack);
    if (a->interleave != b->interleave || a->l2 != b->l2 || a->inputs != b->inputs || a->warmup != b->warmup)
        printf("note: the pilot's interleave, l2, inputs or warmup differ from the plan's: its components may not "
               "carry over\n");
}

static double pct(double var)
{
    return 100.0 * sqrt(var);
}

/* One contrast: prints its design; returns the P at the plan's R and S
 * (0 when not sized, -1 beyond SIZE_PMAX). */
static int size_contrast(const kg_plan *plan, const kg_evidence *ev, const kg_varcomp *vc, int c, int a,
                         double alpha, double margin, double mde, double power, const double kap[2])
{
    const kg_plan *pp = ev->plan;
    int pc = find_case(pp, plan->cases[c].name), pa = kg_plan_find_arm(pp, plan->arms[a].name);
    printf("\ncase %s, arm %s", plan->cases[c].name, plan->arms[a].name);
    if (pc < 0 || pa < 0) {
        printf(": not in the pilot (%s has no %s %s); not sized\n", ev->plan->path[0] ? ev->plan->path : "it",
               pc < 0 ? "case" : "arm", pc < 0 ? plan->cases[c].name : plan->arms[a].name);
        return 0;
    }
    size_t i = (size_t)pc * (size_t)pp->narms + (size_t)pa;
    const kg_vc_contrast *k = &vc->con[i];
    if (!k->present || k->sample_ref < 0) {
        printf(": the pilot has no paired rounds of it in both directions (state %s); not sized\n",
               ev->state[i] == KG_ARM_OK ? "ok" : "not ok");
        return 0;
    }
    const kg_vc_arm *va = &vc->arm[i], *vb = &vc->arm[(size_t)pc * (size_t)pp->narms + (size_t)k->sample_ref];
    kg_design_var dv;
    kg_err err = { 0 };
    if (kg_design_var_of(k, va, vb, &dv, &err) != KG_OK) {
        printf(": %s; not sized\n", err.msg);
        return 0;
    }
    const char *ref = pp->arms[k->sample_ref].name;
    printf(" (against %s%s):\n", k->ref_arm >= 0 ? "" : "the fastest baseline of each round, mostly ",
           ref);
    printf("  pilot: %d processes (%d fwd, %d rev), %ld paired rounds, %.3g samples per round\n", k->n[0] + k->n[1],
           k->n[0], k->n[1], k->nrounds, va->samples_per_round);
    printf("  components (SD of log time): process %.5f%%%s, round %.5f%% net of samples%s, sample %.5f%% (%s) and "
           "%.5f%% (%s)\n", pct(dv.var_process), k->trunc_process ? " (negative estimate, set to 0)" : "",
           pct(dv.var_round_net), dv.trunc_round ? " (negative estimate, set to 0)" : "", pct(va->var_sample),
           pp->arms[pa].name, pct(vb->var_sample), ref);
    int R = plan->campaign.rounds, S = plan->campaign.samples;
    double var_delta = dv.var_round_net + kap[0] / S * dv.var_sample_sum;
    printf("  round SD of delta at %d samples: %.5f%% (kappa %.5f); Var D = process^2 + (round SD of delta)^2 / R\n",
           S, pct(var_delta), kap[0]);
    kg_design_eval e, e1;
    double vD = kg_design_var_D(&dv, R, S, kap[0]);
    int P = kg_design_min_P(vD, alpha, margin, mde, power, SIZE_PMAX, &e);
    if (P < 0) {
        printf("  smallest P per direction at R %d, S %d: more than %d (power %.5f there)\n", R, S, SIZE_PMAX, e.power);
    } else if (P == 2) {
        printf("  smallest P per direction at R %d, S %d: 2 (power %.5f; 2 is the least the interval needs)\n", R, S,
               e.power);
    } else {
        kg_design_power(vD, P - 1, alpha, margin, mde, &e1);
        printf("  smallest P per direction at R %d, S %d: %d (power %.5f; P %d gives %.5f)\n", R, S, P, e.power,
               P - 1, e1.power);
    }
    printf("\n  | R | S | P per direction | power | SE of log ratio | timed samples per arm |\n"
           "  |---|---|---|---|---|---|\n");
    for (int ir = 0; ir < 2; ir++)
        for (int is = 0; is < 2; is++) {
            int RR = R * (ir + 1), SS = S * (is + 1);
            double v = kg_design_var_D(&dv, RR, SS, kap[is]);
            int q = kg_design_min_P(v, alpha, margin, mde, power, SIZE_PMAX, &e1);
            if (q < 0) printf("  | %d | %d | > %d | %.5f | %.5f%% | – |\n", RR, SS, SIZE_PMAX, e1.power, 100 * e1.se);
            else
                printf("  | %d | %d | %d | %.5f | %.5f%% | %lld |\n", RR, SS, q, e1.power, 100 * e1.se,
                       2LL * q * RR * SS);
        }
    return P;
}

/* One A/A control under the gate's control rule: the processes per
 * direction at which its interval stays within +-g (the gate's
 * min_reduction) with the given power when the two loads are equal
 * (kg_design_control_P), what the gate's message names when the control
 * reaches past g. */
static int size_control(const kg_plan *plan, const kg_evidence *ev, const kg_varcomp *vc, int c, int a,
                        double alpha, double power, const double kap[2])
{
    const kg_plan *pp = ev->plan;
    int pc = find_case(pp, plan->cases[c].name), pa = kg_plan_find_arm(pp, plan->arms[a].name);
    double g = plan->gate.min_reduction;
    printf("\ncase %s, control %s", plan->cases[c].name, plan->arms[a].name);
    if (pc < 0 || pa < 0) {
        printf(": not in the pilot; not sized\n");
        return 0;
    }
    size_t i = (size_t)pc * (size_t)pp->narms + (size_t)pa;
    const kg_vc_contrast *k = &vc->con[i];
    kg_design_var dv;
    kg_err err = { 0 };
    if (!k->present || k->sample_ref < 0 ||
        kg_design_var_of(k, &vc->arm[i], &vc->arm[(size_t)pc * (size_t)pp->narms + (size_t)k->sample_ref], &dv,
                         &err) != KG_OK) {
        printf(": the pilot has no paired rounds of it in both directions%s%s; not sized\n", err.msg[0] ? ": " : "",
               err.msg);
        return 0;
    }
    int R = plan->campaign.rounds, S = plan->campaign.samples;
    double vD = kg_design_var_D(&dv, R, S, kap[0]);
    kg_design_eval e;
    int P = kg_design_control_P(vD, alpha, g, power, SIZE_PMAX, &e);
    printf(" (against %s): the gate's control rule, its interval within +-%.4g%%\n", pp->arms[k->sample_ref].name,
           100 * g);
    if (P < 0)
        printf("  control %s: more than %d processes per direction at R %d, S %d (power %.5f there)\n",
               plan->arms[a].name, SIZE_PMAX, R, S, e.power);
    else
        printf("  control %s: processes = %d per direction at R %d, S %d keep it within +-%.4g%% with power %.5f when "
               "the loads are equal (SE of log ratio %.5f%%; the plan has %d)\n", plan->arms[a].name, P, R, S, 100 * g,
               e.power, 100 * e.se, plan->campaign.processes);
    return P;
}

/* The campaign line: the largest P over the gated pairs, raised to what
 * the plan check accepts (every look completes the load-order square,
 * with 2 processes per direction per look at least). */
static void print_campaign(const kg_plan *plan, int worst)
{
    const kg_campaign *cp = &plan->campaign;
    int K = cp->looks > 1 ? cp->looks : 1, sq = kg_plan_square(plan), step = K * (sq >= 2 ? sq : 2);
    int whole = (worst + step - 1) / step * step;
    printf("\ncampaign: processes = %d per direction at R %d, S %d for every gated candidate%s (the plan has %d)",
           whole, cp->rounds, cp->samples, plan->gate.require_control ? " and control" : "", cp->processes);
    if (whole != worst)
        printf(": %d, raised to a multiple of %d so that %s completes the load-order square", worst, step,
               K > 1 ? "every look" : "the design");
    printf("\n");
}

int kg_cmd_size(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const char *plan_path = NULL, *mde_s = NULL, *alpha_s = NULL, *margin_s = NULL;
    double power = KG_DESIGN_POWER;
    const kg_cli_opt opts[] = {
        { .name = "mde", .arg = "FRACTION", .kind = KG_CLI_STRING, .dst = &mde_s,
          .help = "the minimal detectable effect: the true reduction (1 - candidate/baseline) the verdict must "
                  "detect, as 0.01 or 1% (default 1%, or twice the margin when that is 1% or more); it must exceed "
                  "the margin" },
        { .name = "power", .arg = "P", .kind = KG_CLI_REAL, .dst = &power, .min = 0.5, .max = 0.9999,
          .help = "the probability of FASTER at that effect (default 0.95)" },
        { .name = "alpha", .arg = "FRACTION", .kind = KG_CLI_STRING, .dst = &alpha_s,
          .help = "the one-sided error rate (default: PLAN's alpha)" },
        { .name = "margin", .arg = "FRACTION", .kind = KG_CLI_STRING, .dst = &margin_s,
          .help = "the reduction the lower bound must exceed (default: PLAN's margin; give the gate's "
                  "min_reduction to size the interval gate when it is larger)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "size", .args = "PLAN EVIDENCE", .about = about, .opts = opts,
                               .footer = footer, .quiet_help = "accepted as by every command: the design on stdout is "
                               "this command's answer, and -q leaves it" };
    /* lift EVIDENCE out: the parser takes one positional argument */
    int second = second_positional(opts, argc, argv);
    char **av = malloc(((size_t)argc + 1) * sizeof *av);
    if (av == NULL) return kg_cli_fail(KG_ENOMEM, "out of memory");
    int ac = 0;
    for (int i = 0; i < argc; i++)
        if (i != second) av[ac++] = argv[i];
    av[ac] = NULL;
    int parsed = kg_cli_parse(&spec, ac, av, &plan_path);
    free(av);
    if (parsed != KG_CLI_GO) return parsed;
    if (second < 0) {
        fprintf(stderr, "kgate size: EVIDENCE is missing: give the pilot's evidence folder after PLAN "
                "(kgate size PLAN EVIDENCE; see kgate size --help)\n");
        return KG_EXIT_USAGE;
    }
    const char *dir = argv[second];

    kg_plan *plan = NULL;
    kg_err err = { 0 };
    if (kg_plan_load(plan_path, &plan, &err) != KG_OK) return kg_cli_fail(KG_EINPUT, err.msg);
    double alpha = plan->campaign.alpha, margin = plan->campaign.margin, mde = 0.0;
    if (mde_s == NULL) {
        mde = 0.01;
    } else if (read_frac(mde_s, &mde) != KG_OK || mde <= 0.0) {
        kg_plan_free(plan);
        fprintf(stderr, "kgate size: --mde needs a reduction between 0 and 1 such as 0.01 or 1%%, not '%s'\n", mde_s);
        return KG_EXIT_USAGE;
    }
    if (alpha_s != NULL && (read_frac(alpha_s, &alpha) != KG_OK || !(alpha > 0.0 && alpha < 0.5))) {
        kg_plan_free(plan);
        fprintf(stderr, "kgate size: --alpha needs a fraction strictly between 0 and 0.5 such as 0.05 or 5%%, "
                "not '%s'\n", alpha_s);
        return KG_EXIT_USAGE;
    }
    if (margin_s != NULL && read_frac(margin_s, &margin) != KG_OK) {
        kg_plan_free(plan);
        fprintf(stderr, "kgate size: --margin needs a fraction in [0, 1) such as 0.005 or 0.5%%, not '%s'\n",
                margin_s);
        return KG_EXIT_USAGE;
    }
    if (mde_s == NULL && !(mde > margin) && 2 * margin < 1.0) {
        mde = 2 * margin;
        printf("note: --mde defaults to twice the margin, %.4g%%: 1%% is not above the margin %.4g%%\n", 100 * mde,
               100 * margin);
    }
    if (!(mde > margin)) {
        fprintf(stderr, "kgate size: --mde %.4g%% is not above the margin %.4g%% (%s): no design detects it with a "
                "power above alpha; give a larger --mde or a smaller --margin\n", 100 * mde, 100 * margin,
                margin_s != NULL ? "--margin" : plan_path);
        kg_plan_free(plan);
        return KG_EXIT_USAGE;
    }
    if (!(power > alpha)) {
        fprintf(stderr, "kgate size: --power %.4g is not above alpha %.4g\n", power, alpha);
        kg_plan_free(plan);
        return KG_EXIT_USAGE;
    }
    kg_evidence ev;
    if (kg_evidence_load(dir, &ev, &err) != KG_OK) {
        fprintf(stderr, "kgate size: %s: %s (EVIDENCE must be the folder of a finished pilot campaign, as kgate run "
                "writes it)\n", dir, err.msg);
        kg_plan_free(plan);
        return KG_EXIT_USAGE;
    }
    kg_analysis_in in = { .plan = ev.plan, .rows = ev.rows, .nrows = ev.nrows, .accepted = ev.accepted,
                          .nproc = ev.nproc, .state = ev.state, .limits = NULL };
    kg_varcomp vc;
    int rc = kg_varcomp_compute(&in, &vc, &err);
    if (rc != KG_OK) {
        kg_evidence_free(&ev);
        kg_plan_free(plan);
        fprintf(stderr, "kgate size: %s: %s\n", dir, err.msg);
        return rc == KG_ENOMEM ? KG_EXIT_INVALID : KG_EXIT_USAGE;
    }
    const kg_campaign *cp = &plan->campaign;
    printf("kgate size: %s from the pilot %s\n", plan_path, dir);
    printf("plan: %d rounds x %d samples per arm, %d processes per direction; alpha %.4g one-sided, margin %.4g%%\n",
           cp->rounds, cp->samples, cp->processes, alpha, 100 * margin);
    printf("target: power %.4g for a true reduction of %.4g%% (FASTER: the lower bound of the reduction above the "
           "margin)\n", power, 100 * mde);
    pilot_notes(plan, ev.plan);
    double kap[2] = { kg_median_kappa(cp->samples), kg_median_kappa(2 * cp->samples) };
    int sized = 0, worst = 0, beyond = 0;
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            if (plan->arms[a].role != KG_ROLE_CANDIDATE || !kg_plan_arm_applies(plan, a, c)) continue;
            int P = size_contrast(plan, &ev, &vc, c, a, alpha, margin, mde, power, kap);
            if (P == 0) continue;
            sized++;
            if (!(plan->cases[c].primary || plan->gate.all_cases)) continue;
            if (P < 0) beyond = 1;
            else if (P > worst) worst = P;
        }
    if (plan->gate.require_control)
        for (int c = 0; c < plan->ncases; c++)
            for (int a = 0; a < plan->narms; a++)
                if (plan->arms[a].role == KG_ROLE_CONTROL && kg_plan_arm_applies(plan, a, c) &&
                    (plan->cases[c].primary || plan->gate.all_cases)) {
                    int P = size_control(plan, &ev, &vc, c, a, alpha, power, kap);
                    if (P < 0) beyond = 1;
                    else if (P > worst) worst = P;
                }
    int status = KG_EXIT_PASS;
    if (sized == 0) {
        fprintf(stderr, "kgate size: %s: no candidate of %s could be sized from the pilot (it needs the same case "
                "and arm names, and at least 3 processes with both directions, 2 rounds and 2 samples per round: "
                "run it with processes >= 2, rounds >= 2, samples >= 2)\n", dir, plan_path);
        status = KG_EXIT_USAGE;
    } else if (beyond) {
        printf("\ncampaign: some gated candidate needs more than %d processes per direction at R %d, S %d\n",
               SIZE_PMAX, cp->rounds, cp->samples);
    } else if (worst > 0) {
        print_campaign(plan, worst);
    }
    kg_varcomp_free(&vc);
    kg_evidence_free(&ev);
    kg_plan_free(plan);
    return status;
}
