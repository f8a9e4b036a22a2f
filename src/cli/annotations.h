/* annotations.h: `kgate run --github` (annotations.c). */
#ifndef KGATE_CLI_ANNOTATIONS_H
#define KGATE_CLI_ANNOTATIONS_H

#include <stdio.h>
#include "summary.h"

/* The campaign's outcome as GitHub Actions workflow commands on fp, each
 * naming the plan (file=, and line= of an arm): ::error for an arm that
 * failed its checks (INCORRECT), an INVALID campaign, a failed gate and a
 * campaign that stopped before a verdict; ::warning for a gated pair that
 * fails the gate on its interval and a control that does not hold;
 * ::notice for a gate that passed.  When $GITHUB_STEP_SUMMARY names a
 * file, the verdict table (markdown) is appended to it. */
void kg_cli_github(FILE *fp, const kg_summary_in *in);

#endif
