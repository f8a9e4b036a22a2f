/* rows.c: one writer and one strict reader per CSV kind of the evidence
 * folder (kgate/evidence.h): raw samples, checks, telemetry, resources,
 * processes and the saved-outputs index.
 *
 * The column names live in one table per kind; the header a writer puts
 * and the header a reader demands are that table.  A reader fails on the
 * first thing that is not exactly what a writer puts: another header, a
 * field too many or too few, an empty line, a number that does not parse
 * whole or is out of range, a name the plan does not have, a row of
 * another process or plan.  Its message names file:line and the column.
 *
 * A file NAME.gz is read as the gzip of its rows (raw/proc-NNN.csv.gz).
 * Nothing here opens a folder or decides anything about a campaign. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kgate/evidence.h"
#include "base/util.h"

/* ---- the schema: every column of every kind, declared once ---- */

#define DIR_VALUES "fwd,rev"
#define PHASE_VALUES "pre,post"
#define RESULT_VALUES "pass,fail"

static const kg_col raw_cols[] = {
    { "process", KG_COL_INT, 0, NULL, NULL, "the process index (NNN of its files), 0-based, in start order" },
    { "direction", KG_COL_ENUM, 0, DIR_VALUES, NULL, "the process's direction: fwd, or case and arm order reversed" },
    { "round", KG_COL_INT, 0, NULL, NULL, "the round, 0-based within the process and case" },
    { "arm", KG_COL_ARM, 0, NULL, NULL, "the arm timed" },
    { "case", KG_COL_CASE, 0, NULL, NULL, "the case" },
    { "sample", KG_COL_INT, 0, NULL, NULL, "the timed sample, 0-based within the round" },
    { "ns", KG_COL_REAL, 0, NULL, NULL, "the time of one operation in nanoseconds (a packed sample divided by pack)" },
    { "plan", KG_COL_TEXT, 0, NULL, NULL, "the first 16 hex digits of the plan hash (plan.sha256)" },
    { "cpu", KG_COL_INT, 0, NULL, NULL, "the CPU the sample's code ran on, read after it (the arm's host, or the worker "
                                  "for an in-worker arm); -1: not recorded (fake, cuda)" },
    { "process_cpu", KG_COL_INT, 0, NULL, NULL, "the one CPU the process's worker and arm hosts were pinned to (cpu "
                                          "backend); -1: not pinned.  A row whose cpu differs is a contaminated "
                                          "sample: recorded, not analysed" },
};
static const kg_col chk_cols[] = {
    { "process", KG_COL_INT, 0, NULL, NULL, "the process index" },
    { "direction", KG_COL_ENUM, 0, DIR_VALUES, NULL, "the process's direction" },
    { "case", KG_COL_CASE, 0, NULL, NULL, "the case checked" },
    { "arm", KG_COL_ARM, 1, NULL, NULL, "the arm checked; empty for a check of the case itself" },
    { "phase", KG_COL_ENUM, 0, PHASE_VALUES, NULL, "pre: before timing; post: after timing" },
    { "check", KG_COL_TEXT, 0, NULL, NULL, "the check's name: poison0:Y, fresh:Y, sampled@N:Y, admissible, weak, fault, "
                                     "negative, timing:escape, ..." },
    { "result", KG_COL_ENUM, 0, RESULT_VALUES, NULL, "whether the check passed" },
    { "max_abs", KG_COL_REAL, 1, NULL, NULL, "an output comparison's largest absolute error" },
    { "max_rel", KG_COL_REAL, 1, NULL, NULL, "an output comparison's largest error over its element's bound (above 1 fails)" },
    { "worst", KG_COL_INT, 1, NULL, NULL, "the element with the largest max_rel (-1: none)" },
    { "nbad", KG_COL_INT, 1, NULL, NULL, "the elements over their bound" },
    { "detail", KG_COL_TEXT, 0, NULL, NULL, "what the check found, in words" },
};
static const kg_col tel_cols[] = {
    { "process", KG_COL_INT, 0, NULL, NULL, "the process index" },
    { "case", KG_COL_CASE, 0, NULL, NULL, "the case" },
    { "round", KG_COL_INT, 0, NULL, NULL, "the round" },
    { "arm", KG_COL_ARM, 0, NULL, NULL, "the arm" },
    { "sample", KG_COL_INT, 0, NULL, NULL, "the timed sample the reading follows (joins raw/proc-NNN.csv)" },
    { "sm_mhz", KG_COL_INT, 0, NULL, NULL, "the SM clock, MHz (-1: the backend reads none)" },
    { "mem_mhz", KG_COL_INT, 0, NULL, NULL, "the memory clock, MHz (-1: not read)" },
    { "power_w", KG_COL_REAL, 0, NULL, NULL, "the device's power draw, W (nan: not read)" },
    { "temp_c", KG_COL_INT, 0, NULL, NULL, "the device's temperature, degrees C (-1: not read)" },
    { "clock_event_reasons", KG_COL_HEX, 0, NULL, NULL, "NVML's clock event (throttle) reasons mask" },
    { "foreign_procs", KG_COL_INT, 0, NULL, NULL, "processes on the device that are not kgate's (-1: not read)" },
    { "escaped", KG_COL_FLAG, 0, NULL, NULL, "1: work of the sample ran outside its timed bracket" },
    { "event_ns", KG_COL_REAL, 0, NULL, NULL, "the pack's time by the device's events (cpu: the arm host's CPU time)" },
    { "host_ns", KG_COL_REAL, 0, NULL, NULL, "the pack's time by the worker's clock around it" },
};
static const kg_col res_cols[] = {
    { "process", KG_COL_INT, 0, NULL, NULL, "the process index" },
    { "case", KG_COL_CASE, 0, NULL, NULL, "the case" },
    { "arm", KG_COL_ARM, 0, NULL, NULL, "the arm loaded" },
    { "launch", KG_COL_INT, 0, NULL, NULL, "the launch of the arm's chain, from 1" },
    { "registers", KG_COL_INT, 0, NULL, NULL, "registers per thread (-1: the backend cannot say)" },
    { "static_shared", KG_COL_INT, 0, NULL, NULL, "static shared memory per block, bytes (-1: unknown)" },
    { "dynamic_shared", KG_COL_INT, 0, NULL, NULL, "dynamic shared memory per block, bytes (-1: unknown)" },
    { "local", KG_COL_INT, 0, NULL, NULL, "local memory per thread, bytes (-1: unknown)" },
    { "const", KG_COL_INT, 0, NULL, NULL, "constant memory, bytes (-1: unknown)" },
    { "max_threads", KG_COL_INT, 0, NULL, NULL, "the most threads per block the kernel allows (-1: unknown)" },
    { "ptx", KG_COL_INT, 0, NULL, NULL, "the PTX version (-1: unknown)" },
    { "binary", KG_COL_INT, 0, NULL, NULL, "the binary's architecture version (-1: unknown)" },
    { "grid", KG_COL_DIM3, 0, NULL, NULL, "the launch's grid, XxYxZ" },
    { "block", KG_COL_DIM3, 0, NULL, NULL, "the launch's block, XxYxZ" },
    { "launches", KG_COL_INT, 0, NULL, NULL, "launches in the arm's chain (-1: unknown)" },
    { "arch", KG_COL_TEXT, 0, NULL, NULL, "the architecture it was built for (sm_90, cpu)" },
    { "image_bytes", KG_COL_INT, 0, NULL, NULL, "the loaded image's size, bytes" },
    { "image_sha256", KG_COL_SHA256, 1, NULL, NULL, "the loaded image's SHA-256" },
    { "sandbox", KG_COL_TEXT, 0, NULL, NULL, "cpu: the protections the arm's host had in effect (seccomp,nnp,...); "
                                       "empty on other backends" },
    { "library", KG_COL_TEXT, 0, NULL, NULL, "a library arm's provenance record, JSON (docs/library-arms.md); empty for "
                                       "other arms" },
};
static const kg_col proc_cols[] = {
    { "process", KG_COL_INT, 0, NULL, NULL, "the process index: 0, 1, 2, ... in start order" },
    { "direction", KG_COL_ENUM, 0, DIR_VALUES, NULL, "the direction of its slot" },
    { "status", KG_COL_TEXT, 0, NULL, NULL, "ok, crashed, exit N, timeout, incomplete, bad rows, or contaminated (the host "
                                      "was not quiet)" },
    { "accepted", KG_COL_FLAG, 0, NULL, NULL, "1: the analysis uses its rows" },
    { "seconds", KG_COL_REAL, 0, NULL, NULL, "the worker's wall time, s" },
    { "start_utc", KG_COL_UTC, 0, NULL, NULL, "when it started" },
    { "reason", KG_COL_TEXT, 0, NULL, NULL, "why it is not accepted (empty when it is)" },
    { "slot", KG_COL_INT, 0, NULL, NULL, "the schedule slot it fills; slot s runs in direction s % 2" },
    { "attempt", KG_COL_INT, 0, NULL, NULL, "0 for the first run of its slot, k for the k-th repeat" },
    { "wait_s", KG_COL_REAL, 0, NULL, NULL, "the time it waited, ready to time, for a quiet host (part of seconds), s" },
    { "setup_s", KG_COL_REAL, 0, NULL, NULL, "loading, compiling and binding the arms, s" },
    { "checks_s", KG_COL_REAL, 0, NULL, NULL, "the checks before and after timing, float64 references included, s" },
    { "timed_s", KG_COL_REAL, 0, NULL, NULL, "the timed phases, s" },
    { "raw_sha256", KG_COL_SHA256, 0, NULL, NULL, "SHA-256 of raw/proc-NNN.csv when the process was recorded; - : none" },
    { "checks_sha256", KG_COL_SHA256, 0, NULL, NULL, "the same of checks/proc-NNN.csv" },
    { "outputs_bin_sha256", KG_COL_SHA256, 0, NULL, NULL, "the same of outputs/proc-NNN.bin" },
    { "outputs_sha256", KG_COL_SHA256, 0, NULL, NULL, "the same of outputs/proc-NNN.csv" },
    { "telemetry_sha256", KG_COL_SHA256, 0, NULL, NULL, "the same of telemetry/proc-NNN.csv" },
    { "resources_sha256", KG_COL_SHA256, 0, NULL, NULL, "the same of telemetry/resources-NNN.csv" },
    { "chain", KG_COL_SHA256, 0, NULL, NULL, "sha256(the previous row's chain, or the plan hash for process 0 || this row's "
                                       "text up to the comma before chain)" },
};
static const kg_col watch_cols[] = {
    { "utc", KG_COL_UTC, 0, NULL, NULL, "when the row was written" },
    { "seconds", KG_COL_REAL, 0, NULL, NULL, "the event's duration, s (0 for a point)" },
    { "process", KG_COL_INT, 0, NULL, NULL, "the process it concerns (-1: none)" },
    { "event", KG_COL_ENUM, 0, KG_WATCH_EVENTS, NULL, "what happened (docs/evidence.md, watch.csv)" },
    { "detail", KG_COL_TEXT, 0, NULL, NULL, "the event in words" },
};
static const kg_col out_cols[] = {
    { "process", KG_COL_INT, 0, NULL, NULL, "the process index" },
    { "case", KG_COL_CASE, 0, NULL, NULL, "the case" },
    { "arm", KG_COL_ARM, 0, NULL, NULL, "the arm whose output it is" },
    { "phase", KG_COL_ENUM, 0, PHASE_VALUES, NULL, "the check's phase" },
    { "check", KG_COL_TEXT, 0, NULL, NULL, "the check that produced it (poison0, fresh, sampled@N, ...)" },
    { "output", KG_COL_INT, 0, NULL, NULL, "the output's index in the op's contract" },
    { "seed", KG_COL_UINT64, 0, NULL, NULL, "the input seed (verify regenerates the inputs from it)" },
    { "offset", KG_COL_INT, 0, NULL, NULL, "where its bytes start in outputs/proc-NNN.bin" },
    { "bytes", KG_COL_INT, 0, NULL, NULL, "the output's size in its dtype, bytes" },
    { "result", KG_COL_ENUM, 0, RESULT_VALUES, NULL, "what the worker found" },
    { "max_abs", KG_COL_REAL, 0, NULL, NULL, "the largest absolute error the worker found" },
    { "stored", KG_COL_INT, 0, NULL, NULL, "the bytes the .bin holds for it, encoded" },
    { "encoding", KG_COL_TEXT, 0, NULL, NULL, "ulp-zstd, or raw" },
    { "sha256", KG_COL_SHA256, 0, NULL, NULL, "SHA-256 of the output's bytes" },
};

