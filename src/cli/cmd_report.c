/* cmd_report.c: `kgate report DIR`: regenerates the reports of an
 * evidence folder from the folder alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"
#include "cli.h"

static const char about[] =
    "Re-reads the evidence folder DIR (plan.kg, processes.csv, raw/, checks/, meta.json), redoes the\n"
    "analysis and rewrites report.md, report.html, results.json and results.csv; prints report.md on\n"
    "stdout.\n"
    "The files are byte-identical to those the campaign wrote.  Exit status as for kgate run.\n"
    "With --samples FILE it writes only the samples table (every timed sample the analysis uses, one\n"
    "row each: docs/evidence.md) to FILE, and reads the folder without writing to it.\n";

/* --samples FILE: the table on demand, written whole to FILE */
static int write_samples(const char *dir, const char *file)
{
    kg_err err = { 0 };
    FILE *f = strcmp(file, "-") == 0 ? stdout : fopen(file, "w");
    if (f == NULL) {
        kg_errorf(&err, KG_EIO, "%s: cannot write the samples table there: %s", file, strerror(errno));
        return kg_cli_fail(KG_EIO, err.msg);
    }
    int rc = kg_report_samples_file(dir, f, &err);
    if (f != stdout && fclose(f) != 0 && rc == KG_OK) rc = kg_errorf(&err, KG_EIO, "%s: cannot write it", file);
    if (rc != KG_OK) {
        if (f != stdout) remove(file);
        return kg_cli_fail(rc, err.msg);
    }
    return KG_EXIT_PASS;
}

int kg_cmd_report(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const char *dir = NULL, *samples = NULL;
    const kg_cli_opt opts[] = {
        { .name = "samples", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &samples,
          .help = "write the samples table to FILE ('-': standard output) instead of the reports; FILE outside "
                  "DIR, whose files SHA256SUMS lists" },
        { .name = NULL } };
    const kg_cli_spec spec = { .cmd = "report", .args = "DIR", .about = about, .opts = opts,
                               .quiet_help = "write the reports without printing report.md; the gate in the exit status" };
    int parsed = kg_cli_parse(&spec, argc, argv, &dir);
    if (parsed != KG_CLI_GO) return parsed;
    kg_err err = { 0 };
    if (samples != NULL) return write_samples(dir, samples);
    kg_analysis an;
    char *md = NULL;
    int rc = kg_report_build(dir, &an, &md, &err);
    if (rc != KG_OK) return kg_cli_fail(rc, err.msg);
    if (!kg_cli_quiet) fputs(md, stdout);
    free(md);
    int status = an.invalid ? KG_EXIT_INVALID : an.gate_pass ? KG_EXIT_PASS : KG_EXIT_FAIL;
    kg_analysis_free(&an);
    return status;
}
