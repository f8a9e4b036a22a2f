/* cmd_armhost.c: `kgate armhost`, the process an untrusted CPU arm runs
 * in (armhost.h).  The cpu backend of a worker execs it; it is hidden
 * from the usage text and not meant to be run by hand. */
#include <stdio.h>
#include <unistd.h>
#include "armhost.h"
#include "cli.h"

static const char about[] =
    "Runs one untrusted CPU arm for a worker: enters the sandbox, loads the arm's shared object\n"
    "and serves the worker's requests on descriptor 3.  The worker's cpu backend starts it; it\n"
    "is not meant to be run by hand.\n";

int kg_cmd_armhost(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* the environment is the sandbox's whitelist: nothing to read */
    kg_armhost_opts o = { 0 };
    int parent = 0;
    double mem_mib = 0, cpu_s = 0;
    const kg_cli_opt opts[] = {
        { .name = "so", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &o.so, .help = "the arm's shared object" },
        { .name = "entry", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &o.entry, .help = "its entry symbol" },
        { .name = "dir", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.dir,
          .help = "the private working folder the worker made" },
        { .name = "parent", .arg = "PID", .kind = KG_CLI_INT, .dst = &parent, .min = 1, .max = 2147483647,
          .help = "the worker's pid" },
        { .name = "mem-mib", .arg = "MIB", .kind = KG_CLI_REAL, .dst = &mem_mib, .min = 0, .max = 1e9,
          .help = "address-space limit in MiB (0: none)" },
        { .name = "cpu-s", .arg = "S", .kind = KG_CLI_REAL, .dst = &cpu_s, .min = 0, .max = 1e9,
          .help = "CPU-time limit in seconds (0: none)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "armhost", .about = about, .opts = opts };
    int parsed = kg_cli_parse(&spec, argc, argv, NULL);
    if (parsed != KG_CLI_GO) return parsed;
    if (o.so == NULL || o.entry == NULL || o.dir == NULL || parent <= 0) {
        fprintf(stderr, "kgate armhost: needs --so, --entry, --dir and --parent (it is started by a worker)\n");
        return KG_EXIT_USAGE;
    }
    o.parent = (pid_t)parent;
    o.mem_bytes = (uint64_t)(mem_mib * 1048576.0);
    o.cpu_s = (long)cpu_s;
    /* _exit: nothing of the candidate's (atexit, destructors) runs at exit */
    _exit(kg_armhost_main(&o));
}
