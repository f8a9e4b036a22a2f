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
extern const kg_op kg_op_rowsum;

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

#endif
