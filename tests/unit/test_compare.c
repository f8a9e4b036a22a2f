/* test_compare.c: unit tests of kgate compare's arithmetic and refusals:
 * the unpaired change of two campaigns' levels (kg_change_compute,
 * kg_change_verdict in src/analysis/stats.c) against numbers worked by hand, and
 * the identity rules (kg_compare_identity, kg_compare_device_model in
 * src/verify/compare.c).  No files, no GPU. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "verify/compare.h"
#include "kgate/stats.h"
#include "base/util.h"

/* An effect from process means: fwd[0..nf), rev[0..nr). */
static kg_effect effect_of(const double *fwd, int nf, const double *rev, int nr)
{
    double D[16];
    int dir[16], n = 0;
    for (int i = 0; i < nf; i++) { D[n] = fwd[i]; dir[n++] = KG_DIR_FWD; }
    for (int i = 0; i < nr; i++) { D[n] = rev[i]; dir[n++] = KG_DIR_REV; }
    kg_effect e;
    kg_err err = { 0, "" };
    CHECK(kg_effect_compute(D, dir, n, 0.05, 0.0025, &e, &err) == KG_OK);
    return e;
}

/* A: fwd {0, 0.02}, rev {0.01, 0.03}: theta_fwd 0.01, theta_rev 0.02,
 * theta 0.015; within-direction squares 4 x 1e-4 over 2 df, s^2 = 2e-4;
 * se^2 = s^2 (1/8 + 1/8) = 5e-5.  B = A + 0.05: the same spread, so
 * df = (2 v)^2 / (2 v^2 / 2) = 4 and t(0.975, 4) = 2.7764451051977987;
 * se = sqrt(1e-4) = 0.01; the log interval 0.05 -/+ 0.027764451 =
 * [0.022235549, 0.077764451]; as a change in time e^x - 1:
 * +5.1271%, [+2.2484601%, +8.0868031%]. */
static void test_equal_spread(void)
{
    const double af[] = { 0.0, 0.02 }, ar[] = { 0.01, 0.03 };
    const double bf[] = { 0.05, 0.07 }, br[] = { 0.06, 0.08 };
    kg_effect a = effect_of(af, 2, ar, 2), b = effect_of(bf, 2, br, 2);
    CHECK_NEAR(a.theta, 0.015, 1e-15, 1e-12);
    CHECK_NEAR(a.se * a.se, 5e-5, 1e-18, 1e-10);
    CHECK_NEAR(a.df, 2.0, 0, 0);
    kg_change c;
    kg_err err = { 0, "" };
    CHECK(kg_change_compute(&a, &b, 0.05, &c, &err) == KG_OK);
    CHECK(c.has_interval);
    CHECK_NEAR(c.diff, 0.05, 1e-15, 1e-12);
    CHECK_NEAR(c.se, 0.01, 1e-15, 1e-10);
    CHECK_NEAR(c.df, 4.0, 1e-12, 1e-12);
    CHECK_NEAR(c.tq, 2.7764451051977987, 1e-9, 1e-9);
    CHECK_NEAR(c.lo, 0.022235548948022016, 1e-10, 1e-9);
    CHECK_NEAR(c.hi, 0.07776445105197799, 1e-10, 1e-9);
    CHECK_NEAR(c.change, exp(0.05) - 1.0, 1e-15, 1e-12);
    CHECK_NEAR(c.change_lo, 0.022484601279451955, 1e-10, 1e-9);
    CHECK_NEAR(c.change_hi, 0.08086803135492615, 1e-10, 1e-9);
    /* the verdicts: the interval [+2.25%, +8.09%] in time */
    CHECK(kg_change_verdict(&c, 0.02) == KG_VERDICT_SLOWER);        /* 1.0225 > 1.02 */
    CHECK(kg_change_verdict(&c, 0.03) == KG_VERDICT_INCONCLUSIVE);  /* reaches 1.03 and beyond it */
    CHECK(kg_change_verdict(&c, 0.10) == KG_VERDICT_EQUIVALENT);    /* inside [0.90, 1.10] */
    /* the other way round: B faster by the same amount */
    CHECK(kg_change_compute(&b, &a, 0.05, &c, &err) == KG_OK);
    CHECK_NEAR(c.diff, -0.05, 1e-15, 1e-12);
    CHECK_NEAR(c.ratio_hi, exp(-0.022235548948022016), 1e-10, 1e-9);
    CHECK(kg_change_verdict(&c, 0.02) == KG_VERDICT_FASTER);        /* 0.978 < 0.98 */
    CHECK(kg_change_verdict(&c, 0.025) == KG_VERDICT_INCONCLUSIVE); /* 0.978 > 0.975 */
}

