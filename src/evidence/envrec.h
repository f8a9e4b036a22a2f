/* envrec.h: what ran and under which environment, the record that
 * environment.json keeps and the signed statement binds (envrec.c).
 *
 * Programs: the SHA-256 of every program a campaign runs, as its file
 * was when the campaign began: the supervisor (its own exec'd image,
 * /proc/self/exe), the worker (the same binary: each worker reports the
 * SHA-256 of its own image in its hello frame and the supervisor compares
 * it, run/wproc.c), the worker wrapper's program where one is set, the
 * arm host, the compiler (command, path, SHA-256, version line) where the
 * backend runs one, and the library arms' helper (its Python's path and
 * SHA-256, the flags it runs with, the helper script's SHA-256) where the
 * plan has a library arm.
 *
 * Environment: every variable that changes what kgate does, in two
 * classes (kg_envrec_classify):
 *   recorded    the value is kept in the record and changes no code that
 *               runs: the lock, cache and key folders (the cache's objects
 *               are checked by their SHA-256 before use), the peaks file
 *               (peaks.json says it was read, not measured), the fake
 *               backend's script, the host watch's names, PATH (the
 *               programs it chose are recorded by path and SHA-256), every
 *               other KGATE_*, CUDA_*, PYTHON* (the helper runs with -I:
 *               they reach no code), OPENBLAS_* and OMP_*, and the
 *               compiler's own search paths (GCC_EXEC_PREFIX, CPATH,
 *               LIBRARY_PATH, ...: kgate runs its compiler without them,
 *               toolchain.h);
 *   unattested  it can replace code that runs in the campaign: the worker
 *               wrapper, the compiler and its include folder, the CUDA
 *               libraries' paths, the helper's Python, the numerical
 *               negative, every LD_* (the dynamic loader's preload, audit
 *               and library path) and the CUDA driver's injection
 *               (CUDA_INJECTION64_PATH, CUDA_INJECTION32_PATH).
 * A signed statement lists the unattested ones, "NAME=value", and
 * `kgate verify --key` fails with "unattested environment: NAME=value"
 * unless the verifier allows NAME (--allow-env NAME). */
#ifndef KGATE_ENVREC_H
#define KGATE_ENVREC_H

#include <jansson.h>
#include "kgate/err.h"

typedef enum { KG_ENVREC_IGNORED, KG_ENVREC_RECORDED, KG_ENVREC_UNATTESTED } kg_envrec_class;

/* The class of the variable name (no '='). */
kg_envrec_class kg_envrec_classify(const char *name);

/* The "environment" object of environment.json from env (NAME=value,
 * NULL-terminated; NULL: none): {"recorded": {NAME: value, ...},
 * "unattested": ["NAME=value", ...]}, names in sorted order. */
json_t *kg_envrec_environment(char *const *env);

/* The names of env's unattested variables, comma-separated, into buf
 * ("" when none); returns how many. */
int kg_envrec_unattested(char *const *env, char *buf, size_t cap);

/* What the supervisor knows of the programs a campaign runs. */
typedef struct kg_envrec_in {
    char *const *env;            /* the environment (kg_settings.environ_list) */
    const char *path_env;        /* PATH, where a program's name is found */
    const char *worker_wrapper;  /* KGATE_WORKER_WRAPPER's words (NULL: none) */
    const char *arm_host;        /* the arm host's program (NULL: this executable) */
    const char *compiler;        /* the compiler's command (NULL: the backend runs none) */
    const char *compiler_version;/* its first --version line */
    const char *python;          /* the library helper's Python (NULL: no library arm) */
    const char *python_flags;    /* the flags it runs the helper with */
    const char *helper_sha256;   /* the helper script's SHA-256 */
    const char *ops_python;      /* the Python the ops' helper runs (ops declared in Python); NULL: none */
    const char *ops_helper_sha256; /* that helper script's SHA-256 (src/ops/pyops_helper.py) */
    const char *ops_versions;    /* that helper's versions, a JSON object ({"numpy": ...}); NULL or "": none */
} kg_envrec_in;

/* The "programs" object of environment.json (envrec.h's list). */
json_t *kg_envrec_programs(const kg_envrec_in *in);

#endif