typedef struct kind_def {
    kg_rows_def def;
    char header[320];
} kind_def;

#define KIND(name, file, about, cols) { { name, file, about, cols, (int)(sizeof cols / sizeof cols[0]) }, "" }
static kind_def kinds[KG_ROWS_NKINDS] = {
    [KG_ROWS_RAW] = KIND("raw", "raw/proc-NNN.csv.gz", "one row per timed sample of the process (gzip; "
                         "raw/proc-NNN.csv, not compressed, before schema 9)", raw_cols),
    [KG_ROWS_CHECKS] = KIND("checks", "checks/proc-NNN.csv", "one row per correctness check", chk_cols),
    [KG_ROWS_TELEMETRY] = KIND("telemetry", "telemetry/proc-NNN.csv", "one device reading per timed sample",
                               tel_cols),
    [KG_ROWS_RESOURCES] = KIND("resources", "telemetry/resources-NNN.csv",
                               "one row per launch of each loaded arm's chain", res_cols),
    [KG_ROWS_PROCESSES] = KIND("processes", "processes.csv",
                               "one row per started worker process (and per slot attempt the host held back)",
                               proc_cols),
    [KG_ROWS_OUTPUTS] = KIND("outputs", "outputs/proc-NNN.csv", "the index of the checked outputs kept in "
                             "outputs/proc-NNN.bin", out_cols),
    [KG_ROWS_WATCH] = KIND("watch", "watch.csv", "one row per event of the host watch, in order", watch_cols),
};
_Static_assert(sizeof raw_cols / sizeof raw_cols[0] == KG_RAW_NCOLS, "raw_cols: one entry per column of the enum");
_Static_assert(sizeof chk_cols / sizeof chk_cols[0] == KG_CHK_NCOLS, "chk_cols: one entry per column of the enum");
_Static_assert(sizeof tel_cols / sizeof tel_cols[0] == KG_TEL_NCOLS, "tel_cols: one entry per column of the enum");
_Static_assert(sizeof res_cols / sizeof res_cols[0] == KG_RES_NCOLS, "res_cols: one entry per column of the enum");
_Static_assert(sizeof proc_cols / sizeof proc_cols[0] == KG_PROC_NCOLS, "proc_cols: one entry per column of the enum");
_Static_assert(sizeof watch_cols / sizeof watch_cols[0] == KG_WATCH_NCOLS, "watch_cols: one entry per column of the enum");
_Static_assert(sizeof out_cols / sizeof out_cols[0] == KG_OUT_NCOLS, "out_cols: one entry per column of the enum");

