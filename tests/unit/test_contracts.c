/* test_contracts.c: unit tests of the precision contracts (the bounds of
 * kg_ops_bound_sum and kg_oracle_compare_ct).
 *
 * Outputs are computed here from the oracle's own inputs, as the cheats
 * of tests/contracts/ compute them: an honest float32 GEMM and rowsum,
 * a GEMM on inputs rounded to TF32, and a rowsum accumulated in f16.
 * Every claim is checked on eight seeds (two under the sanitizers), so
 * that no result holds by the luck of one draw:
 *   - the default f32 contract admits the honest kernels and rejects TF32
 *     inputs (K = 1024) and f16 accumulation (N = 2048);
 *   - `precision = tf32` admits the TF32 GEMM and the honest one, TF32 by
 *     truncation, by rounding ties to even, one operand each way, and
 *     refuses bfloat16 inputs;
 *     it admits TF32 on a model of a truncating matrix unit, and refuses
 *     bfloat16 there;
 *   - `tolerance = 1e-4` admits the f16 rowsum; `tolerance = 1` is too
 *     weak (zeros pass) and fails every comparison, saying so;
 *   - for bf16 and f16 inputs the default bound is the one kgate had
 *     before contracts (the worst case capped by the dtype ceiling);
 *   - rows of one repeated value, whose float32 sums err systematically,
 *     get the worst case, which every honest sum of 500 values meets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kgate/kernel.h"
#include "kgate/op.h"
#include "kgate/oracle.h"
#include "ops/gemm.h"

/* The sanitizer build (make sanitize) runs the same code for memory
 * errors on two of the seeds (every claim must hold on each seed it runs);
 * the regular build asserts every claim on all eight. */
#if defined(__SANITIZE_ADDRESS__)
#define SEEDS 2
#else
#define SEEDS 8
#endif

/* x with its `drop` low mantissa bits rounded away (mode 0: to nearest,
 * ties away; 2: to nearest, ties to even) or truncated (1); drop 0: x */
static float narrow(float x, int drop, int mode)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if (drop > 0 && (u & 0x7f800000u) != 0x7f800000u) {
        if (mode == 0) u += 1u << (drop - 1);
        else if (mode == 2) u += (1u << (drop - 1)) - 1u + ((u >> drop) & 1u);
        u &= ~((1u << drop) - 1u);
    }
    memcpy(&x, &u, sizeof x);
    return x;
}

/* A GEMM whose A and B have `drop` low bits dropped (13: TF32, 16:
 * bfloat16), each operand rounded (ties away or to even) or truncated
 * (narrow's modes), accumulated in float32 */
typedef struct conv { int drop, trunc_a, trunc_b, skip_last; const char *name; } conv;

static void gemm_conv(const kg_case_data *d, conv v, float *C)
{
    const kg_case *c = d->kase;
    const float *A = d->in[0], *B = d->in[1];
    for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < c->N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < c->K - v.skip_last; k++)
                acc += narrow(A[i * c->K + k], v.drop, v.trunc_a) * narrow(B[j * c->K + k], v.drop, v.trunc_b);
            C[i * c->N + j] = acc;
        }
}

static void gemm(const kg_case_data *d, int round_tf32, float *C)
{
    conv v = { round_tf32 ? 13 : 0, 0, 0, 0, "" };
    gemm_conv(d, v, C);
}

static uint16_t h_add(uint16_t x, uint16_t y)
{
    return kg_f32_to_f16(kg_f16_to_f32(x) + kg_f16_to_f32(y));
}

/* lanes = 0: float32, sequential; else f16 in `lanes` lanes, combined in f16 */
static void rowsum(const kg_case_data *d, int lanes, float *Y)
{
    const kg_case *c = d->kase;
    const float *X = d->in[0];
    for (int64_t i = 0; i < c->M; i++) {
        if (lanes == 0) {
            float s = 0.0f;
            for (int64_t j = 0; j < c->N; j++) s += X[i * c->N + j];
            Y[i] = s;
            continue;
        }
        uint16_t lane[256] = { 0 };
        for (int64_t j = 0; j < c->N; j++) lane[j % lanes] = h_add(lane[j % lanes], kg_f32_to_f16(X[i * c->N + j]));
        for (int w = lanes / 2; w >= 1; w /= 2)
            for (int l = 0; l < w; l++) lane[l] = h_add(lane[l], lane[l + w]);
        Y[i] = kg_f16_to_f32(lane[0]);
    }
}

