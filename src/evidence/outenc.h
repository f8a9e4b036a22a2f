/* outenc.h: how a saved output is stored in outputs/proc-NNN.bin
 * (outenc.c).
 *
 * An honest output is close to the float64 reference of its check, so it
 * is stored as its distance from that reference rounded to the output's
 * dtype: per element, the difference of the two bit patterns in the
 * order of the values (a difference in units in the last place),
 * zigzagged so that small differences of either sign are small numbers,
 * split into byte planes (every element's low byte first, then the next
 * byte, ...), and the planes compressed with zstd.  The encoding is exact
 * for any bytes (NaN, infinities and garbage come back bit for bit); only
 * its size depends on how close the output is.  Decoding needs the same
 * reference, which verify recomputes from the recorded seed anyway. */
#ifndef KGATE_OUTENC_H
#define KGATE_OUTENC_H

#include <stddef.h>
#include "kgate/err.h"
#include <stdint.h>
#include "kgate/plan.h"

#define KG_OUTENC_ULP "ulp-zstd"   /* the encoding above */
#define KG_OUTENC_RAW "raw"        /* the bytes as they are (folders of schema 4 and older) */

/* The reference an output is stored against: its dtype, element count
 * and float64 reference values. */
typedef struct kg_outref {
    kg_dtype dtype;
    int64_t elems;
    const double *ref;
} kg_outref;

/* An output (n bytes at bytes) encoded against r into *blob (malloc'd,
 * *blen bytes). */
int kg_outenc_encode(const kg_outref *r, const void *bytes, size_t n, void **blob, size_t *blen, kg_err *err);

/* The n logical bytes of an output stored against r, from blen stored
 * bytes of the encoding named enc, into out.  Fails with a message when
 * the stored bytes do not decode to exactly n bytes. */
int kg_outenc_decode(const kg_outref *r, const char *enc, const void *blob, size_t blen, void *out, size_t n,
                     kg_err *err);

#endif
