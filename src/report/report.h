/* report.h: the reports of an evidence folder and the printer table.
 *
 * A printer turns the loaded evidence and its analysis into the bytes of
 * one file of the folder.  To add a format, write its printer
 * (report_FORMAT.c) and add a row to the table in render.c: the
 * campaign, `kgate report` and `kgate verify` all walk the table. */
#ifndef KGATE_REPORT_H
#define KGATE_REPORT_H

#include <stdio.h>
#include "kgate/err.h"
#include "kgate/evidence.h"
#include "kgate/stats.h"

struct kg_sb;

#define KG_REPORT_MAX 8   /* printers the table may hold */

typedef struct kg_report_fmt {
    const char *file;     /* its file in the folder, e.g. "report.md" */
    int (*render)(struct kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err);
} kg_report_fmt;

/* The printer table; report.md is first. */
const kg_report_fmt *kg_report_formats(int *n);

/* The printers. */
int kg_report_md(struct kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err);
int kg_report_csv(struct kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err);
/* report.md's number formats, shared by report.html: a fraction as
 * "+1.23%", nanoseconds as microseconds "12.345"; "–" when not finite */
void kg_report_pct(struct kg_sb *sb, double frac);
void kg_report_us(struct kg_sb *sb, double ns);
/* The samples table: the accepted processes' samples in one tidy table
 * (not a file of the folder: kg_report_samples_file; an may be NULL) */
int kg_report_samples(struct kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err);
int kg_report_json(struct kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err);
/* schema.json: every CSV file's columns, types and meanings (report_schema.c) */
int kg_report_schema(struct kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err);
/* The tables the reports write as CSV (results.csv, the samples table), declared once in report_csv.c */
const kg_rows_def *kg_report_tables(int *n);
/* report.html: self-contained, inline SVG plots, no script (report_html.c) */
int kg_report_html(struct kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err);

/* The CPU placement of a campaign whose processes were pinned to one CPU
 * each (an->pinned; nothing is written otherwise, and 0 returned): each
 * accepted process's CPU, in process order (the first 64), and the
 * contaminated samples left out, in all and per (case, arm) with any;
 * plain text, for report.md's and report.html's headers. */
int kg_report_cpu_text(struct kg_sb *sb, const kg_evidence *ev, const kg_analysis *an);

/* "ok", "inadmissible", "incorrect", "weak case", "absent". */
const char *kg_report_state_name(kg_arm_state s);

/* A case's variables by the names its op gives them, as report.md's
 * table of cases prints them: the shape keys the case sets, eps where its
 * op reads it, a scale that is not 1, then the op's named variables
 * (sorted, as the canonical plan writes them): "M = 4, N = 16". */
void kg_report_case_vars(struct kg_sb *sb, const kg_evidence *ev, int c);

/* Sweeps (plan axes): kg_report_first_variant is 1 when the case (or arm,
 * is_arm) at index i is the first variant of a base with axes, with the
 * base's length in *b; kg_report_variants writes the indices of the
 * variants of i's base into idx, in plan order, and returns their count. */
int kg_report_first_variant(const kg_plan *plan, int is_arm, int i, size_t *b);
int kg_report_variants(const kg_plan *plan, int is_arm, int i, int *idx);

/* The analysis of a loaded folder, as kg_report_render makes it: its
 * rows, admission states, physics limits (from peaks.json), process
 * records, telemetry and host watch's log go in as data; free *an with
 * kg_analysis_free (an->plan is ev->plan, borrowed). */
int kg_report_analyse(const kg_evidence *ev, kg_analysis *an, kg_err *err);

/* Reads the folder, analyses it and writes every file of the table
 * there.  When md is not NULL it receives report.md's text (caller
 * frees).  *an receives the analysis, which owns the folder's plan
 * (an->plan: the names of its cases and arms). */
int kg_report_build(const char *dir, kg_analysis *an, char **md, kg_err *err);

/* The same files rendered in memory only: text[i] is the i-th printer's
 * (caller frees with kg_report_texts_free); an may be NULL. */
int kg_report_render(const char *dir, kg_analysis *an, char *text[KG_REPORT_MAX], kg_err *err);
void kg_report_texts_free(char *text[KG_REPORT_MAX]);
/* kg_report_render that also hands over the loaded folder: *ev (free it
 * with kg_evidence_free, after *an when an is not NULL: an->plan is
 * ev->plan) holds what the reports were made from (verify replays from
 * it); on an error nothing is left to free. */
int kg_report_render_ev(const char *dir, kg_evidence *ev, kg_analysis *an, char *text[KG_REPORT_MAX], kg_err *err);

/* The samples table of the folder dir (kg_report_samples) written to out,
 * on demand (`kgate report DIR --samples FILE`); the folder is only read. */
int kg_report_samples_file(const char *dir, FILE *out, kg_err *err);

#endif
