/* kgate/gen.h: kgate's input generator, four elements at a time.
 *
 * One input stream of a case is a pure function of kg_gen_spec: Philox
 * gives four words per counter (kgate/philox.h), one counter per four
 * elements; interior rows take the value of their structured class (the
 * layout in oracle.c); the first row is zero and the last one four times
 * the scale.  The same text compiles as C11 on the host (oracle.c, the
 * cpu backend's fill) and as CUDA C under NVRTC (cuda_fill.c embeds it,
 * with its #include lines removed, by the Makefile's gen rule), so that
 * the device writes the bits the host would: every step is exact or one
 * IEEE operation with a single rounding (products by powers of two, one
 * multiplication by the scale), the 16-bit roundings are integer code,
 * and nothing calls libc.  cuda_fill.c checks the device's bits against
 * the host's before it uses them.
 *
 * Apart from kgate/philox.h and <stdint.h>, and <string.h> on the host,
 * this file includes nothing; it must stay that way for NVRTC. */
#ifndef KGATE_GEN_H
#define KGATE_GEN_H

#include <stdint.h>
#include "kgate/philox.h"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KG_GEN_FN static __device__ inline
KG_GEN_FN uint32_t kg_gen_fbits(float f) { return __float_as_uint(f); }
KG_GEN_FN float kg_gen_bitsf(uint32_t u) { return __uint_as_float(u); }
KG_GEN_FN uint64_t kg_gen_dbits(double d) { return (uint64_t)__double_as_longlong(d); }
KG_GEN_FN double kg_gen_bitsd(uint64_t u) { return __longlong_as_double((long long)u); }
#else
#include <string.h>
#define KG_GEN_FN static inline
KG_GEN_FN uint32_t kg_gen_fbits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
KG_GEN_FN float kg_gen_bitsf(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
KG_GEN_FN uint64_t kg_gen_dbits(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }
KG_GEN_FN double kg_gen_bitsd(uint64_t u) { double d; memcpy(&d, &u, sizeof d); return d; }
#endif

/* dtypes (kg_dtype's values) and row classes (KG_ROW_* of kgate/op.h;
 * oracle.c asserts they agree) */
#define KG_GEN_F32 0
#define KG_GEN_F16 1
#define KG_GEN_BF16 2
#define KG_GEN_F64 3
#define KG_GEN_I32 4
#define KG_GEN_I8 5
#define KG_GEN_E4M3 6
#define KG_GEN_E5M2 7
#define KG_GEN_NDTYPES 8
#define KG_GEN_IID 0
#define KG_GEN_ZERO_ENDS 1
#define KG_GEN_SPARSE 2
#define KG_GEN_ZERO_RUNS 3
#define KG_GEN_CONSTANT 4
#define KG_GEN_WIDE 5
#define KG_GEN_NEGATIVE 6
#define KG_GEN_NEAR_CONSTANT 7
#define KG_GEN_NCLASSES 8

#define KG_GEN_TAG_ELEMS 0x6b676174u   /* "kgat": the elements' blocks */
#define KG_GEN_TAG_PARAM 0x726f7770u   /* "rowp": a row's parameters */

/* One input stream (oracle.c's kg_oracle_gen_spec fills it).  Fixed-width
 * fields, 8-byte ones first: the host and NVRTC lay it out alike. */
typedef struct kg_gen_spec {
    uint64_t seed;
    int64_t n;             /* elements */
    int64_t rows, per_row; /* rows of the stream, elements per row */
    int64_t R, nclass;     /* the layout: interior rows, rows given a class */
    uint64_t a, b, rot;    /* row r's place is (a (r - 1) + b) mod R */
    uint32_t stream;
    int32_t dtype;         /* KG_GEN_* */
    float scale;
    int32_t C;             /* classes that apply */
    int32_t list[KG_GEN_NCLASSES];
} kg_gen_spec;

/* A row's class parameters, from its own Philox block. */
typedef struct kg_gen_row {
    int64_t row;          /* the row these are of; -1 none yet */
    int64_t z;            /* zero-ends: zeros at each end */
    int64_t run, off;     /* zero-runs: run length, phase */
    int64_t keep;         /* sparse, wide: the element always kept */
    int32_t cls;
    int32_t wide;         /* wide: largest binary exponent below the scale */
    float c;              /* (near-)constant: the value, scale included */
    float rel;            /* near-constant: relative spread (a power of two) */
} kg_gen_row;

KG_GEN_FN void kg_gen_block(uint64_t seed, uint64_t q, uint32_t stream, uint32_t tag, uint32_t r[4])
{
    uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
    uint32_t ctr[4] = { (uint32_t)q, (uint32_t)(q >> 32), stream, tag };
    kg_philox4x32(ctr, key, r);
}

KG_GEN_FN int32_t kg_gen_class(const kg_gen_spec *s, int64_t row)
{
    if (s->C == 0 || row < 1 || row > s->R) return KG_GEN_IID;
    uint64_t pos = (s->a * (uint64_t)(row - 1) + s->b) % (uint64_t)s->R;
    if ((int64_t)pos >= s->nclass) return KG_GEN_IID;
    return s->list[(pos + s->rot) % (uint64_t)s->C];
}

/* scale * (8 + (w & 7)) / 16 rounded half up to 4 significant bits (the
 * product and the division by 16 are exact in double), so that n copies
 * (and their products with another 4-bit value) add exactly in float32
 * for n <= 2^16, in any order; bit 3 of w is the sign */
KG_GEN_FN float kg_gen_const(float scale, uint32_t w)
{
    double v = (double)scale * (double)(8 + (w & 7)) / 16.0;
    uint64_t u = kg_gen_dbits(v);
    u += (uint64_t)1 << 48;               /* half of the 4th significant bit */
    u &= ~(((uint64_t)1 << 49) - 1);      /* 1 + 3 fraction bits kept */
    float f = (float)kg_gen_bitsd(u);     /* exact: 4 significant bits */
    return (w & 8) ? -f : f;
}

KG_GEN_FN void kg_gen_row_init(const kg_gen_spec *s, int64_t row, kg_gen_row *p)
{
    const int64_t cols = s->per_row;
    p->row = row;
    p->cls = kg_gen_class(s, row);
    p->z = p->run = p->off = p->keep = 0;
    p->wide = 0;
    p->c = 0.0f;
    p->rel = 0.0f;
    if (p->cls == KG_GEN_IID) return;
    uint32_t r[4];
    kg_gen_block(s->seed, (uint64_t)row, s->stream, KG_GEN_TAG_PARAM, r);
    int64_t zmax = (cols - 1) / 2, zcap = cols / 8 > 1 ? cols / 8 : 1;
    if (zcap > zmax) zcap = zmax;
    p->z = zcap > 0 ? 1 + (int64_t)(r[0] % (uint64_t)zcap) : 0;
    p->run = 2 + (int64_t)(r[1] % (uint64_t)(cols / 8 > 1 ? cols / 8 : 1));
    p->off = (int64_t)(r[2] % (uint64_t)(2 * p->run));
    p->keep = cols > 0 ? (int64_t)(r[3] % (uint64_t)cols) : 0;
    p->c = kg_gen_const(s->scale, r[0] >> 8);
    /* a spread the dtype can still resolve: 12 bits below the value for
     * f32 and f64, 6 for f16, 2 for e5m2, 3 for the others */
    p->rel = s->dtype == KG_GEN_F32 || s->dtype == KG_GEN_F64 ? 0x1p-12f
             : s->dtype == KG_GEN_F16 ? 0x1p-6f : s->dtype == KG_GEN_E5M2 ? 0x1p-2f : 0x1p-3f;
    /* the binary exponents below the scale a wide row spans: the dtype's
     * range above its subnormals (or above 1 for the integers) for scales
     * near 1 */
    p->wide = s->dtype == KG_GEN_F16 || s->dtype == KG_GEN_E5M2 ? 12 : s->dtype == KG_GEN_E4M3 ? 6
              : s->dtype == KG_GEN_I8 ? 5 : s->dtype == KG_GEN_I32 ? 10 : 24;
}

/* 2^-k for k in [0, 24], exactly */
KG_GEN_FN float kg_gen_pow2m(int32_t k)
{
    return kg_gen_bitsf((uint32_t)(127 - k) << 23);
}

/* The value of element j of a row (before the dtype rounding): u is the
 * element's uniform value, lo its Philox word's low eight bits (unused by
 * u), m the row's multiplier (0, 1 or 4).  Products by m, by rel and by
 * powers of two are exact, so each value is one rounding of an exact
 * product (near-constant: 1 + rel u, then the product by c). */
KG_GEN_FN float kg_gen_value(const kg_gen_row *p, int64_t j, int64_t cols, float u, uint32_t lo, float m,
                             float scale)
{
    switch (p->cls) {
    case KG_GEN_ZERO_ENDS:
        return j < p->z || j >= cols - p->z ? 0.0f : scale * (m * u);
    case KG_GEN_SPARSE:
        return (lo & 7u) == 0 || j == p->keep ? scale * (m * u) : 0.0f;
    case KG_GEN_ZERO_RUNS:
        return ((j + p->off) / p->run) % 2 == 1 ? 0.0f : scale * (m * u);
    case KG_GEN_CONSTANT:
        return p->c;
    case KG_GEN_NEAR_CONSTANT:
        return p->c * (1.0f + p->rel * u);
    case KG_GEN_WIDE: {
        /* the kept element at full scale and the next one at the bottom of
         * the range, so that every wide row spans it */
        int32_t k = j == p->keep ? 0 : j == (p->keep + 1) % cols ? p->wide : (int32_t)(lo % (uint32_t)(p->wide + 1));
        return scale * (m * (u * kg_gen_pow2m(k)));
    }
    case KG_GEN_NEGATIVE:
        return scale * (m * (u > 0.0f ? -u : u));
    default:
        return scale * (m * u);
    }
}

/* float32 to bfloat16 and to binary16, round to nearest even (the same
 * code as kgate/kernel.h's host conversions) */
KG_GEN_FN uint16_t kg_gen_bf16(float f)
{
    uint32_t u = kg_gen_fbits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

KG_GEN_FN uint16_t kg_gen_f16(float f)
{
    uint32_t u = kg_gen_fbits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) {
        if (a < 0x33000000u) return (uint16_t)sign;
        uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((a - 0x38000000u) >> 13);
    uint32_t rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return (uint16_t)(sign | r);
}

/* Bytes per element of a dtype (KG_GEN_*); 0 for an unknown one. */
KG_GEN_FN int kg_gen_dtype_bytes(int32_t dt)
{
    switch (dt) {
    case KG_GEN_F32: case KG_GEN_I32: return 4;
    case KG_GEN_F16: case KG_GEN_BF16: return 2;
    case KG_GEN_F64: return 8;
    case KG_GEN_I8: case KG_GEN_E4M3: case KG_GEN_E5M2: return 1;
    default: return 0;
    }
}

/* f rounded to the nearest integer, ties to even, saturated to
 * [-lim, lim] (NaN: 0), in integer code. */
KG_GEN_FN int32_t kg_gen_rint(float f, int32_t lim)
{
    uint32_t u = kg_gen_fbits(f), a = u & 0x7fffffffu, r;
    if (a > 0x7f800000u) return 0;
    int32_t e = (int32_t)(a >> 23) - 127;
    if (e < -1) {
        r = 0;
    } else if (e >= 31) {
        r = (uint32_t)lim;
    } else {
        uint32_t m = (a & 0x7fffffu) | 0x800000u;  /* |f| = m 2^(e - 23) */
        if (e >= 23) {
            r = m << (e - 23);
        } else {
            int32_t sh = 23 - e;
            uint32_t q = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1);
            if (rem > half || (rem == half && (q & 1u))) q++;
            r = q;
        }
    }
    if (r > (uint32_t)lim) r = (uint32_t)lim;
    return (u >> 31) ? -(int32_t)r : (int32_t)r;
}

/* The OCP 8-bit floats (OFP8): e4m3 (bias 7, no infinities, 0x7f the
 * NaN, largest 448) and e5m2 (bias 15, IEEE-like, largest 57344).
 * float32 to fp8 rounds to nearest even and saturates to the largest
 * finite value (as the hardware's .satfinite conversions do); NaN stays a
 * NaN.  Integer code only, exact in both directions. */
KG_GEN_FN uint8_t kg_gen_fp8(float f, int32_t dt)
{
    const int32_t mb = dt == KG_GEN_E4M3 ? 3 : 2, bias = dt == KG_GEN_E4M3 ? 7 : 15;
    const uint32_t maxc = dt == KG_GEN_E4M3 ? 0x7eu : 0x7bu, nanc = dt == KG_GEN_E4M3 ? 0x7fu : 0x7eu;
    uint32_t u = kg_gen_fbits(f), a = u & 0x7fffffffu, r;
    uint32_t sign = (u >> 24) & 0x80u;
    if (a > 0x7f800000u) return (uint8_t)(sign | nanc);
    int32_t e = (int32_t)(a >> 23) - 127, emin = 1 - bias;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    if (a < 0x00800000u) {
        r = 0;  /* float32 subnormals are far below every fp8 value */
    } else if (e > bias + 1) {
        r = maxc;
    } else {
        /* the fp8 code of |f| = m 2^(e - 23): a normal one takes the
         * exponent field (e + bias) above mb bits of the fraction; a
         * subnormal one counts units of 2^(emin - mb) */
        int32_t sh = e >= emin ? 23 - mb : 23 - mb + (emin - e);
        uint32_t base = e >= emin ? ((uint32_t)(e + bias) << mb) : 0u;
        uint32_t frac = e >= emin ? (m & 0x7fffffu) : m;
        if (sh > 25) {
            r = 0;
        } else {
            uint32_t q = frac >> sh, rem = frac & ((1u << sh) - 1u), half = 1u << (sh - 1);
            r = base + q;
            if (rem > half || (rem == half && (r & 1u))) r++;
        }
        if (r > maxc) r = maxc;
    }
    return (uint8_t)(sign | r);
}

/* bfloat16 and binary16 bits to float32, exactly */
KG_GEN_FN float kg_gen_bf16_to_f32(uint16_t h)
{
    return kg_gen_bitsf((uint32_t)h << 16);
}

KG_GEN_FN float kg_gen_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = ((uint32_t)h >> 10) & 0x1fu, man = (uint32_t)h & 0x3ffu, u;
    if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: renormalise */
            exp = 127 - 15 + 1;
            while ((man & 0x400u) == 0) { man <<= 1; exp--; }
            u = sign | (exp << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | (man << 13);
    } else {
        u = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    return kg_gen_bitsf(u);
}

/* fp8 bits to float32, exactly (an e5m2 infinity to an infinity, a NaN
 * code to a NaN). */
KG_GEN_FN float kg_gen_fp8_to_f32(uint8_t h, int32_t dt)
{
    const int32_t mb = dt == KG_GEN_E4M3 ? 3 : 2, bias = dt == KG_GEN_E4M3 ? 7 : 15;
    const uint32_t emax_field = dt == KG_GEN_E4M3 ? 15u : 31u;
    uint32_t sign = (uint32_t)(h & 0x80u) << 24, ef = ((uint32_t)h & 0x7fu) >> mb, man = (uint32_t)h & ((1u << mb) - 1u);
    uint32_t u;
    if (dt == KG_GEN_E4M3 && (h & 0x7fu) == 0x7fu) {
        u = sign | 0x7fc00000u;
    } else if (dt == KG_GEN_E5M2 && ef == emax_field) {
        u = sign | 0x7f800000u | (man ? 0x400000u : 0u);
    } else if (ef == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: man 2^(1 - bias - mb), renormalised */
            int32_t e = 1 - bias;
            while ((man & (1u << mb)) == 0) { man <<= 1; e--; }
            u = sign | ((uint32_t)(e + 127) << 23) | ((man & ((1u << mb) - 1u)) << (23 - mb));
        }
    } else {
        u = sign | ((ef - (uint32_t)bias + 127u) << 23) | (man << (23 - mb));
    }
    return kg_gen_bitsf(u);
}

