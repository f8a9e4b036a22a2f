/* stats_contamination.c: how kgate's verdicts behave when a few rounds (or
 * samples) are grossly contaminated, and what robust per-process summaries
 * of the round contrasts would change.  A study, not a repair: kgate's
 * analysis is untouched; this program calls its interval and verdict
 * (kg_effect_compute, kg_verdict_of from build/libkgate.a) on process
 * summaries D(p) computed here in several ways.
 *
 * The campaign model (docs/statistics.md, "From samples to a verdict"):
 * P processes per direction, R rounds, S samples per arm per round, two
 * arms (baseline b, candidate a).  Log time of sample s of round r of
 * process p of arm x:
 *     y = mu_x + u_p + v_px + w_prx + e_prxs
 * u_p a process effect shared by both arms (cancels in the contrast), v_px
 * an arm-by-process effect (SD sd_ap), w_prx a round effect (SD sd_round),
 * e the sample noise (SD sd_sample); mu_a - mu_b = log(1 - truth).  A
 * round's y(x) is the log of the median of its S samples (kgate's median:
 * the mean of the two middle values when S is even), delta = y(a) - y(b).
 *
 * Contamination (rate q, factor F):
 *   round_either  each (round, arm) cell independently with probability q:
 *                 that arm's round median times F (an arm host descheduled
 *                 for the whole round);
 *   round_base    the baseline's round medians only (the worst case for a
 *                 false FASTER);
 *   round_cand    the candidate's only (the worst case for a false SLOWER);
 *   sample_either each timed sample of either arm with probability q,
 *                 times F, before the round's median;
 *   burst_either  the same share q of (round, arm) cells as round_either,
 *                 concentrated in loaded processes: a process is loaded
 *                 with probability 4q, and there each cell is hit with
 *                 probability 0.25 (a host loaded for a whole process).
 *
 * Per-process summaries of the process's deltas (the estimator):
 *   mean    kgate's D(p) (the current analysis);
 *   median  the median of the deltas;
 *   trim20  the 20% trimmed mean (floor(0.2 m) dropped at each end);
 *   wins20  the 20% winsorised mean;
 *   huber   Huber's M-estimate of location, k = 1.345 robust SD (MAD
 *           scaled by 1.4826, from the process's own deltas), IRLS from
 *           the median; the mean when the MAD is 0;
 *   watch90 the mean over the rounds a per-round host-load watch did not
 *           flag: a contaminated round is flagged with probability 0.9,
 *           any round falsely with probability 0.02 (independent of the
 *           timings); a process with every round flagged keeps them all;
 *   watch50 the same with detection probability 0.5.
 * Each gives D(p); the directions, the stratified t interval and the
 * verdict are kgate's own (alpha 0.05, order_min 0.25%, margin 0.5%,
 * equivalence 1%; margin 0 is also reported from the same bounds).
 *
 * Output: CSV on stdout, one line per (design, truth, kind, rate, factor,
 * estimator): campaigns, FASTER, SLOWER, EQUIVALENT, INCONCLUSIVE at margin
 * 0.5%, FASTER and SLOWER at margin 0, the mean reduction (1 - e^theta) and
 * the coverage of the two-sided 90% interval [rho_lo, rho_hi].
 *
 *   make && cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc -o build/stats_contamination \
 *       tools/bench/stats_contamination.c build/libkgate.a -Wl,-Bstatic -lgsl -Wl,-Bdynamic -lm
 *   build/stats_contamination [N [N_CLEAN [DESIGN]]] > out.csv
 * N: campaigns per contaminated cell (default 4000), N_CLEAN per clean cell
 * (default 20000), DESIGN: obs, default or both (default both), or heavy:
 * the obs design at the observation's true 17.7% with 10% and 20% of
 * cells contaminated by 3x or 20x (round_cand, round_either, burst_either;
 * burst at 20% loads 80% of the processes). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/err.h"
#include "kgate/evidence.h"
#include "kgate/stats.h"

/* ---- counter-free RNG: xoshiro256** seeded by splitmix64 ---------- */
typedef struct { uint64_t s[4]; int has; double spare; } rng;
static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static void rng_seed(rng *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++) g->s[i] = splitmix(&seed);
    g->has = 0;
}
static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t next64(rng *g)
{
    uint64_t *s = g->s, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return r;
}
static inline double unif(rng *g) { return (double)(next64(g) >> 11) * 0x1.0p-53; }
static double gauss(rng *g)
{
    if (g->has) { g->has = 0; return g->spare; }
    double u, v, q;
    do {
        u = 2.0 * unif(g) - 1.0;
        v = 2.0 * unif(g) - 1.0;
        q = u * u + v * v;
    } while (q >= 1.0 || q == 0.0);
    double f = sqrt(-2.0 * log(q) / q);
    g->spare = v * f; g->has = 1;
    return u * f;
}

