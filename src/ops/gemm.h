/* gemm.h: what the GEMM ops (gemm_bt.c, gemm_nt.c, gemm_splitk.c) share
 * (gemm.c): the shapes of A[M,K], B and C[M,N], admission, the OpenBLAS
 * dgemm reference and the per-element bound from |A| |B| (also a dgemm).
 * b_kn: B is stored [K,N] (gemm_nt), else [N,K].
 *
 * Not a public interface (src/ops/ only). */
#ifndef KGATE_OPS_GEMM_H
#define KGATE_OPS_GEMM_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/op.h"

void kg_ops_gemm_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[]);
void kg_ops_gemm_rows(const kg_case *c, int64_t rows[]);
int64_t kg_ops_gemm_cols(const kg_case *c, int o);
/* The shapes (kg_op's .shape): A[M,K], C[M,N] and B[N,K] (gemm_bt,
 * gemm_splitk) or B[K,N] (gemm_nt). */
int kg_ops_gemm_bt_shape(const kg_case *c, int out, int i, int64_t dims[]);
int kg_ops_gemm_nt_shape(const kg_case *c, int out, int i, int64_t dims[]);
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