/* The integer dtypes' unit: an i8 element is the generator's value times
 * 32, an i32 element the value times 1024 (both exact products), rounded
 * to nearest even and saturated (i8 to [-127, 127]), so that a case of
 * scale 1 spans [-32, 32) with its last row at [-127, 127]. */
#define KG_GEN_I8_UNIT 32.0f
#define KG_GEN_I32_UNIT 1024.0f

/* Stores the generator value v as element e of dst in dtype dt. */
KG_GEN_FN void kg_gen_store(int32_t dt, void *dst, int64_t e, float v)
{
    switch (dt) {
    case KG_GEN_F32: ((float *)dst)[e] = v; break;
    case KG_GEN_F16: ((uint16_t *)dst)[e] = kg_gen_f16(v); break;
    case KG_GEN_BF16: ((uint16_t *)dst)[e] = kg_gen_bf16(v); break;
    case KG_GEN_F64: ((double *)dst)[e] = (double)v; break;
    case KG_GEN_I32: ((int32_t *)dst)[e] = kg_gen_rint(v * KG_GEN_I32_UNIT, 0x7fffffff); break;
    case KG_GEN_I8: ((int8_t *)dst)[e] = (int8_t)kg_gen_rint(v * KG_GEN_I8_UNIT, 127); break;
    default: ((uint8_t *)dst)[e] = kg_gen_fp8(v, dt); break;
    }
}

