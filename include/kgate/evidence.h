/* kgate/evidence.h: the evidence folder, its row kinds and their schema.
 *
 * The folder (docs/evidence.md, schema KG_EVIDENCE_SCHEMA):
 *   plan.kg          canonical plan;  plan.sha256
 *   meta.json        the run header: version, host, backend, device, argv
 *   environment.json the receipt: binary, source and build hashes, compiler
 *   processes.csv    one row per started process            (KG_ROWS_PROCESSES)
 *   raw/proc-NNN.csv.gz every timed sample of process NNN (KG_ROWS_RAW)
 *   checks/proc-NNN.csv  every correctness check            (KG_ROWS_CHECKS)
 *   telemetry/proc-NNN.csv  device readings per timed sample (KG_ROWS_TELEMETRY)
 *   telemetry/resources-NNN.csv  what each loaded arm uses  (KG_ROWS_RESOURCES)
 *   outputs/proc-NNN.csv, .bin  saved checked outputs, for replay (KG_ROWS_OUTPUTS)
 *   logs/proc-NNN.log    the worker's stderr
 *   build/           compiled arms
 *   report.md, report.html, results.json, results.csv
 *   SHA256SUMS       every other file's SHA-256, written last
 *
 * Every CSV kind has one writer and one strict reader here (src/evidence/rows.c),
 * with its columns named by an enum: the worker, the supervisor, the
 * reports, verify and resume all go through them.  A reader refuses a
 * file whose header is not its kind's, a row with a field too many or too
 * few, a number that does not parse whole, and a case or arm the plan
 * does not have, with an error naming file:line.  Nothing is skipped.
 *
 * The folder-level functions (src/evidence/evidence.c) load a folder into a
 * kg_evidence, and write meta.json, environment.json, processes.csv,
 * the saved outputs and SHA256SUMS.  Reading writes nothing. */
#ifndef KGATE_EVIDENCE_H
#define KGATE_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/peaks.h"
#include "kgate/err.h"
#include "kgate/plan.h"

#define KG_EVIDENCE_SCHEMA 9

struct kg_sb;

/* ---- row kinds ---- */

typedef enum {
    KG_ROWS_RAW,
    KG_ROWS_CHECKS,
    KG_ROWS_TELEMETRY,
    KG_ROWS_RESOURCES,
    KG_ROWS_PROCESSES,
    KG_ROWS_OUTPUTS,
    KG_ROWS_WATCH,
    KG_ROWS_NKINDS
} kg_rows_kind;

/* raw/proc-NNN.csv.gz: one kg_row per timed sample; plan is
 * the first 16 hex digits of the plan hash. */
enum { KG_RAW_PROCESS, KG_RAW_DIRECTION, KG_RAW_ROUND, KG_RAW_ARM, KG_RAW_CASE, KG_RAW_SAMPLE, KG_RAW_NS,
       KG_RAW_PLAN, KG_RAW_CPU, KG_RAW_PROCESS_CPU, KG_RAW_NCOLS };

/* checks/proc-NNN.csv */
enum { KG_CHK_PROCESS, KG_CHK_DIRECTION, KG_CHK_CASE, KG_CHK_ARM, KG_CHK_PHASE, KG_CHK_CHECK, KG_CHK_RESULT,
       KG_CHK_MAX_ABS, KG_CHK_MAX_REL, KG_CHK_WORST, KG_CHK_NBAD, KG_CHK_DETAIL, KG_CHK_NCOLS };

/* telemetry/proc-NNN.csv */
enum { KG_TEL_PROCESS, KG_TEL_CASE, KG_TEL_ROUND, KG_TEL_ARM, KG_TEL_SAMPLE, KG_TEL_SM_MHZ, KG_TEL_MEM_MHZ,
       KG_TEL_POWER_W, KG_TEL_TEMP_C, KG_TEL_REASONS, KG_TEL_FOREIGN, KG_TEL_ESCAPED, KG_TEL_EVENT_NS,
       KG_TEL_HOST_NS, KG_TEL_NCOLS };

