/* boundaudit.h: the audit of an op's bound (boundaudit.c; docs/ops.md,
 * "The bound audit").
 *
 * Before timing, the worker mutates the float64 reference of every output
 * at positions spread over the whole output (a grid of blocks over its
 * rows and columns, a few positions in each, and random positions), each
 * by an amount no correct kernel errs by: C sqrt(K) (eps_in + eps_acc K)
 * times the element's scale, at most the scale itself (kg_bound_audit_delta).
 * The mutated value is stored in the output's dtype, as a kernel would
 * store it, and compared with the reference within the op's bound by the
 * comparison every check uses (kg_values_compare): the bound must reject
 * it.  An output whose bound admits more than KG_AUDIT_MAX_ADMITTED of its
 * mutations is weak-bounded: the check cannot tell a wrong kernel from a
 * right one there.
 *
 * Pure arithmetic on the reference and the bound, with positions and
 * signs drawn from a seed: the worker runs it, and anyone with the same
 * reference and bound (verify's op server) gets the same numbers. */
#ifndef KGATE_BOUNDAUDIT_H
#define KGATE_BOUNDAUDIT_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/plan.h"

#define KG_AUDIT_C 8.0                 /* the mutation's multiple of the error budget */
#define KG_AUDIT_GRID 8                /* blocks along the rows and along the columns */
#define KG_AUDIT_PER_BLOCK 4           /* positions drawn in each block */
#define KG_AUDIT_RANDOM 64             /* positions drawn over the whole output */
#define KG_AUDIT_MAX_ADMITTED 0.01     /* the largest fraction of admitted mutations */

/* The relative error budget of one output under a precision contract:
 * eps_in, what an honest kernel may lose independently of the reduction
 * length (the coarsest input dtype's declared accuracy, the output's
 * rounding, a contract's tolerance or TF32 inputs), and eps_acc, the unit
 * roundoff of the accumulator each of the K terms may add (float32's, or
 * f16acc's and bf16acc's). */
typedef struct kg_audit_budget {
    double eps_in, eps_acc;
    double k;                 /* the reduction length: flops / (2 x output elements), or the longest input
                               * row where that is longer (a normalisation sums its rows), at least 1 */
} kg_audit_budget;

/* The budget of an op's case: its input dtypes (nin of them), the dtype of
 * the output audited, the arm's contract (NULL or the default: the
 * dtype's), the op's flops for the case, the element count of all its
 * outputs together and the longest row of its inputs (elements over the
 * generator's rows, kg_op.in_rows). */
void kg_bound_audit_budget(const kg_dtype *in_dt, int nin, kg_dtype out_dt, const kg_contract *ct, double flops,
                           double out_elems, double row_len, kg_audit_budget *b);

/* The mutation's size relative to the element's scale: min(1, C sqrt(K)
 * (eps_in + eps_acc K)). */
double kg_bound_audit_delta(const kg_audit_budget *b);

typedef struct kg_audit_in {
    kg_dtype dtype;           /* the output's */
    int64_t elems;
    int64_t cols;             /* columns of a row; <= 0 or > elems: one row */
    const double *ref, *bound;
    kg_audit_budget budget;
    uint64_t seed;
} kg_audit_in;

typedef struct kg_audit_res {
    int tried, rejected, admitted;
    int weak;                 /* admitted > KG_AUDIT_MAX_ADMITTED * tried */
    double rel;               /* kg_bound_audit_delta */
    /* the loosest position tried: the largest bound / mutation (>= 1
     * where admitted), the mutation as stored and the bound there; -1
     * when nothing was tried */
    int64_t loosest;
    double loosest_ratio, loosest_delta, loosest_bound;
} kg_audit_res;

/* Runs the audit.  An output with no finite nonzero reference value has
 * nothing to scale a mutation by: nothing is tried. */
void kg_bound_audit(const kg_audit_in *in, kg_audit_res *res);

/* The check detail of an audit of output `name` ("bound audit of Y: ...").
 * cols as in kg_audit_in, for the position's row and column. */
void kg_bound_audit_text(const kg_audit_in *in, const kg_audit_res *res, const char *name, char *buf,
                         size_t cap);

/* The seed of output o's audit in a process: from the seed of the inputs
 * checked before timing (kg_protocol_check_seed, phase 0). */
uint64_t kg_bound_audit_seed(uint64_t check_seed, int o);

/* The check record of an audit of output `name` ("bound:NAME"): *pass and
 * the detail, as the worker writes them and verify writes them again.
 * off: the plan says bound_audit = off (recorded, passing, as not
 * audited); ct_weak: the arm's contract is too weak for the case (every
 * comparison under it fails already: recorded, passing, as not audited). */
void kg_bound_audit_record(const kg_audit_in *in, const kg_audit_res *res, const char *name, int off, int ct_weak,
                           int *pass, char *detail, size_t cap);

#endif
