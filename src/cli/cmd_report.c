/* cmd_report.c: `kgate report DIR`: regenerates the reports of an
 * evidence folder from the folder alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"
#include "cli.h"

static const char about[] =
    "Re-reads the evidence folder DIR (plan.kg, processes.csv, raw/, checks/, meta.json), redoes the\n"
    "analysis and rewrites report.md, report.html, results.json and results.csv; prints report.md on\n"
    "stdout.\n"
    "The files are byte-identical to those the campaign wrote.  Exit status as for kgate run.\n";

int kg_cmd_report(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const char *dir = NULL;
    const kg_cli_opt opts[] = { { .name = NULL } };
    const kg_cli_spec spec = { .cmd = "report", .args = "DIR", .about = about, .opts = opts,
                               .quiet_help = "write the reports without printing report.md; the gate in the exit status" };
    int parsed = kg_cli_parse(&spec, argc, argv, &dir);
    if (parsed != KG_CLI_GO) return parsed;
    kg_analysis an;
    kg_err err = { 0 };
    char *md = NULL;
    int rc = kg_report_build(dir, &an, &md, &err);
    if (rc != KG_OK) return kg_cli_fail(rc, err.msg);
    if (!kg_cli_quiet) fputs(md, stdout);
    free(md);
    int status = an.invalid ? KG_EXIT_INVALID : an.gate_pass ? KG_EXIT_PASS : KG_EXIT_FAIL;
    kg_analysis_free(&an);
    return status;
}