/* telemetry/resources-NNN.csv */
enum { KG_RES_PROCESS, KG_RES_CASE, KG_RES_ARM, KG_RES_LAUNCH, KG_RES_REGISTERS, KG_RES_STATIC_SHARED,
       KG_RES_DYNAMIC_SHARED, KG_RES_LOCAL, KG_RES_CONST, KG_RES_MAX_THREADS, KG_RES_PTX, KG_RES_BINARY,
       KG_RES_GRID, KG_RES_BLOCK, KG_RES_LAUNCHES, KG_RES_ARCH, KG_RES_IMAGE_BYTES, KG_RES_IMAGE_SHA256,
       KG_RES_SANDBOX, KG_RES_LIBRARY, KG_RES_NCOLS };

/* processes.csv (schema 1 folders have the first seven columns only) */
enum { KG_PROC_PROCESS, KG_PROC_DIRECTION, KG_PROC_STATUS, KG_PROC_ACCEPTED, KG_PROC_SECONDS, KG_PROC_START_UTC,
       KG_PROC_REASON, KG_PROC_SLOT, KG_PROC_ATTEMPT, KG_PROC_WAIT, KG_PROC_SETUP, KG_PROC_CHECKS_S,
       KG_PROC_TIMED, KG_PROC_RAW_SHA, KG_PROC_CHECKS_SHA, KG_PROC_OUTBIN_SHA, KG_PROC_OUT_SHA, KG_PROC_TEL_SHA,
       KG_PROC_RES_SHA, KG_PROC_CHAIN, KG_PROC_NCOLS };
/* the files of a process whose digests processes.csv records, in column order */
#define KG_PROC_NFILES 6

/* outputs/proc-NNN.csv: the index of outputs/proc-NNN.bin */
enum { KG_OUT_PROCESS, KG_OUT_CASE, KG_OUT_ARM, KG_OUT_PHASE, KG_OUT_CHECK, KG_OUT_OUTPUT, KG_OUT_SEED,
       KG_OUT_OFFSET, KG_OUT_BYTES, KG_OUT_RESULT, KG_OUT_MAX_ABS, KG_OUT_STORED, KG_OUT_ENCODING, KG_OUT_SHA,
       KG_OUT_NCOLS };
enum { KG_WATCH_UTC, KG_WATCH_SECONDS, KG_WATCH_PROCESS, KG_WATCH_EVENT, KG_WATCH_DETAIL, KG_WATCH_NCOLS };

/* The header line of a kind, without its newline ("process,direction,..."). */
const char *kg_rows_header(kg_rows_kind kind);

/* ---- the schema: each kind's columns, declared once (rows.c) ----
 *
 * The writers, the strict readers, the header line and the folder's
 * schema.json (every kind's file, columns, types and meanings, which the
 * Python package reads) all come from these tables. */

typedef enum {
    KG_COL_INT,      /* a decimal integer */
    KG_COL_UINT64,   /* an unsigned 64-bit decimal integer */
    KG_COL_REAL,     /* a decimal number (nan where not measured) */
    KG_COL_HEX,      /* 0x and hex digits: a bit mask */
    KG_COL_FLAG,     /* 0 or 1 */
    KG_COL_UTC,      /* a time, ISO 8601 UTC */
    KG_COL_SHA256,   /* 64 lowercase hex digits; - where there is no such file */
    KG_COL_CASE,     /* a case of the plan, by name */
    KG_COL_ARM,      /* an arm of the plan, by name */
    KG_COL_ENUM,     /* one of the column's values */
    KG_COL_NAME,     /* a name from an open set (an op, a dtype) */
    KG_COL_TEXT,     /* free text, quoted where it may hold a comma */
    KG_COL_DIM3      /* XxYxZ */
} kg_col_type;