static int passes(const kg_case_data *d, const kg_contract *ct, const float *out, char *msg, size_t cap)
{
    kg_check r;
    kg_err err = { 0 };
    if (kg_oracle_compare_ct(d, ct, 0, out, &r, &err) != KG_OK) {
        snprintf(msg, cap, "compare failed: %.200s", err.msg);
        return -1;
    }
    snprintf(msg, cap, "%.250s (max err/bound %.3g)", r.msg, r.max_rel);
    return r.pass;
}

static void test_gemm(void)
{
    kg_case c = { .name = "g", .op = "gemm_bt", .dtype = KG_DT_F32, .M = 48, .N = 48, .K = 1024,
                  .splits = -1, .eps = 1e-5, .scale = 1.0, .primary = 1 };
    kg_contract def = { KG_PREC_DTYPE, 0.0 }, tf = { KG_PREC_TF32, 0.0 };
    float *honest = malloc(48 * 48 * sizeof *honest), *t = malloc(48 * 48 * sizeof *t);
    CHECK(honest != NULL && t != NULL);
    for (uint64_t seed = 1; seed <= SEEDS && honest && t; seed++) {
        kg_case_data d;
        kg_err err = { 0 };
        CHECK(kg_oracle_prepare(&c, seed * 7919, &d, &err) == KG_OK);
        gemm(&d, 0, honest);
        gemm(&d, 1, t);
        char m[320];
        CHECK_MSG(passes(&d, &def, honest, m, sizeof m) == 1, "seed %llu: honest f32 gemm rejected: %s",
                  (unsigned long long)seed, m);
        CHECK_MSG(passes(&d, &def, t, m, sizeof m) == 0, "seed %llu: TF32 gemm admitted under f32: %s",
                  (unsigned long long)seed, m);
        CHECK_MSG(passes(&d, &tf, t, m, sizeof m) == 1, "seed %llu: TF32 gemm rejected under tf32: %s",
                  (unsigned long long)seed, m);
        CHECK_MSG(passes(&d, &tf, honest, m, sizeof m) == 1, "seed %llu: honest gemm rejected under tf32: %s",
                  (unsigned long long)seed, m);
        /* the contract's bounds are cached: a second look gives the same */
        CHECK(passes(&d, &tf, t, m, sizeof m) == 1);
        kg_oracle_release(&d);
    }
    free(honest);
    free(t);
}

/* The tf32 contract admits TF32 by rounding (ties away, and ties to even
 * as cuBLAS's TF32 kernels round) and by truncation (what a tensor core
 * may do with raw f32 operands), also one operand each way,
 * on the oracle's inputs, whose structured rows include rows of one sign
 * (where truncation's errors add up: the contract's bound before it
 * admitted truncation failed there); it refuses bfloat16 inputs, rounded
 * or truncated, and one term of K = 2048 skipped. */
static void test_tf32_conversions(void)
{
    const conv admitted[6] = { { 13, 0, 0, 0, "rounded" }, { 13, 1, 1, 0, "truncated" },
                               { 13, 1, 0, 0, "A truncated, B rounded" }, { 13, 0, 1, 0, "A rounded, B truncated" },
                               { 13, 2, 2, 0, "rounded, ties to even (cuBLAS)" },
                               { 13, 2, 1, 0, "A rounded, ties to even, B truncated" } };
    const conv refused[3] = { { 16, 0, 0, 0, "bf16 rounded" }, { 16, 1, 1, 0, "bf16 truncated" },
                              { 13, 1, 1, 1, "TF32 truncated, the last term of K skipped" } };
    kg_case c = { .name = "g", .op = "gemm_bt", .dtype = KG_DT_F32, .M = 32, .N = 32, .K = 2048,
                  .splits = -1, .eps = 1e-5, .scale = 1.0, .primary = 1 };
    kg_contract tf = { KG_PREC_TF32, 0.0 };
    float *C = malloc(32 * 32 * sizeof *C);
    CHECK(C != NULL);
    for (uint64_t seed = 1; seed <= SEEDS && C != NULL; seed++) {
        kg_case_data d;
        kg_err err = { 0 };
        CHECK(kg_oracle_prepare(&c, seed * 6151, &d, &err) == KG_OK);
        char m[320];
        for (int v = 0; v < 6; v++) {
            gemm_conv(&d, admitted[v], C);
            CHECK_MSG(passes(&d, &tf, C, m, sizeof m) == 1, "seed %llu: TF32 %s rejected under tf32: %s",
                      (unsigned long long)seed, admitted[v].name, m);
        }
        for (int v = 0; v < 3; v++) {
            gemm_conv(&d, refused[v], C);
            CHECK_MSG(passes(&d, &tf, C, m, sizeof m) == 0, "seed %llu: %s admitted under tf32: %s",
                      (unsigned long long)seed, refused[v].name, m);
        }
        kg_oracle_release(&d);
    }
    free(C);
}

