/* bounds.c: the error bounds every op builds its tolerance from
 * (kgate/op.h), with their derivations and sources, and the dtype facts
 * under them: unit roundoff, the declared accuracy ceiling, bytes per
 * element.  Built-in and declared ops call these; nothing here knows an
 * op. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kgate/op.h"

double kg_ops_unit_roundoff(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F16: return ldexp(1.0, -11);
    case KG_DT_BF16: return ldexp(1.0, -8);
    case KG_DT_F64: return ldexp(1.0, -53);
    case KG_DT_I32: case KG_DT_I8: return 0.0;   /* integers are exact */
    case KG_DT_E4M3: return ldexp(1.0, -4);
    case KG_DT_E5M2: return ldexp(1.0, -3);
    default: return ldexp(1.0, -24);
    }
}

double kg_ops_ceiling(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F16: return 2e-3;
    case KG_DT_BF16: return 2e-2;
    case KG_DT_F64: return 1e-4;    /* its values are float32's (kgate/gen.h) */
    case KG_DT_I32: case KG_DT_I8: return 0.0;
    case KG_DT_E4M3: return 1.25e-1;
    case KG_DT_E5M2: return 2.5e-1;
    default: return 1e-4;
    }
}

/* gamma_n(u) = n u / (1 - n u): Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., Lemma 3.1 and eq. (3.5). */
static double gamma_n(int64_t n, double u)
{
    double nu = (double)n * u;
    return nu < 0.5 ? nu / (1.0 - nu) : (double)INFINITY;
}

double kg_ops_gamma(int64_t n, double u)
{
    return gamma_n(n, u);
}

double kg_ops_gamma_prob(int64_t n)
{
    return kg_ops_gamma_prob_u(n, ldexp(1.0, -24));
}

/* The default bound of a sum element (the case dtype's contract).
 *
 * 1. Worst case.  Inputs are exact in float32 (f16/bf16/f32 values) and
 *    kernels accumulate in float32, so for a sum of n terms, in any order
 *    and with or without FMA, |fl(s) - s| <= gamma_n(2^-24) * sum|term|
 *    (Higham, 2nd ed., §3.1, eq. (3.5): the bound for a dot product; its
 *    proof holds for every summation order, hence for blocked, unrolled
 *    and split-K kernels).  An output stored in a narrower dtype adds
 *    one rounding, u_out * |ref|.  The float64 reference carries its own
 *    gamma_n(2^-53) * sum|term|, added so that the check never blames a
 *    kernel for the reference's error.
 *
 * 2. Probabilistic.  Under the model of Higham and Mary ("A new approach
 *    to probabilistic rounding error analysis", SIAM J. Sci. Comput.
 *    41(5), 2019: rounding errors independent, mean zero), |error| <=
 *    gamma~_n(lambda) * sum|term| with gamma~_n(lambda) = exp(lambda
 *    sqrt(n) u + n u^2 / (1 - u)) - 1, failing with probability at most
 *    2n exp(-lambda^2 (1-u)^2 / 2).  lambda = 10 makes that 2e-22 * n per
 *    element: negligible even over 2^28 elements.  The model holds for
 *    random data; it fails where the rounding errors are systematic, as
 *    for a row of one repeated value (2048 copies summed in float32 err
 *    by 510 u, over the 452 u of gamma~_2048).  So it is used only where
 *    the sum looks like random data: |ref| <= lambda sqrt(sum t^2), the
 *    size of a sum of terms with random signs.  A constant or one-signed
 *    row has |ref| = sum|t|, far above, and gets the worst case.
 *
 * f32 inputs (true float32 arithmetic, round to nearest: CPU, CUDA FFMA,
 * cuBLAS without TF32): the smaller of the two where the sum looks
 * random, else the worst case.  There is no other cap: before precision
 * contracts a declared accuracy of 1e-4 x the row scale (about 1678 u)
 * stood above both for K <~ 1700 and let TF32 inputs through
 * (error/bound 0.78 on an H200, K = 1024, where the worst case 1024 u was
 * the bound); now the bound is 10 sqrt(K) u there.
 *
 * f16 and bf16 inputs (matrix units, whose accumulation is not round to
 * nearest: truncation inside the MMA, Fasi, Higham, Mikaitis and Pranesh,
 * "Numerical behavior of NVIDIA tensor cores", PeerJ CS 7:e330, 2021, so
 * the probabilistic model does not hold): the worst case, capped by the
 * dtype ceiling (f16 2e-3, bf16 2e-2) x rowscale but never below the
 * probabilistic bound, as before.
 *
 * Finally a tiny absolute floor (1e-30) so that an exact zero compares
 * with a positive bound (0 still has to be met to within 1e-30). */