typedef struct kg_col {
    const char *name;
    kg_col_type type;
    int empty;            /* 1: the field may be empty (not applicable, or not measured) */
    const char *values;   /* KG_COL_ENUM: the values, comma-separated, in their order, or NULL and: */
    const char *(*value_of)(int i); /* KG_COL_ENUM: the i-th value, NULL past the last (a vocabulary
                                     * another module names: roles, verdicts, dtypes) */
    const char *meaning;  /* one line */
} kg_col;

/* A kind of rows: its name, its file (NNN: the process index, three
 * digits or more), what a row is, and its columns in order. */
typedef struct kg_rows_def {
    const char *kind;     /* "raw" */
    const char *file;     /* "raw/proc-NNN.csv.gz" */
    const char *about;
    const kg_col *cols;
    int ncols;
} kg_rows_def;

/* The definition of a kind (NULL for a value that is not one). */
const kg_rows_def *kg_rows_def_of(kg_rows_kind kind);
/* A column type's name in schema.json: "integer", "number", "enum", ... */
const char *kg_col_type_name(kg_col_type t);
/* A header line from a table of columns: the names, comma-separated, and
 * a newline. */
void kg_cols_header(struct kg_sb *sb, const kg_col *cols, int ncols);

/* ---- the records the analysis reads ---- */

/* A row's direction: forward, or case and arm order reversed. */
enum { KG_DIR_FWD = 0, KG_DIR_REV = 1 };

/* One timed sample, as stored in the evidence folder's raw CSV. */
typedef struct kg_row {
    int proc;        /* process index, 0-based, in launch order */
    int dir;         /* KG_DIR_FWD / KG_DIR_REV */
    int round;       /* 0-based within the process and case */
    int arm;         /* index into plan->arms */
    int kase;        /* index into plan->cases */
    int sample;      /* 0-based within the round */
    double ns;       /* time of one operation (a packed sample divided by pack) */
    int cpu;         /* the CPU the sample's code ran on, read after it (the arm's host; the worker for an
                      * in-worker arm); -1: not recorded (a backend that runs nothing on the host's CPUs,
                      * a folder of an older kgate) */
    int pin_cpu;     /* the one CPU the process (worker and arm hosts) was pinned to; -1: not pinned */
} kg_row;

/* A contaminated sample: its process was pinned to one CPU and the sample
 * ran on another (or where is unknown).  Recorded, counted and reported,
 * never analysed. */
static inline int kg_row_contaminated(const kg_row *r)
{
    return r->pin_cpu >= 0 && r->cpu != r->pin_cpu;
}

/* One device reading after a timed sample, as stored in the evidence
 * folder's telemetry CSV; joined to its kg_row by
 * (proc, kase, round, arm, sample).  sm_mhz > 0 is a clock (-1: the
 * backend reads none). */
typedef struct kg_tel_rec {
    int proc, kase, round, arm, sample;
    int sm_mhz, mem_mhz;
    double power_w;
    int temp_c;
    unsigned long long reasons;    /* clock event (throttle) reasons mask */
    int foreign_procs;
    int escaped;
    double event_ns, host_ns;
} kg_tel_rec;

/* Outcome of an arm on a case outside timing. */
typedef enum {
    KG_ARM_OK = 0,
    KG_ARM_INADMISSIBLE,  /* contract violated: not run */
    KG_ARM_INCORRECT,     /* a check failed in some accepted process */
    KG_ARM_ABSENT,        /* the arm does not apply to this case */
    KG_ARM_WEAK           /* the case is weak: a trivial output would pass its check */
} kg_arm_state;

/* ---- check phases and the names the readers act on ---- */

typedef enum { KG_PHASE_PRE, KG_PHASE_POST } kg_phase;
const char *kg_phase_name(kg_phase p);           /* "pre", "post" */
int kg_check_is_bound(const char *check);        /* 1 for a "bound:OUTPUT" check (KG_CHECK_BOUND) */

