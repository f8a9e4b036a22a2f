/* kgate/op.h: the op contract, the op registry and the error bounds
 * every op's tolerance is built from.
 *
 * An op is a contract: the inputs and outputs it takes (names, element
 * counts, dtypes), the case variables it needs, its preconditions, a
 * float64 reference computed from the dtype-rounded inputs, a
 * per-element error bound, and its minimal bytes moved and flops.  The
 * oracle (kgate/oracle.h) generates inputs and compares outputs for any
 * op; backends size buffers and launches from it; reports take the
 * op's bytes and flops.  An op definition starts with .abi = KG_OP_ABI:
 * slots are only ever appended, and the registry refuses an op of
 * another ABI.
 *
 * This header depends on the plan types only: the op contract is the
 * lowest layer above the plan. */
#ifndef KGATE_OP_H
#define KGATE_OP_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"
#include "kgate/plan.h"
#include "kgate/settings.h"

#define KG_OP_ABI 4

/* The most dimensions a tensor's shape has (kg_op_shape). */
#define KG_OP_MAX_DIMS 8

/* KG_MAX_IN and KG_MAX_OUT, the inputs and outputs an op may have, are
 * kgate/plan.h's. */

typedef struct kg_op {
    int abi;                       /* KG_OP_ABI; new slots are appended only */
    const char *name;
    const char *summary;           /* one line for `kgate list` */
    const char *vars;              /* required case variables, e.g. "M N K" */
    int nin, nout;
    const char *in_names[KG_MAX_IN];
    const char *out_names[KG_MAX_OUT];
    /* element counts of each input and output for case c */
    void (*sizes)(const kg_case *c, int64_t in_elems[], int64_t out_elems[]);
    /* dtype of output o (inputs are the case dtype) */
    kg_dtype (*out_dtype)(const kg_case *c, int o);
    /* 0 when admissible; else writes the violated precondition into why */
    int (*admissible)(const kg_case *c, char *why, size_t cap);
    /* float64 reference from float64 copies of the rounded inputs */
    int (*reference)(const kg_case *c, const double *const in[], double *const out[], kg_err *err);
    /* per-element absolute bound for output o, given inputs and reference */
    void (*bound)(const kg_case *c, const double *const in[], const double *ref, int o, double *bound);
    double (*flops)(const kg_case *c);
    double (*min_bytes)(const kg_case *c);
    /* rows of each input (the generator zeroes the first row and scales
     * the last by four); NULL: every input is one row */
    void (*in_rows)(const kg_case *c, int64_t rows[]);
    /* columns of output o, for messages ("row 3, col 17"); NULL: 1-D */
    int64_t (*out_cols)(const kg_case *c, int o);
    /* workspace bytes the op's kernels get in kg_kargs.ws (e.g.
     * float32 split-K partials); NULL: no workspace */
    size_t (*ws_bytes)(const kg_case *c);
    /* the scalar names an arm's launch may pass besides the
     * buffers (in_names, out_names and "ws"), e.g. "M N K splits" */
    const char *scalars;
    /* the structured row classes (KG_ROW_BIT of the KG_ROW_*
     * below) the generator gives interior rows of multi-row inputs;
     * 0: KG_ROWS_DEFAULT */
    unsigned row_classes;
    /* per-element bounds of output o under a reduced precision
     * contract (kgate/plan.h kg_contract: tf32, f16acc, bf16acc or an
     * explicit tolerance); NULL: the op admits only its default contract
     * (kg_plan_check_ops refuses an arm that declares another) */
    void (*bound_ct)(const kg_case *c, const kg_contract *ct, const double *const in[],
                     const double *ref, int o, double *bound);
    /* dtype of input i; NULL: every input is the case dtype */
    kg_dtype (*in_dtype)(const kg_case *c, int i);
    /* ABI 3: the integer variables the held-out shapes vary,
     * e.g. "B L" (docs/admission.md, "Held-out shapes"); NULL: every
     * integer variable of .vars; "": none (the op's cases are checked at
     * their own shapes only) */
    const char *heldout_vars;
    /* ABI 4: the shape of input i (out = 0) or output i (out = 1) for
     * case c, row-major (the last dimension fastest): writes dims[0..n-1]
     * and returns n, 1..KG_OP_MAX_DIMS, whose product is the element
     * count .sizes gives; NULL: kg_op_shape derives it from .in_rows and
     * .out_cols.  Library and Python calls get their arrays in it. */
    int (*shape)(const kg_case *c, int out, int i, int64_t dims[]);
} kg_op;

