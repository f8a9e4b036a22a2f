/* summary.h: `kgate run --json` and `--junit FILE` (summary.c). */
#ifndef KGATE_CLI_SUMMARY_H
#define KGATE_CLI_SUMMARY_H

#include <stdio.h>
#include "kgate/err.h"
#include "kgate/stats.h"

typedef struct kg_summary_in {
    const char *command;    /* "run" */
    const char *plan_path;  /* as given */
    const char *dir;        /* the evidence folder; "" or NULL when none was made */
    const char *key_path;   /* the signing key, NULL: unsigned */
    const char *error;      /* non-NULL: the campaign stopped with this message, no results */
    const kg_analysis *an;  /* the campaign's analysis (an->plan names its cases and arms); NULL with error */
    int exit_status;
    double seconds;         /* wall time of the command */
} kg_summary_in;

/* One JSON object on out: the verdicts, the gate, the evidence folder and
 * the signature (docs/ci.md). */
int kg_cli_summary_json(FILE *out, const kg_summary_in *in, kg_err *err);

/* JUnit XML at file: one test case per gated (case, arm) pair, failed
 * with the gate's reason; a campaign error is one error case. */
int kg_cli_junit(const char *file, const kg_summary_in *in, kg_err *err);

#endif