#define KG_CHECK_ADMISSIBLE "admissible"          /* failed: the arm is INADMISSIBLE on the case */
#define KG_CHECK_FAULT      "fault"               /* failed: the arm's own code failed (KG_EARM) or killed its
                                                   * worker; folded from every process, accepted or not: the
                                                   * arm is INCORRECT on the case */
#define KG_CHECK_WEAK       "weak"                /* failed: the case is WEAK */
#define KG_CHECK_BOUND      "bound"               /* "bound:OUTPUT", the bound audit; failed: the op is
                                                   * weak-bounded, the case WEAK */
#define KG_CHECK_NEGATIVE   "negative"            /* the numerical negative's summary */
#define KG_CHECK_PARITY     "parity"
#define KG_CHECK_ESCAPE     "timing:escape"
#define KG_CHECK_POISON0    "poison0"             /* checked runs: a run's name, then ":" and the output */
#define KG_CHECK_POISON1    "poison1"
#define KG_CHECK_SNAPSHOT   "snapshot"
#define KG_CHECK_FRESH      "fresh"
#define KG_CHECK_SAMPLED    "sampled"             /* "sampled@N": the output of timed execution N (inputs = fresh) */
#define KG_CHECK_PERTURBED  "perturbed"           /* a few input elements changed in place after timing */
#define KG_CHECK_FRESH_COST "inputs:fresh"        /* passes; says what regenerating the inputs cost */
#define KG_CHECK_CACHE "cache:l2"                  /* passes; says how the plan's l2 was honoured before the samples */
#define KG_CHECK_WARM "clock:warm"                /* passes; the clock warm-up before the first timed phase */
#define KG_CHECK_LAYOUT "layout"                  /* passes; the arm's load slot and placement pad in the process */
#define KG_CHECK_SCREEN_SKIP "screen:dropped"     /* passes; a screen's candidate not run in this process: the screen
                                                   * dropped it after an earlier one (report/screening.h) */
#define KG_CHECK_SCREEN_COST "screen:cost"        /* passes; a screen's arm's own time in the process: "busy S s;
                                                   * timed T s in N samples" (report/screening.h) */

/* ---- records ---- */

#define KG_CHECK_NAME_MAX 96
#define KG_DETAIL_MAX 512

/* One correctness check. */
typedef struct kg_check_rec {
    int proc, dir, kase;
    int arm;                       /* -1: the check is of the case, not of an arm */
    kg_phase phase;
    char check[KG_CHECK_NAME_MAX]; /* "poison0:C", "guard" and "input" checks, "weak"... */
    int pass;
    int has_cmp;                   /* an output comparison: the four numbers below are set */
    double max_abs, max_rel;
    long long worst, nbad;
    char detail[KG_DETAIL_MAX];
} kg_check_rec;

/* One launch of a loaded arm (-1: the backend could not say). */
typedef struct kg_res_rec {
    int proc, kase, arm, launch;
    int regs, static_shared, dynamic_shared, local, const_bytes, max_threads, ptx, binary;
    long long grid[3], block[3];
    int launches;
    char arch[16];
    size_t image_bytes;
    char image_sha256[65];
    char sandbox[128];     /* cpu: the arm host's protections ("seccomp,nnp,..."); "" elsewhere */
    char library[1536];    /* a library arm's provenance record (JSON); "" for other arms and in
                            * folders of schema 6 and older */
} kg_res_rec;

