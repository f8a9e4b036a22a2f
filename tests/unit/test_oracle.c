/* test_oracle.c: the oracle, the ops and the CPU kernels.
 *
 * Known answers for Philox and the 16-bit conversions; the dgemm reference
 * against a plain float64 loop; the generated inputs (special rows,
 * seeds, checksums); every CPU kernel, compiled here exactly as the CPU
 * backend compiles it, at ragged shapes in every dtype; the numerical
 * negative of each kernel; and planted defects that the comparison must
 * reject with a message naming the element. */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "kernel_load.h"
#include "kgate/kernel.h"
#include "kgate/oracle.h"
#include "kgate/philox.h"
#include "evidence/outenc.h"


static char tmpdir[256];

static kg_case make_case(const char *op, kg_dtype dt, int64_t M, int64_t N, int64_t K,
                         double scale)
{
    kg_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s_%lldx%lldx%lld", op, (long long)M, (long long)N,
             (long long)K);
    snprintf(c.op, sizeof c.op, "%s", op);
    c.dtype = dt;
    c.M = M; c.N = N; c.K = K;
    c.splits = -1;
    c.eps = 1e-5;
    c.scale = scale;
    c.primary = 1;
    c.line = 1;
    return c;
}

static const char *dtn(kg_dtype dt)
{
    return dt == KG_DT_F32 ? "f32" : dt == KG_DT_F16 ? "f16" : "bf16";
}

/* ---- Philox ---------------------------------------------------------- */

static void test_philox(void)
{
    static const uint32_t ctr[3][4] = {
        { 0, 0, 0, 0 },
        { 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu },
        { 0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u } };
    static const uint32_t key[3][2] = {
        { 0, 0 }, { 0xffffffffu, 0xffffffffu }, { 0xa4093822u, 0x299f31d0u } };
    static const uint32_t want[3][4] = {
        { 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u },
        { 0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu },
        { 0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u } };
    for (int t = 0; t < 3; t++) {
        uint32_t out[4];
        kg_philox4x32(ctr[t], key[t], out);
        for (int w = 0; w < 4; w++)
            CHECK_MSG(out[w] == want[t][w], "vector %d word %d: %08x != %08x", t, w, out[w],
                      want[t][w]);
    }
    /* uniform: in [-1, 1), on the 2^-23 grid, roughly centred, stream-
     * and seed-dependent */
    double sum = 0.0;
    int grid_ok = 1, range_ok = 1;
    for (uint64_t i = 0; i < 100000; i++) {
        float u = kg_philox_uniform(42, 3, i);
        if (!(u >= -1.0f && u < 1.0f)) range_ok = 0;
        float scaled = u * 8388608.0f;
        if (scaled != (float)(int32_t)scaled) grid_ok = 0;
        sum += (double)u;
    }
    CHECK(range_ok);
    CHECK(grid_ok);
    CHECK(fabs(sum / 100000.0) < 0.01);
    CHECK(kg_philox_uniform(42, 3, 7) != kg_philox_uniform(42, 4, 7));
    CHECK(kg_philox_uniform(42, 3, 7) != kg_philox_uniform(43, 3, 7));
    CHECK(kg_philox_uniform(42, 3, 7) == kg_philox_uniform(42, 3, 7));
}

/* ---- 16-bit conversions --------------------------------------------- */

static float fbits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The 8-bit floats and the integers of kgate/gen.h: every fp8 code
 * decodes to the value of its definition (OCP OFP8), encoding a decoded
 * value gives the code back, encoding rounds to nearest even and
 * saturates; integers round to nearest even and saturate. */
static double fp8_value(unsigned h, int e5m2)
{
    int mb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, ef = (int)((h & 0x7fu) >> mb), man = (int)(h & ((1u << mb) - 1u));
    double s = (h & 0x80u) ? -1.0 : 1.0;
    if (!e5m2 && (h & 0x7fu) == 0x7fu) return NAN;
    if (e5m2 && ef == 31) return man ? (double)NAN : s * (double)INFINITY;
    if (ef == 0) return s * ldexp((double)man, 1 - bias - mb);
    return s * ldexp(1.0 + (double)man / (double)(1 << mb), ef - bias);
}

static void test_fp8_int(void)
{
    for (int fmt = 0; fmt < 2; fmt++) {
        int32_t dt = fmt ? KG_GEN_E5M2 : KG_GEN_E4M3;
        int bad_dec = 0, bad_rt = 0, bad_mid = 0;
        for (unsigned h = 0; h < 256; h++) {
            double want = fp8_value(h, fmt);
            float got = kg_gen_fp8_to_f32((uint8_t)h, dt);
            if (isnan(want) ? !isnan(got) : (double)got != want) bad_dec++;
            if (!isfinite(want)) continue;
            if (kg_gen_fp8(got, dt) != (uint8_t)h) bad_rt++;
            /* the midpoint to the next code up (same sign, finite) rounds to the even one */
            unsigned up = h + 1;
            if ((h & 0x7fu) == (fmt ? 0x7bu : 0x7eu)) continue;
            double next = fp8_value(up, fmt);
            if (!isfinite(next)) continue;
            float mid = (float)((want + next) / 2.0);
            uint8_t even = (h & 1u) ? (uint8_t)up : (uint8_t)h;
            if (kg_gen_fp8(mid, dt) != even) bad_mid++;
        }
        CHECK_MSG(bad_dec == 0, "fmt %d: %d codes decode wrong", fmt, bad_dec);
        CHECK_MSG(bad_rt == 0, "fmt %d: %d codes do not round-trip", fmt, bad_rt);
        CHECK_MSG(bad_mid == 0, "fmt %d: %d midpoints not to even", fmt, bad_mid);
    }
    CHECK(kg_gen_fp8_to_f32(0x7e, KG_GEN_E4M3) == 448.0f);
    CHECK(kg_gen_fp8_to_f32(0x7b, KG_GEN_E5M2) == 57344.0f);
    CHECK(kg_gen_fp8_to_f32(0x01, KG_GEN_E4M3) == ldexpf(1.0f, -9));
    CHECK(kg_gen_fp8_to_f32(0x01, KG_GEN_E5M2) == ldexpf(1.0f, -16));
    CHECK(kg_gen_fp8(1e6f, KG_GEN_E4M3) == 0x7e);      /* saturates */
    CHECK(kg_gen_fp8(-1e6f, KG_GEN_E5M2) == 0xfb);
    CHECK(kg_gen_fp8(INFINITY, KG_GEN_E4M3) == 0x7e);
    CHECK(kg_gen_fp8(NAN, KG_GEN_E4M3) == 0x7f);
    CHECK(kg_gen_fp8(ldexpf(1.0f, -11), KG_GEN_E4M3) == 0x00);   /* below half the least subnormal */
    CHECK(kg_gen_fp8(ldexpf(1.5f, -10), KG_GEN_E4M3) == 0x01);   /* above it */
    CHECK(kg_gen_rint(2.5f, 127) == 2 && kg_gen_rint(3.5f, 127) == 4 && kg_gen_rint(-2.5f, 127) == -2);
    CHECK(kg_gen_rint(0.5f, 127) == 0 && kg_gen_rint(0.51f, 127) == 1 && kg_gen_rint(-0.49f, 127) == 0);
    CHECK(kg_gen_rint(1000.0f, 127) == 127 && kg_gen_rint(-1e30f, 127) == -127);
    CHECK(kg_gen_rint(16777216.0f, 0x7fffffff) == 16777216 && kg_gen_rint(NAN, 127) == 0);
    CHECK(kg_gen_rint(3e9f, 0x7fffffff) == 0x7fffffff);
    CHECK(kg_gen_dtype_bytes(KG_GEN_F64) == 8 && kg_gen_dtype_bytes(KG_GEN_I8) == 1 &&
          kg_gen_dtype_bytes(KG_GEN_E5M2) == 1 && kg_gen_dtype_bytes(KG_GEN_I32) == 4);
    /* a generated stream of each dtype: the values the host decodes are the generator's */
    for (int32_t dt = 0; dt < KG_GEN_NDTYPES; dt++) {
        kg_gen_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.seed = 7;
        sp.n = 1000;
        sp.rows = 10;
        sp.per_row = 100;
        sp.dtype = dt;
        sp.scale = 1.0f;
        unsigned char buf[8000];
        kg_gen_all(&sp, buf);
        int nonzero = 0, in_range = 1;
        for (int e = 0; e < 1000; e++) {
            double v = kg_load64(buf, dt, e);
            if (v != 0.0) nonzero++;
            double lim = dt == KG_GEN_I8 ? 127.0 : dt == KG_GEN_I32 ? 4096.0 : 4.0;
            if (!(fabs(v) <= lim)) in_range = 0;
            if ((dt == KG_GEN_I8 || dt == KG_GEN_I32) && v != floor(v)) in_range = 0;
        }
        CHECK_MSG(nonzero > 800 && in_range, "dtype %d: %d nonzero, in range %d", (int)dt, nonzero, in_range);
    }
}