const kg_rows_def *kg_rows_def_of(kg_rows_kind kind)
{
    if ((int)kind < 0 || kind >= KG_ROWS_NKINDS) return NULL;
    return &kinds[kind].def;
}

static const char *const col_types[] = {
    [KG_COL_INT] = "integer", [KG_COL_UINT64] = "uint64", [KG_COL_REAL] = "number", [KG_COL_HEX] = "hex",
    [KG_COL_FLAG] = "flag", [KG_COL_UTC] = "utc", [KG_COL_SHA256] = "sha256", [KG_COL_CASE] = "case",
    [KG_COL_ARM] = "arm", [KG_COL_ENUM] = "enum", [KG_COL_NAME] = "name", [KG_COL_TEXT] = "text",
    [KG_COL_DIM3] = "dim3",
};

const char *kg_col_type_name(kg_col_type t)
{
    return (int)t >= 0 && (size_t)t < sizeof col_types / sizeof col_types[0] ? col_types[t] : "text";
}

static void join(const kg_col *cols, int n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? "," : "", cols[i].name);
        if (w < 0) break;
        len += (size_t)w;
    }
}

void kg_cols_header(kg_sb *sb, const kg_col *cols, int ncols)
{
    for (int i = 0; i < ncols; i++) kg_sb_printf(sb, "%s%s", i ? "," : "", cols[i].name);
    kg_sb_puts(sb, "\n");
}

const char *kg_rows_header(kg_rows_kind kind)
{
    if ((int)kind < 0 || kind >= KG_ROWS_NKINDS) return "";
    kind_def *k = &kinds[kind];
    if (k->header[0] == '\0') join(k->def.cols, k->def.ncols, k->header, sizeof k->header);
    return k->header;
}

static const char *const phase_names[] = { "pre", "post" };   /* PHASE_VALUES */

int kg_check_is_bound(const char *check)
{
    return strncmp(check, KG_CHECK_BOUND ":", sizeof KG_CHECK_BOUND) == 0;
}

const char *kg_phase_name(kg_phase p)
{
    return p == KG_PHASE_POST ? phase_names[1] : phase_names[0];
}

static const char *dir_name(int dir)
{
    return dir == KG_DIR_REV ? "rev" : "fwd";
}

/* ---- writers ---- */

void kg_rows_begin(kg_sb *sb, kg_rows_kind kind)
{
    kg_sb_printf(sb, "%s\n", kg_rows_header(kind));
}

/* A quoted field: quotes doubled, line breaks as spaces. */
static void csv_text(kg_sb *sb, const char *s)
{
    kg_sb_puts(sb, "\"");
    for (; *s; s++) {
        if (*s == '"') kg_sb_puts(sb, "\"\"");
        else if (*s == '\n' || *s == '\r') kg_sb_puts(sb, " ");
        else kg_sb_printf(sb, "%c", *s);
    }
    kg_sb_puts(sb, "\"");
}

void kg_rows_put_raw(kg_sb *sb, const kg_plan *plan, const kg_row *r)
{
    char qa[KG_CSV_NAME_CAP], qc[KG_CSV_NAME_CAP];
    kg_sb_printf(sb, "%d,%s,%d,%s,%s,%d,%.3f,%.16s,%d,%d\n", r->proc, dir_name(r->dir), r->round,
                 kg_csv_name(plan->arms[r->arm].name, qa), kg_csv_name(plan->cases[r->kase].name, qc), r->sample, r->ns,
                 plan->hash, r->cpu, r->pin_cpu);
}

void kg_rows_put_check(kg_sb *sb, const kg_plan *plan, const kg_check_rec *r)
{
    char qa[KG_CSV_NAME_CAP], qc[KG_CSV_NAME_CAP];
    kg_sb_printf(sb, "%d,%s,%s,%s,%s,%s,%s,", r->proc, dir_name(r->dir), kg_csv_name(plan->cases[r->kase].name, qc),
                 r->arm >= 0 ? kg_csv_name(plan->arms[r->arm].name, qa) : "", kg_phase_name(r->phase), r->check,
                 r->pass ? "pass" : "fail");
    if (r->has_cmp)
        kg_sb_printf(sb, "%.6g,%.6g,%lld,%lld,", r->max_abs, r->max_rel, r->worst, r->nbad);
    else
        kg_sb_puts(sb, ",,,,");
    csv_text(sb, r->detail);
    kg_sb_puts(sb, "\n");
}

void kg_rows_put_tel(kg_sb *sb, const kg_plan *plan, const kg_tel_rec *t)
{
    char qa[KG_CSV_NAME_CAP], qc[KG_CSV_NAME_CAP];
    kg_sb_printf(sb, "%d,%s,%d,%s,%d,%d,%d,%.1f,%d,0x%llx,%d,%d,%.0f,%.0f\n", t->proc,
                 kg_csv_name(plan->cases[t->kase].name, qc), t->round, kg_csv_name(plan->arms[t->arm].name, qa), t->sample, t->sm_mhz, t->mem_mhz, t->power_w, t->temp_c,
                 t->reasons, t->foreign_procs, t->escaped, t->event_ns, t->host_ns);
}

void kg_rows_put_res(kg_sb *sb, const kg_plan *plan, const kg_res_rec *r)
{
    char qa[KG_CSV_NAME_CAP], qc[KG_CSV_NAME_CAP];
    kg_sb_printf(sb, "%d,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%lldx%lldx%lld,%lldx%lldx%lld,%d,%s,%zu,%s,", r->proc,
                 kg_csv_name(plan->cases[r->kase].name, qc), kg_csv_name(plan->arms[r->arm].name, qa), r->launch, r->regs, r->static_shared,
                 r->dynamic_shared, r->local, r->const_bytes, r->max_threads, r->ptx, r->binary, r->grid[0],
                 r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->launches, r->arch,
                 r->image_bytes, r->image_sha256);
    csv_text(sb, r->sandbox);
    kg_sb_puts(sb, ",");
    csv_text(sb, r->library);
    kg_sb_puts(sb, "\n");
}

void kg_rows_put_proc_text(kg_sb *sb, int index, const kg_proc_rec *p)
{
    kg_sb_printf(sb, "%d,%s,%s,%d,%.3f,%s,\"", index, dir_name(p->dir), p->status, p->accepted, p->seconds,
                 p->start_utc);
    for (const char *s = p->reason; *s; s++) {
        if (*s == '"') kg_sb_puts(sb, "\"\"");
        else if (*s != '\n' && *s != '\r') kg_sb_printf(sb, "%c", *s);
    }
    kg_sb_printf(sb, "\",%d,%d,%.3f,%.3f,%.3f,%.3f", p->slot, p->attempt, p->wait_s, p->setup_s, p->checks_s,
                 p->timed_s);
    for (int i = 0; i < KG_PROC_NFILES; i++) kg_sb_printf(sb, ",%s", p->sha[i][0] ? p->sha[i] : "-");
}

