/* test_screening.c: the screen's futility rule (report/screening.h,
 * docs/statistics.md "Screening: what a candidate costs") over simulated
 * campaigns, each over enough seeds that it cannot pass or fail by luck.
 *
 * A campaign is its process means D(p) (the log ratio of a candidate to
 * its baseline, one per process), directions alternating as the schedule
 * gives them (slot parity), each D(p) = theta + order(dir) + N(0, sd).
 * After each process from the fourth on (the first with two processes
 * per direction) the prefix is analysed by kg_effect_compute and the rule
 * applied at L = 2P - 3 looks, one gated case; the campaign drops the
 * candidate at the first look whose upper bound is below the margin.
 *   1. the truth exactly at the margin (the worst case of "faster by at
 *      least the margin"), P = 3, 4 and 8 processes per direction, with
 *      and without an order effect: dropped in at most alpha = 5% of the
 *      campaigns (the union bound gives alpha; the looks' correlation
 *      makes it far less);
 *   2. a candidate 30% slower against a 1% margin, process SD 1%: dropped
 *      at the first look in at least 99% of the campaigns (what the screen
 *      saves);
 *   3. no interval (one direction short): never dropped, bound NAN. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "../check.h"
#include "kgate/stats.h"
#include "report/screening.h"

static uint64_t rng_state;

static double uniform(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
    return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
}

/* One campaign: the look (process index) that drops it, or -1. */
static int campaign(int P, double theta, double order, double sd, double alpha, double margin)
{
    double D[2 * 64];
    int dir[2 * 64];
    int looks = 2 * P - 3;
    for (int p = 0; p < 2 * P; p++) {
        dir[p] = p % 2;
        D[p] = theta + (dir[p] ? -order : order) / 2 + sd * normal();
        if (p < 3) continue;
        kg_effect e;
        kg_err err = { 0 };
        double ucb;
        if (kg_effect_compute(D, dir, p + 1, alpha, 0.0025, &e, &err) != KG_OK) continue;
        if (kg_screening_futile(&e, alpha, looks, 1, margin, &ucb)) return p;
    }
    return -1;
}

static void test_level(void)
{
    const double alpha = 0.05, margin = 0.01, theta = log(1.0 - margin);
    const int seeds = 4000;
    const int Ps[] = { 3, 4, 8 };
    for (size_t i = 0; i < sizeof Ps / sizeof Ps[0]; i++)
        for (int withorder = 0; withorder < 2; withorder++) {
            rng_state = 1000 * (uint64_t)Ps[i] + (uint64_t)withorder;
            int dropped = 0;
            for (int s = 0; s < seeds; s++)
                dropped += campaign(Ps[i], theta, withorder ? 0.005 : 0.0, 0.01, alpha, margin) >= 0;
            double rate = (double)dropped / seeds;
            fprintf(stderr, "futility at the margin, P = %d%s: dropped in %d of %d (%.2f%%)\n", Ps[i],
                    withorder ? ", order effect 0.5%" : "", dropped, seeds, 100 * rate);
            CHECK_MSG(rate <= alpha, "P = %d: %.4f > alpha", Ps[i], rate);
        }
}

static void test_power(void)
{
    rng_state = 77;
    const int seeds = 2000;
    int first = 0;
    for (int s = 0; s < seeds; s++) first += campaign(4, log(1.30), 0.0, 0.01, 0.05, 0.01) == 3;
    fprintf(stderr, "futility, 30%% slower: dropped at the first look in %d of %d\n", first, seeds);
    CHECK(first >= seeds * 99 / 100);
}

static void test_no_interval(void)
{
    double D[] = { -0.3, -0.31, -0.29 };
    int dir[] = { 0, 1, 0 };
    kg_effect e;
    kg_err err = { 0 };
    double ucb = 0;
    CHECK(kg_effect_compute(D, dir, 3, 0.05, 0.0025, &e, &err) == KG_OK);
    CHECK(!e.has_interval);
    CHECK(kg_screening_futile(&e, 0.05, 5, 1, 0.01, &ucb) == 0);
    CHECK(isnan(ucb));
}

int main(void)
{
    test_level();
    test_power();
    test_no_interval();
    return kg_test_finish("test_screening");
}
