/* cmd_freeze.c: `kgate freeze PLAN [-o FILE]`: writes the plan's
 * canonical text with its SHA-256 in a header comment, for confirmation
 * runs (`kgate run --frozen FILE PLAN`). */
#include <stdio.h>
#include <string.h>
#include "plan/frozen.h"
#include "cli.h"


static const char about[] =
    "Parses PLAN and writes its canonical form (fixed key order, defaults explicit, comments\n"
    "dropped) to FILE (default PLAN.frozen), under the header comment\n"
    "  # kgate frozen plan sha256 <SHA-256 of the canonical text>\n"
    "and prints the hash.  `kgate run --frozen FILE PLAN` then refuses PLAN if its canonical\n"
    "form differs, listing the keys that changed.  The frozen file is itself a valid plan.\n";

static const char footer[] = "Exit status: 0 written, 2 usage or input error.\n";

int kg_cmd_freeze(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const char *plan_path = NULL, *out = NULL;
    const kg_cli_opt opts[] = {
        { .name = "out", .short_name = 'o', .arg = "FILE", .kind = KG_CLI_STRING, .dst = &out,
          .help = "the frozen plan (default PLAN.frozen)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "freeze", .args = "PLAN", .about = about, .opts = opts, .footer = footer,
                               .quiet_help = "write FILE without printing its hash" };
    int parsed = kg_cli_parse(&spec, argc, argv, &plan_path);
    if (parsed != KG_CLI_GO) return parsed;
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
    if (!kg_cli_quiet) printf("%s  %s\n", plan->hash, out);
    kg_plan_free(plan);
    return KG_EXIT_PASS;
}