void kg_rows_put_proc(kg_sb *sb, int index, const kg_proc_rec *p)
{
    kg_rows_put_proc_text(sb, index, p);
    kg_sb_printf(sb, ",%s\n", p->chain[0] ? p->chain : "-");
}

/* A quoted free-text field: quotes doubled, line breaks dropped. */
static void put_text(kg_sb *sb, const char *t)
{
    kg_sb_puts(sb, "\"");
    for (const char *s = t; *s; s++) {
        if (*s == '"') kg_sb_puts(sb, "\"\"");
        else if (*s != '\n' && *s != '\r') kg_sb_printf(sb, "%c", *s);
    }
    kg_sb_puts(sb, "\"");
}

void kg_rows_put_watch(kg_sb *sb, const kg_watch_rec *r)
{
    kg_sb_printf(sb, "%s,%.3f,%d,%s,", r->utc, r->seconds, r->proc, r->event);
    put_text(sb, r->detail);
    kg_sb_puts(sb, "\n");
}

void kg_rows_put_out(kg_sb *sb, const kg_plan *plan, const kg_out_rec *r)
{
    char qa[KG_CSV_NAME_CAP], qc[KG_CSV_NAME_CAP];
    kg_sb_printf(sb, "%d,%s,%s,%s,%s,%d,%" PRIu64 ",%zu,%zu,%s,%.6g,%zu,%s,%s\n", r->proc,
                 kg_csv_name(plan->cases[r->kase].name, qc), kg_csv_name(plan->arms[r->arm].name, qa), kg_phase_name(r->phase), r->check, r->output, r->seed, r->offset,
                 r->bytes, r->pass ? "pass" : "fail", r->max_abs, r->stored, r->encoding, r->sha256);
}

/* ---- the reader core ---- */

typedef struct rd {
    const char *path;
    const kind_def *k;
    int line;                  /* 1-based line of the current row */
    char *f[KG_CHK_NCOLS + KG_RES_NCOLS];
    kg_err *err;
} rd;

static int bad(rd *r, int col, const char *what)
{
    return kg_errorf(r->err, KG_EINPUT, "%s:%d: column %s: %s '%s' (a row kgate did not write: the file was "
                     "damaged or edited)", r->path, r->line, r->k->def.cols[col].name, what, r->f[col]);
}

/* "-"? and 1 to 18 decimal digits, nothing else: *v, and 1 (strtoll's
 * value); 0 for anything else, which strtoll then reads or refuses */
static int plain_int(const char *s, long long *v)
{
    int neg = *s == '-';
    const char *p = s + neg;
    long long x = 0;
    int n = 0;
    for (; *p >= '0' && *p <= '9' && n < 19; p++, n++) x = x * 10 + (*p - '0');
    if (*p != '\0' || n == 0 || n > 18) return 0;
    *v = neg ? -x : x;
    return 1;
}

/* "-"? digits "." digits, 15 digits at most, nothing else: the value
 * m / 10^k of an integer m < 2^53 and a power 10^k <= 10^22, both exact
 * doubles, so the one division rounds as strtod rounds (Clinger's fast
 * path); 0 for anything else, which strtod then reads or refuses */
static int plain_real(const char *s, double *v)
{
    static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16 };
    int neg = *s == '-', n = 0, k = -1;
    const char *p = s + neg;
    long long m = 0;
    for (; n <= 15; p++) {
        if (*p >= '0' && *p <= '9') {
            m = m * 10 + (*p - '0');
            n++;
            if (k >= 0) k++;
        } else if (*p == '.' && k < 0) {
            k = 0;
        } else {
            break;
        }
    }
    if (*p != '\0' || n == 0 || n > 15) return 0;
    double x = (double)m / p10[k > 0 ? k : 0];
    *v = neg ? -x : x;
    return 1;
}

