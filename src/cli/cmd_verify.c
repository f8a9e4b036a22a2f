/* cmd_verify.c: `kgate verify DIR`: checks an evidence folder (hashes,
 * recomputed reports, replayed outputs).  It writes nothing. */
#include <stdio.h>
#include <string.h>
#include "verify.h"
#include "cli.h"
#include "util.h"


static const char about[] =
    "Checks the evidence folder DIR without changing it:\n"
    "  - every file listed in SHA256SUMS has its hash, and no file is unlisted;\n"
    "  - plan.kg hashes to plan.sha256; the reports recomputed from the raw samples equal\n"
    "    report.md, results.json and results.csv byte for byte;\n"
    "  - every saved checked output (outputs/) is compared again with a float64 reference\n"
    "    recomputed on the CPU from its recorded seed, and agrees with checks/.\n"
    "Prints one line per problem naming the file, then a summary.\n";

static const char footer[] = "Exit status: 0 verified, 1 a mismatch, 2 usage error or not an evidence folder.\n";

int kg_cmd_verify(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const char *dir = NULL;
    const kg_cli_opt opts[] = { { .name = NULL } };
    const kg_cli_spec spec = { .cmd = "verify", .args = "DIR", .about = about, .opts = opts, .footer = footer };
    int parsed = kg_cli_parse(&spec, argc, argv, &dir);
    if (parsed != KG_CLI_GO) return parsed;
    kg_sb out = { 0 };
    kg_err err = { 0 };
    int nbad = 0;
    int rc = kg_verify_dir(dir, &out, &nbad, &err);
    if (rc != KG_OK) {
        kg_sb_free(&out);
        fprintf(stderr, "kgate verify: %s\n", err.msg);
        return KG_EXIT_USAGE;
    }
    /* problems on stderr, the summary (last line) on stdout */
    char *last = out.buf ? strrchr(out.buf, '\n') : NULL;
    if (last != NULL) {
        *last = '\0';
        char *prev = strrchr(out.buf, '\n');
        if (prev != NULL) {
            *prev = '\0';
            for (char *cur = out.buf, *nl; cur != NULL; cur = nl ? nl + 1 : NULL) {
                nl = strchr(cur, '\n');
                if (nl) *nl = '\0';
                fprintf(stderr, "kgate verify: MISMATCH %s\n", cur);
            }
            printf("%s: %s\n", dir, prev + 1);
        } else {
            printf("%s: %s\n", dir, out.buf);
        }
    }
    if (nbad) fprintf(stderr, "kgate verify: %s: %d problem(s): NOT verified\n", dir, nbad);
    else printf("%s: verified\n", dir);
    kg_sb_free(&out);
    return nbad ? KG_EXIT_FAIL : KG_EXIT_PASS;
}
