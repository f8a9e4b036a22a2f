/* ops_internal.h: the built-in ops, which the registry (ops.c) lists,
 * each defined in a file of its own (gemm_bt.c, ..., noop.c).
 *
 * Not a public interface: callers outside src/ops/ use kgate/op.h (the
 * op contract, the registry and the shared error bounds).  What the op
 * files share besides kgate/op.h is in shapes.h and, for the GEMM
 * family, gemm.h; none of them uses the registry. */
#ifndef KGATE_OPS_INTERNAL_H
#define KGATE_OPS_INTERNAL_H

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

#endif
