/* cli.c: what every kgate command shares: library return codes turned
 * into exit statuses (the list is in cli.h) and the --help test. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "kgate/err.h"

const char kg_cli_exit_text[] =
    "Exit status: 0 gate passed, 1 gate failed or inconclusive, 2 usage or input error (a kernel that\n"
    "does not compile or load included), 3 invalid campaign (control failed or no usable process).\n";

int kg_cli_fail(int rc, const char *msg)
{
    fprintf(stderr, "kgate: %s\n", msg);
    switch (rc) {
    case KG_EUSAGE:
    case KG_EINPUT:
    case KG_EIO:
    case KG_EUNSUPPORTED:
    case KG_EBACKEND: /* a kernel that does not compile or load: input (tests/cli/cli_errors.sh) */
        return KG_EXIT_USAGE;
    default:
        return KG_EXIT_INVALID;
    }
}

int kg_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}