static void test_conversions(void)
{
    int bad16 = 0, badbf = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t x = (uint16_t)h;
        int nan16 = (x & 0x7c00u) == 0x7c00u && (x & 0x3ffu) != 0;
        if (!nan16 && kg_f32_to_f16(kg_f16_to_f32(x)) != x) bad16++;
        int nanbf = (x & 0x7f80u) == 0x7f80u && (x & 0x7fu) != 0;
        if (!nanbf && kg_f32_to_bf16(kg_bf16_to_f32(x)) != x) badbf++;
        if (nan16) CHECK(isnan(kg_f16_to_f32(x)));
    }
    CHECK_MSG(bad16 == 0, "%d f16 patterns do not round-trip", bad16);
    CHECK_MSG(badbf == 0, "%d bf16 patterns do not round-trip", badbf);
    /* known values */
    CHECK(kg_f16_to_f32(0x3c00) == 1.0f);
    CHECK(kg_f16_to_f32(0x7bff) == 65504.0f);
    CHECK(kg_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    CHECK(kg_f16_to_f32(0xc000) == -2.0f);
    /* ties to even, normal range */
    CHECK(kg_f32_to_f16(1.0f + ldexpf(1.0f, -11)) == 0x3c00);        /* 1 + half ulp -> 1 */
    CHECK(kg_f32_to_f16(1.0f + 3.0f * ldexpf(1.0f, -11)) == 0x3c02); /* 1 + 1.5 ulp -> 1 + 2 ulp */
    CHECK(kg_f32_to_f16(1.0f + ldexpf(1.0f, -11) + ldexpf(1.0f, -20)) == 0x3c01);
    /* ties to even, subnormal range */
    CHECK(kg_f32_to_f16(ldexpf(1.0f, -25)) == 0x0000);
    CHECK(kg_f32_to_f16(3.0f * ldexpf(1.0f, -25)) == 0x0002);
    CHECK(kg_f32_to_f16(-3.0f * ldexpf(1.0f, -25)) == 0x8002);
    CHECK(kg_f32_to_f16(ldexpf(1.0f, -25) * 1.0001f) == 0x0001);
    /* overflow */
    CHECK(kg_f32_to_f16(65519.0f) == 0x7bff);
    CHECK(kg_f32_to_f16(65520.0f) == 0x7c00);
    CHECK(kg_f32_to_f16(-1e30f) == 0xfc00);
    CHECK((kg_f32_to_f16(fbits(0x7fc00000u)) & 0x7e00u) == 0x7e00u);
    /* bf16 ties to even */
    CHECK(kg_f32_to_bf16(1.0f + ldexpf(1.0f, -8)) == 0x3f80);
    CHECK(kg_f32_to_bf16(1.0f + 3.0f * ldexpf(1.0f, -8)) == 0x3f82);
    CHECK(kg_f32_to_bf16(1.0f + ldexpf(1.0f, -8) + ldexpf(1.0f, -20)) == 0x3f81);
    CHECK(isnan(kg_bf16_to_f32(kg_f32_to_bf16(fbits(0x7f800001u))))); /* sNaN stays NaN */
#ifdef __FLT16_MAX__
    /* the compiler's own float -> _Float16 rounding as an independent
     * reference over a spread of float32 patterns */
    int mism = 0;
    for (uint64_t i = 0; i < (1u << 22); i++) {
        uint32_t u = (uint32_t)(i * 1024u + ((i * 2654435761u) & 1023u));
        float f = fbits(u);
        if (isnan(f)) continue;
        _Float16 h = (_Float16)f;
        uint16_t hb;
        memcpy(&hb, &h, 2);
        if (hb != kg_f32_to_f16(f)) mism++;
    }
    CHECK_MSG(mism == 0, "%d float32 patterns round differently from _Float16", mism);
#endif
}

/* ---- reference and inputs ------------------------------------------- */

