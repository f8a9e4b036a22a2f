/* verify.h: `kgate verify DIR` (verify.c), read only. */
#ifndef KGATE_VERIFY_H
#define KGATE_VERIFY_H

#include "kgate/err.h"
#include "verify/replay.h"

struct kg_sb;

/* Checks a folder: SHA256SUMS, the reports recomputed from the raw
 * samples, the chain, schedule and build provenance, and the saved
 * outputs replayed against float64 references from refs (NULL: not
 * replayed; the summary line says how many were not).  In a merged
 * folder (kgate merge) every shard under shards/ is verified again, with
 * its signature checked against pub when pub is not NULL (a merged
 * folder's own signature is the caller's).  Every problem is appended to
 * problems (one line each), the summary last.  Returns KG_OK when the
 * checks ran (*nbad counts problems), an error when they could not. */
int kg_verify_dir_key(const char *dir, const char *pub, const kg_ref_source *refs, struct kg_sb *problems, int *nbad,
                      kg_err *err);
/* The same without a key and without replay. */
int kg_verify_dir(const char *dir, struct kg_sb *problems, int *nbad, kg_err *err);

/* Step 1 alone, and plan.sha256 against plan.kg: a folder with a link
 * or special file is refused (one problem, nothing read); every file
 * SHA256SUMS lists must exist, and those hash_it accepts (by relative
 * path; NULL: every one) must have the listed SHA-256; no file may be
 * unlisted.  What a reader of part of a folder checks before it trusts
 * the part (kgate compare).  Problems are appended one per line (*nbad
 * counts them, *nhashed counts the files hashed); returns KG_OK when the
 * check ran. */
int kg_verify_sums(const char *dir, int (*hash_it)(const char *rel), struct kg_sb *problems, int *nbad, int *nhashed,
                   kg_err *err);

#endif
