/* ops_internal.h: what the built-in op files share with the registry:
 * the op definitions themselves and the helpers of the row ops and the
 * GEMM ops.
 *
 * Not a public interface: callers outside src/ops/ use kgate/op.h (the
 * op contract, the registry and the shared error bounds). */
#ifndef KGATE_OPS_INTERNAL_H
#define KGATE_OPS_INTERNAL_H

#include <stdint.h>
#include "kgate/op.h"

extern const kg_op kg_op_gemm_bt;
extern const kg_op kg_op_gemm_nt;
extern const kg_op kg_op_gemm_splitk;
extern const kg_op kg_op_rowsum;
extern const kg_op kg_op_rowmax;
extern const kg_op kg_op_softmax;
extern const kg_op kg_op_layernorm;
extern const kg_op kg_op_rmsnorm;
extern const kg_op kg_op_noop;

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
void kg_ops_gemm_bound_ct(const kg_case *c, const kg_contract *ct, const double *a,
                          const double *b, int b_kn, const double *ref, double *bound);
double kg_ops_gemm_flops(const kg_case *c);
double kg_ops_gemm_min_bytes(const kg_case *c);

#endif
