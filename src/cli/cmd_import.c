/* cmd_import.c: `kgate import kernelbench PROBLEM.py [--candidate FILE] [-o PLAN]`: a
 * KernelBench-style problem (a torch Model, get_inputs, get_init_inputs) and its candidate as a
 * kgate plan (docs/kernelbench.md).
 *
 * The work is the embedded importer (src/cli/kb_import.py, a string in the binary as the library
 * helper is): written to a private folder and run as `PYTHON -I -B kb_import.py ...` with the
 * Python the library arms use (KGATE_PYTHON, else python3 on PATH, else /usr/bin/python3 when the
 * first cannot import torch).  It runs the problem (trusted, as a plan is) and reads the
 * candidate without running it.  This file finds the Python, starts it and passes its exit
 * status on. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/util.h"
#include "cli.h"
#include "kg_kbimport_py.h"
#include "toolchain/spawn.h"

static const char about[] =
    "Turns a KernelBench-style problem (PROBLEM.py: class Model(nn.Module), get_inputs(),\n"
    "get_init_inputs()) into a plan: an [op] whose float64 reference is the Module (its parameters\n"
    "become inputs, its free size constants variables), torch's Model as the baseline arm with an\n"
    "A/A control, and, with --candidate, the candidate's CUDA C kernels (read from its load_inline\n"
    "source, never run) as a device-code arm with their launches.  Writes PLAN, PLAN_ref.py and\n"
    "PLAN_candidate.cu side by side.  What cannot be imported is refused with the file, the line\n"
    "and the construct (docs/kernelbench.md).\n";

static const char footer[] =
    "The problem file is executed (it defines the op, like a plan); the candidate is only read.\n"
    "Exit status: 0 written, 2 refused, malformed or no Python with torch (KGATE_PYTHON names one).\n";

/* Runs the importer with Python py; its exit status, or -1 when it could not start. */
static int run_importer(const char *py, const char *script, char **args, int nargs)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)py;
    argv[n++] = (char *)"-I";
    argv[n++] = (char *)"-B";
    argv[n++] = (char *)script;
    for (int i = 0; i < nargs && n < 31; i++) argv[n++] = args[i];
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execv(py, argv);
        fprintf(stderr, "kgate import: cannot run %s: %s\n", py, strerror(errno));
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(st)) return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
    return -1;
}

static int import_kernelbench(const char *problem, const char *candidate, const char *out, int cpu,
                              const char *set, const char *tolerance, const kg_settings *env)
{
    const char *backend = cpu ? "cpu" : "cuda";
    if (access(problem, R_OK) != 0) {
        fprintf(stderr, "kgate import: %s: %s\n", problem, strerror(errno));
        return KG_EXIT_USAGE;
    }
    if (candidate != NULL && access(candidate, R_OK) != 0) {
        fprintf(stderr, "kgate import: %s: %s\n", candidate, strerror(errno));
        return KG_EXIT_USAGE;
    }
    char dir[] = "/tmp/kgate-import-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "kgate import: cannot make a folder under /tmp: %s\n", strerror(errno));
        return KG_EXIT_USAGE;
    }
    char script[sizeof dir + 32];
    snprintf(script, sizeof script, "%s/kb_import.py", dir);
    kg_err err = { 0 };
    if (kg_write_atomic(script, kg_kbimport_py, sizeof kg_kbimport_py - 1, &err) != KG_OK) {
        rmdir(dir);
        return kg_cli_fail(KG_EIO, err.msg);
    }
    char *args[16];
    int n = 0;
    args[n++] = (char *)problem;
    args[n++] = (char *)"--out";
    args[n++] = (char *)out;
    args[n++] = (char *)"--backend";
    args[n++] = (char *)backend;
    if (candidate != NULL) {
        args[n++] = (char *)"--candidate";
        args[n++] = (char *)candidate;
    }
    if (set != NULL) {
        args[n++] = (char *)"--set";
        args[n++] = (char *)set;
    }
    if (tolerance != NULL) {
        args[n++] = (char *)"--tolerance";
        args[n++] = (char *)tolerance;
    }
    if (kg_cli_quiet) args[n++] = (char *)"--quiet";
    const char *py = kg_python_pick(env->python);
    int rc = run_importer(py, script, args, n);
    /* 3: that Python has no torch; the system's may (Debian's python3-torch) */
    if (rc == 3 && strcmp(py, "/usr/bin/python3") != 0 && access("/usr/bin/python3", X_OK) == 0) {
        py = "/usr/bin/python3";
        rc = run_importer(py, script, args, n);
    }
    unlink(script);
    rmdir(dir);
    if (rc < 0) {
        fprintf(stderr, "kgate import: the importer did not run under %s (name a Python with torch in "
                        "KGATE_PYTHON)\n", py);
        return KG_EXIT_USAGE;
    }
    if (rc == 3) {
        fprintf(stderr, "kgate import: no Python with torch: install PyTorch for %s, or name a Python that has "
                        "it with KGATE_PYTHON\n", py);
        return KG_EXIT_USAGE;
    }
    return rc == 0 ? KG_EXIT_PASS : KG_EXIT_USAGE;
}