/* ---- designs, kinds, estimators ------------------------------------ */
typedef struct {
    const char *name;
    int P, R, S;
    double sd_sample, sd_round, sd_ap;
} design;

/* obs: docs/python.md's example as observed (12 processes, 30 rounds of
 * few samples) with a loaded CPU's noise; default: kgate's defaults (3
 * processes per direction for three arms, 5 rounds x 10 samples) with the
 * fake backend's default noise (sample SD 1%, arm x process SD 0.25%). */
static const design DESIGNS[] = {
    {"obs", 6, 30, 3, 0.05, 0.02, 0.01},
    {"default", 3, 5, 10, 0.01, 0.0, 0.0025},
};

enum { K_NONE, K_ROUND_EITHER, K_ROUND_BASE, K_ROUND_CAND, K_SAMPLE_EITHER, K_BURST_EITHER, NKIND };
static const char *KIND[] = {"none", "round_either", "round_base", "round_cand", "sample_either",
                             "burst_either"};
/* burst_either: the same share q of (round, arm) cells, concentrated in
 * loaded processes: a process is loaded with probability q / BURST_HIT,
 * and in a loaded process each cell is hit with probability BURST_HIT */
#define BURST_HIT 0.25

#ifndef GUARD_SHIFT
#define GUARD_SHIFT 1.0
#endif
enum { E_MEAN, E_MEDIAN, E_TRIM, E_WINS, E_HUBER, E_WATCH90, E_WATCH50, E_GUARD, NEST };
static const char *EST[] = {"mean", "median", "trim20", "wins20", "huber", "watch90", "watch50", "guard"};

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_sorted(const double *v, int n)
{
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double est_mean(const double *v, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += v[i];
    return s / n;
}

/* v sorted */
static double est_trim(const double *v, int n, double frac)
{
    int g = (int)floor(frac * n);
    double s = 0.0;
    for (int i = g; i < n - g; i++) s += v[i];
    return s / (n - 2 * g);
}

static double est_wins(const double *v, int n, double frac)
{
    int g = (int)floor(frac * n);
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        int j = i < g ? g : (i >= n - g ? n - g - 1 : i);
        s += v[j];
    }
    return s / n;
}

/* v sorted; tmp scratch of n */
static double est_huber(const double *v, int n, double *tmp)
{
    double med = median_sorted(v, n);
    for (int i = 0; i < n; i++) tmp[i] = fabs(v[i] - med);
    qsort(tmp, (size_t)n, sizeof *tmp, cmpd);
    double scale = 1.4826 * median_sorted(tmp, n);
    if (!(scale > 0.0)) return est_mean(v, n);
    double k = 1.345 * scale, mu = med;
    for (int it = 0; it < 50; it++) {
        double sw = 0.0, swx = 0.0;
        for (int i = 0; i < n; i++) {
            double r = fabs(v[i] - mu), w = r <= k ? 1.0 : k / r;
            sw += w; swx += w * v[i];
        }
        double nmu = swx / sw;
        if (fabs(nmu - mu) < 1e-12 * (1.0 + fabs(mu))) { mu = nmu; break; }
        mu = nmu;
    }
    return mu;
}

typedef struct {
    long n, faster, slower, equiv, inconc, faster0, slower0, cover;
    double sum_rho;
} tally;

#define MAXP 16
#define MAXR 64
#define MAXS 32

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return median_sorted(v, n);
}

