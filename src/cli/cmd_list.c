/* cmd_list.c: `kgate list`: the ops and the backends. */
#include <stdio.h>
#include "cli.h"
#include "kgate/backend.h"
#include "kgate/op.h"

int kg_cmd_list(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const kg_cli_opt opts[] = { { .name = NULL } };
    const kg_cli_spec spec = { .cmd = "list", .about = "Lists the ops (case variables, inputs, outputs) and the backends.\n",
                               .opts = opts, .quiet_help = "the names alone: one op a line, then one backend a line" };
    int parsed = kg_cli_parse(&spec, argc, argv, NULL);
    if (parsed != KG_CLI_GO) return parsed;
    int n = 0;
    const kg_op *const *ops = kg_op_all(&n);
    if (!kg_cli_quiet) puts("ops:");
    for (int i = 0; i < n; i++) {
        const kg_op *op = ops[i];
        if (kg_cli_quiet) {
            puts(op->name);
            continue;
        }
        printf("  %-12s %s\n", op->name, op->summary);
        printf("  %-12s vars: %s;  in:", "", op->vars[0] ? op->vars : "(none)");
        for (int k = 0; k < op->nin; k++) printf(" %s", op->in_names[k]);
        printf(";  out:");
        for (int k = 0; k < op->nout; k++) printf(" %s", op->out_names[k]);
        if (op->ws_bytes != NULL) printf(";  workspace: WS");
        if (op->scalars != NULL && op->scalars[0]) printf(";  scalars: %s", op->scalars);
        printf("\n");
    }
    if (!kg_cli_quiet)
        puts("  (and the ops a plan declares: [op NAME] with source = a C file, or reference = python:FILE:FUNCTION,\n"
             "   a numpy or torch function: docs/ops.md; kgate check shows the bound each is checked against)");
    if (!kg_cli_quiet) puts("backends:");
    char about[256];
    const char *name;
    for (int i = 0; (name = kg_backend_about(i, NULL, about, sizeof about)) != NULL; i++) {
        if (kg_cli_quiet) puts(name);
        else printf("  %-6s %s\n", name, about);
    }
    return 0;
}