/* The shape of input i (out = 0) or output i (out = 1) of op for case
 * c: the op's .shape where it has one (checked: 1..KG_OP_MAX_DIMS
 * positive dimensions whose product is the element count of .sizes);
 * else [rows, count / rows] for an input whose .in_rows gives rows > 1
 * that divide its count, [count / cols, cols] for an output whose
 * .out_cols gives cols > 1 that divide its count, and [count] otherwise.
 * Returns the number of dimensions, or 0 (why written) when the op's
 * .shape is inconsistent. */
int kg_op_shape(const kg_op *op, const kg_case *c, int out, int i, int64_t dims[KG_OP_MAX_DIMS], char *why,
                size_t cap);

/* Case variable name of c as an integer, or dflt when c does not set it:
 * how an op reads its variables, built-in (M, N, K, splits) or declared
 * (any name of .vars).  A real is truncated, yes/no is 1/0. */
static inline int64_t kg_op_var_i(const kg_case *c, const char *name, int64_t dflt)
{
    int64_t v = dflt;
    return kg_case_var(c, name, NULL, &v, NULL) ? v : dflt;
}

/* Case variable name of c as a real (eps, alpha), or dflt. */
static inline double kg_op_var_r(const kg_case *c, const char *name, double dflt)
{
    double v = dflt;
    return kg_case_var(c, name, NULL, NULL, &v) ? v : dflt;
}

/* Structured row classes of generated inputs (oracle.c, kg_oracle_row_class;
 * docs/admission.md "Inputs").  Besides the i.i.d. rows: zero ends with a
 * nonzero interior, sparse, runs of zeros, constant, a wide dynamic range,
 * negative only, and near-constant (for the normalisations). */
enum {
    KG_ROW_IID = 0,
    KG_ROW_ZERO_ENDS,
    KG_ROW_SPARSE,
    KG_ROW_ZERO_RUNS,
    KG_ROW_CONSTANT,
    KG_ROW_WIDE,
    KG_ROW_NEGATIVE,
    KG_ROW_NEAR_CONSTANT,
    KG_ROW_NCLASSES
};
#define KG_ROW_BIT(c) (1u << (c))
#define KG_ROWS_DEFAULT (KG_ROW_BIT(KG_ROW_ZERO_ENDS) | KG_ROW_BIT(KG_ROW_SPARSE) | \
                         KG_ROW_BIT(KG_ROW_ZERO_RUNS) | KG_ROW_BIT(KG_ROW_CONSTANT) | \
                         KG_ROW_BIT(KG_ROW_WIDE) | KG_ROW_BIT(KG_ROW_NEGATIVE))
#define KG_ROWS_NORM (KG_ROWS_DEFAULT | KG_ROW_BIT(KG_ROW_NEAR_CONSTANT))

/* The op registry: the built-in ops, then the ops a plan declared and
 * kg_ops_bind loaded in this process. */
const kg_op *kg_op_find(const char *name);

/* The ops plan declares ([op NAME], docs/ops.md), each source beside the
 * plan compiled with the settings' C compiler (KGATE_CC, else cc) against
 * kgate/op.h and loaded into this process; s may be NULL.  Every source
 * must hash to its [op] section's sha256.  An op already loaded from the
 * same source is not built again. */
int kg_ops_bind(const kg_plan *plan, const kg_settings *s, kg_err *err);

/* Each declared op compiled into build_dir/op-NAME.so: from the source
 * beside the plan (folder NULL: the supervisor's build, which workers load
 * so that no compiler runs while a campaign times, recorded with the arms'
 * builds in environment.json), or from an evidence folder's copy
 * folder/sources/op-NAME.c, checked against the plan's sha256 (the op
 * server's build). */