/* x truncated toward zero to a multiple of 2^e */
static double trunc_to(double x, int e)
{
    double q = ldexp(1.0, e);
    return q > 0.0 ? trunc(x / q) * q : x;
}

/* A GEMM on a matrix unit's arithmetic, as Fasi, Higham, Mikaitis and
 * Pranesh measured it: in each block of `blk` products (exact: TF32 times
 * TF32 fits a float64) and the accumulator, every addend is aligned to
 * the largest exponent among them and truncated to 24 bits below it, the
 * aligned values are added exactly, and the sum is truncated to float32.
 * No extra alignment bits: the coarsest such unit. */
static void gemm_tc(const kg_case_data *d, conv v, int blk, float *C)
{
    const kg_case *c = d->kase;
    const float *A = d->in[0], *B = d->in[1];
    for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < c->N; j++) {
            double acc = 0.0;
            for (int64_t k0 = 0; k0 < c->K; k0 += blk) {
                double p[65];
                int np = 0, emax = -1100;
                p[np++] = acc;
                for (int64_t k = k0; k < k0 + blk && k < c->K; k++)
                    p[np++] = (double)narrow(A[i * c->K + k], v.drop, v.trunc_a) *
                              (double)narrow(B[j * c->K + k], v.drop, v.trunc_b);
                for (int q = 0; q < np; q++)
                    if (p[q] != 0.0) {
                        int e;
                        frexp(p[q], &e);
                        if (e > emax) emax = e;
                    }
                double s = 0.0;
                for (int q = 0; q < np; q++) s += trunc_to(p[q], emax - 24);
                /* the sum to float32, toward zero */
                float f = (float)s;
                if (fabs((double)f) > fabs(s)) f = nextafterf(f, 0.0f);
                acc = f;
            }
            C[i * c->N + j] = (float)acc;
        }
}

/* The tf32 contract admits a GEMM on a truncating matrix unit (blocks of
 * 1, 4 and 8 products, TF32 rounded and truncated): its accumulation
 * errors have the accumulator's sign, yet on the oracle's rows (wide ones
 * included) they stay within the bound, whose probabilistic form applies
 * only where the sum looks random.  Bfloat16 inputs on the same unit are
 * refused. */
static void test_tf32_matrix_unit(void)
{
    kg_case c = { .name = "g", .op = "gemm_bt", .dtype = KG_DT_F32, .M = 64, .N = 32, .K = 2048,
                  .splits = -1, .eps = 1e-5, .scale = 1.0, .primary = 1 };
    kg_contract tf = { KG_PREC_TF32, 0.0 };
    const conv rounded = { 13, 0, 0, 0, "rounded" }, truncated = { 13, 1, 1, 0, "truncated" },
               bf16 = { 16, 0, 0, 0, "bf16 rounded" };
    float *C = malloc(64 * 32 * sizeof *C);
    CHECK(C != NULL);
    for (uint64_t seed = 1; seed <= SEEDS && C != NULL; seed++) {
        kg_case_data d;
        kg_err err = { 0 };
        CHECK(kg_oracle_prepare(&c, seed * 4099, &d, &err) == KG_OK);
        char m[320];
        for (int blk = 1; blk <= 8; blk *= 2) {
            gemm_tc(&d, rounded, blk, C);
            CHECK_MSG(passes(&d, &tf, C, m, sizeof m) == 1, "seed %llu: TF32 rounded on a matrix unit (blocks of %d) "
                      "rejected under tf32: %s", (unsigned long long)seed, blk, m);
            gemm_tc(&d, truncated, blk, C);
            CHECK_MSG(passes(&d, &tf, C, m, sizeof m) == 1, "seed %llu: TF32 truncated on a matrix unit (blocks of %d) "
                      "rejected under tf32: %s", (unsigned long long)seed, blk, m);
            gemm_tc(&d, bf16, blk, C);
            CHECK_MSG(passes(&d, &tf, C, m, sizeof m) == 0, "seed %llu: bf16 on a matrix unit (blocks of %d) "
                      "admitted under tf32: %s", (unsigned long long)seed, blk, m);
        }
        kg_oracle_release(&d);
    }
    free(C);
}

