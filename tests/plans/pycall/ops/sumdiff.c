/* sumdiff.c: a test op of tests/cli/pycall.sh, declared in its plan: two
 * outputs and a real variable, for a Python call that returns a tuple.
 *
 *     S[n] (f32) = A[n] + alpha B[n]
 *     D[n] (f32) = A[n] - B[n]
 *
 * over n elements, inputs in the case dtype. */
#include <math.h>
#include <stdio.h>
#include "kgate/op.h"

static void sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    in_elems[0] = in_elems[1] = out_elems[0] = out_elems[1] = kg_op_var_i(c, "n", 0);
}

static kg_dtype out_dtype(const kg_case *c, int o)
{
    (void)c;
    (void)o;
    return KG_DT_F32;
}

static int admissible(const kg_case *c, char *why, size_t cap)
{
    int64_t n = kg_op_var_i(c, "n", 0);
    if (n < 4 || n % 4 != 0 || n > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "n = %lld: a multiple of 4 in [4, 2^28]", (long long)n);
        return 1;
    }
    return 0;
}

static int reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    (void)err;
    int64_t n = kg_op_var_i(c, "n", 0);
    double alpha = kg_op_var_r(c, "alpha", 1.0);
    for (int64_t i = 0; i < n; i++) {
        out[0][i] = in[0][i] + alpha * in[1][i];
        out[1][i] = in[0][i] - in[1][i];
    }
    return KG_OK;
}

/* Each output a sum of two terms: kgate's bound of a sum element. */
static void bound(const kg_case *c, const double *const in[], const double *ref, int o, double *b)
{
    int64_t n = kg_op_var_i(c, "n", 0);
    double alpha = o == 0 ? fabs(kg_op_var_r(c, "alpha", 1.0)) : 1.0, scale = 0.0;
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(in[0][i]) + alpha * fabs(in[1][i]));
    for (int64_t i = 0; i < n; i++)
        b[i] = kg_ops_bound_elem(fabs(in[0][i]) + alpha * fabs(in[1][i]), ref[i], scale, 2, c->dtype, KG_DT_F32);
}

static double flops(const kg_case *c)
{
    return 3.0 * (double)kg_op_var_i(c, "n", 0);
}

static double min_bytes(const kg_case *c)
{
    return (double)kg_op_var_i(c, "n", 0) * (2.0 * kg_ops_dtype_bytes(c->dtype) + 8.0);
}

const kg_op kgate_op = {
    .abi = KG_OP_ABI,
    .name = "sumdiff",
    .summary = "S[n] = A + alpha B, D[n] = A - B (f32)",
    .vars = "n alpha:real",
    .nin = 2, .nout = 2,
    .in_names = { "A", "B" },
    .out_names = { "S", "D" },
    .sizes = sizes,
    .out_dtype = out_dtype,
    .admissible = admissible,
    .reference = reference,
    .bound = bound,
    .flops = flops,
    .min_bytes = min_bytes,
    .scalars = "n alpha",
};
