/* gemm.c: see gemm.h. */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "ops/gemm.h"

/* M*N*K at or above this is refused: the float64 reference alone would
 * take minutes on a CPU. */
#define GEMM_MAX_MNK ((int64_t)1 << 34)

void kg_ops_gemm_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), K = kg_op_var_i(c, "K", -1);
    in_elems[0] = M * K;
    in_elems[1] = N * K;
    out_elems[0] = M * N;
}

void kg_ops_gemm_rows(const kg_case *c, int64_t rows[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    rows[0] = M;
    rows[1] = N;
}

int64_t kg_ops_gemm_cols(const kg_case *c, int o)
{
    const int64_t N = kg_op_var_i(c, "N", -1);
    (void)o;
    return N;
}

static int gemm_shape(const kg_case *c, int out, int i, int b_kn, int64_t dims[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), K = kg_op_var_i(c, "K", -1);
    if (out) {
        dims[0] = M;
        dims[1] = N;
    } else if (i == 0) {
        dims[0] = M;
        dims[1] = K;
    } else {
        dims[0] = b_kn ? K : N;
        dims[1] = b_kn ? N : K;
    }
    return 2;
}

int kg_ops_gemm_bt_shape(const kg_case *c, int out, int i, int64_t dims[])
{
    return gemm_shape(c, out, i, 0, dims);
}

int kg_ops_gemm_nt_shape(const kg_case *c, int out, int i, int64_t dims[])
{
    return gemm_shape(c, out, i, 1, dims);
}

int kg_ops_gemm_admissible(const kg_case *c, char *why, size_t cap)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), K = kg_op_var_i(c, "K", -1);
    if (kg_ops_check_dims(c, "M N K", why, cap)) return 1;
    /* each factor is < 2^63 by now; test the products without overflow */
    if (M > KG_OPS_MAX_ELEMS || N > KG_OPS_MAX_ELEMS || K > KG_OPS_MAX_ELEMS ||
        M * K > KG_OPS_MAX_ELEMS || N * K > KG_OPS_MAX_ELEMS ||
        M * N > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "M*K, N*K and M*N must each be <= 2^28 (M=%lld N=%lld K=%lld)",
                 (long long)M, (long long)N, (long long)K);
        return 1;
    }
    if ((double)M * (double)N * (double)K >= (double)GEMM_MAX_MNK) {
        snprintf(why, cap, "M*N*K must be < 2^34 (got %.3g)",
                 (double)M * (double)N * (double)K);
        return 1;
    }
    return 0;
}

int kg_ops_gemm_reference(const kg_case *c, const double *a, const double *b, int b_kn,
                          double *out, kg_err *err)
{
    const int64_t m = kg_op_var_i(c, "M", -1), n = kg_op_var_i(c, "N", -1), k = kg_op_var_i(c, "K", -1);
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return kg_errorf(err, KG_EINADMISSIBLE, "%s: dimension above INT_MAX", c->op);
    int M = (int)m, N = (int)n, K = (int)k;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, b_kn ? CblasNoTrans : CblasTrans, M, N, K, 1.0, a, K,
                b, b_kn ? N : K, 0.0, out, N);
    return KG_OK;
}

/* s[i*N+j] = sum_k |a_ik b_jk| (b_kn: b is [K,N], b_kj); squares: sum_k (a_ik b_jk)^2 */
static void gemm_absdot_p(const kg_case *c, const double *a, const double *b, int b_kn, double *s,
                          int squares)
{
    int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), K = kg_op_var_i(c, "K", -1);
    double *aa = malloc((size_t)(M * K) * sizeof *aa);
    double *ab = malloc((size_t)(N * K) * sizeof *ab);
    if (aa != NULL && ab != NULL) {
        for (int64_t i = 0; i < M * K; i++) aa[i] = squares ? a[i] * a[i] : fabs(a[i]);
        for (int64_t i = 0; i < N * K; i++) ab[i] = squares ? b[i] * b[i] : fabs(b[i]);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, b_kn ? CblasNoTrans : CblasTrans, (int)M, (int)N,
                    (int)K, 1.0, aa, (int)K, ab, b_kn ? (int)N : (int)K, 0.0, s, (int)N);
    } else {
        /* no memory for |A| and |B|: the same sums, slowly */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    double t = a[i * K + k] * (b_kn ? b[k * N + j] : b[j * K + k]);
                    acc += squares ? t * t : fabs(t);
                }
                s[i * N + j] = acc;
            }
    }
    free(aa);
    free(ab);
}

static void gemm_absdot(const kg_case *c, const double *a, const double *b, int b_kn, double *s)
{
    gemm_absdot_p(c, a, b, b_kn, s, 0);
}

/* The error the tf32 contract admits for each output: each operand
 * converted to TF32 one way throughout (kg_ops_tf32: rounded with ties
 * away or to even, or truncated; nine combinations), the largest
 * |sum_k (x(a_ik) y(b_jk) - a_ik b_jk)| of the nine.  Each is
 * dA_x y(B)^T + A dB_y^T (dX = x(X) - X): float64 products of a small
 * factor and a large one, not the difference of two large sums.  0 when
 * out of memory. */
