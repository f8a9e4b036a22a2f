/* conv1d.c: an op declared in a plan (docs/ops.md), compiled by kgate
 * against kgate/op.h and loaded in kgate's trusted processes only.
 *
 * A valid 1-D convolution of B signals of length L with one filter of
 * width W (a correlation, as deep-learning libraries define it):
 *
 *     Y[b, i] = sum_{k < W} X[b, i + k] * F[k],   i < L - W + 1
 *
 * X is bfloat16 [B, L], F is float32 [W], Y is bfloat16 [B, L - W + 1]:
 * two inputs of different dtypes and a 16-bit output.  The case sets the
 * variables B, L and W (any names the op declares in .vars).
 *
 *     [op conv1d]
 *     source = ops/conv1d.c
 *
 *     [case sig]
 *     op = conv1d
 *     dtype = bf16      ; the case dtype; this op fixes its own below
 *     B = 64
 *     L = 4096
 *     W = 9 */
#include <math.h>
#include <stdio.h>
#include "kgate/op.h"

static void conv_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    int64_t B = kg_op_var_i(c, "B", 0), L = kg_op_var_i(c, "L", 0), W = kg_op_var_i(c, "W", 0);
    in_elems[0] = B * L;
    in_elems[1] = W;
    out_elems[0] = B * (L - W + 1);
}

static void conv_rows(const kg_case *c, int64_t rows[])
{
    rows[0] = kg_op_var_i(c, "B", 0);   /* each signal is a row of the generator */
    rows[1] = 1;
}

static int64_t conv_out_cols(const kg_case *c, int o)
{
    (void)o;
    return kg_op_var_i(c, "L", 0) - kg_op_var_i(c, "W", 0) + 1;
}

static kg_dtype conv_in_dtype(const kg_case *c, int i)
{
    (void)c;
    return i == 0 ? KG_DT_BF16 : KG_DT_F32;
}

static kg_dtype conv_out_dtype(const kg_case *c, int o)
{
    (void)c;
    (void)o;
    return KG_DT_BF16;
}

/* 0 when the case can run; else why not. */
static int conv_admissible(const kg_case *c, char *why, size_t cap)
{
    int64_t B = kg_op_var_i(c, "B", 0), L = kg_op_var_i(c, "L", 0), W = kg_op_var_i(c, "W", 0);
    if (B < 1 || L < 1 || W < 1) {
        snprintf(why, cap, "B, L and W must be >= 1 (B = %lld, L = %lld, W = %lld)", (long long)B, (long long)L,
                 (long long)W);
        return 1;
    }
    if (W > L) {
        snprintf(why, cap, "the filter (W = %lld) is wider than the signal (L = %lld)", (long long)W, (long long)L);
        return 1;
    }
    if (B * L > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "B * L = %lld elements, more than kgate's limit", (long long)(B * L));
        return 1;
    }
    return 0;
}

/* In float64, from the inputs as they were rounded to their dtypes. */
static int conv_reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    (void)err;
    int64_t B = kg_op_var_i(c, "B", 0), L = kg_op_var_i(c, "L", 0), W = kg_op_var_i(c, "W", 0), n = L - W + 1;
    const double *x = in[0], *f = in[1];
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < n; i++) {
            double acc = 0.0;
            for (int64_t k = 0; k < W; k++) acc += x[b * L + i + k] * f[k];
            out[0][b * n + i] = acc;
        }
    return KG_OK;
}

/* Each output is a sum of W products: kgate's bound for a sum element,
 * with the row's largest sum of |terms| as its scale, bfloat16 inputs
 * (the coarser of the two) and a bfloat16 result. */
static void conv_bound(const kg_case *c, const double *const in[], const double *ref, int o, double *bound)
{
    (void)o;
    int64_t B = kg_op_var_i(c, "B", 0), L = kg_op_var_i(c, "L", 0), W = kg_op_var_i(c, "W", 0), n = L - W + 1;
    const double *x = in[0], *f = in[1];
    for (int64_t b = 0; b < B; b++) {
        double rowscale = 0.0;
        for (int64_t i = 0; i < n; i++) {
            double s = 0.0;
            for (int64_t k = 0; k < W; k++) s += fabs(x[b * L + i + k] * f[k]);
            bound[b * n + i] = s;   /* kept for the second pass */
            if (s > rowscale) rowscale = s;
        }
        for (int64_t i = 0; i < n; i++)
            bound[b * n + i] = kg_ops_bound_elem(bound[b * n + i], ref[b * n + i], rowscale, W, KG_DT_BF16,
                                                 KG_DT_BF16);
    }
}

static double conv_flops(const kg_case *c)
{
    double B = (double)kg_op_var_i(c, "B", 0), L = (double)kg_op_var_i(c, "L", 0), W = (double)kg_op_var_i(c, "W", 0);
    return 2.0 * B * (L - W + 1) * W;
}

/* Every input read once, every output written once. */
static double conv_min_bytes(const kg_case *c)
{
    double B = (double)kg_op_var_i(c, "B", 0), L = (double)kg_op_var_i(c, "L", 0), W = (double)kg_op_var_i(c, "W", 0);
    return B * L * 2.0 + W * 4.0 + B * (L - W + 1) * 2.0;
}

const kg_op kgate_op = {
    .abi = KG_OP_ABI,
    .name = "conv1d",
    .summary = "Y[B, L-W+1] (bf16) = valid 1-D convolution of X[B, L] (bf16) with F[W] (f32)",
    .vars = "B L W",
    .nin = 2, .nout = 1,
    .in_names = { "X", "F" },
    .out_names = { "Y" },
    .sizes = conv_sizes,
    .out_dtype = conv_out_dtype,
    .admissible = conv_admissible,
    .reference = conv_reference,
    .bound = conv_bound,
    .flops = conv_flops,
    .min_bytes = conv_min_bytes,
    .in_rows = conv_rows,
    .out_cols = conv_out_cols,
    .scalars = "B L W",
    .in_dtype = conv_in_dtype,
};