int kg_ops_build(const kg_plan *plan, const kg_settings *s, const char *folder, const char *build_dir, kg_err *err);
int kg_ops_load_built(const kg_plan *plan, const char *build_dir, kg_err *err);

/* The registry of declared ops (ops.c): planops.c registers each module
 * it loads (replacing an earlier op of the same name): 0, or -1 when the
 * table is full.  kg_ops_find_declared finds one by name; NULL if none. */
int kg_ops_register_declared(const kg_op *op);
const kg_op *kg_ops_find_declared(const char *name);

/* The plan's op sources copied into the evidence folder (dirfd, shown as
 * dir) as sources/op-NAME.c, each checked against its sha256. */
int kg_ops_copy_sources(int dirfd, const char *dir, const kg_plan *plan, kg_err *err);

const kg_op *const *kg_op_all(int *n);

/* ---- ops declared in Python (src/ops/pyops.c; docs/ops.md "Ops in
 * Python") ---- */

/* How this process runs Python references: python (NULL: KGATE_PYTHON's
 * choice made by the caller, else /usr/bin/python3), the limit on one
 * call in seconds, and for verify's op server a confinement: hook runs
 * in the helper's child before its exec (0 or the child ends), the
 * helper then stacks its own filter (no exec, fork, socket or write
 * open) before any reference code runs, and gets a kgate-made
 * environment (env, NULL-terminated; NULL: this process's). */
typedef struct kg_pyops_conf {
    const char *python;
    double limit_s;
    int confine;
    int (*hook)(void *arg);
    void *arg;
    char *const *env;
} kg_pyops_conf;
void kg_pyops_configure(const kg_pyops_conf *conf);

/* Registers plan op o, declared in Python, as a kg_op of this process:
 * the reference's text read from beside the plan (folder NULL) or the
 * evidence folder's copy sources/op-NAME.py, checked against the plan's
 * sha256.  The helper starts at the first reference. */
int kg_pyops_register(const kg_plan *plan, int o, const char *folder, kg_err *err);

/* Starts the helper now (verify's op server, before its own confinement)
 * for the Python ops registered, its socket moved to descriptor fd (>= 0;
 * -1: where it is); 0 registered: nothing. */
int kg_pyops_start(int fd, kg_err *err);

/* Starts the helper for the Python ops registered without waiting for
 * it (a worker, so that its imports run while the arms' helpers start;
 * the first reference reads its hello and says why it could not
 * start); 0 registered: nothing. */
void kg_pyops_prestart(void);

/* The running helper's pid; 0 none. */
long kg_pyops_pid(void);

/* Ends the helper (QUIT, then reaped; killed when it does not end). */
void kg_pyops_stop(void);

/* The helper's versions ("{"numpy":...}") and its embedded source's
 * sha256, for environment.json; "" before it started. */
const char *kg_pyops_versions(void);
void kg_pyops_source_sha256(char out[65]);

/* The bound an op declared in Python states, for ops.json and every
 * verdict: "library bound (k=16, floor=8 u32 sqrt(n))" or "rtol 0.001, atol 1e-05";
 * "" for any other op. */
void kg_pyops_contract(const char *op, char *buf, size_t cap);

/* The library bound of an op declared in Python (docs/ops.md, "Ops in
 * Python"; derived by tools/bench/pyop_bound.py).  Element i of an output
 * may err by
 *   k max(e_i, median of e over i's row) + F u32 sqrt(n) rowscale + 2 u_out |ref_i|
 * where e_i is the larger of |lib_i - ref_i| and |libp_i - ref_i| (lib:
 * the reference function evaluated in the case's dtype; libp: the same on
 * inputs moved by one unit of that dtype's roundoff; both stored in the
 * output's dtype), u32 = 2^-24 (2^-53 for an f64 output), n the reduction
 * length, rowscale the largest |ref| of i's row (cols elements; cols <= 0:
 * blocks of 256) and at least 1/16 of the output's, u_out the output
 * dtype's unit roundoff.  libp may be
 * NULL.  Pure arithmetic (tests/unit/test_pyops.c). */
