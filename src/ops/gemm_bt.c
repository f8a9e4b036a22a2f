/* gemm_bt.c: the gemm_bt op, C = A * B^T.
 *
 * Inputs A[M,K] and B[N,K], row-major in the case dtype; output C[M,N]
 * in float32.  The float64 reference is OpenBLAS dgemm (row-major,
 * NoTrans x Trans) on the rounded inputs; the per-element bound needs
 * sum_k |a_ik b_jk|, which is |A| |B|^T, also a dgemm.
 *
 * The shape helpers, reference and bound are the GEMM family's (gemm.h),
 * shared with gemm_nt and gemm_splitk.
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include "ops/ops_internal.h"
#include "ops/gemm.h"
#include "ops/shapes.h"

static int gemm_reference(const kg_case *c, const double *const in[], double *const out[],
                          kg_err *err)
{
    return kg_ops_gemm_reference(c, in[0], in[1], 0, out[0], err);
}

static void gemm_bound(const kg_case *c, const double *const in[], const double *ref, int o,
                       double *bound)
{
    (void)o;
    kg_ops_gemm_bound(c, in[0], in[1], 0, ref, bound);
}

static void gemm_bound_ct(const kg_case *c, const kg_contract *ct, const double *const in[],
                          const double *ref, int o, double *bound)
{
    (void)o;
    kg_ops_gemm_bound_ct(c, ct, in[0], in[1], 0, ref, bound);
}

const kg_op kg_op_gemm_bt = {
    .abi = KG_OP_ABI,
    .name = "gemm_bt",
    .summary = "C[M,N] (f32) = A[M,K] * B[N,K]^T, A and B row-major in the case dtype",
    .vars = "M N K",
    .nin = 2, .nout = 1,
    .in_names = { "A", "B" },
    .out_names = { "C" },
    .shape = kg_ops_gemm_bt_shape,
    .sizes = kg_ops_gemm_sizes,
    .out_dtype = kg_ops_out_f32,
    .admissible = kg_ops_gemm_admissible,
    .reference = gemm_reference,
    .bound = gemm_bound,
    .flops = kg_ops_gemm_flops,
    .min_bytes = kg_ops_gemm_min_bytes,
    .in_rows = kg_ops_gemm_rows,
    .out_cols = kg_ops_gemm_cols,
    .ws_bytes = NULL,
    .scalars = "M N K",
    .bound_ct = gemm_bound_ct,
};