/* One started process (processes.csv). */
typedef struct kg_proc_rec {
    int dir;
    char status[32];               /* ok, crashed, exit N, timeout, incomplete, contaminated */
    char reason[256];
    double seconds;
    char start_utc[32];
    int accepted;
    int slot;                      /* the schedule slot it fills: fixes the direction */
    int attempt;                   /* 0 for the first run of a slot, k for its k-th repeat */
    /* where its time went, s (-1: not recorded, a folder of an older
     * kgate): the quiet wait before it, and inside the worker the set-up
     * (loading and compiling arms, binding inputs), the checks before and
     * after timing, and the timed phases */
    double wait_s, setup_s, checks_s, timed_s;
    /* the SHA-256 of its files when it was recorded, in the order of
     * KG_PROC_NFILES (raw, checks, outputs .bin, outputs index,
     * telemetry, resources), "-" for a file it does not have, "" when
     * not yet known (an older folder); and the chain digest:
     * sha256(previous row's chain, or the plan hash for process 0, as 64
     * hex digits || this row's text up to the chain field) (chain.h) */
    char sha[KG_PROC_NFILES][65];
    char chain[65];
} kg_proc_rec;

/* One event of the host watch (watch.csv), in the order it happened.
 * event: "session" (a kgate run began: its settings in detail; seconds,
 * once it ended, its wall time), "build" (the arms built and the peaks
 * measured), "wait" (the quiet wait before process proc), "not-quiet"
 * (a reason the host was not quiet, seen first at utc), "contaminated"
 * (process proc excluded, and why), "note" (seen, not excluded: a power
 * cap), "never-quiet" (a slot given up: the campaign is INVALID), "end"
 * (the run ended: seconds, its wall time), "overlap" (process proc
 * started while the one before it ran its last checks: seconds, how
 * long; detail, that time of its own by state, counted once in the
 * duty cycle), "worker" (process proc's worker is not the supervisor's
 * binary, by its hello or by the image the supervisor exec'd: the folder
 * cannot be signed). */
typedef struct kg_watch_rec {
    char utc[32];
    double seconds;
    int proc;                      /* -1: not of one process */
    char event[16];
    char detail[512];
} kg_watch_rec;
#define KG_WATCH_EVENTS "session,build,wait,not-quiet,contaminated,note,never-quiet,overlap,overlap-off,end,worker"

/* One saved output (outputs/proc-NNN.csv). */
typedef struct kg_out_rec {
    int proc, kase, arm, output;
    kg_phase phase;
    char check[32];                /* poison0, fresh, sampled@N, ... */
    uint64_t seed;
    size_t offset, bytes;
    int pass;
    double max_abs;
    /* what the .bin holds for it (src/evidence/outenc.h) */
    size_t stored;                 /* bytes at offset in the .bin: the encoded output */
    char encoding[12];             /* ulp-zstd; raw in older folders */
    char sha256[65];               /* of the output's logical bytes ("" in older folders) */
} kg_out_rec;

/* ---- writers: one row appended to sb, with its newline ---- */

void kg_rows_begin(struct kg_sb *sb, kg_rows_kind kind);  /* the header line */
void kg_rows_put_raw(struct kg_sb *sb, const kg_plan *plan, const kg_row *r);
void kg_rows_put_check(struct kg_sb *sb, const kg_plan *plan, const kg_check_rec *r);
void kg_rows_put_tel(struct kg_sb *sb, const kg_plan *plan, const kg_tel_rec *r);
void kg_rows_put_res(struct kg_sb *sb, const kg_plan *plan, const kg_res_rec *r);
void kg_rows_put_proc(struct kg_sb *sb, int index, const kg_proc_rec *r);
/* The row of kg_rows_put_proc up to its chain field: without the comma
 * before the chain, the chain and the newline (what the chain hashes). */
void kg_rows_put_proc_text(struct kg_sb *sb, int index, const kg_proc_rec *r);
void kg_rows_put_out(struct kg_sb *sb, const kg_plan *plan, const kg_out_rec *r);
void kg_rows_put_watch(struct kg_sb *sb, const kg_watch_rec *r);

/* ---- strict readers: the whole file at path, appended to *v, which
 * is NULL with *n = 0 or an array these readers grew (they grow it with
 * realloc, in powers of two from 64); *n counts ---- */

/* The raw rows of process proc: "raw/proc-NNN.csv.gz", or, in a folder of
 * schema 8 or older, "raw/proc-NNN.csv" where only that file is there;
 * prefixed with "DIR/" when dir is not NULL, looked up relative to dirfd
 * (AT_FDCWD for a path). */