#define KG_PYOPS_K 16.0
#define KG_PYOPS_FLOOR 8.0
void kg_pyops_library_bound(const double *ref, const double *lib, const double *libp, int64_t n, int64_t cols,
                            int64_t nred, kg_dtype out, double *bound);

/* Checks every case of a plan against its op (known op, required
 * variables present and positive).  A violated precondition is not an
 * error: it makes the case inadmissible (see kg_op->admissible). */
int kg_plan_check_ops(const kg_plan *plan, kg_err *err);

/* ---- the error bounds shared by the ops (src/ops/bounds.c, with their
 * derivations and sources) ---- */

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
 * The derivation and its sources are at the definition in bounds.c. */
double kg_ops_bound_elem(double absdot, double ref, double rowscale, int64_t n,
                         kg_dtype in_dt, kg_dtype out_dt);

/* One output element that is a sum of n terms, each a product of
 * `factors` inputs (2 for a GEMM, 1 for rowsum): the facts its bound
 * needs under any contract. */
typedef struct kg_sum_elem {
    double absdot;    /* sum |term| */
    double l2;        /* sqrt(sum term^2); < 0 when not computed (then absdot is used) */
    double ref;       /* the float64 reference */
    double rowscale;  /* largest absdot of the element's row */
    int64_t n;        /* number of terms */
    int factors;      /* inputs multiplied per term */
    /* Under the tf32 contract on f32 inputs: the largest exact error of
     * the input conversions the contract admits, |sum_k (t_k' - t_k)|
     * with t_k' the term with each factor (each operand throughout)
     * converted to TF32 by either rounding or truncation (kg_ops_tf32); valid
     * when tf32_known is 1 (else the bound uses the worst case). */
    double tf32_in;
    int tf32_known;
} kg_sum_elem;

/* An f32 value converted to TF32 (10 explicit mantissa bits) the way
 * `mode` names: KG_TF32_RNA, round to nearest with ties away from zero
 * (PTX cvt.rna.tf32.f32); KG_TF32_RZ, the 13 low bits dropped (what a
 * tensor core may do with raw f32 operands); KG_TF32_RNE, round to nearest
 * with ties to even (cvt.rn.tf32.f32, what cuBLAS's TF32 kernels do).
 * Infinities and NaNs are returned unchanged. */
#define KG_TF32_RNA 0
#define KG_TF32_RZ 1
#define KG_TF32_RNE 2
#define KG_TF32_MODES 3
double kg_ops_tf32(double x, int mode);

/* The bound of one sum element under contract ct (NULL: the default,
 * which is kg_ops_bound_elem).  Derivation at the definition (bounds.c) and
 * in docs/admission.md, "Precision contracts". */
double kg_ops_bound_sum(const kg_sum_elem *s, const kg_contract *ct, kg_dtype in_dt,
                        kg_dtype out_dt);

/* The probabilistic gamma~_n for unit roundoff u (Higham and Mary 2019,
 * lambda = 10); +Inf where it overflows. */
double kg_ops_gamma_prob_u(int64_t n, double u);

/* Common precondition text for positive shape variables; 0 when fine
 * (src/ops/shapes.c). */
int kg_ops_check_dims(const kg_case *c, const char *vars, char *why, size_t cap);

/* gamma_n(u) = n u / (1 - n u) (Higham, Lemma 3.1); +Inf when n u >= 1/2. */
double kg_ops_gamma(int64_t n, double u);

/* The probabilistic counterpart of gamma_n for float32 (Higham and Mary
 * 2019, lambda = 10): exp(lambda sqrt(n) u + n u^2 / (1 - u)) - 1. */
double kg_ops_gamma_prob(int64_t n);

/* Bytes per element: 8 for f64, 4 for f32 and i32, 2 for f16 and bf16, 1 for i8, e4m3 and e5m2. */
double kg_ops_dtype_bytes(kg_dtype dt);

#endif
