/* gemm_bt.c: the gemm_bt op, C = A * B^T.
 *
 * Inputs A[M,K] and B[N,K], row-major in the case dtype; output C[M,N]
 * in float32.  The float64 reference is OpenBLAS dgemm (row-major,
 * NoTrans x Trans) on the rounded inputs; the per-element bound needs
 * sum_k |a_ik b_jk|, which is |A| |B|^T, also a dgemm.
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "ops/ops_internal.h"

/* M*N*K at or above this is refused: the float64 reference alone would
 * take minutes on a CPU. */
#define GEMM_MAX_MNK ((int64_t)1 << 34)

static void gemm_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    in_elems[0] = c->M * c->K;
    in_elems[1] = c->N * c->K;
    out_elems[0] = c->M * c->N;
}

static void gemm_rows(const kg_case *c, int64_t rows[])
{
    rows[0] = c->M;
    rows[1] = c->N;
}

static int64_t gemm_cols(const kg_case *c, int o)
{
    (void)o;
    return c->N;
}

static kg_dtype gemm_out_dtype(const kg_case *c, int o)
{
    (void)c; (void)o;
    return KG_DT_F32;
}

static int gemm_admissible(const kg_case *c, char *why, size_t cap)
{
    if (kg_ops_check_dims(c, "M N K", why, cap)) return 1;
    /* each factor is < 2^63 by now; test the products without overflow */
    if (c->M > KG_OPS_MAX_ELEMS || c->N > KG_OPS_MAX_ELEMS || c->K > KG_OPS_MAX_ELEMS ||
        c->M * c->K > KG_OPS_MAX_ELEMS || c->N * c->K > KG_OPS_MAX_ELEMS ||
        c->M * c->N > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "M*K, N*K and M*N must each be <= 2^28 (M=%lld N=%lld K=%lld)",
                 (long long)c->M, (long long)c->N, (long long)c->K);
        return 1;
    }
    if ((double)c->M * (double)c->N * (double)c->K >= (double)GEMM_MAX_MNK) {
        snprintf(why, cap, "M*N*K must be < 2^34 (got %.3g)",
                 (double)c->M * (double)c->N * (double)c->K);
        return 1;
    }
    return 0;
}

static int gemm_reference(const kg_case *c, const double *const in[], double *const out[],
                          kg_err *err)
{
    if (c->M > INT_MAX || c->N > INT_MAX || c->K > INT_MAX)
        return kg_errorf(err, KG_EINADMISSIBLE, "gemm_bt: dimension above INT_MAX");
    int M = (int)c->M, N = (int)c->N, K = (int)c->K;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0, in[0], K, in[1], K,
                0.0, out[0], N);
    return KG_OK;
}

/* s[i*N+j] = sum_k |a_ik b_jk| */
static void gemm_absdot(const kg_case *c, const double *a, const double *b, double *s)
{
    int64_t M = c->M, N = c->N, K = c->K;
    double *aa = malloc((size_t)(M * K) * sizeof *aa);
    double *ab = malloc((size_t)(N * K) * sizeof *ab);
    if (aa != NULL && ab != NULL) {
        for (int64_t i = 0; i < M * K; i++) aa[i] = fabs(a[i]);
        for (int64_t i = 0; i < N * K; i++) ab[i] = fabs(b[i]);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0,
                    aa, (int)K, ab, (int)K, 0.0, s, (int)N);
    } else {
        /* no memory for |A| and |B|: the same sums, slowly */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0.0;
                for (int64_t k = 0; k < K; k++) acc += fabs(a[i * K + k] * b[j * K + k]);
                s[i * N + j] = acc;
            }
    }
    free(aa);
    free(ab);
}

static void gemm_bound(const kg_case *c, const double *const in[], const double *ref, int o,
                       double *bound)
{
    (void)o;
    int64_t M = c->M, N = c->N;
    gemm_absdot(c, in[0], in[1], bound); /* absdot first, bound in place */
    for (int64_t i = 0; i < M; i++) {
        double *row = bound + i * N;
        double rowscale = 0.0;
        for (int64_t j = 0; j < N; j++) rowscale = fmax(rowscale, row[j]);
        for (int64_t j = 0; j < N; j++)
            row[j] = kg_ops_bound_elem(row[j], ref[i * N + j], rowscale, c->K, c->dtype,
                                       KG_DT_F32);
    }
}

static double gemm_flops(const kg_case *c)
{
    return 2.0 * (double)c->M * (double)c->N * (double)c->K;
}

static double dtype_bytes(kg_dtype dt)
{
    return dt == KG_DT_F32 ? 4.0 : 2.0;
}

static double gemm_min_bytes(const kg_case *c)
{
    return ((double)c->M * (double)c->K + (double)c->N * (double)c->K) * dtype_bytes(c->dtype)
           + (double)c->M * (double)c->N * 4.0;
}

const kg_op kg_op_gemm_bt = {
    .name = "gemm_bt",
    .summary = "C[M,N] (f32) = A[M,K] * B[N,K]^T, A and B row-major in the case dtype",
    .vars = "M N K",
    .nin = 2, .nout = 1,
    .in_names = { "A", "B" },
    .out_names = { "C" },
    .sizes = gemm_sizes,
    .out_dtype = gemm_out_dtype,
    .admissible = gemm_admissible,
    .reference = gemm_reference,
    .bound = gemm_bound,
    .flops = gemm_flops,
    .min_bytes = gemm_min_bytes,
    .in_rows = gemm_rows,
    .out_cols = gemm_cols,
};