/* One dot product where rounding ties to even is neither of the other
 * conversions: B[1] is a tie whose kept bits are even (to even it goes
 * down, as truncation; away, up) and B[2] is past a tie (to even it goes
 * up, as ties away; truncated, down), and B[0]'s error cancels theirs
 * under both other conversions.  The product rounded to even errs by one
 * TF32 ulp; before the bound knew ties to even it allowed the four
 * combinations of the other two, whose errors are 0 here, and cuBLAS's
 * TF32 GEMM failed on such elements of the oracle's sparse rows (1.02x to
 * 1.94x its bound).  Bfloat16 inputs still fail. */
static void test_tf32_ties_to_even(void)
{
    kg_case c = { .name = "t", .op = "gemm_bt", .dtype = KG_DT_F32, .M = 1, .N = 1, .K = 3,
                  .splits = -1, .eps = 1e-5, .scale = 1.0, .primary = 1 };
    kg_contract tf = { KG_PREC_TF32, 0.0 };
    const double a[3] = { 1.0, 1.0, 1.0 };
    const double b[3] = { -1.028564453125, -1.01025390625, 1.079833984375 };   /* 0xbf83a800 0xbf815000 0x3f8a3800 */
    double ref = a[0] * b[0] + a[1] * b[1] + a[2] * b[2], bound = 0.0, rne = 0.0, bf16 = 0.0;
    kg_ops_gemm_bound_ct(&c, &tf, a, b, 0, &ref, &bound);
    for (int k = 0; k < 3; k++) {
        rne += (double)narrow((float)a[k], 13, 2) * (double)narrow((float)b[k], 13, 2);
        bf16 += (double)narrow((float)a[k], 16, 2) * (double)narrow((float)b[k], 16, 2);
        CHECK((double)narrow((float)b[k], 13, 2) == kg_ops_tf32(b[k], KG_TF32_RNE));
    }
    rne = (double)(float)rne;
    CHECK_MSG(fabs(rne - ref) > 0.9 * ldexp(1.0, -10), "the example's error is %g, not one TF32 ulp", rne - ref);
    CHECK_MSG(fabs(rne - ref) <= bound, "ties to even: error %g over the tf32 bound %g", fabs(rne - ref), bound);
    CHECK_MSG(fabs(bf16 - ref) > bound, "bfloat16 inputs: error %g within the tf32 bound %g", fabs(bf16 - ref), bound);
}

/* kg_ops_tf32: 10 explicit mantissa bits, ties away from zero or the
 * low bits dropped, symmetric in the sign; infinities and NaN unchanged */