static void test_reference(void)
{
    static const int64_t shapes[][3] = { { 1, 1, 1 }, { 7, 5, 3 }, { 33, 65, 17 },
                                         { 64, 2, 300 }, { 2, 50, 9 }, { 19, 23, 129 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        kg_case c = make_case("gemm_bt", KG_DT_BF16, shapes[s][0], shapes[s][1], shapes[s][2], 1.0);
        kg_case_data d;
        kg_err err = { 0 };
        int rc = kg_oracle_prepare(&c, 11, &d, &err);
        CHECK_MSG(rc == KG_OK, "%s: %s", c.name, err.msg);
        if (rc != KG_OK) continue;
        double worst = 0.0;
        for (int64_t i = 0; i < c.M; i++)
            for (int64_t j = 0; j < c.N; j++) {
                double acc = 0.0, absacc = 0.0;
                for (int64_t k = 0; k < c.K; k++) {
                    acc += d.in64[0][i * c.K + k] * d.in64[1][j * c.K + k];
                    absacc += fabs(d.in64[0][i * c.K + k] * d.in64[1][j * c.K + k]);
                }
                double e = fabs(acc - d.ref[0][i * c.N + j]) / (absacc + 1e-300);
                if (e > worst) worst = e;
            }
        CHECK_MSG(worst < 1e-13, "%s: dgemm vs loop relative %g", c.name, worst);
        kg_oracle_release(&d);
    }
}

static void test_inputs(void)
{
    kg_dtype dts[3] = { KG_DT_F32, KG_DT_F16, KG_DT_BF16 };
    for (int t = 0; t < 3; t++) {
        kg_case c = make_case("gemm_bt", dts[t], 6, 5, 7, 0.5);
        kg_case_data d;
        kg_err err = { 0 };
        CHECK_MSG(kg_oracle_prepare(&c, 1234, &d, &err) == KG_OK, "%s", err.msg);
        int64_t rows[2] = { c.M, c.N };
        int exact = 1, zero_row = 1, last4 = 1;
        for (int i = 0; i < 2; i++) {
            for (int64_t e = 0; e < d.in_elems[i]; e++) {
                int64_t row = e / c.K;
                /* structured rows have their own values (test_row_classes) */
                if (kg_oracle_row_class(&d, i, row) != KG_ROW_IID) continue;
                float m = row == 0 ? 0.0f : row == rows[i] - 1 ? 4.0f : 1.0f;
                float v = 0.5f * (m * kg_philox_uniform(1234, (uint32_t)i, (uint64_t)e));
                double want;
                if (dts[t] == KG_DT_F32) {
                    want = (double)v;
                    if (((const float *)d.in[i])[e] != v) exact = 0;
                } else {
                    uint16_t h = dts[t] == KG_DT_F16 ? kg_f32_to_f16(v) : kg_f32_to_bf16(v);
                    want = (double)(dts[t] == KG_DT_F16 ? kg_f16_to_f32(h) : kg_bf16_to_f32(h));
                    if (((const uint16_t *)d.in[i])[e] != h) exact = 0;
                }
                if (d.in64[i][e] != want) exact = 0;
                if (row == 0 && d.in64[i][e] != 0.0) zero_row = 0;
                if (row == rows[i] - 1 && fabs(d.in64[i][e]) > 2.0) last4 = 0;
            }
            /* the 4x row reaches beyond the plain scale somewhere */
            double mx = 0.0;
            for (int64_t k = 0; k < c.K; k++)
                mx = fmax(mx, fabs(d.in64[i][(rows[i] - 1) * c.K + k]));
            CHECK_MSG(mx > 0.5, "%s input %d: last row max %g not at 4x scale", dtn(dts[t]), i, mx);
            CHECK(d.in_sum[i] == kg_checksum(d.in[i], d.in_bytes[i]));
        }
        CHECK_MSG(exact, "%s: generated values differ from the documented formula", dtn(dts[t]));
        CHECK(zero_row);
        CHECK(last4);
        /* C's first row and first column are exact zeros */
        for (int64_t j = 0; j < c.N; j++) CHECK(d.ref[0][j] == 0.0);
        for (int64_t i = 0; i < c.M; i++) CHECK(d.ref[0][i * c.N] == 0.0);

        /* same seed, same bytes; another seed, other bytes */
        kg_case_data d2, d3;
        CHECK(kg_oracle_prepare(&c, 1234, &d2, &err) == KG_OK);
        CHECK(kg_oracle_prepare(&c, 1235, &d3, &err) == KG_OK);
        CHECK(memcmp(d.in[0], d2.in[0], d.in_bytes[0]) == 0);
        CHECK(memcmp(d.in[1], d2.in[1], d.in_bytes[1]) == 0);
        CHECK(d.in_sum[0] == d2.in_sum[0]);
        CHECK(memcmp(d.in[0], d3.in[0], d.in_bytes[0]) != 0);
        CHECK(d.in_sum[0] != d3.in_sum[0]);
        /* streams differ: A and B are not the same numbers */
        CHECK(memcmp((const char *)d.in[0] + d.in_bytes[0] / 2,
                     (const char *)d.in[1] + d.in_bytes[0] / 2, 8) != 0);
        kg_oracle_release(&d);
        kg_oracle_release(&d2);
        kg_oracle_release(&d3);
        kg_oracle_release(&d3); /* idempotent */
    }
    /* one row: no zero row, the row is at 4x */
    kg_case c = make_case("rowsum", KG_DT_F32, 1, 64, -1, 1.0);
    kg_case_data d;
    kg_err err = { 0 };
    CHECK_MSG(kg_oracle_prepare(&c, 5, &d, &err) == KG_OK, "%s", err.msg);
    int nz = 0;
    double mx = 0.0;
    for (int64_t e = 0; e < 64; e++) {
        nz += d.in64[0][e] != 0.0;
        mx = fmax(mx, fabs(d.in64[0][e]));
        CHECK(d.in64[0][e] == (double)(4.0f * kg_philox_uniform(5, 0, (uint64_t)e)));
    }
    CHECK(nz > 60);
    CHECK(mx > 1.0);
    kg_oracle_release(&d);
    kg_oracle_release(NULL);
}

/* ---- structured row classes ------------------------------------------ */

/* 1 when row x[0..n) has the property of class cls. */
static int row_has_class(const double *x, int64_t n, int cls)
{
    int64_t nz = 0, run = 0, longest = 0;
    double lo = INFINITY, hi = -INFINITY, amin = INFINITY, amax = 0.0;
    for (int64_t j = 0; j < n; j++) {
        if (x[j] != 0.0) {
            nz++;
            run = 0;
            amin = fmin(amin, fabs(x[j]));
        } else if (++run > longest) {
            longest = run;
        }
        lo = fmin(lo, x[j]);
        hi = fmax(hi, x[j]);
        amax = fmax(amax, fabs(x[j]));
    }
    switch (cls) {
    case KG_ROW_ZERO_ENDS: return x[0] == 0.0 && x[n - 1] == 0.0 && nz > 0;
    case KG_ROW_SPARSE: return nz >= 1 && nz <= n / 3 + 2;
    case KG_ROW_ZERO_RUNS: return longest >= 2 && nz > 0;
    case KG_ROW_CONSTANT: return lo == hi && lo != 0.0;
    case KG_ROW_NEAR_CONSTANT: return lo < hi && lo * hi > 0.0 && (hi - lo) <= 0.3 * fabs(hi);
    case KG_ROW_WIDE: return nz > 1 && amax / amin >= 256.0;
    case KG_ROW_NEGATIVE: return hi <= 0.0 && lo < 0.0;
    default: return 0;
    }
}

/* Every class of an op appears in every input of enough rows, each class
 * row has its class's property, the placement depends on the seed, and
 * the honest bounds hold (test_ops_all runs the honest kernels). */
/* kg_oracle_refill gives the bits kg_oracle_prepare gives for the same
 * seed; kg_oracle_perturb changes only the elements it names, each to
 * another value, and the references follow them. */
static void test_refill_perturb(void)
{
    kg_dtype dts[3] = { KG_DT_F32, KG_DT_F16, KG_DT_BF16 };
    for (int t = 0; t < 3; t++) {
        kg_case c = make_case("gemm_bt", dts[t], 9, 7, 11, 1.0);
        kg_case_data a, b;
        kg_err err = { 0 };
        CHECK(kg_oracle_prepare(&c, 11, &a, &err) == KG_OK);
        CHECK(kg_oracle_prepare(&c, 22, &b, &err) == KG_OK);
        CHECK(kg_oracle_refill(&a, 22) == KG_OK);
        CHECK(a.stale == 1 && a.seed == 22);
        for (int i = 0; i < a.nin; i++) {
            CHECK_MSG(memcmp(a.in[i], b.in[i], a.in_bytes[i]) == 0, "dtype %d input %d: refill differs from prepare", t, i);
            CHECK(a.in_sum[i] == b.in_sum[i]);
        }
        /* a stale d is refused for a perturbation */
        CHECK(kg_oracle_perturb(&a, 5, 4, NULL, NULL, &err) != KG_OK);
        kg_oracle_release(&a);
        for (uint64_t ps = 1; ps <= 8; ps++) {
            kg_case_data p;
            int64_t where[4];
            int which[4];
            CHECK(kg_oracle_prepare(&c, 22, &p, &err) == KG_OK);
            CHECK_MSG(kg_oracle_perturb(&p, ps, 4, where, which, &err) == KG_OK, "%s", err.msg);
            int changed = 0, elsewhere = 0;
            for (int i = 0; i < p.nin; i++) {
                size_t es = p.in_bytes[i] / (size_t)p.in_elems[i];
                for (int64_t e = 0; e < p.in_elems[i]; e++) {
                    int named = 0;
                    for (int j = 0; j < 4; j++) named |= which[j] == i && where[j] == e;
                    int diff = memcmp((char *)p.in[i] + (size_t)e * es, (char *)b.in[i] + (size_t)e * es, es) != 0;
                    changed += named && diff;
                    elsewhere += !named && diff;
                }
            }
            CHECK_MSG(changed >= 1 && elsewhere == 0, "perturbation %llu: %d named elements changed, %d others",
                      (unsigned long long)ps, changed, elsewhere);
            /* the reference is of the perturbed inputs: recomputed from them it is the same */
            double *ref = malloc((size_t)p.out_elems[0] * sizeof *ref);
            CHECK(ref != NULL && p.op->reference(&c, (const double *const *)p.in64, &ref, &err) == KG_OK);
            if (ref != NULL) CHECK(memcmp(ref, p.ref[0], (size_t)p.out_elems[0] * sizeof *ref) == 0);
            free(ref);
            CHECK(memcmp(p.ref[0], b.ref[0], (size_t)p.out_elems[0] * sizeof(double)) != 0);
            kg_oracle_release(&p);
        }
        kg_oracle_release(&b);
    }
    /* an op without inputs (noop): prepared, and a perturbation is an error, never a division by zero */
    kg_case c = make_case("noop", KG_DT_F32, 1, 1, 1, 1.0);
    kg_case_data n;
    kg_err err = { 0 };
    CHECK_MSG(kg_oracle_prepare(&c, 7, &n, &err) == KG_OK, "noop: %s", err.msg);
    CHECK(n.nin == 0);
    CHECK(kg_oracle_perturb(&n, 5, 4, NULL, NULL, &err) == KG_EINTERNAL);
    CHECK_STR_CONTAINS(err.msg, "no inputs to perturb");
    kg_oracle_release(&n);
}

static void test_row_classes(void)
{
    static const struct { const char *op; int64_t M, N, K; int nclasses; } cs[] = {
        { "rowsum", 40, 64, -1, 6 }, { "softmax", 33, 50, -1, 7 }, { "layernorm", 30, 17, -1, 7 },
        { "gemm_bt", 28, 26, 9, 6 }, { "rowmax", 9, 12, -1, 6 } };
    kg_dtype dts[3] = { KG_DT_F32, KG_DT_F16, KG_DT_BF16 };
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++)
        for (int di = 0; di < 3; di++) {
            kg_case c = make_case(cs[t].op, dts[di], cs[t].M, cs[t].N, cs[t].K, 1.0);
            int moved = 0;
            int first_class[64];
            for (uint64_t seed = 1; seed <= 6; seed++) {
                kg_case_data d;
                kg_err err = { 0 };
                CHECK_MSG(kg_oracle_prepare(&c, seed, &d, &err) == KG_OK, "%s: %s", c.name, err.msg);
                if (d.op == NULL) continue;
                int64_t rows = c.M, cols = d.in_elems[0] / c.M, R = rows - 2;
                int seen[KG_ROW_NCLASSES] = { 0 }, nclass_rows = 0;
                for (int64_t r = 0; r < rows; r++) {
                    int cls = kg_oracle_row_class(&d, 0, r);
                    if (r == 0 || r == rows - 1) CHECK(cls == KG_ROW_IID);
                    if (r < 64 && seed == 1) first_class[r] = cls;
                    if (r < 64 && seed > 1 && first_class[r] != cls) moved = 1;
                    if (cls == KG_ROW_IID) continue;
                    seen[cls]++;
                    nclass_rows++;
                    CHECK_MSG(row_has_class(d.in64[0] + r * cols, cols, cls), "%s %s seed %llu: row %lld is "
                              "not %s", c.name, dtn(dts[di]), (unsigned long long)seed, (long long)r,
                              kg_oracle_row_class_name(cls));
                }
                int distinct = 0;
                for (int k = 1; k < KG_ROW_NCLASSES; k++) distinct += seen[k] > 0;
                CHECK_MSG(distinct == cs[t].nclasses, "%s %s seed %llu: %d classes, want %d", c.name,
                          dtn(dts[di]), (unsigned long long)seed, distinct, cs[t].nclasses);
                int64_t want_rows = R / 4 > cs[t].nclasses ? R / 4 : cs[t].nclasses;
                CHECK_MSG(nclass_rows == want_rows, "%s: %d class rows, want %lld", c.name, nclass_rows,
                          (long long)want_rows);
                CHECK(seen[KG_ROW_NEAR_CONSTANT] == 0 || d.op->row_classes != 0);
                kg_oracle_release(&d);
            }
            CHECK_MSG(moved, "%s %s: the class rows sit at the same places for six seeds", c.name, dtn(dts[di]));
        }
    /* rows too short or too few: no class that cannot apply */
    kg_case c = make_case("rowsum", KG_DT_F32, 2, 50, -1, 1.0);
    kg_case_data d;
    kg_err err = { 0 };
    CHECK(kg_oracle_prepare(&c, 3, &d, &err) == KG_OK);
    CHECK(kg_oracle_row_class(&d, 0, 0) == KG_ROW_IID && kg_oracle_row_class(&d, 0, 1) == KG_ROW_IID);
    kg_oracle_release(&d);
    c = make_case("rowsum", KG_DT_F32, 20, 2, -1, 1.0);
    CHECK(kg_oracle_prepare(&c, 3, &d, &err) == KG_OK);
    for (int64_t r = 0; r < c.M; r++) {
        int cls = kg_oracle_row_class(&d, 0, r);
        CHECK(cls != KG_ROW_ZERO_ENDS && cls != KG_ROW_SPARSE && cls != KG_ROW_ZERO_RUNS);
    }
    kg_oracle_release(&d);
    CHECK_STR_CONTAINS(kg_oracle_row_class_name(KG_ROW_ZERO_ENDS), "zero-ends");
}