/* One campaign: fills D[e][p] for every estimator. */
static void campaign(const design *d, double truth, int kind, double q, double F, rng *g,
                     double D[NEST][2 * MAXP], int dir[2 * MAXP])
{
    double lf = log(F), mu_a = log(1.0 - truth);
    int np = 2 * d->P;
    double delta[MAXR], sorted[MAXR], tmp[MAXR], kept[MAXR];
    int contaminated[MAXR], flag90[MAXR], flag50[MAXR];
    for (int p = 0; p < np; p++) {
        dir[p] = p < d->P ? KG_DIR_FWD : KG_DIR_REV;
        double vap[2] = {d->sd_ap * gauss(g), d->sd_ap * gauss(g)};
        int loaded = kind == K_BURST_EITHER && unif(g) < q / BURST_HIT;
        for (int r = 0; r < d->R; r++) {
            double y[2];
            int cont = 0;
            for (int x = 0; x < 2; x++) { /* 0 baseline, 1 candidate */
                double s[MAXS];
                double base = (x == 1 ? mu_a : 0.0) + vap[x] + d->sd_round * gauss(g);
                for (int k = 0; k < d->S; k++) {
                    s[k] = exp(base + d->sd_sample * gauss(g));
                    if (kind == K_SAMPLE_EITHER && unif(g) < q) { s[k] *= F; cont = 1; }
                }
                y[x] = log(median_of(s, d->S));
                int hit = 0;
                if (kind == K_ROUND_EITHER) hit = unif(g) < q;
                else if (kind == K_ROUND_BASE && x == 0) hit = unif(g) < q;
                else if (kind == K_ROUND_CAND && x == 1) hit = unif(g) < q;
                else if (loaded) hit = unif(g) < BURST_HIT;
                if (hit) { y[x] += lf; cont = 1; }
            }
            delta[r] = y[1] - y[0];
            contaminated[r] = cont;
            /* the watch: detection of a contaminated round, false alarms
             * independent of the timings */
            double u1 = unif(g), u2 = unif(g);
            flag90[r] = cont ? u1 < 0.9 : u2 < 0.02;
            flag50[r] = cont ? u1 < 0.5 : u2 < 0.02;
        }
        int m = d->R;
        memcpy(sorted, delta, sizeof(double) * (size_t)m);
        qsort(sorted, (size_t)m, sizeof *sorted, cmpd);
        D[E_MEAN][p] = est_mean(delta, m);
        D[E_GUARD][p] = D[E_MEAN][p];
        D[E_MEDIAN][p] = median_sorted(sorted, m);
        D[E_TRIM][p] = est_trim(sorted, m, 0.2);
        D[E_WINS][p] = est_wins(sorted, m, 0.2);
        D[E_HUBER][p] = est_huber(sorted, m, tmp);
        for (int w = 0; w < 2; w++) {
            int *fl = w == 0 ? flag90 : flag50, nk = 0;
            for (int r = 0; r < m; r++)
                if (!fl[r]) kept[nk++] = delta[r];
            D[w == 0 ? E_WATCH90 : E_WATCH50][p] = nk > 0 ? est_mean(kept, nk) : est_mean(delta, m);
        }
        (void)contaminated;
    }
}

