/* gemm_i8.c: an op declared in a plan (docs/ops.md): the int8 matrix
 * product with int32 accumulation that quantized inference runs.
 *
 *     C[m, n] = sum_{k < K} A[m, k] * B[n, k]
 *
 * A is int8 [M, K], B is int8 [N, K] (both K-major, as int8 tensor-core
 * GEMMs take them), C is int32 [M, N].  Integer arithmetic is exact, so
 * the bound is zero: a kernel must produce every element exactly.  An
 * accumulator too narrow for K products of 127 x 127 (int16, say) fails.
 *
 *     [op gemm_i8]
 *     source = ops/gemm_i8.c
 *
 *     [case q]
 *     op = gemm_i8
 *     dtype = i8
 *     M = 128
 *     N = 128
 *     K = 512 */
#include <stdio.h>
#include "kgate/op.h"

static void qg_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    int64_t M = kg_op_var_i(c, "M", 0), N = kg_op_var_i(c, "N", 0), K = kg_op_var_i(c, "K", 0);
    in_elems[0] = M * K;
    in_elems[1] = N * K;
    out_elems[0] = M * N;
}

static void qg_rows(const kg_case *c, int64_t rows[])
{
    rows[0] = kg_op_var_i(c, "M", 0);
    rows[1] = kg_op_var_i(c, "N", 0);
}

static int64_t qg_out_cols(const kg_case *c, int o)
{
    (void)o;
    return kg_op_var_i(c, "N", 0);
}

static kg_dtype qg_in_dtype(const kg_case *c, int i)
{
    (void)c;
    (void)i;
    return KG_DT_I8;
}

static kg_dtype qg_out_dtype(const kg_case *c, int o)
{
    (void)c;
    (void)o;
    return KG_DT_I32;
}

static int qg_admissible(const kg_case *c, char *why, size_t cap)
{
    int64_t M = kg_op_var_i(c, "M", 0), N = kg_op_var_i(c, "N", 0), K = kg_op_var_i(c, "K", 0);
    if (M < 1 || N < 1 || K < 1) {
        snprintf(why, cap, "M, N and K must be >= 1");
        return 1;
    }
    /* |C| <= K 127^2 must fit int32 */
    if (K > 2147483647LL / (127 * 127)) {
        snprintf(why, cap, "K = %lld: a sum of K products of int8 values can overflow int32", (long long)K);
        return 1;
    }
    if (M * K > KG_OPS_MAX_ELEMS || N * K > KG_OPS_MAX_ELEMS || M * N > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "a tensor has more elements than kgate's limit");
        return 1;
    }
    return 0;
}

static int qg_reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    (void)err;
    int64_t M = kg_op_var_i(c, "M", 0), N = kg_op_var_i(c, "N", 0), K = kg_op_var_i(c, "K", 0);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0.0;  /* exact: every partial sum is an integer below 2^53 */
            for (int64_t k = 0; k < K; k++) acc += in[0][m * K + k] * in[1][n * K + k];
            out[0][m * N + n] = acc;
        }
    return KG_OK;
}

/* integers: exact */
static void qg_bound(const kg_case *c, const double *const in[], const double *ref, int o, double *bound)
{
    (void)in;
    (void)ref;
    (void)o;
    int64_t n = kg_op_var_i(c, "M", 0) * kg_op_var_i(c, "N", 0);
    for (int64_t e = 0; e < n; e++) bound[e] = 0.0;
}

static double qg_flops(const kg_case *c)
{
    return 2.0 * (double)kg_op_var_i(c, "M", 0) * (double)kg_op_var_i(c, "N", 0) * (double)kg_op_var_i(c, "K", 0);
}

static double qg_min_bytes(const kg_case *c)
{
    double M = (double)kg_op_var_i(c, "M", 0), N = (double)kg_op_var_i(c, "N", 0), K = (double)kg_op_var_i(c, "K", 0);
    return M * K + N * K + 4.0 * M * N;
}

const kg_op kgate_op = {
    .abi = KG_OP_ABI,
    .name = "gemm_i8",
    .summary = "C[M, N] (i32) = A[M, K] (i8) . B[N, K]^T (i8), exact",
    .vars = "M N K",
    .nin = 2, .nout = 1,
    .in_names = { "A", "B" },
    .out_names = { "C" },
    .sizes = qg_sizes,
    .out_dtype = qg_out_dtype,
    .admissible = qg_admissible,
    .reference = qg_reference,
    .bound = qg_bound,
    .flops = qg_flops,
    .min_bytes = qg_min_bytes,
    .in_rows = qg_rows,
    .out_cols = qg_out_cols,
    .scalars = "M N K",
    .in_dtype = qg_in_dtype,
};