static void test_checksum_guard_poison(void)
{
    unsigned char buf[64];
    for (int i = 0; i < 64; i++) buf[i] = (unsigned char)(i * 7);
    uint64_t h = kg_checksum(buf, sizeof buf);
    buf[37] ^= 1;
    CHECK(kg_checksum(buf, sizeof buf) != h);
    buf[37] ^= 1;
    CHECK(kg_checksum(buf, sizeof buf) == h);
    CHECK(kg_checksum("", 0) == 0xcbf29ce484222325ull);
    CHECK(kg_checksum("a", 1) == 0xaf63dc4c8601ec8cull); /* FNV-1a 64 of "a" */

    CHECK(kg_guard_bytes() == (size_t)KG_GUARD_ELEMS * 4);
    unsigned char g[KG_GUARD_ELEMS * 4 + 4];
    kg_guard_fill(g);
    CHECK(kg_guard_verify(g) == -1);
    g[17] ^= 0x40;
    CHECK(kg_guard_verify(g) == 17);
    kg_guard_fill(g);
    memset(g + 100, 0, 4);
    CHECK(kg_guard_verify(g) == 100);
    kg_guard_fill(g);
    memmove(g + 4, g, kg_guard_bytes() - 4); /* shifted canary */
    CHECK(kg_guard_verify(g) >= 0);

    uint32_t p0[8], p1[8];
    kg_poison(p0, sizeof p0, 0);
    kg_poison(p1, sizeof p1, 1);
    CHECK(memcmp(p0, p1, sizeof p0) != 0);
    for (int k = 0; k < 2; k++) {
        const uint32_t *p = k ? p1 : p0;
        CHECK(isnan(fbits(p[3])));
        uint16_t lo = (uint16_t)(p[3] & 0xffffu), hi = (uint16_t)(p[3] >> 16);
        CHECK(isnan(kg_f16_to_f32(lo)) && isnan(kg_f16_to_f32(hi)));
        CHECK(isnan(kg_bf16_to_f32(lo)) && isnan(kg_bf16_to_f32(hi)));
    }
    unsigned char odd[7];
    kg_poison(odd, sizeof odd, 1);
    CHECK(memcmp(odd, p1, 7) == 0);
}

