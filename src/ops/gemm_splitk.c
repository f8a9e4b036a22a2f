/* gemm_splitk.c: the gemm_splitk op, C = A * B^T computed as split-K
 * float32 partials followed by an accumulation pass.
 *
 * Inputs A[M,K] and B[N,K] in the case dtype; workspace P[splits,M,N] in
 * float32 (kg_kargs.ws, poisoned by the worker before every checked run
 * like an output); output C[M,N] in float32.  The operation the oracle
 * checks is the whole chain: partials plus accumulation.  Split s covers
 * k in [s*ceil(K/splits), min(K, (s+1)*ceil(K/splits))); the bound is
 * gemm_bt's, whose proof holds for any summation order (bounds.c), so two
 * levels of summation need no extra slack.
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include <math.h>
#include <stdio.h>
#include "ops/ops_internal.h"
#include "ops/gemm.h"
#include "ops/shapes.h"

static int splitk_admissible(const kg_case *c, char *why, size_t cap)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), K = kg_op_var_i(c, "K", -1), splits = kg_op_var_i(c, "splits", -1);
    if (kg_ops_gemm_admissible(c, why, cap)) return 1;
    if (splits < 1 || splits > K) {
        snprintf(why, cap, "splits must be >= 1 and <= K (splits=%lld K=%lld)",
                 (long long)splits, (long long)K);
        return 1;
    }
    if (splits * M * N > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "splits*M*N must be <= 2^28 (the partials workspace)");
        return 1;
    }
    return 0;
}

static int splitk_reference(const kg_case *c, const double *const in[], double *const out[],
                            kg_err *err)
{
    return kg_ops_gemm_reference(c, in[0], in[1], 0, out[0], err);
}

static void splitk_bound(const kg_case *c, const double *const in[], const double *ref, int o,
                         double *bound)
{
    (void)o;
    kg_ops_gemm_bound(c, in[0], in[1], 0, ref, bound);
}

static size_t splitk_ws_bytes(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), splits = kg_op_var_i(c, "splits", -1);
    if (splits < 1 || M < 1 || N < 1) return 0;
    return (size_t)splits * (size_t)M * (size_t)N * sizeof(float);
}

/* the partial products, plus (splits - 1) additions per output */
static double splitk_flops(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), splits = kg_op_var_i(c, "splits", -1);
    return kg_ops_gemm_flops(c) + (double)(splits - 1) * (double)M * (double)N;
}

static void splitk_bound_ct(const kg_case *c, const kg_contract *ct, const double *const in[],
                          const double *ref, int o, double *bound)
{
    (void)o;
    kg_ops_gemm_bound_ct(c, ct, in[0], in[1], 0, ref, bound);
}

const kg_op kg_op_gemm_splitk = {
    .abi = KG_OP_ABI,
    .name = "gemm_splitk",
    .summary = "C[M,N] (f32) = A[M,K] * B[N,K]^T via f32 partials ws[splits,M,N] and an accumulation",
    .vars = "M N K",
    .nin = 2, .nout = 1,
    .in_names = { "A", "B" },
    .out_names = { "C" },
    .shape = kg_ops_gemm_bt_shape,
    .sizes = kg_ops_gemm_sizes,
    .out_dtype = kg_ops_out_f32,
    .admissible = splitk_admissible,
    .reference = splitk_reference,
    .bound = splitk_bound,
    .flops = splitk_flops,
    .min_bytes = kg_ops_gemm_min_bytes, /* the workspace is not compulsory traffic */
    .in_rows = kg_ops_gemm_rows,
    .out_cols = kg_ops_gemm_cols,
    .ws_bytes = splitk_ws_bytes,
    .scalars = "M N K splits",
    .bound_ct = splitk_bound_ct,
};
