/* kgate/oracle.h: inputs, references run, and the admission checks.
 *
 * The oracle works for any op of the registry (kgate/op.h: the op
 * contract, with the reference and the bound).  It generates inputs with the counter-based generator in
 * philox.h, poisons outputs, fills and verifies guard canaries, checksums
 * inputs and compares outputs element by element (NaN never passes).
 *
 * This module does no timing and knows no backend: it works on host
 * memory.  Backends copy bytes to and from the device. */
#ifndef KGATE_ORACLE_H
#define KGATE_ORACLE_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"
#include "kgate/op.h"
#include "kgate/gen.h"
#include "kgate/plan.h"

#define KG_GUARD_ELEMS 64     /* trailing guard elements after every output */

/* Host-side data for one case and one seed: the dtype-encoded inputs (what
 * the kernel reads), their float64 values, the reference outputs and
 * the per-element bounds. */
typedef struct kg_case_data {
    const kg_op *op;
    const kg_case *kase;
    uint64_t seed;
    int nin, nout;
    void *in[KG_MAX_IN];          /* encoded in the case dtype */
    size_t in_bytes[KG_MAX_IN];
    int64_t in_elems[KG_MAX_IN];
    double *in64[KG_MAX_IN];
    uint64_t in_sum[KG_MAX_IN];   /* checksum of in[i] bytes */
    kg_dtype out_dtype[KG_MAX_OUT];
    int64_t out_elems[KG_MAX_OUT];
    size_t out_bytes[KG_MAX_OUT]; /* without guards */
    double *ref[KG_MAX_OUT];
    double *bound[KG_MAX_OUT];
    /* 1 when a trivial output passes output o's check (see
     * kg_oracle_trivial); weak_why names the first shortcut that passes */
    int weak[KG_MAX_OUT];
    char weak_why[256];
    /* bounds under reduced precision contracts, computed on
     * first use by kg_oracle_compare_ct and freed by kg_oracle_release */
    struct kg_ct_bounds *ctb;
    /* 1 after kg_oracle_refill: the inputs are of d->seed, the
     * references and bounds of the seed before (compare nothing with it) */
    int stale;
    /* the dtype of each input (kg_op.in_dtype, else the case's) */
    kg_dtype in_dtype[KG_MAX_IN];
} kg_case_data;

/* Generates inputs for case c from seed, computes references and bounds.
 * Inputs are uniform in [-scale, scale), rounded to the case dtype; the
 * first row is zero and the last row is at four times the scale (an input
 * of one row is only scaled).  Element e of an i.i.d. row of input i is
 *   v = fl32((float)scale * (m * kg_philox_uniform(seed, i, e)))
 * with m = 0, 1 or 4 by row, then rounded to the case dtype (nearest
 * even); kgate/gen.h is that generator, which the device runs too.  Interior rows of an input of three rows or more also
 * take the structured classes of the op (kg_op.row_classes; see
 * kg_oracle_row_class and docs/admission.md), placed by the seed.
 * Fails with KG_EINADMISSIBLE when the op's preconditions
 * do not hold, and with KG_EINPUT when an input rounds to all zeros or
 * overflows.  A case where a trivial output would pass (see
 * kg_oracle_trivial) is prepared, with d->weak[o] set and d->weak_why
 * saying why: the caller reports it as weak.  On failure d is left
 * empty. */
int kg_oracle_prepare(const kg_case *c, uint64_t seed, kg_case_data *d, kg_err *err);
void kg_oracle_release(kg_case_data *d); /* NULL-safe, idempotent */

/* Regenerates the inputs of prepared data d for another seed, in place
 * (the same bits kg_oracle_prepare gives for that seed), without
 * references: d is then stale, for uploading only.  Used for fresh inputs
 * per timed sample; a sample picked for checking is prepared in full. */
int kg_oracle_refill(kg_case_data *d, uint64_t seed);

/* The generator of input `stream` of prepared data d under another seed
 * (kgate/gen.h): kg_oracle_generate(s, buf) then writes exactly the bits
 * kg_oracle_prepare(d's case, seed) gives that input, and a device may
 * run the same spec (the backends' fill).  KG_EINTERNAL when d is not
 * prepared or has no such input. */
int kg_oracle_gen_spec(const kg_case_data *d, int stream, uint64_t seed, kg_gen_spec *s);
void kg_oracle_generate(const kg_gen_spec *s, void *dst);

