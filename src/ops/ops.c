/* ops.c: the op registry, the plan-versus-op check, and the error bound
 * shared by the reduction-shaped ops.
 *
 * Each op lives in its own file (gemm_bt.c, gemm_nt.c, gemm_splitk.c,
 * rowsum.c, rowmax.c, softmax.c, layernorm.c, rmsnorm.c) and is listed
 * here.
 * This file does not generate inputs or compare outputs (oracle.c does).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ops/ops_internal.h"

static const kg_op *const registry[] = { &kg_op_gemm_bt, &kg_op_rowsum, &kg_op_gemm_nt,
                                         &kg_op_gemm_splitk, &kg_op_rowmax, &kg_op_softmax,
                                         &kg_op_layernorm, &kg_op_rmsnorm, &kg_op_noop };
#define NOPS ((int)(sizeof registry / sizeof registry[0]))

const kg_op *kg_op_find(const char *name)
{
    if (name == NULL) return NULL;
    for (int i = 0; i < NOPS; i++)
        if (registry[i]->abi == KG_OP_ABI && strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}

const kg_op *const *kg_op_all(int *n)
{
    if (n != NULL) *n = NOPS;
    return registry;
}

static void known_ops(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < NOPS && len < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", registry[i]->name);
        if (w < 0) break;
        len += (size_t)w;
    }
}

static int64_t case_var(const kg_case *c, char v)
{
    switch (v) {
    case 'M': return c->M;
    case 'N': return c->N;
    case 'K': return c->K;
    default: return -1;
    }
}

int kg_ops_check_dims(const kg_case *c, const char *vars, char *why, size_t cap)
{
    for (const char *p = vars; *p; p++) {
        if (*p == ' ') continue;
        int64_t v = case_var(c, *p);
        if (v < 1) {
            snprintf(why, cap, "%c must be >= 1 (got %lld)", *p, (long long)v);
            return 1;
        }
    }
    return 0;
}

int kg_plan_check_ops(const kg_plan *plan, kg_err *err)
{
    if (plan == NULL) return kg_errorf(err, KG_EINTERNAL, "kg_plan_check_ops: no plan");
    for (int i = 0; i < plan->ncases; i++) {
        const kg_case *c = &plan->cases[i];
        const kg_op *op = kg_op_find(c->op);
        if (op == NULL) {
            char known[256];
            known_ops(known, sizeof known);
            return kg_errorf(err, KG_EINPUT, "%s:%d: unknown op '%s' (known: %s)",
                             plan->path, c->line, c->op, known);
        }
        for (const char *p = op->vars; *p; p++) {
            if (*p == ' ') continue;
            int64_t v = case_var(c, *p);
            if (v == -1)
                return kg_errorf(err, KG_EINPUT,
                                 "%s:%d: case '%s': op %s needs %c (add '%c = ...'; it uses %s)",
                                 plan->path, c->line, c->name, op->name, *p, *p, op->vars);
            if (v < 1)
                return kg_errorf(err, KG_EINPUT,
                                 "%s:%d: case '%s': %c = %lld (must be >= 1)",
                                 plan->path, c->line, c->name, *p, (long long)v);
        }
        if (c->dtype != KG_DT_F32 && c->dtype != KG_DT_F16 && c->dtype != KG_DT_BF16)
            return kg_errorf(err, KG_EINPUT, "%s:%d: case '%s': dtype %d is not supported by %s "
                             "(use f32, f16 or bf16)", plan->path, c->line, c->name,
                             (int)c->dtype, op->name);
    }
    return KG_OK;
}

double kg_ops_unit_roundoff(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F16: return ldexp(1.0, -11);
    case KG_DT_BF16: return ldexp(1.0, -8);
    default: return ldexp(1.0, -24);
    }
}

double kg_ops_ceiling(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F16: return 2e-3;
    case KG_DT_BF16: return 2e-2;
    default: return 1e-4;
    }
}

/* gamma_n(u) = n u / (1 - n u): Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., Lemma 3.1 and eq. (3.5). */
static double gamma_n(int64_t n, double u)
{
    double nu = (double)n * u;
    return nu < 0.5 ? nu / (1.0 - nu) : (double)INFINITY;
}

double kg_ops_gamma(int64_t n, double u)
{
    return gamma_n(n, u);
}

