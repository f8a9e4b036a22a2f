/* rmsnorm.c: the rmsnorm op over rows,
 *   Y[i,j] = X[i,j] / sqrt(mean_k X[i,k]^2 + eps) * weight[j].
 *
 * Inputs X[M,N] and weight[N] in the case dtype; eps from the case;
 * output Y[M,N] in float32.
 *
 * Bound (first order in u = 2^-24, a float32 kernel; inputs exact in
 * float32), g the relative error of a length-n sum of nonnegative terms
 * (gamma_2n, Higham 2nd ed. eq. (3.5); all terms are squares, so
 * sum|term| is the sum itself), ms = mean x^2, r = 1/sqrt(ms + eps):
 *   mean square: e_ms  = (g + 2u) ms      (squares, sum, division by n)
 *   rstd:        rel_r = (e_ms + u (ms + eps)) / (2 (ms + eps)) + 4u
 *   output:      |y_j| (rel_r + 3u)
 * Capped by the dtype ceiling times the row's largest |y|, never below
 * the same formula with gamma~_2n (Higham and Mary 2019); the float64
 * reference adds (n + 16) 2^-53 |y_j|.
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include <math.h>
#include <stdio.h>
#include "ops/ops_internal.h"
#include "ops/shapes.h"

static void rms_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    in_elems[0] = M * N;
    in_elems[1] = N;
    out_elems[0] = M * N;
}

static void rms_rows(const kg_case *c, int64_t rows[])
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    rows[0] = M;
    rows[1] = 1;
}

static int rms_admissible(const kg_case *c, char *why, size_t cap)
{
    const double eps = kg_op_var_r(c, "eps", 1e-5);
    if (kg_ops_rows_admissible(c, why, cap)) return 1;
    if (!(eps > 0.0) || !isfinite(eps)) {
        snprintf(why, cap, "eps must be > 0 and finite (got %g)", eps);
        return 1;
    }
    return 0;
}

static double rms_ms(const double *x, int64_t n)
{
    double s = 0.0;
    for (int64_t j = 0; j < n; j++) s += x[j] * x[j];
    return s / (double)n;
}

static int rms_reference(const kg_case *c, const double *const in[], double *const out[],
                         kg_err *err)
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    const double eps = kg_op_var_r(c, "eps", 1e-5);
    (void)err;
    int64_t N = kg_op_var_i(c, "N", -1);
    for (int64_t i = 0; i < M; i++) {
        const double *x = in[0] + i * N;
        double r = 1.0 / sqrt(rms_ms(x, N) + eps);
        for (int64_t j = 0; j < N; j++) out[0][i * N + j] = x[j] * r * in[1][j];
    }
    return KG_OK;
}

static void rms_bound(const kg_case *c, const double *const in[], const double *ref, int o,
                      double *bound)
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    const double eps = kg_op_var_r(c, "eps", 1e-5);
    (void)o;
    const double u = ldexp(1.0, -24), u_ref = ldexp(1.0, -53);
    int64_t N = kg_op_var_i(c, "N", -1);
    double g_worst = kg_ops_gamma(2 * N, u), g_prob = kg_ops_gamma_prob(2 * N);
    double ceiling = kg_ops_ceiling(c->dtype);
    for (int64_t i = 0; i < M; i++) {
        const double *x = in[0] + i * N;
        const double *y = ref + i * N;
        double ms = rms_ms(x, N), ymax = 0.0;
        for (int64_t j = 0; j < N; j++) ymax = fmax(ymax, fabs(y[j]));
        double den = 2.0 * (ms + eps);
        double rel_w = ((g_worst + 2.0 * u) * ms + u * (ms + eps)) / den + 7.0 * u;
        double rel_p = ((g_prob + 2.0 * u) * ms + u * (ms + eps)) / den + 7.0 * u;
        for (int64_t j = 0; j < N; j++) {
            double worst = fabs(y[j]) * rel_w, prob = fabs(y[j]) * rel_p;
            double cap = fmax(ceiling * ymax, prob);
            bound[i * N + j] = fmin(worst, cap) + ((double)N + 16.0) * u_ref * fabs(y[j]) + 1e-30;
        }
    }
}

static double rms_flops(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return 4.0 * (double)M * (double)N;
}

static double rms_min_bytes(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return ((double)M * (double)N + (double)N) * kg_ops_dtype_bytes(c->dtype)
           + (double)M * (double)N * 4.0;
}

const kg_op kg_op_rmsnorm = {
    .abi = KG_OP_ABI,
    .name = "rmsnorm",
    .summary = "Y[M,N] (f32) = X / sqrt(mean(X^2) + eps) * weight[N], per row of X[M,N]",
    .vars = "M N",
    .nin = 2, .nout = 1,
    .in_names = { "X", "weight" },
    .out_names = { "Y" },
    .shape = kg_ops_rowwise_shape,
    .sizes = rms_sizes,
    .out_dtype = kg_ops_out_f32,
    .admissible = rms_admissible,
    .reference = rms_reference,
    .bound = rms_bound,
    .flops = rms_flops,
    .min_bytes = rms_min_bytes,
    .in_rows = rms_rows,
    .out_cols = kg_ops_rows_cols,
    .ws_bytes = NULL,
    .scalars = "M N eps",
    .row_classes = KG_ROWS_NORM,
};