void kg_rows_raw_name(int dirfd, const char *dir, int proc, char *buf, size_t cap);
/* proc >= 0: every row must belong to that process.  A path ending in
 * .gz is read as the gzip of the rows (every reader below alike). */
int kg_rows_read_raw(const char *path, const kg_plan *plan, int proc, kg_row **v, size_t *n, kg_err *err);
int kg_rows_read_checks(const char *path, const kg_plan *plan, int proc, kg_check_rec **v, size_t *n, kg_err *err);
int kg_rows_read_tel(const char *path, const kg_plan *plan, int proc, kg_tel_rec **v, size_t *n, kg_err *err);
int kg_rows_read_res(const char *path, const kg_plan *plan, int proc, kg_res_rec **v, size_t *n, kg_err *err);
int kg_rows_read_out(const char *path, const kg_plan *plan, int proc, kg_out_rec **v, size_t *n, kg_err *err);
/* The same readers over len bytes in memory (what a worker sent through
 * the supervisor's pipe), sharing every rule with the file readers; name
 * is what the messages call it ("proc-003 checks").  The bytes must be
 * whole lines: no NUL, a newline at the end. */
int kg_rows_parse_raw(const char *name, const char *data, size_t len, const kg_plan *plan, int proc, kg_row **v,
                      size_t *n, kg_err *err);
int kg_rows_parse_checks(const char *name, const char *data, size_t len, const kg_plan *plan, int proc,
                         kg_check_rec **v, size_t *n, kg_err *err);
int kg_rows_parse_tel(const char *name, const char *data, size_t len, const kg_plan *plan, int proc,
                      kg_tel_rec **v, size_t *n, kg_err *err);
int kg_rows_parse_res(const char *name, const char *data, size_t len, const kg_plan *plan, int proc,
                      kg_res_rec **v, size_t *n, kg_err *err);
int kg_rows_parse_out(const char *name, const char *data, size_t len, const kg_plan *plan, int proc,
                      kg_out_rec **v, size_t *n, kg_err *err);
/* Rows must be numbered 0, 1, ...; *legacy is set for a schema 1 file
 * (seven columns: slot = the process, attempt 0).  Older schemas without
 * the four durations, or without the file digests and the chain, read
 * with those fields -1 / "". */
int kg_rows_read_procs(const char *path, kg_proc_rec **v, int *n, int *legacy, kg_err *err);
/* watch.csv; a folder without one (an older kgate) reads as no rows. */
int kg_rows_read_watch(const char *path, kg_watch_rec **v, size_t *n, kg_err *err);

/* ---- the folder ---- */

/* What meta.json says of shards: a shard folder (count > 0: index, count),
 * a merged folder (merged > 0: the number of shards under shards/), and
 * the device (index -1 and "" model where the folder predates them). */
typedef struct kg_shard_meta {
    int index, count;
    int by_process;          /* a shard of processes ("by": "process"), not of cases */
    int merged;
    int device_index;
    char device_model[256], device[512], backend[16];
} kg_shard_meta;
int kg_evidence_shard_meta(const char *meta_json, kg_shard_meta *sm, kg_err *err);


/* Everything the analysis and the reports need, read back from a folder. */
/* ops.json: what the reader needs to know about each case's op, written
 * as data by the producer (the reader never loads op code).  One entry per
 * case of the plan, in its order. */
#define KG_FACT_NAME 64
typedef struct kg_tensor_fact {
    char name[KG_FACT_NAME];
    kg_dtype dtype;
    int64_t elems;
    int64_t cols;             /* columns of an output (rows of cols elements); 0: 1-D */
} kg_tensor_fact;

