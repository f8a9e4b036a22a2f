/* gemm_fp8.c: an op declared in a plan (docs/ops.md): the scaled FP8
 * matrix product of FP8 training and inference, with the row maxima a
 * next layer's scaling needs.
 *
 *     D[m, n]  = sa * sb * sum_{k < K} A[m, k] * B[n, k]
 *     amax[m]  = max_n |D[m, n]|         (before D is rounded to bf16)
 *
 * A and B are OCP FP8 e4m3 [M, K] and [N, K] (K-major), sa and sb are
 * float32 scalars (tensors of one element), D is bfloat16 [M, N] and
 * amax float32 [M]: four inputs of two dtypes, two outputs of two.
 *
 * The bound assumes float32 accumulation of exact products (an e4m3
 * product has 8 significant bits): kgate's sum bound with the scales
 * folded in.  Matrix units that accumulate FP8 products in fewer bits
 * need a looser bound of their own: write it in your op.
 *
 *     [op gemm_fp8]
 *     source = ops/gemm_fp8.c
 *
 *     [case f8]
 *     op = gemm_fp8
 *     dtype = e4m3
 *     M = 128
 *     N = 256
 *     K = 512 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kgate/op.h"

static void f8_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    int64_t M = kg_op_var_i(c, "M", 0), N = kg_op_var_i(c, "N", 0), K = kg_op_var_i(c, "K", 0);
    in_elems[0] = M * K;
    in_elems[1] = N * K;
    in_elems[2] = 1;
    in_elems[3] = 1;
    out_elems[0] = M * N;
    out_elems[1] = M;
}

static void f8_rows(const kg_case *c, int64_t rows[])
{
    rows[0] = kg_op_var_i(c, "M", 0);
    rows[1] = kg_op_var_i(c, "N", 0);
    rows[2] = 1;
    rows[3] = 1;
}

static int64_t f8_out_cols(const kg_case *c, int o)
{
    return o == 0 ? kg_op_var_i(c, "N", 0) : 0;
}

static kg_dtype f8_in_dtype(const kg_case *c, int i)
{
    (void)c;
    return i < 2 ? KG_DT_E4M3 : KG_DT_F32;
}

static kg_dtype f8_out_dtype(const kg_case *c, int o)
{
    (void)c;
    return o == 0 ? KG_DT_BF16 : KG_DT_F32;
}

static int f8_admissible(const kg_case *c, char *why, size_t cap)
{
    int64_t M = kg_op_var_i(c, "M", 0), N = kg_op_var_i(c, "N", 0), K = kg_op_var_i(c, "K", 0);
    if (M < 1 || N < 1 || K < 1) {
        snprintf(why, cap, "M, N and K must be >= 1");
        return 1;
    }
    if (M * K > KG_OPS_MAX_ELEMS || N * K > KG_OPS_MAX_ELEMS || M * N > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "a tensor has more elements than kgate's limit");
        return 1;
    }
    return 0;
}

static int f8_reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    (void)err;
    int64_t M = kg_op_var_i(c, "M", 0), N = kg_op_var_i(c, "N", 0), K = kg_op_var_i(c, "K", 0);
    double s = in[2][0] * in[3][0];
    for (int64_t m = 0; m < M; m++) {
        double amax = 0.0;
        for (int64_t n = 0; n < N; n++) {
            double acc = 0.0;
            for (int64_t k = 0; k < K; k++) acc += in[0][m * K + k] * in[1][n * K + k];
            out[0][m * N + n] = s * acc;
            if (fabs(s * acc) > amax) amax = fabs(s * acc);
        }
        out[1][m] = amax;
    }
    return KG_OK;
}

/* D: kgate's bound of a sum of K products, scaled by |sa sb| (the
 * scaling adds at most two roundings, 2^-23 relative), rounded to bf16.
 * amax: within the largest bound of its row before the bf16 rounding
 * (|max|x| - max|y|| <= max |x - y|). */
static void f8_bound(const kg_case *c, const double *const in[], const double *ref, int o, double *bound)
{
    int64_t M = kg_op_var_i(c, "M", 0), N = kg_op_var_i(c, "N", 0), K = kg_op_var_i(c, "K", 0);
    double s = fabs(in[2][0] * in[3][0]);
    for (int64_t m = 0; m < M; m++) {
        double rowscale = 0.0, worst = 0.0;
        double *absdot = malloc((size_t)N * sizeof *absdot);
        if (absdot == NULL) {  /* no memory: the strictest bound, so nothing passes unseen */
            for (int64_t n = 0; n < (o == 0 ? N : 1); n++) bound[o == 0 ? m * N + n : m] = 0.0;
            continue;
        }
        for (int64_t n = 0; n < N; n++) {
            double a = 0.0;
            for (int64_t k = 0; k < K; k++) a += fabs(in[0][m * K + k] * in[1][n * K + k]);
            absdot[n] = a;
            if (a > rowscale) rowscale = a;
        }
        for (int64_t n = 0; n < N; n++) {
            double r = o == 0 ? ref[m * N + n] / (s > 0 ? s : 1.0) : 0.0;
            double acc = kg_ops_bound_elem(absdot[n], r, rowscale, K, KG_DT_E4M3, KG_DT_F32) * s;
            acc += 0x1p-23 * s * absdot[n];
            if (o == 0)
                bound[m * N + n] = acc + kg_ops_unit_roundoff(KG_DT_BF16) * fabs(ref[m * N + n]) + 1e-30;
            else if (acc > worst)
                worst = acc;
        }
        if (o == 1) bound[m] = worst + 1e-30;
        free(absdot);
    }
}

static double f8_flops(const kg_case *c)
{
    double M = (double)kg_op_var_i(c, "M", 0), N = (double)kg_op_var_i(c, "N", 0), K = (double)kg_op_var_i(c, "K", 0);
    return 2.0 * M * N * K;
}

static double f8_min_bytes(const kg_case *c)
{
    double M = (double)kg_op_var_i(c, "M", 0), N = (double)kg_op_var_i(c, "N", 0), K = (double)kg_op_var_i(c, "K", 0);
    return M * K + N * K + 8.0 + 2.0 * M * N + 4.0 * M;
}

const kg_op kgate_op = {
    .abi = KG_OP_ABI,
    .name = "gemm_fp8",
    .summary = "D[M, N] (bf16) = sa sb A[M, K] (e4m3) . B[N, K]^T (e4m3), amax[M] (f32) = max_n |D|",
    .vars = "M N K",
    .nin = 4, .nout = 2,
    .in_names = { "A", "B", "sa", "sb" },
    .out_names = { "D", "amax" },
    .sizes = f8_sizes,
    .out_dtype = f8_out_dtype,
    .admissible = f8_admissible,
    .reference = f8_reference,
    .bound = f8_bound,
    .flops = f8_flops,
    .min_bytes = f8_min_bytes,
    .in_rows = f8_rows,
    .out_cols = f8_out_cols,
    .scalars = "M N K",
    .in_dtype = f8_in_dtype,
};