/* ---- kernels -------------------------------------------------------- */


/* Runs fn on d as the harness does: poisoned output with a guard after it,
 * then guard, input checksums and the comparison.  Returns pass. */
static int run_checked(kernel_fn fn, const kg_case_data *d, int pattern, kg_check *res)
{
    size_t ob = d->out_bytes[0];
    unsigned char *out = malloc(ob + kg_guard_bytes());
    if (out == NULL) return 0;
    kg_poison(out, ob, pattern);
    kg_guard_fill(out + ob);
    kg_kargs a;
    memset(&a, 0, sizeof a);
    a.abi = KG_KARGS_ABI;
    a.dtype = (int)d->kase->dtype;
    for (int i = 0; i < d->nin; i++) a.in[i] = d->in[i];
    a.out[0] = out;
    a.M = d->kase->M; a.N = d->kase->N; a.K = d->kase->K;
    a.splits = d->kase->splits; a.eps = d->kase->eps;
    fn(&a);
    CHECK(kg_guard_verify(out + ob) == -1);
    for (int i = 0; i < d->nin; i++) CHECK(kg_checksum(d->in[i], d->in_bytes[i]) == d->in_sum[i]);
    kg_oracle_compare(d, 0, out, res);
    free(out);
    return res->pass;
}

/* shapes: M, N, K, and a mask of the dtypes to run (bit KG_DT_*) */
static void test_kernel_shapes(const char *name, const char *op, const int64_t (*shapes)[4],
                               int nshapes)
{
    char src[300];
    snprintf(src, sizeof src, "kernels/cpu/%s.c", name);
    kernel_fn fn = kg_test_load_kernel(src, 0, tmpdir), neg = kg_test_load_kernel(src, 1, tmpdir);
    if (fn == NULL || neg == NULL) return;
    kg_dtype dts[3] = { KG_DT_F32, KG_DT_F16, KG_DT_BF16 };
    int ran = 0;
    for (int s = 0; s < nshapes; s++)
        for (int t = 0; t < 3; t++) {
            if (!(shapes[s][3] & (1 << dts[t]))) continue;
            kg_case c = make_case(op, dts[t], shapes[s][0], shapes[s][1], shapes[s][2], 1.0);
            kg_case_data d;
            kg_err err = { 0 };
            int rc = kg_oracle_prepare(&c, (uint64_t)(100 + s), &d, &err);
            CHECK_MSG(rc == KG_OK, "%s %s: %s", c.name, dtn(dts[t]), err.msg);
            if (rc != KG_OK) continue;
            kg_check res;
            int pass = run_checked(fn, &d, s & 1, &res);
            CHECK_MSG(pass, "%s on %s %s: %s", name, c.name, dtn(dts[t]), res.msg);
            CHECK(res.max_rel <= 1.0 && res.worst >= 0);
            pass = run_checked(neg, &d, s & 1, &res);
            CHECK_MSG(!pass, "%s negative passed on %s %s", name, c.name, dtn(dts[t]));
            CHECK(res.msg[0] != '\0');
            kg_oracle_release(&d);
            ran++;
        }
    CHECK(ran >= 30);
}