typedef struct kg_case_facts {
    char op[KG_NAME_MAX];
    int admissible;           /* the op's preconditions hold; else no tensor sizes */
    char scalars[128];        /* the scalar names an arm's launch may pass, e.g. "M N K splits" */
    double flops, min_bytes;  /* the op's minimal flops and bytes moved for the case */
    int nin, nout;
    kg_tensor_fact in[KG_MAX_IN], out[KG_MAX_OUT];
    char contract[96];        /* an op declared in Python: its bound ("library bound (k=8, ...)", "rtol 0.001,
                               * atol 1e-05"), printed next to every verdict; "" for any other op */
} kg_case_facts;

#define KG_FACTS_FILE "ops.json"

/* Parses ops.json's text (name for messages) against plan: *facts gets
 * plan->ncases entries (malloc'd).  Every case must be there, of its op. */
int kg_facts_parse(const char *name, const char *text, const kg_plan *plan, kg_case_facts **facts, kg_err *err);

typedef struct kg_evidence {
    kg_plan *plan;            /* parsed from plan.kg */
    char *meta_json;          /* meta.json text */
    kg_proc_rec *procs; int nproc;
    int *accepted;            /* per process (for the analysis) */
    kg_row *rows; size_t nrows;                 /* raw samples of accepted processes */
    kg_check_rec *checks; size_t nchecks_all;   /* check records of every process that wrote them */
    kg_tel_rec *tel; size_t ntel;               /* telemetry of accepted processes */
    kg_res_rec *res; size_t nres;               /* resources of the first accepted process with a file */
    int res_proc;             /* that process, -1: none */
    kg_arm_state *state;      /* per (case, arm) */
    int nchecks, nchecks_failed;  /* in accepted processes */
    /* the campaign's input salt from meta.json (salt.h); 0 when
     * the folder predates it (its inputs then depend on the plan's seed alone) */
    uint64_t input_salt;
    /* peaks.json, the device's measured peaks (kgate/peaks.h);
     * has_peaks = 0 when the folder has none (check-only runs, older
     * folders): then no physics limit applies */
    int has_peaks;
    kg_peaks peaks;
    /* watch.csv, the host watch's log (none in older folders) */
    kg_watch_rec *watch; size_t nwatch;
    /* the folder's size without what is written from it (the
     * reports, SHA256SUMS, the signature), and its saved outputs: index
     * rows, rows sharing an earlier row's bytes, their logical bytes and
     * the bytes the .bin files hold */
    int folder_files;
    long long folder_bytes;
    long long out_rows, out_shared, out_logical, out_stored;
    /* a shard (shard.count > 0: its cases are case_on) or a
     * merged folder (shard.merged > 0: the evidence of its shards/,
     * process indices and slots offset shard after shard); case_on is
     * NULL for a whole campaign.  case_shard: per case, the shard that ran
     * it (merged folders; NULL otherwise) */
    kg_shard_meta shard;
    unsigned char *case_on;
    int *case_shard;
    /* a by-process shard: per process, the index its seeds and load order
     * took (kg_shard_seq of its slot and attempt); NULL: the process's own
     * index (kg_evidence_seq) */
    int *seq;
    /* ops.json, one entry per case; NULL for a folder written before it */
    kg_case_facts *facts;
    /* environment.json's compile_cache: the built objects the compile
     * cache supplied, listed "base.so, cand.so"; NULL: none */
    char *compile_cache;
    /* meta.json's "screen": a screen in screening mode (report/screening.h) */
    int screen;
} kg_evidence;

/* The process index process p's seeds and load order took. */
int kg_evidence_seq(const kg_evidence *ev, int p);

/* Reads the folder.  Fails on the first malformed file or row, naming it. */
int kg_evidence_load(const char *dir, kg_evidence *ev, kg_err *err);
void kg_evidence_free(kg_evidence *ev);

/* The arm states (per case and arm, as ev->state) that the check records
 * of processes 0..upto alone give, folded as kg_evidence_load folds them
 * all: the states a reader of the folder saw after process upto. */
void kg_evidence_state_upto(const kg_evidence *ev, int upto, kg_arm_state *state);

