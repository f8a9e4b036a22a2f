/* brief.h: the short answer of `kgate run` on stdout (brief.c). */
#ifndef KGATE_CLI_BRIEF_H
#define KGATE_CLI_BRIEF_H

#include <stdio.h>
#include "kgate/stats.h"

/* The campaign's answer in a few lines, hyperfine-sized: the gate and its
 * rule, one line per candidate and case (verdict, reduction with its
 * interval, the baseline's and the arm's times), the controls' status,
 * the processes and how loaded the host was (watch.csv's host-load
 * notes), warnings, and the paths of report.html and of the folder
 * (signed_by: the key ID that signed it, NULL: unsigned).  The full
 * report is report.md (`--report`, `kgate report DIR`). */
void kg_cli_brief(FILE *out, const kg_analysis *an, const char *dir, const char *signed_by);

/* The bound each case's op states where it was declared in Python (the
 * folder's ops.json, "contract"): out[c] "" for the others; 1 when any
 * case has one. */
int kg_cli_contracts(const kg_plan *plan, const char *dir, char (*out)[96]);

#endif