static int gemm_tf32_err(int64_t M, int64_t N, int64_t K, const double *a, const double *b, int b_kn,
                         double *d)
{
    const size_t mk = (size_t)(M * K), nk = (size_t)(N * K), mn = (size_t)(M * N);
    double *da[KG_TF32_MODES], *cb[KG_TF32_MODES], *db[KG_TF32_MODES];
    double *q = malloc(mn * sizeof *q), *p = malloc(mn * sizeof *p);
    int ok = q != NULL && p != NULL;
    for (int t = 0; t < KG_TF32_MODES; t++) {
        da[t] = malloc(mk * sizeof(double));
        cb[t] = malloc(nk * sizeof(double));
        db[t] = malloc(nk * sizeof(double));
        ok = ok && da[t] != NULL && cb[t] != NULL && db[t] != NULL;
    }
    if (ok) {
        const enum CBLAS_TRANSPOSE tb = b_kn ? CblasNoTrans : CblasTrans;
        const int ldb = b_kn ? (int)N : (int)K;
        for (int t = 0; t < KG_TF32_MODES; t++) {
            for (size_t i = 0; i < mk; i++) da[t][i] = kg_ops_tf32(a[i], t) - a[i];
            for (size_t i = 0; i < nk; i++) {
                cb[t][i] = kg_ops_tf32(b[i], t);
                db[t][i] = cb[t][i] - b[i];
            }
        }
        for (size_t i = 0; i < mn; i++) d[i] = 0.0;
        for (int y = 0; y < KG_TF32_MODES; y++) {
            /* q = A dB_y^T, shared by every conversion of A */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, (int)M, (int)N, (int)K, 1.0, a, (int)K, db[y], ldb,
                        0.0, q, (int)N);
            for (int x = 0; x < KG_TF32_MODES; x++) {
                cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, (int)M, (int)N, (int)K, 1.0, da[x], (int)K,
                            cb[y], ldb, 0.0, p, (int)N);
                for (size_t i = 0; i < mn; i++) d[i] = fmax(d[i], fabs(p[i] + q[i]));
            }
        }
    }
    for (int t = 0; t < KG_TF32_MODES; t++) {
        free(da[t]);
        free(cb[t]);
        free(db[t]);
    }
    free(q);
    free(p);
    return ok;
}

/* The bound under contract ct (NULL: the default; kg_ops_bound_sum):
 * sum|t| always, and for f32 cases sqrt(sum t^2) (whether the sum looks
 * random) from a dgemm of the squares; under the tf32 contract on f32
 * inputs the exact error of the TF32 conversions (gemm_tf32_err).
 * Without memory for them the bound falls back to the worst case. */
void kg_ops_gemm_bound_ct(const kg_case *c, const kg_contract *ct, const double *a,
                          const double *b, int b_kn, const double *ref, double *bound)
{
    const int64_t K = kg_op_var_i(c, "K", -1);
    int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    double *sq = NULL, *conv = NULL;
    /* sqrt(sum t^2): whether an f32 sum looks random */
    if (c->dtype == KG_DT_F32 && !(ct != NULL && ct->tolerance > 0.0)) {
        sq = malloc((size_t)(M * N) * sizeof *sq);
        if (sq != NULL) gemm_absdot_p(c, a, b, b_kn, sq, 1);
    }
    int tf32 = 0;
    if (c->dtype == KG_DT_F32 && ct != NULL && ct->precision == KG_PREC_TF32 && !(ct->tolerance > 0.0)) {
        conv = malloc((size_t)(M * N) * sizeof *conv);
        tf32 = conv != NULL && gemm_tf32_err(M, N, K, a, b, b_kn, conv);
    }
    gemm_absdot(c, a, b, b_kn, bound);
    for (int64_t i = 0; i < M; i++) {
        double *row = bound + i * N;
        double rowscale = 0.0;
        for (int64_t j = 0; j < N; j++) rowscale = fmax(rowscale, row[j]);
        for (int64_t j = 0; j < N; j++) {
            int64_t e_ij = i * N + j;
            kg_sum_elem e = { .absdot = row[j], .l2 = sq != NULL ? sqrt(sq[e_ij]) : -1.0,
                              .ref = ref[e_ij], .rowscale = rowscale, .n = K, .factors = 2,
                              .tf32_in = tf32 ? conv[e_ij] : 0.0,
                              .tf32_known = tf32 };
            row[j] = kg_ops_bound_sum(&e, ct, c->dtype, KG_DT_F32);
        }
    }
    free(sq);
    free(conv);
}

void kg_ops_gemm_bound(const kg_case *c, const double *a, const double *b, int b_kn,
                       const double *ref, double *bound)
{
    kg_ops_gemm_bound_ct(c, NULL, a, b, b_kn, ref, bound);
}

double kg_ops_gemm_flops(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), K = kg_op_var_i(c, "K", -1);
    return 2.0 * (double)M * (double)N * (double)K;
}

double kg_ops_gemm_min_bytes(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1), K = kg_op_var_i(c, "K", -1);
    return ((double)M * (double)K + (double)N * (double)K) * kg_ops_dtype_bytes(c->dtype)
           + (double)M * (double)N * 4.0;
}