static int get_i64(rd *r, int col, long long lo, long long hi, long long *out)
{
    const char *s = r->f[col];
    char *end;
    long long q;
    if (plain_int(s, &q)) {
        if (q < lo || q > hi) return bad(r, col, "not an integer in range");
        *out = q;
        return KG_OK;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (s[0] == '\0' || *end != '\0' || errno == ERANGE || v < lo || v > hi) return bad(r, col, "not an integer in range");
    *out = v;
    return KG_OK;
}

static int get_int(rd *r, int col, long long lo, long long hi, int *out)
{
    long long v;
    int rc = get_i64(r, col, lo, hi < INT_MAX ? hi : INT_MAX, &v);
    if (rc == KG_OK) *out = (int)v;
    return rc;
}

static int get_u64(rd *r, int col, int base, uint64_t *out)
{
    const char *s = r->f[col];
    char *end;
    errno = 0;
    if (s[0] == '\0' || s[0] == '-' || s[0] == '+' || s[0] == ' ') return bad(r, col, "not an unsigned integer");
    unsigned long long v = strtoull(s, &end, base);
    if (*end != '\0' || errno == ERANGE) return bad(r, col, "not an unsigned integer");
    *out = (uint64_t)v;
    return KG_OK;
}

static int get_real(rd *r, int col, double *out)
{
    const char *s = r->f[col];
    char *end;
    if (s[0] == '\0' || s[0] == ' ') return bad(r, col, "not a number");
    if (plain_real(s, out)) return KG_OK;
    double v = strtod(s, &end);
    if (*end != '\0') return bad(r, col, "not a number");
    *out = v;
    return KG_OK;
}

static int get_case(rd *r, const kg_plan *plan, int col, int *out)
{
    *out = kg_plan_find_case(plan, r->f[col]);
    return *out < 0 ? bad(r, col, "no case of the plan is named") : KG_OK;
}

static int get_arm(rd *r, const kg_plan *plan, int col, int *out)
{
    *out = kg_plan_find_arm(plan, r->f[col]);
    return *out < 0 ? bad(r, col, "no arm of the plan is named") : KG_OK;
}

static int get_dir(rd *r, int col, int *out)
{
    if (strcmp(r->f[col], "fwd") == 0) *out = KG_DIR_FWD;
    else if (strcmp(r->f[col], "rev") == 0) *out = KG_DIR_REV;
    else return bad(r, col, "not fwd or rev:");
    return KG_OK;
}

static int get_phase(rd *r, int col, kg_phase *out)
{
    if (strcmp(r->f[col], "pre") == 0) *out = KG_PHASE_PRE;
    else if (strcmp(r->f[col], "post") == 0) *out = KG_PHASE_POST;
    else return bad(r, col, "not pre or post:");
    return KG_OK;
}

static int get_pass(rd *r, int col, int *out)
{
    if (strcmp(r->f[col], "pass") == 0) *out = 1;
    else if (strcmp(r->f[col], "fail") == 0) *out = 0;
    else return bad(r, col, "not pass or fail:");
    return KG_OK;
}

static int get_str(rd *r, int col, char *buf, size_t cap)
{
    if (strlen(r->f[col]) >= cap) return bad(r, col, "too long:");
    snprintf(buf, cap, "%s", r->f[col]);
    return KG_OK;
}

static int get_proc(rd *r, int col, int want, int *out)
{
    int rc = get_int(r, col, 0, INT_MAX, out);
    if (rc == KG_OK && want >= 0 && *out != want) return bad(r, col, "a row of another process:");
    return rc;
}

/* Calls row(r, ctx) for every data line of text (NUL-terminated, changed
 * in place; name is what messages call it), with r->f split into exactly
 * the kind's columns.  alt_ncols / alt_header: a second accepted form
 * (schema 1 processes.csv), or 0 / NULL. */
static int parse_rows(const char *name, char *text, kg_rows_kind kind, int alt_ncols, const char *alt_header,
                      int (*row)(rd *r, int ncols, void *ctx), void *ctx, int *alt_seen, kg_err *err)
{
    int rc = KG_OK;
    rd r = { .path = name, .k = &kinds[kind], .line = 1, .err = err };
    const char *want = kg_rows_header(kind);
    char *cur = text, *line = kg_next_line(&cur);
    int ncols = r.k->def.ncols;
    if (line == NULL || (strcmp(line, want) != 0 && (alt_header == NULL || strcmp(line, alt_header) != 0)))
        return kg_errorf(err, KG_EINPUT, "%s:1: header is not '%s' (not a file of this kind, or of another kgate "
                         "schema)", name, want);
    if (alt_header != NULL && strcmp(line, want) != 0) {
        ncols = alt_ncols;
        if (alt_seen != NULL) *alt_seen = 1;
    }
    while ((line = kg_next_line(&cur)) != NULL) {
        r.line++;
        int nf = line[0] == '\0' ? 0 : kg_csv_split(line, r.f, ncols + 1);
        if (nf != ncols)
            return kg_errorf(err, KG_EINPUT, "%s:%d: %d fields where the header has %d (a damaged or edited row)",
                             name, r.line, nf, ncols);
        if ((rc = row(&r, ncols, ctx)) != KG_OK) return rc;
    }
    return rc;
}

/* parse_rows over the file at path. */
static int gz_name(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

/* The text of a file of rows: as it is, or a gzip member (NAME.gz)
 * decompressed, both under the cap on text, with no NUL byte inside. */
static int read_text(const char *path, char **text, kg_err *err)
{
    if (!gz_name(path)) return kg_read_file(path, text, NULL, err);
    char *z = NULL;
    size_t zlen = 0, len = 0;
    int rc = kg_read_file(path, &z, &zlen, err);
    if (rc != KG_OK) return rc;
    rc = kg_gunzip(path, z, zlen, KG_CAP_TEXT, text, &len, err);
    free(z);
    if (rc == KG_OK && memchr(*text, '\0', len) != NULL) {
        free(*text);
        *text = NULL;
        rc = kg_errorf(err, KG_EINPUT, "%s: holds a NUL byte (not rows kgate wrote)", path);
    }
    return rc;
}

void kg_rows_raw_name(int dirfd, const char *dir, int proc, char *buf, size_t cap)
{
    const char *pre = dir != NULL ? dir : "", *sep = dir != NULL ? "/" : "";
    snprintf(buf, cap, "%s%sraw/proc-%03d.csv.gz", pre, sep, proc);
    if (faccessat(dirfd, buf, F_OK, AT_SYMLINK_NOFOLLOW) == 0) return;
    snprintf(buf, cap, "%s%sraw/proc-%03d.csv", pre, sep, proc);
    if (faccessat(dirfd, buf, F_OK, AT_SYMLINK_NOFOLLOW) == 0) return;
    snprintf(buf, cap, "%s%sraw/proc-%03d.csv.gz", pre, sep, proc);
}

static int read_rows(const char *path, kg_rows_kind kind, int alt_ncols, const char *alt_header,
                     int (*row)(rd *r, int ncols, void *ctx), void *ctx, int *alt_seen, kg_err *err)
{
    char *text = NULL;
    int rc = read_text(path, &text, err);
    if (rc != KG_OK) return rc;
    rc = parse_rows(path, text, kind, alt_ncols, alt_header, row, ctx, alt_seen, err);
    free(text);
    return rc;
}

/* parse_rows over len bytes in memory, which must be whole lines of text:
 * no NUL byte, and a newline at the end (a writer always puts one). */
static int mem_rows(const char *name, const char *data, size_t len, kg_rows_kind kind,
                    int (*row)(rd *r, int ncols, void *ctx), void *ctx, kg_err *err)
{
    if (len == 0 || data[len - 1] != '\n')
        return kg_errorf(err, KG_EINPUT, "%s: does not end with a newline (cut short, or not rows kgate wrote)", name);
    if (memchr(data, '\0', len) != NULL)
        return kg_errorf(err, KG_EINPUT, "%s: holds a NUL byte (not rows kgate wrote)", name);
    char *text = malloc(len + 1);
    if (text == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory reading %s", name);
    memcpy(text, data, len);
    text[len] = '\0';
    int rc = parse_rows(name, text, kind, 0, NULL, row, ctx, NULL, err);
    free(text);
    return rc;
}

/* Appends one element of size sz to the array *v of *n elements. */
static void *grow(void **v, size_t *n, size_t *cap, size_t sz, kg_err *err)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        void *p = realloc(*v, c * sz);
        if (p == NULL) {
            kg_errorf(err, KG_ENOMEM, "out of memory reading rows");
            return NULL;
        }
        *v = p;
        *cap = c;
    }
    return (char *)*v + (*n)++ * sz;
}

/* What a row parser appends to: an array of records of one kind. */
typedef struct arr_ctx {
    const kg_plan *plan;
    int proc;                 /* >= 0: the process every row must belong to */
    void **v; size_t *n, cap, sz;
} arr_ctx;

/* Appends the record x (c->sz bytes). */
static int push(arr_ctx *c, const void *x, kg_err *err)
{
    void *p = grow(c->v, c->n, &c->cap, c->sz, err);
    if (p == NULL) return KG_ENOMEM;
    memcpy(p, x, c->sz);
    return KG_OK;
}

static size_t cap_of(size_t n);

/* Reads a file of one kind (data == NULL), or len bytes of one kind in
 * memory, into the array *v of elements of size sz. */
static int read_kind(const char *path, const char *data, size_t len, kg_rows_kind kind, const kg_plan *plan,
                     int proc, void **v, size_t *n, size_t sz, int (*row)(rd *r, int ncols, void *ctx), kg_err *err)
{
    arr_ctx c = { plan, proc, v, n, cap_of(*n), sz };
    if (data != NULL) return mem_rows(path, data, len, kind, row, &c, err);
    return read_rows(path, kind, 0, NULL, row, &c, NULL, err);
}

/* ---- raw ---- */

static int raw_row(rd *r, int ncols, void *vctx)
{
    arr_ctx *c = vctx;
    kg_row x;
    int rc;
    if ((rc = get_proc(r, KG_RAW_PROCESS, c->proc, &x.proc)) != KG_OK) return rc;
    if ((rc = get_dir(r, KG_RAW_DIRECTION, &x.dir)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_RAW_ROUND, 0, INT_MAX, &x.round)) != KG_OK) return rc;
    if ((rc = get_arm(r, c->plan, KG_RAW_ARM, &x.arm)) != KG_OK) return rc;
    if ((rc = get_case(r, c->plan, KG_RAW_CASE, &x.kase)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_RAW_SAMPLE, 0, INT_MAX, &x.sample)) != KG_OK) return rc;
    if ((rc = get_real(r, KG_RAW_NS, &x.ns)) != KG_OK) return rc;
    if (!(x.ns > 0) || x.ns > 1e30) return bad(r, KG_RAW_NS, "not a positive time:");
    if (strlen(r->f[KG_RAW_PLAN]) != 16 || strncmp(r->f[KG_RAW_PLAN], c->plan->hash, 16) != 0)
        return kg_errorf(r->err, KG_EINPUT, "%s:%d: row of another plan (hash %s, folder's plan %.16s)", r->path,
                         r->line, r->f[KG_RAW_PLAN], c->plan->hash);
    x.cpu = x.pin_cpu = -1;   /* schema 7 and older: not recorded, not pinned */
    if (ncols > KG_RAW_CPU) {
        if ((rc = get_int(r, KG_RAW_CPU, -1, 1 << 20, &x.cpu)) != KG_OK) return rc;
        if ((rc = get_int(r, KG_RAW_PROCESS_CPU, -1, 1 << 20, &x.pin_cpu)) != KG_OK) return rc;
    }
    return push(c, &x, r->err);
}