static void run_cell(const design *d, double truth, int kind, double q, double F, long N,
                     uint64_t cell_seed)
{
    tally t[NEST];
    memset(t, 0, sizeof t);
    double D[NEST][2 * MAXP];
    int dir[2 * MAXP];
    const double margin = 0.005, equiv = 0.01, alpha = 0.05, order_min = 0.0025;
    for (long c = 0; c < N; c++) {
        rng g;
        rng_seed(&g, cell_seed * 1000003ULL + (uint64_t)c);
        campaign(d, truth, kind, q, F, &g, D, dir);
        for (int e = 0; e < NEST; e++) {
            kg_effect eff;
            kg_err err;
            memset(&err, 0, sizeof err);
            if (kg_effect_compute(D[e], dir, 2 * d->P, alpha, order_min, &eff, &err) != KG_OK) {
                fprintf(stderr, "kg_effect_compute failed\n");
                exit(2);
            }
            kg_verdict v = kg_verdict_of(&eff, margin, equiv);
            kg_verdict v0 = kg_verdict_of(&eff, 0.0, equiv);
            if (e == E_GUARD) {
                /* kgate's robust check (src/analysis/analysis.c): the mean's
                 * FASTER or SLOWER, demoted to INCONCLUSIVE where the Huber
                 * effect's verdict differs and the two effects are more than
                 * GUARD_SHIFT of the mean's SE apart */
                kg_effect eh;
                if (kg_effect_compute(D[E_HUBER], dir, 2 * d->P, alpha, order_min, &eh, &err) == KG_OK &&
                    eh.has_interval && fabs(eff.theta - eh.theta) > GUARD_SHIFT * eff.se) {
                    kg_verdict vh = kg_verdict_of(&eh, margin, equiv), vh0 = kg_verdict_of(&eh, 0.0, equiv);
                    if ((v == KG_VERDICT_FASTER || v == KG_VERDICT_SLOWER) && vh != v) v = KG_VERDICT_INCONCLUSIVE;
                    if ((v0 == KG_VERDICT_FASTER || v0 == KG_VERDICT_SLOWER) && vh0 != v0) v0 = KG_VERDICT_INCONCLUSIVE;
                }
            }
            tally *ty = &t[e];
            ty->n++;
            ty->faster += v == KG_VERDICT_FASTER;
            ty->slower += v == KG_VERDICT_SLOWER;
            ty->equiv += v == KG_VERDICT_EQUIVALENT;
            ty->inconc += v == KG_VERDICT_INCONCLUSIVE;
            ty->faster0 += v0 == KG_VERDICT_FASTER;
            ty->slower0 += v0 == KG_VERDICT_SLOWER;
            ty->cover += eff.rho_lo <= truth && truth <= eff.rho_hi;
            ty->sum_rho += eff.rho;
        }
    }
    for (int e = 0; e < NEST; e++)
        printf("%s,%.3f,%s,%.4f,%g,%s,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%.5f,%ld\n", d->name, truth,
               KIND[kind], q, F, EST[e], t[e].n, t[e].faster, t[e].slower, t[e].equiv, t[e].inconc,
               t[e].faster0, t[e].slower0, t[e].sum_rho / (double)t[e].n, t[e].cover);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    long N = argc > 1 ? atol(argv[1]) : 4000;
    long NC = argc > 2 ? atol(argv[2]) : 20000;
    const char *which = argc > 3 ? argv[3] : "both";
    static const double TRUTH[] = {0.0, 0.01, 0.10, 0.30};
    /* the rates are the expected share of contaminated (round, arm) cells
     * (of samples for sample_either) */
    static const double RATE[] = {0.001, 0.005, 0.01, 0.02, 0.05};
    static const double FACT[] = {2.0, 10.0, 50.0};
    printf("design,truth,kind,rate,factor,estimator,n,faster,slower,equivalent,inconclusive,"
           "faster_m0,slower_m0,mean_rho,cover90\n");
    uint64_t cell = 0;
    if (strcmp(which, "heavy") == 0) {
        /* the observation's size: numpy 83.0 us -> 68.3 us (a true 17.7%
         * reduction), with heavier contamination than the grid's 5% */
        static const double HR[] = {0.10, 0.20};
        static const double HF[] = {3.0, 20.0};
        static const int HK[] = {K_ROUND_CAND, K_ROUND_EITHER, K_BURST_EITHER};
        for (size_t ki = 0; ki < 3; ki++)
            for (size_t ri = 0; ri < 2; ri++)
                for (size_t fi = 0; fi < 2; fi++)
                    run_cell(&DESIGNS[0], 1.0 - 68.3 / 83.0, HK[ki], HR[ri], HF[fi], N, 5000 + ++cell);
        return 0;
    }
    for (size_t di = 0; di < sizeof DESIGNS / sizeof *DESIGNS; di++) {
        const design *d = &DESIGNS[di];
        if (strcmp(which, "both") != 0 && strcmp(which, d->name) != 0) { cell += 1000; continue; }
        for (size_t ti = 0; ti < 4; ti++) {
            run_cell(d, TRUTH[ti], K_NONE, 0.0, 1.0, NC, ++cell);
            for (int k = K_ROUND_EITHER; k < NKIND; k++)
                for (size_t ri = 0; ri < 5; ri++)
                    for (size_t fi = 0; fi < 3; fi++)
                        run_cell(d, TRUTH[ti], k, RATE[ri], FACT[fi], N, ++cell);
        }
    }
    return 0;
}
