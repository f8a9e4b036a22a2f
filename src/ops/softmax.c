/* softmax.c: the softmax op over rows,
 *   Y[i,j] = exp(X[i,j] - m_i) / sum_k exp(X[i,k] - m_i),  m_i = max_k X[i,k].
 *
 * Input X[M,N] in the case dtype; output Y[M,N] in float32.  The float64
 * reference uses the same max-shifted form.
 *
 * Bound (first order in u = 2^-24, a float32 kernel; inputs are exact in
 * float32).  Write t_j = x_j - m <= 0 and e_j = exp(t_j).
 *  - fl(x_j - m) = t_j (1 + d), |d| <= u, and exp(t (1 + d)) =
 *    exp(t) exp(t d): relative error |t_j| u; the exp itself is allowed
 *    2 ulp (4u, covering libm expf and CUDA expf).  So each term carries
 *    eps_j = (|t_j| + 4) u.
 *  - The sum S of n positive terms, in any order: relative error
 *    gamma_n (Higham, 2nd ed., eq. (3.5); all terms positive, so
 *    sum|term| = S), plus at most max_k eps_k inherited from the terms.
 *    An online (running-max) kernel rescales partial sums by
 *    exp(m_old - m_new); those factors telescope to at most the row's
 *    range, already counted in max_k |t_k|, plus 4u per rescale, which
 *    we cover with gamma_2n in place of gamma_n.
 *  - One division (or a multiplication by 1/S): 2u.
 * rel_j = eps_j + max_k eps_k + gamma_2n + 2u, bound_j = y_j rel_j.
 * Like the sums (bounds.c), the worst case is capped by the dtype ceiling
 * relative to the row's scale (its largest y), but never below the
 * probabilistic form with gamma~_2n (Higham and Mary 2019) in place of
 * gamma_2n.  The float64 reference adds (n + |t_j| + 8) 2^-53 y_j.
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "ops/ops_internal.h"
#include "ops/shapes.h"

static void softmax_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    in_elems[0] = M * N;
    out_elems[0] = M * N;
}

static void softmax_rows(const kg_case *c, int64_t rows[])
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    rows[0] = M;
}

static int softmax_reference(const kg_case *c, const double *const in[], double *const out[],
                             kg_err *err)
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    (void)err;
    int64_t N = kg_op_var_i(c, "N", -1);
    for (int64_t i = 0; i < M; i++) {
        const double *x = in[0] + i * N;
        double *y = out[0] + i * N;
        double m = x[0], s = 0.0;
        for (int64_t j = 1; j < N; j++) m = fmax(m, x[j]);
        for (int64_t j = 0; j < N; j++) {
            y[j] = exp(x[j] - m);
            s += y[j];
        }
        for (int64_t j = 0; j < N; j++) y[j] /= s;
    }
    return KG_OK;
}

static void softmax_bound(const kg_case *c, const double *const in[], const double *ref, int o,
                          double *bound)
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    (void)o;
    const double u = ldexp(1.0, -24), u_ref = ldexp(1.0, -53);
    int64_t N = kg_op_var_i(c, "N", -1);
    double g_worst = kg_ops_gamma(2 * N, u), g_prob = kg_ops_gamma_prob(2 * N);
    double ceiling = kg_ops_ceiling(c->dtype);
    for (int64_t i = 0; i < M; i++) {
        const double *x = in[0] + i * N;
        const double *y = ref + i * N;
        double m = x[0], lo = x[0], ymax = 0.0;
        for (int64_t j = 1; j < N; j++) {
            m = fmax(m, x[j]);
            lo = fmin(lo, x[j]);
        }
        for (int64_t j = 0; j < N; j++) ymax = fmax(ymax, y[j]);
        double eps_max = (m - lo + 4.0) * u;
        for (int64_t j = 0; j < N; j++) {
            double t = m - x[j];
            double base = (t + 4.0) * u + eps_max + 2.0 * u;
            double worst = y[j] * (base + g_worst);
            double prob = y[j] * (base + g_prob);
            double cap = fmax(ceiling * ymax, prob);
            bound[i * N + j] = fmin(worst, cap) + ((double)N + t + 8.0) * u_ref * y[j] + 1e-30;
        }
    }
}

static double softmax_flops(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return 5.0 * (double)M * (double)N; /* max, subtract, exp, add, divide */
}

static double softmax_min_bytes(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return (double)M * (double)N * (kg_ops_dtype_bytes(c->dtype) + 4.0);
}

const kg_op kg_op_softmax = {
    .abi = KG_OP_ABI,
    .name = "softmax",
    .summary = "Y[M,N] (f32) = softmax over each row of X[M,N] in the case dtype",
    .vars = "M N",
    .nin = 1, .nout = 1,
    .in_names = { "X" },
    .out_names = { "Y" },
    .shape = kg_ops_rowwise_shape,
    .sizes = softmax_sizes,
    .out_dtype = kg_ops_out_f32,
    .admissible = kg_ops_rows_admissible,
    .reference = softmax_reference,
    .bound = softmax_bound,
    .flops = softmax_flops,
    .min_bytes = softmax_min_bytes,
    .in_rows = softmax_rows,
    .out_cols = kg_ops_rows_cols,
    .ws_bytes = NULL,
    .scalars = "M N",
    .row_classes = KG_ROWS_NORM,
};
