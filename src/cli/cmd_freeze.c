/* cmd_freeze.c: `kgate freeze PLAN [-o FILE]`: writes the plan's
 * canonical text with its SHA-256 in a header comment, for confirmation
 * runs (`kgate run --frozen FILE PLAN`). */
#include <stdio.h>
#include <string.h>
#include "campaign.h"
#include "cli.h"


static const char help[] =
    "usage: kgate freeze PLAN [-o FILE]\n"
    "\n"
    "Parses PLAN and writes its canonical form (fixed key order, defaults explicit, comments\n"
    "dropped) to FILE (default PLAN.frozen), under the header comment\n"
    "  # kgate frozen plan sha256 <SHA-256 of the canonical text>\n"
    "and prints the hash.  `kgate run --frozen FILE PLAN` then refuses PLAN if its canonical\n"
    "form differs, listing the keys that changed.  The frozen file is itself a valid plan.\n"
    "\n"
    "Exit status: 0 written, 2 usage or input error.\n";

int kg_cmd_freeze(int argc, char **argv)
{
    const char *plan_path = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (kg_cli_is_help(a)) { fputs(help, stdout); return 0; }
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) && i + 1 < argc) out = argv[++i];
        else if (a[0] == '-') { fprintf(stderr, "kgate freeze: unknown option '%s'\n%s", a, help); return KG_EXIT_USAGE; }
        else if (plan_path == NULL) plan_path = a;
        else { fprintf(stderr, "kgate freeze: one plan at a time ('%s')\n", a); return KG_EXIT_USAGE; }
    }
    if (plan_path == NULL) { fputs(help, stderr); return KG_EXIT_USAGE; }
    char def[1100];
    if (out == NULL) {
        snprintf(def, sizeof def, "%s.frozen", plan_path);
        out = def;
    }
    kg_plan *plan = NULL;
    kg_err err = { 0 };
    int rc = kg_plan_load(plan_path, &plan, &err);
    if (rc == KG_OK) rc = kg_frozen_write(plan, out, &err);
    if (rc != KG_OK) {
        kg_plan_free(plan);
        return kg_cli_fail(rc, err.msg);
    }
    printf("%s  %s\n", plan->hash, out);
    kg_plan_free(plan);
    return KG_EXIT_PASS;
}