double kg_ops_gamma_prob(int64_t n)
{
    const double u = ldexp(1.0, -24), lambda = 10.0;
    double nd = (double)n;
    return expm1(lambda * sqrt(nd) * u + nd * u * u / (1.0 - u));
}

kg_dtype kg_ops_out_f32(const kg_case *c, int o)
{
    (void)c; (void)o;
    return KG_DT_F32;
}

int kg_ops_rows_admissible(const kg_case *c, char *why, size_t cap)
{
    if (kg_ops_check_dims(c, "M N", why, cap)) return 1;
    if (c->M > KG_OPS_MAX_ELEMS || c->N > KG_OPS_MAX_ELEMS || c->M * c->N > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "M*N must be <= 2^28 (M=%lld N=%lld)", (long long)c->M,
                 (long long)c->N);
        return 1;
    }
    return 0;
}

int64_t kg_ops_rows_cols(const kg_case *c, int o)
{
    (void)o;
    return c->N;
}

/* The bound, in three parts.
 *
 * 1. Worst case.  Inputs are exact in float32 (f16/bf16/f32 values) and
 *    kernels accumulate in float32, so for a sum of n terms, in any order
 *    and with or without FMA, |fl(s) - s| <= gamma_n(2^-24) * sum|term|
 *    (Higham, 2nd ed., §3.1, eq. (3.5): the bound for a dot product; its
 *    proof holds for every summation order, hence for blocked, unrolled
 *    and split-K kernels).  An output stored in a narrower dtype adds
 *    one rounding, u_out * |ref|.  The float64 reference carries its own
 *    gamma_n(2^-53) * sum|term|, added so that the check never blames a
 *    kernel for the reference's error.
 *
 * 2. Ceiling.  The worst case grows like n and, for long float32
 *    reductions (n > ~1700), becomes looser than the op's declared
 *    accuracy: ceiling(dtype) * rowscale, rowscale being the largest
 *    sum|term| of the element's row (f32 1e-4, f16 2e-3, bf16 2e-2).
 *    The bound takes the smaller of the two.
 *
 * 3. Floor of the ceiling.  The ceiling alone could fall below what an
 *    honest float32-accumulating kernel may need, so it is never taken
 *    below the probabilistic bound of Higham and Mary ("A new approach to
 *    probabilistic rounding error analysis", SIAM J. Sci. Comput. 41(5),
 *    2019): |error| <= gamma~_n(lambda) * sum|term| with
 *    gamma~_n(lambda) = exp(lambda sqrt(n) u + n u^2 / (1 - u)) - 1,
 *    which fails with probability at most 2n exp(-lambda^2 (1-u)^2 / 2).
 *    lambda = 10 makes that 2e-22 * n per element: negligible even over
 *    2^28 elements.  Our inputs are random, which is that model's setting.
 *
 * Finally a tiny absolute floor (1e-30) so that an exact zero compares
 * with a positive bound (0 still has to be met to within 1e-30). */
double kg_ops_bound_elem(double absdot, double ref, double rowscale, int64_t n,
                         kg_dtype in_dt, kg_dtype out_dt)
{
    const double u_acc = ldexp(1.0, -24);
    const double u_ref = ldexp(1.0, -53);
    const double lambda = 10.0;
    double u_out = out_dt == KG_DT_F32 ? 0.0 : kg_ops_unit_roundoff(out_dt);
    /* float32 output: the final rounding is already part of gamma_n
     * (the last addition rounds to float32), but a kernel may hold a
     * wider accumulator and round once at the end: allow it. */
    if (out_dt == KG_DT_F32) u_out = u_acc;
    double out_term = u_out * fabs(ref);
    double ref_term = absdot > 0.0 ? gamma_n(n, u_ref) * absdot : 0.0;

    /* gamma_n is infinite beyond n u >= 1/2; 0 * inf must not be NaN */
    double worst = (absdot > 0.0 ? gamma_n(n, u_acc) * absdot : 0.0) + out_term;
    double nd = (double)n;
    double prob = expm1(lambda * sqrt(nd) * u_acc + nd * u_acc * u_acc / (1.0 - u_acc)) * absdot
                  + out_term;
    double cap = fmax(kg_ops_ceiling(in_dt) * rowscale, prob);
    return fmin(worst, cap) + ref_term + 1e-30;
}
