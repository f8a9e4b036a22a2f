/* cmd_compare.c: `kgate compare A B [C ...]`: campaigns of several
 * evidence folders compared case by case and arm by arm (compare.c,
 * docs/compare.md).  It writes nothing. */
#include <stdio.h>
#include <string.h>
#include "verify/compare.h"
#include "cli.h"
#include "base/util.h"

static const char about[] =
    "Compares the campaigns of evidence folders A, B, ... (in the order given: a regression history).\n"
    "Each folder is first checked against its SHA256SUMS (every file the comparison reads), then\n"
    "analysed from its raw samples as kgate report does.  Cases are matched by op, dtype and\n"
    "variables, arms by name.  For every case and arm of A: its time in each campaign, the change of\n"
    "the last campaign against A (the difference of the arm's mean log time, from per-process means\n"
    "with the directions as strata, campaigns unpaired: a two-sided Welch interval), a verdict\n"
    "FASTER / SLOWER (the interval beyond +-margin), EQUIVALENT (within it) or INCONCLUSIVE, the arm's\n"
    "ratio to its baseline within each campaign, and what changed (source, plan keys, case name).\n"
    "With three folders or more a trend table follows: each folder against A.  Folders of another\n"
    "device model (or backend) or another kgate version than A are refused unless told.\n"
    "Prints markdown on stdout (--json: JSON only).\n";

static const char footer[] =
    "Exit status: 0 compared (whatever the verdicts); 1 with --fail-on-slower when a row is SLOWER;\n"
    "2 usage or input error: a folder that is not an evidence folder or fails its integrity check,\n"
    "a refused device or version, no case or arm in common.\n";

/* "2%" or "0.02" */
static int read_fraction(const char *s, double *out)
{
    char buf[64];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf) return KG_EUSAGE;
    int percent = s[n - 1] == '%';
    memcpy(buf, s, n + 1);
    if (percent) buf[n - 1] = '\0';
    double x;
    if (kg_cli_read_real(buf, 0.0, percent ? 100.0 : 1.0, &x) != KG_OK) return KG_EUSAGE;
    *out = percent ? x / 100.0 : x;
    return *out < 1.0 ? KG_OK : KG_EUSAGE;
}

int kg_cmd_compare(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const char *dirs[KG_COMPARE_MAX_DIRS];
    const char *margin = "2%";
    int ndirs = 0, fail_on_slower = 0;
    kg_compare_opts o = { .alpha = 0.05, .margin = 0.02 };
    const kg_cli_opt opts[] = {
        { .name = "alpha", .arg = "A", .kind = KG_CLI_REAL, .dst = &o.alpha, .min = 1e-6, .max = 0.5,
          .help = "two-sided level of each change's interval (default 0.05: a 95% interval)" },
        { .name = "margin", .arg = "M", .kind = KG_CLI_STRING, .dst = &margin,
          .help = "FASTER or SLOWER beyond it, EQUIVALENT within it: a fraction or a percentage (default 2%)" },
        { .name = "json", .kind = KG_CLI_FLAG, .dst = &o.json, .value = 1,
          .help = "print the comparison as JSON (nothing else on stdout)" },
        { .name = "fail-on-slower", .kind = KG_CLI_FLAG, .dst = &fail_on_slower, .value = 1,
          .help = "exit status 1 when a row of the last folder against the first is SLOWER" },
        { .name = "allow-device", .kind = KG_CLI_FLAG, .dst = &o.allow_device, .value = 1,
          .help = "compare folders whose backend or device model differ from the first's (said in the notes)" },
        { .name = "allow-version", .kind = KG_CLI_FLAG, .dst = &o.allow_version, .value = 1,
          .help = "compare folders written by another kgate version than the first (said in the notes)" },
        { .name = "same-device", .kind = KG_CLI_FLAG, .dst = &o.same_device, .value = 1,
          .help = "require the very same device and host: the whole device description (a GPU's UUID "
                  "included) and the host name" },
        { .name = "verify", .kind = KG_CLI_FLAG, .dst = &o.full_verify, .value = 1,
          .help = "check each folder as kgate verify does (recomputed reports, the chain) instead of its "
                  "SHA256SUMS alone, but without replaying saved outputs (compare runs no op code: kgate "
                  "verify does that); slower" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "compare", .args = "DIR...", .about = about, .opts = opts, .footer = footer,
                               .quiet_help = "no table: the answer in the exit status (with --fail-on-slower)" };
    int parsed = kg_cli_parse_args(&spec, argc, argv, dirs, KG_COMPARE_MAX_DIRS, &ndirs);
    if (parsed != KG_CLI_GO) return parsed;
    if (read_fraction(margin, &o.margin) != KG_OK) {
        fprintf(stderr, "kgate compare: --margin needs a fraction in [0, 1) or a percentage (2%%), not '%s'\n", margin);
        return KG_EXIT_USAGE;
    }
    if (ndirs < 2) {
        fprintf(stderr, "kgate compare: give two evidence folders or more (A B [C ...]), not %d (see kgate compare "
                        "--help)\n", ndirs);
        return KG_EXIT_USAGE;
    }
    kg_sb out = { 0 };
    kg_err err = { 0 };
    kg_compare_summary sum;
    int rc = kg_compare_dirs(dirs, ndirs, &o, &out, &sum, &err);
    if (rc != KG_OK) {
        kg_sb_free(&out);
        fprintf(stderr, "kgate compare: %s\n", err.msg);
        return rc == KG_ENOMEM || rc == KG_EINTERNAL ? KG_EXIT_INVALID : KG_EXIT_USAGE;
    }
    if (!kg_cli_quiet) fputs(out.buf != NULL ? out.buf : "", stdout);
    kg_sb_free(&out);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "kgate compare: cannot write stdout\n");
        return KG_EXIT_USAGE;
    }
    return fail_on_slower && sum.slower > 0 ? KG_EXIT_FAIL : KG_EXIT_PASS;
}