static void test_kernels(void)
{
    static const int64_t gemm_shapes[][4] = {
        { 1, 1, 1, 7 }, { 7, 5, 3, 7 }, { 33, 65, 17, 7 }, { 128, 128, 128, 7 },
        { 1, 64, 31, 7 }, { 65, 1, 9, 7 }, { 3, 9, 1, 7 }, { 67, 71, 259, 7 },
        { 5, 13, 513, 7 }, { 100, 37, 1000, 7 }, { 3, 5, 4096, 7 }, { 2, 3, 20000, 1 } };
    /* Long rows of mean-zero data cancel: beyond ~7e4 elements (f16,
     * bf16) or ~2e6 (f32) an all-zero row sum is within the bound, and
     * prepare rejects the case; the longest rows here stay below that,
     * with enough rows that zeros cannot pass by luck. */
    static const int64_t rowsum_shapes[][4] = {
        { 1, 2, -1, 7 }, { 2, 2, -1, 7 }, { 7, 5, -1, 7 }, { 33, 65, -1, 7 },
        { 128, 128, -1, 7 }, { 1, 1000, -1, 7 }, { 1000, 3, -1, 7 }, { 3, 4099, -1, 7 },
        { 17, 16, -1, 7 }, { 9, 1023, -1, 7 }, { 8, 50000, -1, 7 }, { 16, 1 << 20, -1, 1 } };
    int ng = (int)(sizeof gemm_shapes / sizeof gemm_shapes[0]);
    int nr = (int)(sizeof rowsum_shapes / sizeof rowsum_shapes[0]);
    test_kernel_shapes("gemm_bt_naive", "gemm_bt", gemm_shapes, ng);
    test_kernel_shapes("gemm_bt_blocked", "gemm_bt", gemm_shapes, ng);
    test_kernel_shapes("rowsum_naive", "rowsum", rowsum_shapes, nr);
    test_kernel_shapes("rowsum_unrolled", "rowsum", rowsum_shapes, nr);
}

/* ---- planted defects ------------------------------------------------ */

/* honest float32 result of gemm_bt from the float64 inputs */
static void gemm_f32(const kg_case_data *d, float *C, int bf16_acc)
{
    const kg_case *c = d->kase;
    for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < c->N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < c->K; k++) {
                acc += (float)d->in64[0][i * c->K + k] * (float)d->in64[1][j * c->K + k];
                if (bf16_acc) acc = kg_bf16_to_f32(kg_f32_to_bf16(acc));
            }
            C[i * c->N + j] = acc;
        }
}

static void test_defects(void)
{
    kg_case c = make_case("gemm_bt", KG_DT_F32, 33, 65, 17, 1.0);
    kg_case_data d;
    kg_err err = { 0 };
    CHECK_MSG(kg_oracle_prepare(&c, 9, &d, &err) == KG_OK, "%s", err.msg);
    int64_t n = d.out_elems[0];
    float *C = malloc((size_t)n * sizeof *C), *good = malloc((size_t)n * sizeof *good);
    kg_check r;
    gemm_f32(&d, good, 0);

    memcpy(C, good, (size_t)n * 4);
    kg_oracle_compare(&d, 0, C, &r);
    CHECK_MSG(r.pass, "honest result failed: %s", r.msg);
    CHECK(r.msg[0] == '\0');

    /* last row skipped: the poison is still there */
    memcpy(C, good, (size_t)n * 4);
    kg_poison(C + 32 * 65, 65 * 4, 0);
    kg_oracle_compare(&d, 0, C, &r);
    CHECK(!r.pass && r.nnan == 65 && r.nbad == 65);
    CHECK_STR_CONTAINS(r.msg, "NaN at element 2080 (row 32, col 0)");
    CHECK_STR_CONTAINS(r.msg, "never written");

    /* last row skipped, output zero-initialised instead of poisoned */
    memcpy(C, good, (size_t)n * 4);
    memset(C + 32 * 65, 0, 65 * 4);
    kg_oracle_compare(&d, 0, C, &r);
    CHECK(!r.pass && r.nbad >= 60);
    CHECK_STR_CONTAINS(r.msg, "(row 32, col");

    /* off-by-one tile: the last column is missing */
    memcpy(C, good, (size_t)n * 4);
    for (int64_t i = 0; i < 33; i++) C[i * 65 + 64] = 0.0f;
    kg_oracle_compare(&d, 0, C, &r);
    CHECK(!r.pass && r.nbad == 32); /* row 0 is zero anyway */
    CHECK_STR_CONTAINS(r.msg, "col 64)");
    CHECK_STR_CONTAINS(r.msg, "32 elements over bound");

    /* zeros */
    memset(C, 0, (size_t)n * 4);
    kg_oracle_compare(&d, 0, C, &r);
    CHECK(!r.pass && r.nbad > n / 2);
    CHECK_STR_CONTAINS(r.msg, "want");

    /* NaN in one element */
    memcpy(C, good, (size_t)n * 4);
    C[100] = fbits(0x7fc00000u);
    kg_oracle_compare(&d, 0, C, &r);
    CHECK(!r.pass && r.nnan == 1 && r.nbad == 1);
    CHECK_STR_CONTAINS(r.msg, "NaN at element 100 (row 1, col 35)");
    C[100] = INFINITY;
    kg_oracle_compare(&d, 0, C, &r);
    CHECK(!r.pass && r.nnan == 1);
    CHECK_STR_CONTAINS(r.msg, "Inf at element 100");

    /* the bound is the bound: half of it passes, twice it fails */
    memcpy(C, good, (size_t)n * 4);
    int64_t e = 5 * 65 + 7;
    C[e] = (float)(d.ref[0][e] + 2.0 * d.bound[0][e] + 1e-6 * fabs(d.ref[0][e]));
    kg_oracle_compare(&d, 0, C, &r);
    CHECK(!r.pass && r.nbad == 1 && r.worst == e && r.max_rel > 1.0);
    CHECK_STR_CONTAINS(r.msg, "element 332 (row 5, col 7)");
    CHECK_STR_CONTAINS(r.msg, "1 elements over bound");

    /* output = copy of input A */
    memcpy(C, good, (size_t)n * 4);
    memcpy(C, d.in[0], d.in_bytes[0]);
    kg_oracle_compare(&d, 0, C, &r);
    CHECK(!r.pass);

    /* never written at all, both poison patterns */
    for (int p = 0; p < 2; p++) {
        kg_poison(C, (size_t)n * 4, p);
        kg_oracle_compare(&d, 0, C, &r);
        CHECK(!r.pass && r.nnan == n);
        CHECK_STR_CONTAINS(r.msg, "never written");
    }
    kg_oracle_compare(&d, 0, NULL, &r);
    CHECK(!r.pass);
    free(C);
    free(good);
    kg_oracle_release(&d);

    /* precision downgrade: bf16 accumulation over K = 4096 */
    kg_dtype dts[2] = { KG_DT_BF16, KG_DT_F32 };
    for (int t = 0; t < 2; t++) {
        c = make_case("gemm_bt", dts[t], 8, 8, 4096, 1.0);
        CHECK_MSG(kg_oracle_prepare(&c, 21, &d, &err) == KG_OK, "%s", err.msg);
        n = d.out_elems[0];
        C = malloc((size_t)n * sizeof *C);
        gemm_f32(&d, C, 0);
        kg_oracle_compare(&d, 0, C, &r);
        CHECK_MSG(r.pass, "honest K=4096 %s failed: %s", dtn(dts[t]), r.msg);
        gemm_f32(&d, C, 1);
        kg_oracle_compare(&d, 0, C, &r);
        CHECK_MSG(!r.pass && r.nbad > n / 2, "bf16 accumulation passed (%s, %lld bad)",
                  dtn(dts[t]), (long long)r.nbad);
        CHECK_STR_CONTAINS(r.msg, "over bound");
        free(C);
        kg_oracle_release(&d);
    }

    /* rowsum: output = copy of the input's first elements, zeros, a skipped last row */
    c = make_case("rowsum", KG_DT_F16, 40, 31, -1, 1.0);
    CHECK_MSG(kg_oracle_prepare(&c, 3, &d, &err) == KG_OK, "%s", err.msg);
    float Y[40];
    for (int i = 0; i < 40; i++) Y[i] = (float)d.in64[0][i];
    kg_oracle_compare(&d, 0, Y, &r);
    CHECK(!r.pass);
    CHECK_STR_CONTAINS(r.msg, "element");
    for (int i = 0; i < 40; i++) Y[i] = (float)d.ref[0][i];
    kg_oracle_compare(&d, 0, Y, &r);
    CHECK_MSG(r.pass, "%s", r.msg);
    Y[39] = 0.0f;
    kg_oracle_compare(&d, 0, Y, &r);
    CHECK(!r.pass && r.nbad == 1);
    CHECK_STR_CONTAINS(r.msg, "element 39: got 0, want");
    kg_oracle_release(&d);
}