/* Changes `count` input elements of prepared data d in place, at
 * positions and to values drawn from pseed (each new value differs from
 * the old one and has the old one's scale), then recomputes the
 * references and bounds.  where_in[j] / which_in[j] (may be NULL) get the
 * element and the input of change j.  The perturbation check uploads the
 * changed elements into buffers that held d's inputs before. */
int kg_oracle_perturb(kg_case_data *d, uint64_t pseed, int count, int64_t *where_in, int *which_in, kg_err *err);

/* The structured class (KG_ROW_* of kgate/op.h) of row `row` of input
 * `stream` of prepared data d: KG_ROW_IID for the first and last rows and
 * for rows the seed left i.i.d.  A quarter of the interior rows (at least
 * one per class where there are as many) get a class, at positions that
 * a bijection drawn from the seed decides.  The name is for messages. */
int kg_oracle_row_class(const kg_case_data *d, int stream, int64_t row);
const char *kg_oracle_row_class_name(int cls);

/* The longest row of d's inputs: elements over the generator's rows
 * (kg_op.in_rows; one row where the op gives none).  The bound audit's
 * reduction length (evidence/boundaudit.h) is at least this. */
double kg_oracle_row_len(const kg_case_data *d);

/* Checksum (FNV-1a 64) of a byte range. */
uint64_t kg_checksum(const void *p, size_t n);

/* Fills an output buffer of `bytes` bytes (without guards) with poison
 * pattern 0 or 1 (two different NaN/huge patterns). */
void kg_poison(void *buf, size_t bytes, int pattern);

/* Writes / verifies the guard canary in the KG_GUARD_ELEMS * 4 bytes that
 * follow an output of out_bytes bytes.  Verify returns the index of the
 * first damaged guard byte, or -1 when intact. */
size_t kg_guard_bytes(void);
void kg_guard_fill(void *guard);
long kg_guard_verify(const void *guard);

typedef struct kg_check {
    int pass;
    double max_abs;      /* largest |out - ref| */
    double max_rel;      /* largest |out - ref| / bound (1.0 = at the bound) */
    int64_t worst;       /* element with the largest max_rel, -1 if none */
    int64_t nbad;        /* elements over their bound or non-finite */
    int64_t nnan;        /* NaN or Inf where the reference is finite */
    char msg[256];       /* why it failed, or "" */
    int weak;            /* failed only because the contract is too weak for the case
                          * (kg_oracle_compare_ct): every element was within its bounds */
} kg_check;

/* Compares output o (encoded in its dtype, out_bytes long) with the
 * reference. */
void kg_oracle_compare(const kg_case_data *d, int o, const void *out, kg_check *res);

/* kg_oracle_compare under an arm's precision contract ct (kgate/plan.h).
 * The default contract (or NULL) compares with d->bound.  Another
 * contract's bounds come from the op's bound_ct, computed on first use
 * and kept in d.  A contract under which an all-zero output, a copy of
 * an input or the row mean would pass is too weak for the case: every
 * comparison under it fails, saying so (res->weak is 1 when that alone
 * failed it).  Returns KG_OK, or KG_ENOMEM /
 * KG_EINPUT (the op has no such contract) with err set. */
int kg_oracle_compare_ct(const kg_case_data *d, const kg_contract *ct, int o, const void *out,
                         kg_check *res, kg_err *err);

/* The bounds of output o under contract ct (the default contract, or
 * NULL: d->bound[o]) as kg_oracle_compare_ct compares with, and *weak 1
 * when the contract is too weak for the case (then every comparison under
 * it fails).  *bound stays d's. */
int kg_oracle_bounds_ct(const kg_case_data *d, const kg_contract *ct, int o, const double **bound, int *weak,
                        kg_err *err);

/* 1 when a trivial output would pass output o: all zeros, a copy of the
 * leading elements of an input, or the row mean of the reference
 * broadcast over each row (the mean of the whole output for 1-D outputs
 * of more than one element).  Such a case cannot tell a kernel from a
 * shortcut; why names the shortcut.  0 otherwise. */
int kg_oracle_trivial(const kg_case_data *d, int o, char *why, size_t cap);

/* 1 when the reference of `other` (the same case, another seed), stored in
 * output o's dtype, would pass d's check of output o: a kernel that
 * returns its previous output would pass.  0 otherwise. */
int kg_oracle_stale(const kg_case_data *d, const kg_case_data *other, int o, char *why,
                    size_t cap);

/* Encodes the float64 values v[0..n) into buf in dtype dt (float32, or
 * 16-bit rounded to nearest even), as a kernel storing them would. */
void kg_oracle_encode(const double *v, int64_t n, kg_dtype dt, void *buf);

#endif
