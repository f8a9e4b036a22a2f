/* cmd_report.c: `kgate report DIR`: regenerates the reports of an
 * evidence folder from the folder alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "campaign.h"
#include "cli.h"

static const char help[] =
    "usage: kgate report DIR\n"
    "\n"
    "Re-reads the evidence folder DIR (plan.kg, processes.csv, raw/, checks/, meta.json), redoes the\n"
    "analysis and rewrites report.md, results.json and results.csv; prints report.md on stdout.\n"
    "The files are byte-identical to those the campaign wrote.  Exit status as for kgate run.\n";

int kg_cmd_report(int argc, char **argv)
{
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (kg_cli_is_help(argv[i])) { fputs(help, stdout); return 0; }
        if (argv[i][0] == '-') { fprintf(stderr, "kgate report: unknown option '%s'\n", argv[i]); return KG_EXIT_USAGE; }
        if (dir != NULL) { fprintf(stderr, "kgate report: one folder at a time\n"); return KG_EXIT_USAGE; }
        dir = argv[i];
    }
    if (dir == NULL) { fputs(help, stderr); return KG_EXIT_USAGE; }
    kg_analysis an;
    kg_err err = { 0 };
    char *md = NULL;
    int rc = kg_report_build(dir, &an, &md, &err);
    if (rc != KG_OK) return kg_cli_fail(rc, err.msg);
    fputs(md, stdout);
    free(md);
    int status = an.invalid ? KG_EXIT_INVALID : an.gate_pass ? KG_EXIT_PASS : KG_EXIT_FAIL;
    kg_analysis_free(&an);
    return status;
}