/* ---- bounds, preconditions, trivial cases --------------------------- */

static void test_bounds_and_cases(void)
{
    kg_err err = { 0 };
    kg_case_data d;
    /* zero rows get (almost) zero slack; long f32 sums are capped below
     * the worst case but above what sequential f32 accumulation needs */
    kg_case c = make_case("gemm_bt", KG_DT_F32, 4, 4, 8192, 1.0);
    CHECK_MSG(kg_oracle_prepare(&c, 2, &d, &err) == KG_OK, "%s", err.msg);
    for (int j = 0; j < 4; j++) CHECK(d.bound[0][j] <= 1e-29);
    double gamma = 8192.0 * ldexp(1.0, -24) / (1.0 - 8192.0 * ldexp(1.0, -24));
    int capped = 0;
    for (int64_t e = 4; e < 16; e++) {
        double s = 0.0;
        int64_t i = e / 4, j = e % 4;
        for (int64_t k = 0; k < 8192; k++) s += fabs(d.in64[0][i * 8192 + k] * d.in64[1][j * 8192 + k]);
        if (j == 0) continue;
        if (d.bound[0][e] < 0.9 * gamma * s) capped++;
        CHECK(d.bound[0][e] > 10.0 * sqrt(8192.0) * ldexp(1.0, -24) * s * 0.99);
    }
    CHECK(capped > 0);
    kg_oracle_release(&d);

    /* preconditions and degenerate cases */
    c = make_case("gemm_bt", KG_DT_F32, 0, 4, 4, 1.0);
    kg_err_clear(&err);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_EINADMISSIBLE);
    CHECK_STR_CONTAINS(err.msg, "M must be >= 1");
    CHECK(d.op == NULL && d.in[0] == NULL);
    c = make_case("gemm_bt", KG_DT_F32, 1 << 12, 1 << 12, 1 << 12, 1.0);
    kg_err_clear(&err);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_EINADMISSIBLE);
    CHECK_STR_CONTAINS(err.msg, "2^34");
    /* a trivial-passing case is prepared and flagged weak, not refused */
    c = make_case("rowsum", KG_DT_F32, 16, 1, -1, 1.0);
    kg_err_clear(&err);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_OK);
    CHECK(d.weak[0] == 1);
    CHECK_STR_CONTAINS(d.weak_why, "a copy of input X");
    kg_oracle_release(&d);
    c = make_case("rowsum", KG_DT_F16, 16, 8, -1, 30000.0);
    kg_err_clear(&err);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "overflows f16");
    c = make_case("rowsum", KG_DT_BF16, 16, 8, -1, 1e-45);
    kg_err_clear(&err);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "all zero");
    c = make_case("softmax", KG_DT_F32, 16, 8, -1, 1.0);
    kg_err_clear(&err);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_OK);
    CHECK(d.weak[0] == 0);
    kg_oracle_release(&d);
    c = make_case("nosuchop", KG_DT_F32, 16, 8, -1, 1.0);
    kg_err_clear(&err);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_EINPUT);
    kg_oracle_release(&d);
}