int kg_cmd_import(int argc, char **argv, const kg_settings *env)
{
    const char *candidate = NULL, *out = NULL, *set = NULL, *tolerance = NULL;
    int cpu = 0;
    const kg_cli_opt opts[] = {
        { .name = "candidate", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &candidate,
          .help = "the candidate (class ModelNew, CUDA C through load_inline): its kernels become the candidate "
                  "arm" },
        { .name = "out", .short_name = 'o', .arg = "PLAN", .kind = KG_CLI_STRING, .dst = &out,
          .help = "the plan to write (default: PROBLEM's name with .kg, in the current folder); its reference "
                  "module and device code go next to it" },
        { .name = "cpu", .kind = KG_CLI_FLAG, .dst = &cpu, .value = 1,
          .help = "a plan for the cpu backend: the reference and the torch baseline with its control, no "
                  "candidate arm (the plan is for the cuda backend otherwise)" },
        { .name = "set", .arg = "LIST", .kind = KG_CLI_STRING, .dst = &set,
          .help = "NAME=N,...: the problem's module-level size constants, set before it is read "
                  "(smaller shapes for a check on the CPU)" },
        { .name = "tolerance", .arg = "LIST", .kind = KG_CLI_STRING, .dst = &tolerance,
          .help = "RTOL,ATOL: the op's bound as a declared tolerance (bound = tolerance) instead of the library "
                  "bound (bound = library, the default; docs/ops.md)" },
        { .name = NULL },
    };
    const char *rest[3] = { NULL, NULL, NULL };
    int nrest = 0;
    const kg_cli_spec spec = { .cmd = "import", .args = "kernelbench PROBLEM.py", .about = about, .opts = opts,
                               .footer = footer, .rest = rest, .nrest = &nrest, .rest_cap = 3 };
    const char *first = NULL;
    int parsed = kg_cli_parse(&spec, argc, argv, &first);
    if (parsed != KG_CLI_GO) return parsed;
    if (first == NULL || strcmp(first, "kernelbench") != 0 || nrest != 2) {
        fprintf(stderr, "kgate import: usage: kgate import kernelbench PROBLEM.py [--candidate FILE] [-o PLAN] "
                        "(the one format kgate imports is KernelBench's)\n");
        return KG_EXIT_USAGE;
    }
    const char *problem = rest[1];
    char def[PATH_MAX];
    if (out == NULL) {
        const char *base = strrchr(problem, '/');
        base = base != NULL ? base + 1 : problem;
        size_t len = strlen(base);
        if (len > 3 && strcmp(base + len - 3, ".py") == 0) len -= 3;
        snprintf(def, sizeof def, "%.*s.kg", (int)len, base);
        out = def;
    }
    return import_kernelbench(problem, candidate, out, cpu, set, tolerance, env);
}
