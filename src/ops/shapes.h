/* shapes.h: what the built-in op files share about shapes and output
 * dtypes (shapes.c): the row ops' X[M,N] and their float32 outputs.
 * kg_ops_check_dims, the positive-variables precondition, is public
 * (kgate/op.h) and defined in shapes.c too.
 *
 * Not a public interface (src/ops/ only). */
#ifndef KGATE_OPS_SHAPES_H
#define KGATE_OPS_SHAPES_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/op.h"

/* Every output in float32. */
kg_dtype kg_ops_out_f32(const kg_case *c, int o);

/* Shared by the row ops over X[M,N]: sizes, rows, columns, M N >= 1 and
 * M*N <= 2^28.  The row ops' extra inputs (gamma, beta, weight) are one
 * row of N. */
int kg_ops_rows_admissible(const kg_case *c, char *why, size_t cap);
int64_t kg_ops_rows_cols(const kg_case *c, int o);

/* The row ops' shapes (kg_op's .shape): X[M,N], every other input [N];
 * the output Y[M,N] (rowwise: softmax, layernorm, rmsnorm) or Y[M]
 * (rowreduce: rowsum, rowmax). */
int kg_ops_rowwise_shape(const kg_case *c, int out, int i, int64_t dims[]);
int kg_ops_rowreduce_shape(const kg_case *c, int out, int i, int64_t dims[]);

#endif