static size_t cap_of(size_t n)
{
    /* an array handed in with n elements was grown in powers of two from 64 */
    size_t c = 64;
    while (c < n) c *= 2;
    return n == 0 ? 0 : c;
}

int kg_rows_read_raw(const char *path, const kg_plan *plan, int proc, kg_row **v, size_t *n, kg_err *err)
{
    void *arr = *v;   /* a real void *, converted back below */
    arr_ctx c = { plan, proc, &arr, n, cap_of(*n), sizeof **v };
    /* schema 7 and older: without the cpu and process_cpu columns */
    char old[320];
    join(raw_cols, KG_RAW_CPU, old, sizeof old);
    int rc = read_rows(path, KG_ROWS_RAW, KG_RAW_CPU, old, raw_row, &c, NULL, err);
    *v = arr;
    return rc;
}

int kg_rows_parse_raw(const char *name, const char *data, size_t len, const kg_plan *plan, int proc, kg_row **v,
                     size_t *n, kg_err *err)
{
    void *arr = *v;
    int rc = read_kind(name, data, len, KG_ROWS_RAW, plan, proc, &arr, n, sizeof **v, raw_row, err);
    *v = arr;
    return rc;
}

/* ---- checks ---- */

static int chk_row(rd *r, int ncols, void *vctx)
{
    arr_ctx *c = vctx;
    (void)ncols;
    kg_check_rec x;
    int rc;
    memset(&x, 0, sizeof x);
    if ((rc = get_proc(r, KG_CHK_PROCESS, c->proc, &x.proc)) != KG_OK) return rc;
    if ((rc = get_dir(r, KG_CHK_DIRECTION, &x.dir)) != KG_OK) return rc;
    if ((rc = get_case(r, c->plan, KG_CHK_CASE, &x.kase)) != KG_OK) return rc;
    if (r->f[KG_CHK_ARM][0] == '\0') x.arm = -1;
    else if ((rc = get_arm(r, c->plan, KG_CHK_ARM, &x.arm)) != KG_OK) return rc;
    if ((rc = get_phase(r, KG_CHK_PHASE, &x.phase)) != KG_OK) return rc;
    if ((rc = get_str(r, KG_CHK_CHECK, x.check, sizeof x.check)) != KG_OK) return rc;
    if (x.check[0] == '\0') return bad(r, KG_CHK_CHECK, "empty:");
    if ((rc = get_pass(r, KG_CHK_RESULT, &x.pass)) != KG_OK) return rc;
    int nempty = 0;
    for (int k = KG_CHK_MAX_ABS; k <= KG_CHK_NBAD; k++) nempty += r->f[k][0] == '\0';
    if (nempty != 0 && nempty != 4) return bad(r, KG_CHK_MAX_ABS, "set for some of max_abs, max_rel, worst, nbad only:");
    x.has_cmp = nempty == 0;
    if (x.has_cmp) {
        if ((rc = get_real(r, KG_CHK_MAX_ABS, &x.max_abs)) != KG_OK) return rc;
        if ((rc = get_real(r, KG_CHK_MAX_REL, &x.max_rel)) != KG_OK) return rc;
        if ((rc = get_i64(r, KG_CHK_WORST, -1, LLONG_MAX, &x.worst)) != KG_OK) return rc;
        if ((rc = get_i64(r, KG_CHK_NBAD, 0, LLONG_MAX, &x.nbad)) != KG_OK) return rc;
    }
    if ((rc = get_str(r, KG_CHK_DETAIL, x.detail, sizeof x.detail)) != KG_OK) return rc;
    return push(c, &x, r->err);
}

int kg_rows_read_checks(const char *path, const kg_plan *plan, int proc, kg_check_rec **v, size_t *n, kg_err *err)
{
    void *arr = *v;   /* a real void *, converted back below */
    int rc = read_kind(path, NULL, 0, KG_ROWS_CHECKS, plan, proc, &arr, n, sizeof **v, chk_row, err);
    *v = arr;
    return rc;
}

int kg_rows_parse_checks(const char *name, const char *data, size_t len, const kg_plan *plan, int proc, kg_check_rec **v,
                     size_t *n, kg_err *err)
{
    void *arr = *v;
    int rc = read_kind(name, data, len, KG_ROWS_CHECKS, plan, proc, &arr, n, sizeof **v, chk_row, err);
    *v = arr;
    return rc;
}

/* ---- telemetry ---- */

static int tel_row(rd *r, int ncols, void *vctx)
{
    arr_ctx *c = vctx;
    (void)ncols;
    kg_tel_rec x;
    uint64_t reasons;
    int rc;
    if ((rc = get_proc(r, KG_TEL_PROCESS, c->proc, &x.proc)) != KG_OK) return rc;
    if ((rc = get_case(r, c->plan, KG_TEL_CASE, &x.kase)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_TEL_ROUND, 0, INT_MAX, &x.round)) != KG_OK) return rc;
    if ((rc = get_arm(r, c->plan, KG_TEL_ARM, &x.arm)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_TEL_SAMPLE, 0, INT_MAX, &x.sample)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_TEL_SM_MHZ, -1, INT_MAX, &x.sm_mhz)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_TEL_MEM_MHZ, -1, INT_MAX, &x.mem_mhz)) != KG_OK) return rc;
    if ((rc = get_real(r, KG_TEL_POWER_W, &x.power_w)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_TEL_TEMP_C, -1, INT_MAX, &x.temp_c)) != KG_OK) return rc;
    if (strncmp(r->f[KG_TEL_REASONS], "0x", 2) != 0) return bad(r, KG_TEL_REASONS, "not a 0x hex mask:");
    r->f[KG_TEL_REASONS] += 2;
    rc = get_u64(r, KG_TEL_REASONS, 16, &reasons);
    r->f[KG_TEL_REASONS] -= 2;
    if (rc != KG_OK) return rc;
    x.reasons = (unsigned long long)reasons;
    if ((rc = get_int(r, KG_TEL_FOREIGN, -1, INT_MAX, &x.foreign_procs)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_TEL_ESCAPED, 0, 1, &x.escaped)) != KG_OK) return rc;
    if ((rc = get_real(r, KG_TEL_EVENT_NS, &x.event_ns)) != KG_OK) return rc;
    if ((rc = get_real(r, KG_TEL_HOST_NS, &x.host_ns)) != KG_OK) return rc;
    return push(c, &x, r->err);
}