static void test_registry(void)
{
    int n = 0;
    const kg_op *const *all = kg_op_all(&n);
    CHECK(n == 9); /* eight ops and noop */
    CHECK(all[0] == kg_op_find("gemm_bt") && all[1] == kg_op_find("rowsum"));
    CHECK(kg_op_find("gemm") == NULL && kg_op_find(NULL) == NULL);
    const kg_op *g = kg_op_find("gemm_bt");
    kg_case c = make_case("gemm_bt", KG_DT_BF16, 96, 512, 2048, 1.0);
    CHECK(g->flops(&c) == 2.0 * 96 * 512 * 2048);
    CHECK(g->min_bytes(&c) == (96.0 * 2048 + 512.0 * 2048) * 2 + 96.0 * 512 * 4);
    CHECK_STR_CONTAINS(g->vars, "K");
    const kg_op *rs = kg_op_find("rowsum");
    c = make_case("rowsum", KG_DT_F32, 10, 20, -1, 1.0);
    CHECK(rs->min_bytes(&c) == 10.0 * 20 * 4 + 10.0 * 4);
    CHECK(rs->flops(&c) == 200.0);

    kg_case cases[3] = { make_case("gemm_bt", KG_DT_F32, 8, 8, 8, 1.0),
                         make_case("rowsum", KG_DT_F16, 8, 8, -1, 1.0),
                         make_case("gemm_bt", KG_DT_F32, 8, 8, 8, 1.0) };
    cases[2].line = 12;
    kg_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.path, sizeof plan.path, "plans/x.ini");
    plan.cases = cases;
    plan.ncases = 3;
    kg_err err = { 0 };
    CHECK(kg_plan_check_ops(&plan, &err) == KG_OK);
    snprintf(cases[2].op, sizeof cases[2].op, "gemm");
    CHECK(kg_plan_check_ops(&plan, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "plans/x.ini:12: unknown op 'gemm' (known: gemm_bt, rowsum, gemm_nt, gemm_splitk, rowmax, softmax, layernorm, rmsnorm, noop)");
    snprintf(cases[2].op, sizeof cases[2].op, "gemm_bt");
    cases[2].K = -1;
    kg_err_clear(&err);
    CHECK(kg_plan_check_ops(&plan, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "plans/x.ini:12:");
    CHECK_STR_CONTAINS(err.msg, "needs K");
    cases[2].K = 0;
    kg_err_clear(&err);
    CHECK(kg_plan_check_ops(&plan, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "K = 0");
    cases[2].K = 8;
    cases[1].dtype = (kg_dtype)7;
    kg_err_clear(&err);
    CHECK(kg_plan_check_ops(&plan, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "not supported");
}

/* Saved outputs (outenc.h): the encoding gives back every bit pattern
 * (NaN, infinities, signed zeros, noise) in f32, bf16 and f16; an output
 * a few units in the last place from the reference is stored in a
 * fraction of its bytes; a corrupted or truncated blob and a foreign
 * encoding are refused. */
static void test_outenc(void)
{
    const kg_dtype dts[] = { KG_DT_F32, KG_DT_BF16, KG_DT_F16 };
    const size_t ne = 4096;
    for (int t = 0; t < 3; t++) {
        int w = dts[t] == KG_DT_F32 ? 4 : 2;
        kg_case_data d;
        memset(&d, 0, sizeof d);
        d.nout = 1;
        d.out_dtype[0] = dts[t];
        d.out_elems[0] = (int64_t)ne;
        d.out_bytes[0] = ne * (size_t)w;
        d.ref[0] = malloc(ne * sizeof(double));
        unsigned char *out = malloc(ne * (size_t)w), *back = malloc(ne * (size_t)w);
        CHECK(d.ref[0] != NULL && out != NULL && back != NULL);
        for (size_t e = 0; e < ne; e++) d.ref[0][e] = (double)kg_philox_uniform(7, 0, e) * 8.0 - 4.0;
        /* 1: arbitrary bits, with the special values planted */
        for (size_t e = 0; e < ne * (size_t)w; e++) out[e] = (unsigned char)((double)kg_philox_uniform(9, 1, e) * 256.0);
        const uint32_t specials[] = { 0x7fc00000u, 0xff800000u, 0x7f800000u, 0x80000000u, 0x00000001u, 0xffffffffu };
        for (int k = 0; k < 6; k++) memcpy(out + (size_t)k * (size_t)w, &specials[k], (size_t)w);
        void *blob = NULL;
        size_t blen = 0;
        kg_err err = { 0 };
        const kg_outref r = { d.out_dtype[0], d.out_elems[0], d.ref[0] };
        CHECK(kg_outenc_encode(&r, out, ne * (size_t)w, &blob, &blen, &err) == KG_OK);
        memset(back, 0, ne * (size_t)w);
        CHECK(kg_outenc_decode(&r, KG_OUTENC_ULP, blob, blen, back, ne * (size_t)w, &err) == KG_OK);
        CHECK(memcmp(out, back, ne * (size_t)w) == 0);
        free(blob);
        /* 2: an honest output, within 3 ulps of the rounded reference */
        for (size_t e = 0; e < ne; e++) {
            float f = (float)d.ref[0][e];
            uint32_t b;
            memcpy(&b, &f, 4);
            if (w == 2) b = dts[t] == KG_DT_BF16 ? kg_gen_bf16(f) : kg_gen_f16(f);
            int delta = (int)((double)kg_philox_uniform(11, 2, e) * 7.0) - 3;
            b = (uint32_t)((int64_t)b + delta);
            memcpy(out + e * (size_t)w, &b, (size_t)w);
        }
        CHECK(kg_outenc_encode(&r, out, ne * (size_t)w, &blob, &blen, &err) == KG_OK);
        /* about 2.8 bits of entropy an element: under a third of 16 bits */
        if (blen * 3 >= ne * (size_t)w)
            fprintf(stderr, "outenc: %s: %zu of %zu bytes\n", kg_dtype_name(dts[t]), blen, ne * (size_t)w);
        CHECK(blen * 3 < ne * (size_t)w);
        CHECK(kg_outenc_decode(&r, KG_OUTENC_ULP, blob, blen, back, ne * (size_t)w, &err) == KG_OK);
        CHECK(memcmp(out, back, ne * (size_t)w) == 0);
        /* 3: refused: a cut blob, a flipped byte, an unknown encoding, the wrong size */
        CHECK(kg_outenc_decode(&r, KG_OUTENC_ULP, blob, blen / 2, back, ne * (size_t)w, &err) != KG_OK);
        ((unsigned char *)blob)[blen / 2] ^= 0x5a;
        int rc = kg_outenc_decode(&r, KG_OUTENC_ULP, blob, blen, back, ne * (size_t)w, &err);
        CHECK(rc != KG_OK || memcmp(out, back, ne * (size_t)w) != 0);
        kg_err_clear(&err);
        CHECK(kg_outenc_decode(&r, "lz4", blob, blen, back, ne * (size_t)w, &err) != KG_OK);
        CHECK_STR_CONTAINS(err.msg, "unknown encoding");
        CHECK(kg_outenc_decode(&r, KG_OUTENC_RAW, out, 8, back, ne * (size_t)w, &err) != KG_OK);
        free(blob);
        free(d.ref[0]);
        free(out);
        free(back);
    }
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/kgate-test-oracle-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_philox();
    test_conversions();
    test_fp8_int();
    test_reference();
    test_inputs();
    test_row_classes();
    test_refill_perturb();
    test_checksum_guard_poison();
    test_registry();
    test_bounds_and_cases();
    test_defects();
    test_kernels();
    test_outenc();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return kg_test_finish("test_oracle");
}