/* Elements 4q .. 4q+3 (those below n) of the stream, stored in the
 * stream's dtype at dst (kg_gen_store).
 * p caches the parameters of the last row seen (p->row = -1 at first).
 * Returns the number of elements written. */
KG_GEN_FN int kg_gen_quad(const kg_gen_spec *s, uint64_t q, kg_gen_row *p, void *dst)
{
    uint32_t r[4];
    kg_gen_block(s->seed, q, s->stream, KG_GEN_TAG_ELEMS, r);
    int k = 0;
    for (; k < 4; k++) {
        int64_t e = (int64_t)(4 * q) + k;
        if (e >= s->n) break;
        uint32_t bits = r[k] >> 8;
        float u = (float)((int32_t)bits - (1 << 23)) * (1.0f / (float)(1 << 23));
        int64_t row = s->per_row > 0 ? e / s->per_row : 0;
        if (row != p->row) kg_gen_row_init(s, row, p);
        float m = 1.0f;
        if (s->rows > 1 && row == 0) m = 0.0f;
        else if (row == s->rows - 1) m = 4.0f;
        float v = kg_gen_value(p, s->per_row > 0 ? e % s->per_row : e, s->per_row, u, r[k] & 0xffu, m, s->scale);
        kg_gen_store(s->dtype, dst, e, v);
    }
    return k;
}

/* Every element of the stream, one quad after another (the host's loop;
 * a kernel gives each thread quads of its own instead). */
KG_GEN_FN void kg_gen_all(const kg_gen_spec *s, void *dst)
{
    kg_gen_row p = { -1, 0, 0, 0, 0, 0, 0, 0.0f, 0.0f };
    for (uint64_t q = 0; (int64_t)(4 * q) < s->n; q++) kg_gen_quad(s, q, &p, dst);
}

#endif