#define KG_BOUND_LAMBDA 10.0

/* 1 when a sum looks like one of random data (see above); l2 < 0: unknown */
static int looks_random(const kg_sum_elem *s)
{
    return s->l2 >= 0.0 && fabs(s->ref) <= KG_BOUND_LAMBDA * s->l2;
}

static double default_bound(const kg_sum_elem *s, kg_dtype in_dt, kg_dtype out_dt)
{
    const double u_acc = ldexp(1.0, -24);
    const double u_ref = ldexp(1.0, -53);
    double u_out = out_dt == KG_DT_F32 ? 0.0 : kg_ops_unit_roundoff(out_dt);
    /* float32 output: the final rounding is already part of gamma_n
     * (the last addition rounds to float32), but a kernel may hold a
     * wider accumulator and round once at the end: allow it. */
    if (out_dt == KG_DT_F32) u_out = u_acc;
    double absdot = s->absdot;
    double out_term = u_out * fabs(s->ref);
    double ref_term = absdot > 0.0 ? gamma_n(s->n, u_ref) * absdot : 0.0;

    /* gamma_n is infinite beyond n u >= 1/2; 0 * inf must not be NaN */
    double worst = (absdot > 0.0 ? gamma_n(s->n, u_acc) * absdot : 0.0) + out_term;
    double prob = (absdot > 0.0 ? kg_ops_gamma_prob_u(s->n, u_acc) * absdot : 0.0) + out_term;
    if (in_dt == KG_DT_F32) return (looks_random(s) ? fmin(worst, prob) : worst) + ref_term + 1e-30;
    double cap = fmax(kg_ops_ceiling(in_dt) * s->rowscale, prob);
    return fmin(worst, cap) + ref_term + 1e-30;
}

/* Without sqrt(sum t^2) nothing says the sum looks random: f32 inputs get
 * the worst case.  The built-in sum ops call kg_ops_bound_sum. */
double kg_ops_bound_elem(double absdot, double ref, double rowscale, int64_t n,
                         kg_dtype in_dt, kg_dtype out_dt)
{
    kg_sum_elem e = { .absdot = absdot, .l2 = -1.0, .ref = ref, .rowscale = rowscale, .n = n, .factors = 0 };
    return default_bound(&e, in_dt, out_dt);
}

double kg_ops_gamma_prob_u(int64_t n, double u)
{
    const double lambda = 10.0;
    double nd = (double)n;
    return expm1(lambda * sqrt(nd) * u + nd * u * u / (1.0 - u));
}