int kg_rows_read_tel(const char *path, const kg_plan *plan, int proc, kg_tel_rec **v, size_t *n, kg_err *err)
{
    void *arr = *v;   /* a real void *, converted back below */
    int rc = read_kind(path, NULL, 0, KG_ROWS_TELEMETRY, plan, proc, &arr, n, sizeof **v, tel_row, err);
    *v = arr;
    return rc;
}

int kg_rows_parse_tel(const char *name, const char *data, size_t len, const kg_plan *plan, int proc, kg_tel_rec **v,
                     size_t *n, kg_err *err)
{
    void *arr = *v;
    int rc = read_kind(name, data, len, KG_ROWS_TELEMETRY, plan, proc, &arr, n, sizeof **v, tel_row, err);
    *v = arr;
    return rc;
}

/* ---- resources ---- */

/* "AxBxC" */
static int get_dim3(rd *r, int col, long long out[3])
{
    const char *s = r->f[col];
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        if (*s == '\0') return bad(r, col, "not AxBxC:");
        out[i] = strtoll(s, &end, 10);
        if (end == s || errno == ERANGE || *end != (i < 2 ? 'x' : '\0')) return bad(r, col, "not AxBxC:");
        s = end + (i < 2);
    }
    return KG_OK;
}

static int res_row(rd *r, int ncols, void *vctx)
{
    arr_ctx *c = vctx;
    kg_res_rec x;
    uint64_t ib;
    int rc;
    memset(&x, 0, sizeof x);
    if ((rc = get_proc(r, KG_RES_PROCESS, c->proc, &x.proc)) != KG_OK) return rc;
    if ((rc = get_case(r, c->plan, KG_RES_CASE, &x.kase)) != KG_OK) return rc;
    if ((rc = get_arm(r, c->plan, KG_RES_ARM, &x.arm)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_RES_LAUNCH, 1, INT_MAX, &x.launch)) != KG_OK) return rc;
    int *ints[] = { &x.regs, &x.static_shared, &x.dynamic_shared, &x.local, &x.const_bytes, &x.max_threads, &x.ptx,
                    &x.binary };
    for (int k = 0; k < 8; k++)
        if ((rc = get_int(r, KG_RES_REGISTERS + k, -1, INT_MAX, ints[k])) != KG_OK) return rc;
    if ((rc = get_dim3(r, KG_RES_GRID, x.grid)) != KG_OK) return rc;
    if ((rc = get_dim3(r, KG_RES_BLOCK, x.block)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_RES_LAUNCHES, -1, INT_MAX, &x.launches)) != KG_OK) return rc;
    if ((rc = get_str(r, KG_RES_ARCH, x.arch, sizeof x.arch)) != KG_OK) return rc;
    if ((rc = get_u64(r, KG_RES_IMAGE_BYTES, 10, &ib)) != KG_OK) return rc;
    x.image_bytes = (size_t)ib;
    if ((rc = get_str(r, KG_RES_IMAGE_SHA256, x.image_sha256, sizeof x.image_sha256)) != KG_OK) return rc;
    if ((rc = get_str(r, KG_RES_SANDBOX, x.sandbox, sizeof x.sandbox)) != KG_OK) return rc;
    if (ncols > KG_RES_LIBRARY && (rc = get_str(r, KG_RES_LIBRARY, x.library, sizeof x.library)) != KG_OK) return rc;
    return push(c, &x, r->err);
}

int kg_rows_read_res(const char *path, const kg_plan *plan, int proc, kg_res_rec **v, size_t *n, kg_err *err)
{
    void *arr = *v;   /* a real void *, converted back below */
    arr_ctx c = { plan, proc, &arr, n, cap_of(*n), sizeof **v };
    /* schema 6 and older: without the library column */
    char old[320];
    join(res_cols, KG_RES_LIBRARY, old, sizeof old);
    int rc = read_rows(path, KG_ROWS_RESOURCES, KG_RES_LIBRARY, old, res_row, &c, NULL, err);
    *v = arr;
    return rc;
}

int kg_rows_parse_res(const char *name, const char *data, size_t len, const kg_plan *plan, int proc, kg_res_rec **v,
                     size_t *n, kg_err *err)
{
    void *arr = *v;
    int rc = read_kind(name, data, len, KG_ROWS_RESOURCES, plan, proc, &arr, n, sizeof **v, res_row, err);
    *v = arr;
    return rc;
}

/* ---- saved-outputs index ---- */

static int out_row(rd *r, int ncols, void *vctx)
{
    arr_ctx *c = vctx;
    kg_out_rec x;
    uint64_t off, nb;
    int rc;
    memset(&x, 0, sizeof x);
    if ((rc = get_proc(r, KG_OUT_PROCESS, c->proc, &x.proc)) != KG_OK) return rc;
    if ((rc = get_case(r, c->plan, KG_OUT_CASE, &x.kase)) != KG_OK) return rc;
    if ((rc = get_arm(r, c->plan, KG_OUT_ARM, &x.arm)) != KG_OK) return rc;
    if ((rc = get_phase(r, KG_OUT_PHASE, &x.phase)) != KG_OK) return rc;
    if ((rc = get_str(r, KG_OUT_CHECK, x.check, sizeof x.check)) != KG_OK) return rc;
    if ((rc = get_int(r, KG_OUT_OUTPUT, 0, 63, &x.output)) != KG_OK) return rc;
    if ((rc = get_u64(r, KG_OUT_SEED, 10, &x.seed)) != KG_OK) return rc;
    if ((rc = get_u64(r, KG_OUT_OFFSET, 10, &off)) != KG_OK) return rc;
    if ((rc = get_u64(r, KG_OUT_BYTES, 10, &nb)) != KG_OK) return rc;
    x.offset = (size_t)off;
    x.bytes = (size_t)nb;
    if ((rc = get_pass(r, KG_OUT_RESULT, &x.pass)) != KG_OK) return rc;
    if ((rc = get_real(r, KG_OUT_MAX_ABS, &x.max_abs)) != KG_OK) return rc;
    if (ncols > KG_OUT_STORED) {
        uint64_t st;
        if ((rc = get_u64(r, KG_OUT_STORED, 10, &st)) != KG_OK) return rc;
        x.stored = (size_t)st;
        if ((rc = get_str(r, KG_OUT_ENCODING, x.encoding, sizeof x.encoding)) != KG_OK) return rc;
        if ((rc = get_str(r, KG_OUT_SHA, x.sha256, sizeof x.sha256)) != KG_OK) return rc;
    } else {
        /* schema 4 and older: the bytes as they are */
        x.stored = x.bytes;
        snprintf(x.encoding, sizeof x.encoding, "raw");
    }
    return push(c, &x, r->err);
}

int kg_rows_read_out(const char *path, const kg_plan *plan, int proc, kg_out_rec **v, size_t *n, kg_err *err)
{
    void *arr = *v;   /* a real void *, converted back below */
    arr_ctx c = { plan, proc, &arr, n, cap_of(*n), sizeof **v };
    /* schema 4 and older: the first eleven columns */
    char old[320];
    join(out_cols, KG_OUT_STORED, old, sizeof old);
    int rc = read_rows(path, KG_ROWS_OUTPUTS, KG_OUT_STORED, old, out_row, &c, NULL, err);
    *v = arr;
    return rc;
}

