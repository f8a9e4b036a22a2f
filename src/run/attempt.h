/* attempt.h: a shard run's attempt, numbered in its campaign's ledger
 * (attempt.c; the ledger's lines: evidence/ledger.h). */
#ifndef KGATE_ATTEMPT_H
#define KGATE_ATTEMPT_H

#include "kgate/err.h"

/* Opens the ledger at path (created when absent), locks it (flock,
 * exclusive), reads and checks it (a chain of lines, all of campaign id),
 * appends the start line of shard I/N's next attempt with the run's salt,
 * fsyncs it and unlocks.  *attempt gets the attempt's number; *prefix
 * (malloc'd) the ledger's text through the new line, which meta.json
 * records. */
int kg_attempt_begin(const char *path, const char *id, int shard, int count, const char *salt, int *attempt,
                     char **prefix, kg_err *err);

/* Appends the end line of that attempt, sums the sha256 of the folder's
 * SHA256SUMS, under the same lock. */
int kg_attempt_end(const char *path, const char *id, int shard, int count, int attempt, const char *sums,
                   kg_err *err);

#endif
