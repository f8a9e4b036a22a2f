/* gemm_nt.c: the gemm_nt op, C = A * B with B stored [K,N].
 *
 * Inputs A[M,K] and B[K,N], row-major in the case dtype; output C[M,N]
 * in float32.  The float64 reference is OpenBLAS dgemm (NoTrans x
 * NoTrans) on the rounded inputs and the bound is gemm_bt's (the same
 * sums, read with another stride; see kg_ops_bound_elem in bounds.c).
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include <math.h>
#include <stdio.h>
#include "ops/ops_internal.h"
#include "ops/gemm.h"
#include "ops/shapes.h"

static void nt_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), K = kg_op_var_i(c, "K", -1);
    in_elems[0] = M * K;
    in_elems[1] = K * N;
    out_elems[0] = M * N;
}

/* B's rows are its K rows: the zero first row and the scaled last row
 * touch one k of every output, as A's rows touch one row of C. */
static void nt_rows(const kg_case *c, int64_t rows[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), K = kg_op_var_i(c, "K", -1);
    rows[0] = M;
    rows[1] = K;
}

static int nt_reference(const kg_case *c, const double *const in[], double *const out[],
                        kg_err *err)
{
    return kg_ops_gemm_reference(c, in[0], in[1], 1, out[0], err);
}

static void nt_bound(const kg_case *c, const double *const in[], const double *ref, int o,
                     double *bound)
{
    (void)o;
    kg_ops_gemm_bound(c, in[0], in[1], 1, ref, bound);
}

static void nt_bound_ct(const kg_case *c, const kg_contract *ct, const double *const in[],
                          const double *ref, int o, double *bound)
{
    (void)o;
    kg_ops_gemm_bound_ct(c, ct, in[0], in[1], 1, ref, bound);
}

const kg_op kg_op_gemm_nt = {
    .abi = KG_OP_ABI,
    .name = "gemm_nt",
    .summary = "C[M,N] (f32) = A[M,K] * B[K,N], A and B row-major in the case dtype",
    .vars = "M N K",
    .nin = 2, .nout = 1,
    .in_names = { "A", "B" },
    .out_names = { "C" },
    .shape = kg_ops_gemm_nt_shape,
    .sizes = nt_sizes,
    .out_dtype = kg_ops_out_f32,
    .admissible = kg_ops_gemm_admissible,
    .reference = nt_reference,
    .bound = nt_bound,
    .flops = kg_ops_gemm_flops,
    .min_bytes = kg_ops_gemm_min_bytes,
    .in_rows = nt_rows,
    .out_cols = kg_ops_gemm_cols,
    .ws_bytes = NULL,
    .scalars = "M N K",
    .bound_ct = nt_bound_ct,
};
