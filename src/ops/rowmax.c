/* rowmax.c: the rowmax op, Y[i] = max_j X[i,j].
 *
 * Input X[M,N] in the case dtype; output Y[M] in float32.  A maximum is
 * exact in any arithmetic that holds the inputs (every f16/bf16/f32
 * value is a float32), so the bound is the 1e-30 floor alone: the kernel
 * must return exactly the largest element of each row.
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include <math.h>
#include <stdio.h>
#include "ops/ops_internal.h"
#include "ops/shapes.h"

static void rowmax_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    in_elems[0] = M * N;
    out_elems[0] = M;
}

static void rowmax_rows(const kg_case *c, int64_t rows[])
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    rows[0] = M;
}

static int rowmax_reference(const kg_case *c, const double *const in[], double *const out[],
                            kg_err *err)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    (void)err;
    for (int64_t i = 0; i < M; i++) {
        const double *x = in[0] + i * N;
        double m = x[0];
        for (int64_t j = 1; j < N; j++) m = fmax(m, x[j]);
        out[0][i] = m;
    }
    return KG_OK;
}

static void rowmax_bound(const kg_case *c, const double *const in[], const double *ref, int o,
                         double *bound)
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    (void)in; (void)ref; (void)o;
    for (int64_t i = 0; i < M; i++) bound[i] = 1e-30;
}

static double rowmax_flops(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return (double)M * (double)N;
}

static double rowmax_min_bytes(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return (double)M * (double)N * kg_ops_dtype_bytes(c->dtype) + (double)M * 4.0;
}

const kg_op kg_op_rowmax = {
    .abi = KG_OP_ABI,
    .name = "rowmax",
    .summary = "Y[M] (f32) = max over each row of X[M,N] in the case dtype (exact)",
    .vars = "M N",
    .nin = 1, .nout = 1,
    .in_names = { "X" },
    .out_names = { "Y" },
    .shape = kg_ops_rowreduce_shape,
    .sizes = rowmax_sizes,
    .out_dtype = kg_ops_out_f32,
    .admissible = kg_ops_rows_admissible,
    .reference = rowmax_reference,
    .bound = rowmax_bound,
    .flops = rowmax_flops,
    .min_bytes = rowmax_min_bytes,
    .in_rows = rowmax_rows,
    .out_cols = NULL,
    .ws_bytes = NULL,
    .scalars = "M N",
};
