/* ops_internal.h: what the op files share with the registry and the
 * oracle: the op definitions themselves and the per-element error bound
 * common to every reduction-shaped op.
 *
 * Not a public interface: callers outside src/ use kg_op_find(). */
#ifndef KGATE_OPS_INTERNAL_H
#define KGATE_OPS_INTERNAL_H

#include <stdint.h>
#include "kgate/oracle.h"

extern const kg_op kg_op_gemm_bt;
extern const kg_op kg_op_gemm_nt;
extern const kg_op kg_op_gemm_splitk;
extern const kg_op kg_op_rowsum;
extern const kg_op kg_op_rowmax;
extern const kg_op kg_op_softmax;
extern const kg_op kg_op_layernorm;
extern const kg_op kg_op_rmsnorm;
extern const kg_op kg_op_noop;

/* Largest element count of any single input or output array, so that a
 * float64 copy stays addressable and the oracle's memory stays bounded
 * (2^28 elements = 2 GiB of float64). */
#define KG_OPS_MAX_ELEMS ((int64_t)1 << 28)

/* Unit roundoff of an output dtype: the last rounding of a result. */
double kg_ops_unit_roundoff(kg_dtype dt);

/* Declared accuracy ceiling of an input dtype, relative to the row scale
 * (see kg_ops_bound_elem). */
double kg_ops_ceiling(kg_dtype dt);

/* Bound for one output element that is a length-n sum of terms:
 *   absdot    sum of |term| (e.g. sum_k |a_ik b_jk|),
 *   ref       the float64 reference value,
 *   rowscale  the largest absdot of the element's row,
 *   in_dt / out_dt  the case and output dtypes.
 * The derivation and its sources are at the definition in ops.c. */
double kg_ops_bound_elem(double absdot, double ref, double rowscale, int64_t n,
                         kg_dtype in_dt, kg_dtype out_dt);

/* Common precondition text for positive shape variables; 0 when fine. */
int kg_ops_check_dims(const kg_case *c, const char *vars, char *why, size_t cap);

/* gamma_n(u) = n u / (1 - n u) (Higham, Lemma 3.1); +Inf when n u >= 1/2. */
double kg_ops_gamma(int64_t n, double u);

/* The probabilistic counterpart of gamma_n for float32 (Higham and Mary
 * 2019, lambda = 10): exp(lambda sqrt(n) u + n u^2 / (1 - u)) - 1. */
double kg_ops_gamma_prob(int64_t n);

/* 4 bytes for f32, 2 for f16 and bf16. */
double kg_ops_dtype_bytes(kg_dtype dt);

/* Every output in float32. */
kg_dtype kg_ops_out_f32(const kg_case *c, int o);

/* Shared by the row ops over X[M,N]: sizes, rows, columns, M N >= 1 and
 * M*N <= 2^28.  The row ops' extra inputs (gamma, beta, weight) are one
 * row of N. */
int kg_ops_rows_admissible(const kg_case *c, char *why, size_t cap);
int64_t kg_ops_rows_cols(const kg_case *c, int o);

/* Shared by the GEMM ops (gemm_bt.c).  b_kn: B is [K,N] (gemm_nt), else
 * [N,K]. */
void kg_ops_gemm_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[]);
void kg_ops_gemm_rows(const kg_case *c, int64_t rows[]);
int64_t kg_ops_gemm_cols(const kg_case *c, int o);
int kg_ops_gemm_admissible(const kg_case *c, char *why, size_t cap);
int kg_ops_gemm_reference(const kg_case *c, const double *a, const double *b, int b_kn,
                          double *out, kg_err *err);
void kg_ops_gemm_bound(const kg_case *c, const double *a, const double *b, int b_kn,
                       const double *ref, double *bound);
double kg_ops_gemm_flops(const kg_case *c);
double kg_ops_gemm_min_bytes(const kg_case *c);

#endif