static void test_tf32_conversion(void)
{
    const double u = ldexp(1.0, -10);   /* TF32's ulp at 1 */
    CHECK(kg_ops_tf32(1.0 + u / 2, 0) == 1.0 + u);          /* a tie: away from zero */
    CHECK(kg_ops_tf32(1.0 + u / 2, 1) == 1.0);
    CHECK(kg_ops_tf32(-(1.0 + u / 2), 0) == -(1.0 + u));
    CHECK(kg_ops_tf32(-(1.0 + u / 2), 1) == -1.0);          /* toward zero */
    CHECK(kg_ops_tf32(1.0 + u / 4, 0) == 1.0 && kg_ops_tf32(1.0 + 3 * u / 4, 0) == 1.0 + u);
    CHECK(kg_ops_tf32(1.0 + 3 * u / 4, 1) == 1.0);
    CHECK(kg_ops_tf32(1.0 + u, 0) == 1.0 + u && kg_ops_tf32(1.0 + u, 1) == 1.0 + u);   /* exact */
    CHECK(kg_ops_tf32(0.0, 0) == 0.0 && kg_ops_tf32(0.0, 1) == 0.0);
    CHECK(isinf(kg_ops_tf32(INFINITY, 0)) && kg_ops_tf32(-INFINITY, 1) < 0.0);
    CHECK(isnan(kg_ops_tf32(NAN, 0)) && isnan(kg_ops_tf32(NAN, 1)));
    /* ties to even: down where the kept bits are even, up where odd; else nearest */
    CHECK(kg_ops_tf32(1.0 + u / 2, KG_TF32_RNE) == 1.0 && kg_ops_tf32(1.0 + 3 * u / 2, KG_TF32_RNE) == 1.0 + 2 * u);
    CHECK(kg_ops_tf32(-(1.0 + 3 * u / 2), KG_TF32_RNE) == -(1.0 + 2 * u));
    CHECK(kg_ops_tf32(1.0 + 3 * u / 4, KG_TF32_RNE) == 1.0 + u && kg_ops_tf32(1.0 + u / 4, KG_TF32_RNE) == 1.0);
    /* at most half an ulp (rounded) or one ulp toward zero (truncated), relative */
    for (int i = 1; i < 2000; i++) {
        double x = (double)(float)(0.37 * i + 1e-3 / i) * (i % 2 ? 1 : -1);
        double rn = kg_ops_tf32(x, 0), rz = kg_ops_tf32(x, 1);
        CHECK(fabs(rn - x) <= 0.5 * u * fabs(x) * 1.0000001);
        CHECK(fabs(rz) <= fabs(x) && fabs(rz - x) < u * fabs(x));
    }
}

static void test_rowsum(void)
{
    kg_case c = { .name = "r", .op = "rowsum", .dtype = KG_DT_F32, .M = 64, .N = 2048, .K = -1,
                  .splits = -1, .eps = 1e-5, .scale = 1.0, .primary = 1 };
    kg_contract def = { KG_PREC_DTYPE, 0.0 }, tol = { KG_PREC_DTYPE, 4e-3 }, loose = { KG_PREC_DTYPE, 1.0 };
    float honest[64], h[64];
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        kg_case_data d;
        kg_err err = { 0 };
        CHECK(kg_oracle_prepare(&c, seed * 104729, &d, &err) == KG_OK);
        rowsum(&d, 0, honest);
        rowsum(&d, 256, h);
        char m[320];
        CHECK_MSG(passes(&d, &def, honest, m, sizeof m) == 1, "seed %llu: honest rowsum rejected: %s",
                  (unsigned long long)seed, m);
        CHECK_MSG(passes(&d, &def, h, m, sizeof m) == 0, "seed %llu: f16 accumulation admitted under f32: %s",
                  (unsigned long long)seed, m);
        CHECK_MSG(passes(&d, &tol, h, m, sizeof m) == 1, "seed %llu: f16 accumulation rejected under tol 4e-3 (same-sign rows of 2048 make f16 partial sums near 1024, whose ulp is 1): %s",
                  (unsigned long long)seed, m);
        CHECK_MSG(passes(&d, &loose, honest, m, sizeof m) == 0 && strstr(m, "too weak") != NULL,
                  "seed %llu: tolerance 1 not refused as too weak: %s", (unsigned long long)seed, m);
        kg_oracle_release(&d);
    }
}