/* Welch-Satterthwaite with unequal spreads: A as above (se^2 5e-5, df 2);
 * B: fwd {0.10, 0.14, 0.12}, rev {0.11, 0.13, 0.12}: theta 0.12, squares
 * 8e-4 + 2e-4 over 4 df, s^2 = 2.5e-4, se^2 = s^2 (1/12 + 1/12) =
 * 1/24000.  v = 5e-5 + 1/24000 = 11/120000; df = v^2 / (va^2/2 + vb^2/4)
 * = 121 / 24.25 = 484/97 = 4.98969072...; se = sqrt(v) = 0.0095742711. */
static void test_welch(void)
{
    const double af[] = { 0.0, 0.02 }, ar[] = { 0.01, 0.03 };
    const double bf[] = { 0.10, 0.14, 0.12 }, br[] = { 0.11, 0.13, 0.12 };
    kg_effect a = effect_of(af, 2, ar, 2), b = effect_of(bf, 3, br, 3);
    CHECK_NEAR(b.theta, 0.12, 1e-15, 1e-12);
    CHECK_NEAR(b.se * b.se, 1.0 / 24000.0, 1e-18, 1e-10);
    kg_change c;
    kg_err err = { 0, "" };
    CHECK(kg_change_compute(&a, &b, 0.05, &c, &err) == KG_OK);
    CHECK_NEAR(c.diff, 0.105, 1e-15, 1e-12);
    CHECK_NEAR(c.se, 0.009574271077563382, 1e-12, 1e-10);
    CHECK_NEAR(c.df, 484.0 / 97.0, 1e-12, 1e-10);
    CHECK_NEAR(c.tq, kg_t_quantile(0.975, 484.0 / 97.0), 1e-12, 1e-12);
    /* t(0.975, 5) = 2.570582, t(0.975, 4) = 2.776445: in between */
    CHECK(c.tq > 2.5705 && c.tq < 2.7765);
    CHECK_NEAR(c.lo, c.diff - c.tq * c.se, 1e-15, 1e-12);
    CHECK_NEAR(c.hi, c.diff + c.tq * c.se, 1e-15, 1e-12);
    CHECK(kg_change_verdict(&c, 0.02) == KG_VERDICT_SLOWER);
    /* a wider alpha gives a narrower interval */
    kg_change w;
    CHECK(kg_change_compute(&a, &b, 0.5, &w, &err) == KG_OK);
    CHECK(w.hi - w.lo < c.hi - c.lo);
    CHECK(kg_change_compute(&a, &b, 0.0, &w, &err) == KG_EINPUT);
}

/* No spread at all: df is the two campaigns' together and the interval a
 * point; fewer than 2 processes in a direction: no interval. */
static void test_degenerate(void)
{
    const double af[] = { 0.01, 0.01 }, ar[] = { 0.01, 0.01 };
    const double bf[] = { 0.02, 0.02, 0.02 }, br[] = { 0.02, 0.02 };
    kg_effect a = effect_of(af, 2, ar, 2), b = effect_of(bf, 3, br, 2);
    kg_change c;
    kg_err err = { 0, "" };
    CHECK(kg_change_compute(&a, &b, 0.05, &c, &err) == KG_OK);
    CHECK(c.has_interval);
    CHECK_NEAR(c.df, 2.0 + 3.0, 0, 0);
    CHECK_NEAR(c.lo, 0.01, 1e-15, 1e-12);
    CHECK_NEAR(c.hi, 0.01, 1e-15, 1e-12);
    CHECK(kg_change_verdict(&c, 0.02) == KG_VERDICT_EQUIVALENT);
    const double one[] = { 0.03 };
    kg_effect s = effect_of(one, 1, ar, 2);
    CHECK(!s.has_interval);
    CHECK(kg_change_compute(&a, &s, 0.05, &c, &err) == KG_OK);
    CHECK(!c.has_interval && isnan(c.lo) && isnan(c.change_hi));
    CHECK_NEAR(c.diff, s.theta - a.theta, 1e-15, 1e-12);
    CHECK(kg_change_verdict(&c, 0.02) == KG_VERDICT_INCONCLUSIVE);
    CHECK(kg_change_verdict(NULL, 0.02) == KG_VERDICT_INCONCLUSIVE);
}

static void test_device_model(void)
{
    char m[128];
    kg_compare_device_model("NVIDIA H200 (sm_90, 132 SMs, L2 60 MiB, 140 GiB, driver 12.8, UUID GPU-1234)", m,
                            sizeof m);
    CHECK(strcmp(m, "NVIDIA H200") == 0);
    kg_compare_device_model("AMD EPYC 9654 96-Core Processor, 2 online cores", m, sizeof m);
    CHECK(strcmp(m, "AMD EPYC 9654 96-Core Processor") == 0);
    kg_compare_device_model("Intel(R) Xeon(R) Platinum 8480+, 16 online cores", m, sizeof m);
    CHECK(strcmp(m, "Intel(R) Xeon(R) Platinum 8480+") == 0);
    kg_compare_device_model("scripted timings (no hardware)", m, sizeof m);
    CHECK(strcmp(m, "scripted timings") == 0);
    kg_compare_device_model(NULL, m, sizeof m);
    CHECK(strcmp(m, "") == 0);
}