/* The bound of a sum element under a reduced contract.
 *
 * tolerance T: |y - ref| <= T * rowscale (the row's largest sum|term|,
 * the scale of its results), plus the reference's own error.
 *
 * tf32, f16acc, bf16acc: term k is t_k (1 + theta_k), theta_k from the
 * conversion of its `factors` inputs to TF32 (f32 cases of the tf32
 * contract only), then the terms are summed with unit roundoff u_acc
 * (2^-24, f16 2^-11, bf16 2^-8) and n + 1 roundings per term (the
 * conversion of a term to the narrow accumulator, and n - 1 additions and
 * the product).
 *   input part:  the tf32 contract admits the conversions hardware
 *                makes: round to nearest, ties away (cvt.rna) or to even
 *                (cvt.rn, cuBLAS's) (|theta| <= (1 + 2^-11)^f - 1, mean
 *                zero), and the low 13 bits dropped, as
 *                a tensor core may do with raw f32 operands (theta in
 *                [-e, 0], e = (1 + 2^-10)^f - 1, never mean zero, so no
 *                probabilistic form holds: on rows of one sign the errors
 *                add up).  Where the op computed it (tf32_known), the input
 *                part is the exact error of the conversions on these
 *                inputs, the largest over each operand converted one of
 *                the three ways throughout (nine combinations for a
 *                GEMM); else the worst case of
 *                both, e (sum|t| + |ref|) / 2 (for the dropped bits the
 *                error is at most e times the larger of the positive and
 *                the negative terms' sums, which is (sum|t| + |ref|) / 2;
 *                rounding's e / 2 sum|t| is below it);
 *   sum part:    min(gamma_m, gamma~_m(lambda)) (1 + e) sum|t| at u_acc,
 *                m = n + 1 (as the default, for the perturbed terms;
 *                gamma_m alone where the sum does not look random).
 * A reduced contract is never stricter than the default: the result is
 * at least kg_ops_bound_elem's. */
double kg_ops_bound_sum(const kg_sum_elem *s, const kg_contract *ct, kg_dtype in_dt,
                        kg_dtype out_dt)
{
    double def = default_bound(s, in_dt, out_dt);
    if (ct == NULL || (ct->precision == KG_PREC_DTYPE && !(ct->tolerance > 0.0))) return def;
    const double u_ref = ldexp(1.0, -53);
    double ref_term = s->absdot > 0.0 ? gamma_n(s->n, u_ref) * s->absdot : 0.0;
    if (ct->tolerance > 0.0) return ct->tolerance * s->rowscale + ref_term + 1e-30;
    /* 16-bit inputs are exact in TF32: the tf32 contract is the default one */
    if (ct->precision == KG_PREC_TF32 && in_dt != KG_DT_F32) return def;
    const int tf32 = ct->precision == KG_PREC_TF32;
    double u_acc = ct->precision == KG_PREC_F16ACC ? ldexp(1.0, -11)
                   : ct->precision == KG_PREC_BF16ACC ? ldexp(1.0, -8) : ldexp(1.0, -24);
    double e_in = tf32 ? pow(1.0 + ldexp(1.0, -10), s->factors > 0 ? s->factors : 1) - 1.0 : 0.0;
    double in_part = 0.0;
    if (tf32 && s->absdot > 0.0)
        in_part = s->tf32_known ? s->tf32_in : 0.5 * e_in * (s->absdot + fabs(s->ref));
    double a = (1.0 + e_in) * s->absdot;
    int64_t m = s->n + 1;
    double g = looks_random(s) ? fmin(gamma_n(m, u_acc), kg_ops_gamma_prob_u(m, u_acc)) : gamma_n(m, u_acc);
    double sum_part = a > 0.0 ? g * a : 0.0;
    double out_term = (out_dt == KG_DT_F32 ? ldexp(1.0, -24) : kg_ops_unit_roundoff(out_dt)) * fabs(s->ref);
    double b = in_part + sum_part + out_term + ref_term + 1e-30;
    return fmax(b, def);
}

double kg_ops_dtype_bytes(kg_dtype dt)
{
    return (double)kg_dtype_size(dt);
}

double kg_ops_tf32(double x, int mode)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        if (mode == KG_TF32_RNA) u += 0x1000u;                        /* half the dropped ulp: ties away */
        else if (mode == KG_TF32_RNE) u += 0xfffu + ((u >> 13) & 1u); /* ties to the even neighbour */
        u &= 0xffffe000u;
    }
    memcpy(&f, &u, sizeof f);
    return (double)f;
}
