/* heldout.h: held-out shapes, the admission-only shapes kgate derives
 * near each case of a plan (docs/admission.md, "Held-out shapes").
 *
 * A kernel right only on the plan's shapes (one that drops the K tail or
 * the last tile when a dimension is not a multiple of its tile) passes
 * every check on an aligned plan; before timing, the worker also checks
 * every arm on a few shapes near the case (varying the op's integer
 * variables, kg_op.heldout_vars): each shape variable minus one alone, every variable minus one, every variable near its half
 * and every variable at a random odd value.  A derived shape is never
 * larger than the case in any variable, never below 1, and always
 * admissible for the op.  An arm's `requires` (expr.h conditions) skips
 * the derived shapes it does not support.
 *
 * The shapes depend on the case and on a seed (kg_protocol_heldout_seed
 * of the campaign's salted base), so they are replayable from the
 * evidence and unknown to a kernel before the campaign starts. */
#ifndef KGATE_HELDOUT_H
#define KGATE_HELDOUT_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"
#include "kgate/op.h"
#include "kgate/plan.h"

/* At most this many variables vary, and at most this many derived shapes
 * per case: one per variable and three that change every variable. */
#define KG_HELDOUT_VARS 8
#define KG_HELDOUT_MAX (KG_HELDOUT_VARS + 3)

/* The held-out shapes of case c (op its op) from seed, into out[0..cap):
 * copies of c with the op's integer variables changed (M, N and K for the
 * built-in ops; never splits, eps, scale or a real or yes/no variable;
 * splits is lowered to K where K falls below it), distinct from c and
 * from one another.  Returns how many (0 for an op without integer
 * variables). */
int kg_heldout_shapes(const kg_case *c, const kg_op *op, uint64_t seed, kg_case *out, int cap);

/* "heldout[M=63 N=64 K=64]" or "heldout[B=3 L=63 W=9]": the check name of
 * derived shape s. */
void kg_heldout_name(const kg_case *s, const kg_op *op, char *buf, size_t cap);

/* Whether arm supports shape s under its `requires`: *ok = 1, or 0 with
 * why saying which condition fails.  KG_EINPUT when it cannot be
 * evaluated (the plan check makes that rare). */
int kg_heldout_supported(const kg_arm *arm, const kg_case *s, int *ok, char *why, size_t cap, kg_err *err);

#endif
