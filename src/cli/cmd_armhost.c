/* cmd_armhost.c: `kgate armhost`, the process an untrusted arm runs in:
 * a CPU arm (armhost.h) or, with --cuda, a CUDA arm (backend/cuda_host.h).
 * The worker's backend execs it; it is hidden from the usage text and not
 * meant to be run by hand. */
#include <stdio.h>
#include <unistd.h>
#include "backend/armhost.h"
#include "backend/cuda_host.h"
#include "cli.h"

static const char about[] =
    "Runs one untrusted arm for a worker.  A CPU arm: enters the sandbox, loads the arm's shared\n"
    "object and serves the worker's requests on descriptor 3.  With --cuda, a CUDA arm: opens the\n"
    "device named by --uuid in a process of its own and serves loads, bindings, runs and timed\n"
    "samples on descriptor 3.  The worker's backend starts it; it is not meant to be run by hand.\n";

int kg_cmd_armhost(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* the environment is the sandbox's whitelist: nothing to read */
    kg_armhost_opts o = { .cpu = -1 };
    int parent = 0;
    double mem_mib = 0, cpu_s = 0;
    int cuda = 0;
    kg_cuda_host_opts co = { 0 };
    const kg_cli_opt opts[] = {
        { .name = "cuda", .kind = KG_CLI_FLAG, .dst = &cuda, .value = 1, .help = "a CUDA arm (the cuda backend's host)" },
        { .name = "driver", .arg = "LIB", .kind = KG_CLI_STRING, .dst = &co.driver,
          .help = "--cuda: the libcuda the worker opened" },
        { .name = "uuid", .arg = "GPU-...", .kind = KG_CLI_STRING, .dst = &co.uuid,
          .help = "--cuda: the device's UUID" },
        { .name = "arm", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &co.arm, .help = "--cuda: the arm's name" },
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
        { .name = "cpu", .arg = "N", .kind = KG_CLI_INT, .dst = &o.cpu, .min = -1, .max = 1 << 20,
          .help = "the one CPU the worker pinned itself and its hosts to; the host refuses to start elsewhere "
                  "(-1: not pinned)" },
        { .name = "hide", .arg = "DIRS", .kind = KG_CLI_STRING, .dst = &o.hide,
          .help = "colon-separated folders covered by an empty tmpfs before the object loads (the signing key's; "
                  "with --cuda also the evidence folder)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "armhost", .about = about, .opts = opts };
    int parsed = kg_cli_parse(&spec, argc, argv, NULL);
    if (parsed != KG_CLI_GO) return parsed;
    if (cuda) {
        if (co.driver == NULL || co.uuid == NULL || o.dir == NULL || parent <= 0) {
            fprintf(stderr, "kgate armhost --cuda: needs --driver, --uuid, --dir and --parent (it is started "
                    "by a worker)\n");
            return KG_EXIT_USAGE;
        }
        co.dir = o.dir;
        co.hide = o.hide;
        co.parent = parent;
        _exit(kg_cuda_host_main(&co));
    }
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