int kg_rows_parse_out(const char *name, const char *data, size_t len, const kg_plan *plan, int proc, kg_out_rec **v,
                     size_t *n, kg_err *err)
{
    void *arr = *v;
    int rc = read_kind(name, data, len, KG_ROWS_OUTPUTS, plan, proc, &arr, n, sizeof **v, out_row, err);
    *v = arr;
    return rc;
}

/* ---- processes ---- */

static int proc_row(rd *r, int ncols, void *vctx)
{
    arr_ctx *c = vctx;
    kg_proc_rec x;
    int idx, rc;
    memset(&x, 0, sizeof x);
    if ((rc = get_int(r, KG_PROC_PROCESS, 0, INT_MAX, &idx)) != KG_OK) return rc;
    if ((size_t)idx != *c->n) return bad(r, KG_PROC_PROCESS, "processes out of order: expected the next index, not");
    if ((rc = get_dir(r, KG_PROC_DIRECTION, &x.dir)) != KG_OK) return rc;
    if ((rc = get_str(r, KG_PROC_STATUS, x.status, sizeof x.status)) != KG_OK) return rc;
    if (x.status[0] == '\0') return bad(r, KG_PROC_STATUS, "empty:");
    if ((rc = get_int(r, KG_PROC_ACCEPTED, 0, 1, &x.accepted)) != KG_OK) return rc;
    if ((rc = get_real(r, KG_PROC_SECONDS, &x.seconds)) != KG_OK) return rc;
    if ((rc = get_str(r, KG_PROC_START_UTC, x.start_utc, sizeof x.start_utc)) != KG_OK) return rc;
    if ((rc = get_str(r, KG_PROC_REASON, x.reason, sizeof x.reason)) != KG_OK) return rc;
    x.slot = idx;
    x.wait_s = x.setup_s = x.checks_s = x.timed_s = -1;
    if (ncols > KG_PROC_REASON + 1) {
        /* a by-process shard's first process may fill a later slot (shard.h);
         * verify checks each slot against the schedule */
        if ((rc = get_int(r, KG_PROC_SLOT, 0, 1 << 24, &x.slot)) != KG_OK) return rc;
        if ((rc = get_int(r, KG_PROC_ATTEMPT, 0, INT_MAX, &x.attempt)) != KG_OK) return rc;
    }
    if (ncols > KG_PROC_TIMED) {
        double *t[] = { &x.wait_s, &x.setup_s, &x.checks_s, &x.timed_s };
        for (int i = 0; i < 4; i++) {
            if ((rc = get_real(r, KG_PROC_WAIT + i, t[i])) != KG_OK) return rc;
            if (!(*t[i] >= -1) || *t[i] > 1e9) return bad(r, KG_PROC_WAIT + i, "not a duration in seconds:");
        }
    }
    if (ncols == KG_PROC_NCOLS) {
        for (int i = 0; i <= KG_PROC_NFILES; i++) {
            int col = KG_PROC_RAW_SHA + i;
            char *dst = i < KG_PROC_NFILES ? x.sha[i] : x.chain;
            /* "-": no such file; for the chain, a row written unchained (verify refuses it) */
            if (strcmp(r->f[col], "-") == 0) {
                snprintf(dst, 65, "%s", i < KG_PROC_NFILES ? "-" : "");
                continue;
            }
            if ((rc = get_str(r, col, dst, 65)) != KG_OK) return rc;
            if (strlen(dst) != 64 || strspn(dst, "0123456789abcdef") != 64)
                return bad(r, col, "not a SHA-256 (64 lowercase hex digits) or '-':");
        }
    }
    return push(c, &x, r->err);
}

int kg_rows_read_procs(const char *path, kg_proc_rec **v, int *n, int *legacy, kg_err *err)
{
    void *recs = NULL;
    size_t nrecs = 0;
    arr_ctx c = { NULL, -1, &recs, &nrecs, 0, sizeof **v };
    /* three older schemas are read too: without the slot and attempt (the
     * slot is then the index: *legacy), without the four durations, and
     * without the file digests and the chain */
    static const int older[] = { KG_PROC_REASON + 1, KG_PROC_ATTEMPT + 1, KG_PROC_TIMED + 1 };
    char header[320], *text = NULL;
    *legacy = 0;
    int rc = kg_read_file(path, &text, NULL, err);
    if (rc != KG_OK) return rc;
    size_t hl = strcspn(text, "\r\n");
    int alt = older[0];
    for (size_t i = 0; i < sizeof older / sizeof older[0]; i++) {
        join(proc_cols, older[i], header, sizeof header);
        if (hl == strlen(header) && strncmp(text, header, hl) == 0) alt = older[i];
    }
    join(proc_cols, alt, header, sizeof header);
    int alt_seen = 0;
    rc = parse_rows(path, text, KG_ROWS_PROCESSES, alt, header, proc_row, &c, &alt_seen, err);
    if (alt == KG_PROC_REASON + 1) *legacy = alt_seen;
    free(text);
    if (rc != KG_OK) {
        free(recs);
        return rc;
    }
    *v = recs;
    *n = (int)nrecs;
    return KG_OK;
}

/* ---- the host watch ---- */

static int watch_row(rd *r, int ncols, void *vctx)
{
    (void)ncols;
    arr_ctx *c = vctx;
    kg_watch_rec x;
    int rc;
    memset(&x, 0, sizeof x);
    if ((rc = get_str(r, KG_WATCH_UTC, x.utc, sizeof x.utc)) != KG_OK) return rc;
    if ((rc = get_real(r, KG_WATCH_SECONDS, &x.seconds)) != KG_OK) return rc;
    if (!(x.seconds >= 0) || x.seconds > 1e9) return bad(r, KG_WATCH_SECONDS, "not a duration in seconds:");
    if ((rc = get_int(r, KG_WATCH_PROCESS, -1, INT_MAX, &x.proc)) != KG_OK) return rc;
    if ((rc = get_str(r, KG_WATCH_EVENT, x.event, sizeof x.event)) != KG_OK) return rc;
    int known = 0;
    for (const char *p = KG_WATCH_EVENTS; *p && !known; ) {
        size_t k = strcspn(p, ",");
        known = k == strlen(x.event) && strncmp(p, x.event, k) == 0;
        p += k + (p[k] == ',');
    }
    if (!known) return bad(r, KG_WATCH_EVENT, "not an event of the host watch (" KG_WATCH_EVENTS "):");
    if ((rc = get_str(r, KG_WATCH_DETAIL, x.detail, sizeof x.detail)) != KG_OK) return rc;
    return push(c, &x, r->err);
}

int kg_rows_read_watch(const char *path, kg_watch_rec **v, size_t *n, kg_err *err)
{
    void *recs = NULL;
    size_t nrecs = 0;
    arr_ctx c = { NULL, -1, &recs, &nrecs, 0, sizeof **v };
    *v = NULL;
    *n = 0;
    if (!kg_path_exists(path)) return KG_OK;
    int rc = read_rows(path, KG_ROWS_WATCH, 0, NULL, watch_row, &c, NULL, err);
    if (rc != KG_OK) {
        free(recs);
        return rc;
    }
    *v = recs;
    *n = nrecs;
    return KG_OK;
}