/* What meta.json records of the run. */
typedef struct kg_meta {
    const char *backend, *notice, *device;
    int argc; char **argv;
    int check_only, negative;
    const char *frozen_path;  /* NULL: none */
    uint64_t input_salt;      /* the campaign's input salt (salt.h), as "input_salt" */
    /* the device's index and model ("device_index",
     * "device_model"); shard_n > 0: a shard ("shard": index, count and the
     * names of its cases, docs/scale-out.md) */
    int device_index;
    const char *device_model;
    int shard_i, shard_n;
    const unsigned char *shard_on; /* per case: in the shard */
    int by_process;                /* a shard of processes ("by": "process" and its "slots") */
    /* a shard's campaign ("campaign": id, attempt, ledger, ledger_lines;
     * evidence/ledger.h): its id, its attempt in the ledger at
     * ledger_path, and the ledger's text through its own start line */
    const char *campaign_id, *ledger_path, *ledger_text;
    int attempt;
    /* kgate screen's screening mode: candidates dropped as they turn out
     * INCORRECT or futile (report/screening.h), "screen": true */
    int screen;
} kg_meta;



/* The writers below write through dirfd, the folder's descriptor (dir:
 * its name, for messages and for reading build/). */
int kg_evidence_write_meta(int dirfd, const char *dir, const kg_plan *plan, const kg_meta *m, kg_err *err);

/* Environment receipt: DIR/environment.json.  compiler: the version line
 * of the compiler that built the arms, NULL when the backend records none;
 * programs (NULL: none recorded): what ran and the environment that
 * changes kgate's behaviour, its "programs" and "environment" objects
 * (src/evidence/envrec.h). */
struct kg_envrec_in;
int kg_evidence_write_environment(int dirfd, const kg_plan *plan, const char *dir, const char *backend,
                                  const char *device, const char *compiler, const struct kg_envrec_in *programs,
                                  kg_err *err);

/* peaks.json: the measured peaks (kgate/peaks.h), written once before
 * the first process (docs/evidence.md). */
int kg_evidence_write_peaks(int dirfd, const char *dir, const char *backend, const kg_peaks *pk, kg_err *err);

/* processes.csv, rewritten whole (atomically) through the folder's
 * descriptor dirfd (dir: its name, for messages). */
int kg_evidence_write_processes(int dirfd, const char *dir, const kg_proc_rec *p, int n, kg_err *err);
/* Reads processes.csv for --resume: a folder with none yet gives n = 0;
 * a schema 1 file cannot be resumed. */
int kg_evidence_read_processes(const char *dir, kg_proc_rec **out, int *n, kg_err *err);

/* Every regular file under dir, as sorted relative paths (caller frees
 * each and the array). */
int kg_evidence_list(const char *dir, char ***paths, int *n, kg_err *err);

/* Writes DIR/SHA256SUMS over every other file of the folder. */
int kg_evidence_write_sums(const char *dir, kg_err *err);

/* ---- saved outputs for replay ---- */

/* The outputs one worker keeps, in memory until it ends. */
typedef struct kg_outputs {
    kg_out_rec *v; size_t n, cap;
    char *data; size_t len, dcap;
    int oom;
} kg_outputs;

/* Keeps one checked output: r says which, with its logical size (bytes),
 * encoding and sha256; blob is what the .bin holds for it (stored bytes).
 * An output already kept for the same case, output and seed with the same
 * sha256 (an A/A copy, a control) shares the earlier bytes: offset and
 * stored are filled in here. */
void kg_outputs_keep(kg_outputs *o, const kg_out_rec *r, const void *blob, size_t stored);
/* The index of o (outputs/proc-NNN.csv's text) for process proc, appended
 * to idx; the bytes it indexes are o->data[0 .. o->len). */
void kg_outputs_index(const kg_outputs *o, const kg_plan *plan, int proc, struct kg_sb *idx);
void kg_outputs_free(kg_outputs *o);

#endif
