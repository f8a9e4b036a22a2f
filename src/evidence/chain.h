/* chain.h: what binds a campaign's records to each other (chain.c).
 *
 * processes.csv records, for each process, the SHA-256 of each of its
 * files (raw, checks, outputs .bin and index, telemetry, resources; "-"
 * where the file does not exist) and a chain digest:
 *   chain[i] = sha256(chain[i-1] || row text of process i up to its chain field)
 * with chain[-1] the plan hash (64 lowercase hex digits each).  A process
 * deleted, edited, renumbered or added breaks the chain or a file's
 * digest even when SHA256SUMS is recomputed; so does a file deleted or
 * edited.  A forger can still rewrite every row and the whole chain: the
 * chain proves that the records are those of one run only together with a
 * signature over SHA256SUMS (docs/evidence.md).
 *
 * verify/chain_check.h proves it, the schedule complete and consistent
 * with the plan, every accepted process's saved outputs present, and the
 * build provenance (environment.json against build/ and sources/). */
#ifndef KGATE_CHAIN_H
#define KGATE_CHAIN_H

#include "kgate/evidence.h"
#include "kgate/plan.h"

struct kg_sb;

/* Before processes.csv is written: fills the file digests of every
 * record that has none yet (its files read through dirfd, the evidence
 * folder) and the chain link of every record without one, from
 * plan_hash; a record with a link that does not follow (a folder edited
 * since, on --resume) is an error. */
int kg_chain_seal(int dirfd, const char *plan_hash, kg_proc_rec *r, int n, kg_err *err);

/* The chain digest of record r at index from prev (64 hex digits). */
void kg_chain_link(const char *prev, int index, const kg_proc_rec *r, char out[65]);

/* sources/ARM.EXT: the copy of arm a's kernel source kept in the folder
 * (EXT that of the source: .c, .cu, ...; .src when it has none); "" when
 * the arm has no source. */
void kg_chain_source_copy(const kg_plan *plan, int a, char *buf, size_t cap);

/* Copies every arm's kernel source into DIR/sources/ (through dirfd),
 * before environment.json records their digests. */
int kg_chain_copy_sources(int dirfd, const char *dir, const kg_plan *plan, kg_err *err);

/* The files of process p, in the order of kg_proc_rec.sha
 * (raw/proc-NNN.csv.gz, checks/proc-NNN.csv, ...), relative to the folder
 * dirfd (whose raw file of schema 8 and older is raw/proc-NNN.csv). */
void kg_chain_file_name(int dirfd, int i, int p, char *buf, size_t cap);

/* The SHA-256 of the regular file rel under dirfd, not followed through a
 * link: 1, 0 when there is none, -1 (errno) when it cannot be read. */
int kg_chain_hash_at(int dirfd, const char *rel, char hex[65]);

#endif