static void test_identity(void)
{
    kg_compare_ident a = { "A", "/a", "cuda", "NVIDIA H200 (sm_90, UUID GPU-1)", "node1", "0.1.0", "abc" };
    kg_compare_ident b = a;
    kg_compare_opts o = { .alpha = 0.05, .margin = 0.02 };
    kg_sb notes = { 0 };
    kg_err err = { 0, "" };
    b.label = "B";
    b.dir = "/b";
    /* another GPU of the same model, another host, another git revision: notes only */
    b.device = "NVIDIA H200 (sm_90, UUID GPU-2)";
    b.host = "node2";
    b.git_sha = "def";
    CHECK(kg_compare_identity(&a, &b, &o, &notes, &err) == KG_OK);
    CHECK_STR_CONTAINS(notes.buf, "same model");
    CHECK_STR_CONTAINS(notes.buf, "host node2");
    CHECK_STR_CONTAINS(notes.buf, "git def");
    kg_sb_free(&notes);
    /* --same-device: the UUID and the host must agree */
    o.same_device = 1;
    kg_err_clear(&err);
    CHECK(kg_compare_identity(&a, &b, &o, &notes, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "--same-device");
    CHECK_STR_CONTAINS(err.msg, "GPU-2");
    o.same_device = 0;
    kg_sb_free(&notes);
    /* another model: refused, naming both and the flag; allowed with it */
    b.device = "NVIDIA H100 80GB HBM3 (sm_90, UUID GPU-3)";
    kg_err_clear(&err);
    CHECK(kg_compare_identity(&a, &b, &o, &notes, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "'NVIDIA H200' and 'NVIDIA H100 80GB HBM3'");
    CHECK_STR_CONTAINS(err.msg, "--allow-device");
    o.allow_device = 1;
    kg_err_clear(&err);
    CHECK(kg_compare_identity(&a, &b, &o, &notes, &err) == KG_OK);
    CHECK_STR_CONTAINS(notes.buf, "another device");
    kg_sb_free(&notes);
    o.allow_device = 0;
    /* another backend is another device */
    b = a;
    b.label = "B";
    b.backend = "cpu";
    kg_err_clear(&err);
    CHECK(kg_compare_identity(&a, &b, &o, &notes, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "--allow-device");
    /* another kgate version: refused naming both and the flag */
    b = a;
    b.label = "B";
    b.version = "0.2.0";
    kg_err_clear(&err);
    CHECK(kg_compare_identity(&a, &b, &o, &notes, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "kgate 0.2.0");
    CHECK_STR_CONTAINS(err.msg, "kgate 0.1.0");
    CHECK_STR_CONTAINS(err.msg, "--allow-version");
    o.allow_version = 1;
    kg_err_clear(&err);
    CHECK(kg_compare_identity(&a, &b, &o, &notes, &err) == KG_OK);
    CHECK_STR_CONTAINS(notes.buf, "--allow-version");
    kg_sb_free(&notes);
}

/* Bad options and too few folders come back as usage errors, before any
 * folder is read. */
static void test_usage(void)
{
    const char *dirs[] = { "/nonexistent-a", "/nonexistent-b" };
    kg_compare_opts o = { .alpha = 0.05, .margin = 0.02 };
    kg_compare_summary sum;
    kg_sb out = { 0 };
    kg_err err = { 0, "" };
    CHECK(kg_compare_dirs(dirs, 1, &o, &out, &sum, &err) == KG_EUSAGE);
    kg_err_clear(&err);
    o.alpha = 1.5;
    CHECK(kg_compare_dirs(dirs, 2, &o, &out, &sum, &err) == KG_EUSAGE);
    o.alpha = 0.05;
    o.same_device = o.allow_device = 1;
    kg_err_clear(&err);
    CHECK(kg_compare_dirs(dirs, 2, &o, &out, &sum, &err) == KG_EUSAGE);
    o.same_device = o.allow_device = 0;
    kg_err_clear(&err);
    CHECK(kg_compare_dirs(dirs, 2, &o, &out, &sum, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "not an evidence folder");
    CHECK(out.len == 0);
    kg_sb_free(&out);
}

int main(void)
{
    test_equal_spread();
    test_welch();
    test_degenerate();
    test_device_model();
    test_identity();
    test_usage();
    return kg_test_finish("test_compare");
}
