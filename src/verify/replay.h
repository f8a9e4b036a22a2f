/* replay.h: where verify's replay of saved outputs gets its reference
 * values.  The reader runs no op code: the references come from a source
 * the caller gives (`kgate verify` gives the op server's client,
 * src/check/opserver.h), and nothing but the values it returns enters
 * the comparison.  A source that fails (a crash, a hang, a forbidden call,
 * a malformed reply) makes the folder NOT verified. */
#ifndef KGATE_REPLAY_H
#define KGATE_REPLAY_H

#include <stdint.h>
#include "kgate/err.h"
#include "kgate/plan.h"

/* The reference values of one output: its dtype and element count, the
 * float64 reference, the per-element bound under the contract asked for,
 * and whether that contract is too weak for the case (a trivial output
 * would pass: every comparison under it fails). */
typedef struct kg_ref_out {
    kg_dtype dtype;
    int64_t elems;
    int weak;
    double *ref, *bound;
} kg_ref_out;

typedef struct kg_refs {
    int nout;
    kg_ref_out out[KG_MAX_OUT];
} kg_refs;

void kg_refs_free(kg_refs *r);   /* NULL-safe; leaves r empty */

typedef struct kg_ref_source {
    void *ctx;
    /* The references of case kase (the plan's index) of the folder dir,
     * generated from seed, under contract ct, in a reply of at most
     * max_bytes (what the folder's ops.json says the outputs need): KG_OK
     * with *out filled; KG_EINPUT when the source answered that it cannot
     * compute them (the message says why; it can be asked again); any
     * other error when the source itself failed (the message says how;
     * it is not asked again). */
    int (*get)(void *ctx, const char *dir, int kase, uint64_t seed, const kg_contract *ct, uint64_t max_bytes,
               kg_refs *out, kg_err *err);
} kg_ref_source;

#endif