/* The default bound of 16-bit inputs is kgate's bound before contracts. */
static void test_16bit_unchanged(void)
{
    const double u = ldexp(1.0, -24), u_ref = ldexp(1.0, -53);
    kg_dtype dts[2] = { KG_DT_BF16, KG_DT_F16 };
    int64_t ns[4] = { 16, 1024, 4096, 65536 };
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            double n = (double)ns[k], absdot = 0.37 * n, ref = 1.5, rowscale = 0.5 * n;
            double out = u * ref, worst = n * u / (1 - n * u) * absdot + out;
            double prob = expm1(10.0 * sqrt(n) * u + n * u * u / (1 - u)) * absdot + out;
            double old = fmin(worst, fmax(kg_ops_ceiling(dts[i]) * rowscale, prob))
                         + n * u_ref / (1 - n * u_ref) * absdot + 1e-30;
            double now = kg_ops_bound_elem(absdot, ref, rowscale, ns[k], dts[i], KG_DT_F32);
            CHECK_NEAR(now, old, 0, 1e-14);
            /* a tf32 contract changes nothing for 16-bit inputs */
            kg_sum_elem e = { absdot, -1.0, ref, rowscale, ns[k], 2, 0.0, 0 };
            kg_contract tf = { KG_PREC_TF32, 0.0 };
            CHECK_NEAR(kg_ops_bound_sum(&e, &tf, dts[i], KG_DT_F32), now, 0, 1e-14);
        }
    /* f32: the smaller of the worst case and the probabilistic bound where
     * the sum looks random (|ref| <= 10 sqrt(sum t^2)), no ceiling; the
     * worst case where it does not, or where sqrt(sum t^2) is unknown */
    double n = 1024, absdot = 256, ref = 0.5, l2 = 10.0;
    double worst = n * u / (1 - n * u) * absdot + u * ref, ref_term = n * u_ref / (1 - n * u_ref) * absdot + 1e-30;
    double prob = expm1(10.0 * sqrt(n) * u + n * u * u / (1 - u)) * absdot + u * ref;
    kg_sum_elem e = { absdot, l2, ref, 512, 1024, 2, 0.0, 0 };
    CHECK_NEAR(kg_ops_bound_sum(&e, NULL, KG_DT_F32, KG_DT_F32), fmin(worst, prob) + ref_term, 0, 1e-14);
    e.ref = 101.0; /* above 10 sqrt(sum t^2): not random-looking */
    worst = n * u / (1 - n * u) * absdot + u * e.ref;
    CHECK_NEAR(kg_ops_bound_sum(&e, NULL, KG_DT_F32, KG_DT_F32), worst + ref_term, 0, 1e-14);
    CHECK_NEAR(kg_ops_bound_elem(absdot, 101.0, 512, 1024, KG_DT_F32, KG_DT_F32), worst + ref_term, 0, 1e-14);
}

/* A row of one repeated value: float32 summation errs systematically
 * (2048 copies: up to about 510 u x sum|x|, above the probabilistic
 * bound's 452 u), so the bound must be the worst case there, and must
 * hold for an honest sequential sum of every one of 500 values. */
static void test_constant_rows(void)
{
    int64_t ns[3] = { 2048, 8192, 65536 };
    for (int k = 0; k < 3; k++) {
        int over = 0, over_prob = 0;
        double worst_ratio = 0.0;
        for (int r = 0; r < 500; r++) {
            float x = (float)(((double)((r * 2654435761u) % 1000003u) / 1000003.0) * 2.0 - 1.0);
            if (x == 0.0f) continue;
            float sum = 0.0f;
            for (int64_t i = 0; i < ns[k]; i++) sum += x;
            double n = (double)ns[k], ref = n * (double)x, err = fabs((double)sum - ref);
            kg_sum_elem e = { n * fabs((double)x), sqrt(n) * fabs((double)x), ref, n * fabs((double)x), ns[k], 1, 0.0, 0 };
            double b = kg_ops_bound_sum(&e, NULL, KG_DT_F32, KG_DT_F32);
            if (err > b) over++;
            /* what the probabilistic bound alone would have allowed */
            if (err > kg_ops_gamma_prob(ns[k]) * e.absdot + ldexp(1.0, -24) * fabs(ref)) over_prob++;
            if (err / b > worst_ratio) worst_ratio = err / b;
        }
        CHECK_MSG(over == 0, "constant rows of %lld: %d honest sums over the bound (worst %.3g)",
                  (long long)ns[k], over, worst_ratio);
        /* the case is real: the probabilistic bound alone fails honest sums */
        if (ns[k] >= 8192)
            CHECK_MSG(over_prob > 0, "constant rows of %lld: no sum over the probabilistic bound", (long long)ns[k]);
    }
}

int main(void)
{
    test_gemm();
    test_tf32_conversion();
    test_tf32_ties_to_even();
    test_tf32_conversions();
    test_tf32_matrix_unit();
    test_rowsum();
    test_16bit_unchanged();
    test_constant_rows();
    return kg_test_finish("test_contracts");
}
