/* layernorm.c: the layernorm op over rows,
 *   Y[i,j] = (X[i,j] - mu_i) / sqrt(var_i + eps) * gamma[j] + beta[j],
 * mu_i the row mean and var_i the biased row variance (divided by N).
 *
 * Inputs X[M,N], gamma[N], beta[N] in the case dtype; eps from the case;
 * output Y[M,N] in float32.  The float64 reference is two-pass.
 *
 * Bound (first order in u = 2^-24, a float32 kernel; inputs exact in
 * float32), with g the relative error of a length-n sum of terms
 * (gamma_2n, Higham 2nd ed. eq. (3.5), doubled so that Welford-style and
 * two-level reductions are covered), A = sum_j |x_j|, d_j = x_j - mu,
 * r = 1 / sqrt(var + eps):
 *   mean:      e_mu  = g A / n + u |mu|
 *   centred:   e_d_j = e_mu + u |d_j|
 *   variance:  e_v   = (2 sum_j |d_j| e_d_j + (g + 2u) sum_j d_j^2) / n
 *   rstd:      rel_r = (e_v + u (var + eps)) / (2 (var + eps)) + 4u
 *              (a square root halves a relative error; sqrt and the
 *              division, or rsqrt, are allowed 2 ulp together)
 *   output:    |d_j r gamma_j| (rel_r + 3u) + |gamma_j| r e_d_j + u |y_j|
 * The worst case (g = gamma_2n) is capped, as for the sums (bounds.c), by
 * the dtype ceiling times the row's scale max_j (|d_j r gamma_j| +
 * |beta_j|), never below the same formula with the probabilistic
 * gamma~_2n (Higham and Mary 2019, lambda = 10).  The float64 reference
 * adds (n + 16) 2^-53 times that scale.
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include <math.h>
#include <stdio.h>
#include "ops/ops_internal.h"
#include "ops/shapes.h"

static void ln_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    in_elems[0] = M * N;
    in_elems[1] = N;
    in_elems[2] = N;
    out_elems[0] = M * N;
}

static void ln_rows(const kg_case *c, int64_t rows[])
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    rows[0] = M;
    rows[1] = 1;
    rows[2] = 1;
}

static int ln_admissible(const kg_case *c, char *why, size_t cap)
{
    const double eps = kg_op_var_r(c, "eps", 1e-5);
    if (kg_ops_rows_admissible(c, why, cap)) return 1;
    if (!(eps > 0.0) || !isfinite(eps)) {
        snprintf(why, cap, "eps must be > 0 and finite (got %g)", eps);
        return 1;
    }
    return 0;
}

static void ln_stats(const double *x, int64_t n, double *mu, double *var)
{
    double s = 0.0, v = 0.0;
    for (int64_t j = 0; j < n; j++) s += x[j];
    *mu = s / (double)n;
    for (int64_t j = 0; j < n; j++) v += (x[j] - *mu) * (x[j] - *mu);
    *var = v / (double)n;
}

static int ln_reference(const kg_case *c, const double *const in[], double *const out[],
                        kg_err *err)
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    const double eps = kg_op_var_r(c, "eps", 1e-5);
    (void)err;
    int64_t N = kg_op_var_i(c, "N", -1);
    for (int64_t i = 0; i < M; i++) {
        const double *x = in[0] + i * N;
        double mu, var;
        ln_stats(x, N, &mu, &var);
        double r = 1.0 / sqrt(var + eps);
        for (int64_t j = 0; j < N; j++) out[0][i * N + j] = (x[j] - mu) * r * in[1][j] + in[2][j];
    }
    return KG_OK;
}

/* the bound of one element for sum error g (see the header comment) */
static double ln_elem(double g, double u, double A, double mu, double sd_e, double sd2,
                      int64_t n, double var, double eps, double d, double r, double gam,
                      double y)
{
    double nd = (double)n;
    double e_mu = g * A / nd + u * fabs(mu);
    double e_v = (2.0 * (sd_e * e_mu + u * sd2) + (g + 2.0 * u) * sd2) / nd;
    double rel_r = (e_v + u * (var + eps)) / (2.0 * (var + eps)) + 4.0 * u;
    double e_d = e_mu + u * fabs(d);
    return fabs(d * r * gam) * (rel_r + 3.0 * u) + fabs(gam) * r * e_d + u * fabs(y);
}

static void ln_bound(const kg_case *c, const double *const in[], const double *ref, int o,
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
        double mu, var, A = 0.0, sd = 0.0, sd2 = 0.0, scale = 0.0;
        ln_stats(x, N, &mu, &var);
        double r = 1.0 / sqrt(var + eps);
        for (int64_t j = 0; j < N; j++) {
            double d = x[j] - mu;
            A += fabs(x[j]);
            sd += fabs(d);
            sd2 += d * d;
            scale = fmax(scale, fabs(d * r * in[1][j]) + fabs(in[2][j]));
        }
        for (int64_t j = 0; j < N; j++) {
            double d = x[j] - mu, y = ref[i * N + j];
            double worst = ln_elem(g_worst, u, A, mu, sd, sd2, N, var, eps, d, r, in[1][j], y);
            double prob = ln_elem(g_prob, u, A, mu, sd, sd2, N, var, eps, d, r, in[1][j], y);
            double cap = fmax(ceiling * scale, prob);
            bound[i * N + j] = fmin(worst, cap) + ((double)N + 16.0) * u_ref * scale + 1e-30;
        }
    }
}

static double ln_flops(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return 8.0 * (double)M * (double)N;
}

static double ln_min_bytes(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return ((double)M * (double)N + 2.0 * (double)N) * kg_ops_dtype_bytes(c->dtype)
           + (double)M * (double)N * 4.0;
}

const kg_op kg_op_layernorm = {
    .abi = KG_OP_ABI,
    .name = "layernorm",
    .summary = "Y[M,N] (f32) = (X - mean) / sqrt(var + eps) * gamma[N] + beta[N], per row of X[M,N]",
    .vars = "M N",
    .nin = 3, .nout = 1,
    .in_names = { "X", "gamma", "beta" },
    .out_names = { "Y" },
    .shape = kg_ops_rowwise_shape,
    .sizes = ln_sizes,
    .out_dtype = kg_ops_out_f32,
    .admissible = ln_admissible,
    .reference = ln_reference,
    .bound = ln_bound,
    .flops = ln_flops,
    .min_bytes = ln_min_bytes,
    .in_rows = ln_rows,
    .out_cols = kg_ops_rows_cols,
    .ws_bytes = NULL,
    .scalars = "M N eps",
    .row_classes = KG_ROWS_NORM,
};
