/* cmd_opserver.c: `kgate opserver`, the process that runs an evidence
 * folder's op code for `kgate verify` (check/opserver.h).  Verify's
 * client execs it; it is hidden from the usage text and not meant to be
 * run by hand. */
#include <stdio.h>
#include <unistd.h>
#include "check/opserver.h"
#include "cli.h"

static const char about[] =
    "Serves the float64 references of an evidence folder's ops to kgate verify: builds the folder's\n"
    "op modules, confines itself, loads them, and answers requests on descriptor 0 with replies on\n"
    "descriptor 1.  kgate verify starts it; it is not meant to be run by hand.\n";

int kg_cmd_opserver(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* the environment is the one its client made: nothing to read */
    kg_opserver_opts o = { 0 };
    int parent = 0;
    double cpu_s = 3600, mem_mib = 0;
    const kg_cli_opt opts[] = {
        { .name = "folder", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.folder, .help = "the evidence folder" },
        { .name = "dir", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.dir,
          .help = "the private folder its client made" },
        { .name = "parent", .arg = "PID", .kind = KG_CLI_INT, .dst = &parent, .min = 1, .max = 2147483647,
          .help = "its client's pid" },
        { .name = "hide", .arg = "DIRS", .kind = KG_CLI_STRING, .dst = &o.hide,
          .help = "colon-separated folders covered before any op code runs" },
        { .name = "cc", .arg = "CC", .kind = KG_CLI_STRING, .dst = &o.cc, .help = "the C compiler (\"\": cc)" },
        { .name = "include", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.include_dir,
          .help = "the folder holding kgate/op.h (\"\": found beside this program)" },
        { .name = "python", .arg = "PY", .kind = KG_CLI_STRING, .dst = &o.python,
          .help = "the Python of the ops declared in Python (\"\": /usr/bin/python3)" },
        { .name = "cpu-s", .arg = "S", .kind = KG_CLI_REAL, .dst = &cpu_s, .min = 0, .max = 1e9,
          .help = "CPU-time limit in seconds (0: none)" },
        { .name = "mem-mib", .arg = "MIB", .kind = KG_CLI_REAL, .dst = &mem_mib, .min = 0, .max = 1e9,
          .help = "address-space limit in MiB (0: none)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "opserver", .about = about, .opts = opts };
    int parsed = kg_cli_parse(&spec, argc, argv, NULL);
    if (parsed != KG_CLI_GO) return parsed;
    if (o.folder == NULL || o.dir == NULL || parent <= 0) {
        fprintf(stderr, "kgate opserver: needs --folder, --dir and --parent (it is started by kgate verify)\n");
        return KG_EXIT_USAGE;
    }
    if (o.cc != NULL && o.cc[0] == '\0') o.cc = NULL;
    if (o.include_dir != NULL && o.include_dir[0] == '\0') o.include_dir = NULL;
    if (o.python != NULL && o.python[0] == '\0') o.python = NULL;
    o.parent = (pid_t)parent;
    o.cpu_s = (long)cpu_s;
    o.mem_bytes = (uint64_t)(mem_mib * 1048576.0);
    /* _exit: nothing of the op modules' (atexit, destructors) runs at exit */
    _exit(kg_opserver_main(&o));
}
