/* envrec.c: the record of the programs a campaign runs and of the
 * environment that changes kgate's behaviour (envrec.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evidence/envrec.h"
#include "base/util.h"

/* Names that can replace code that runs in a campaign. */
static const char *const unattested_names[] = {
    "KGATE_WORKER_WRAPPER", "KGATE_CC", "KGATE_INCLUDE", "KGATE_LIBCUDA", "KGATE_LIBNVRTC", "KGATE_LIBNVML",
    "KGATE_LIBCUBLASLT", "KGATE_PYTHON", "KGATE_NEGATIVE", "KGATE_NEGATIVE_ARM",
    "CUDA_INJECTION64_PATH", "CUDA_INJECTION32_PATH",
};
/* Prefixes of names that are unattested whatever follows. */
static const char *const unattested_prefixes[] = { "LD_" };
/* Names and prefixes that are recorded. */
static const char *const recorded_names[] = { "PATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME" };
static const char *const recorded_prefixes[] = { "KGATE_", "CUDA_", "PYTHON", "OPENBLAS_", "OMP_" };

static int prefixed(const char *name, const char *p)
{
    return strncmp(name, p, strlen(p)) == 0;
}

kg_envrec_class kg_envrec_classify(const char *name)
{
    for (size_t i = 0; i < sizeof unattested_names / sizeof unattested_names[0]; i++)
        if (strcmp(name, unattested_names[i]) == 0) return KG_ENVREC_UNATTESTED;
    for (size_t i = 0; i < sizeof unattested_prefixes / sizeof unattested_prefixes[0]; i++)
        if (prefixed(name, unattested_prefixes[i])) return KG_ENVREC_UNATTESTED;
    if (kg_env_compiler_path(name)) return KG_ENVREC_RECORDED;   /* kgate's compiler runs never get them */
    for (size_t i = 0; i < sizeof recorded_names / sizeof recorded_names[0]; i++)
        if (strcmp(name, recorded_names[i]) == 0) return KG_ENVREC_RECORDED;
    for (size_t i = 0; i < sizeof recorded_prefixes / sizeof recorded_prefixes[0]; i++)
        if (prefixed(name, recorded_prefixes[i])) return KG_ENVREC_RECORDED;
    return KG_ENVREC_IGNORED;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* env's entries in sorted order (a malloc'd array of its pointers). */
static const char **sorted(char *const *env, size_t *n)
{
    *n = 0;
    for (char *const *e = env; e != NULL && *e != NULL; e++) (*n)++;
    const char **v = malloc((*n > 0 ? *n : 1) * sizeof *v);
    if (v == NULL) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++) v[i] = env[i];
    qsort(v, *n, sizeof *v, by_text);
    return v;
}

/* The class of one NAME=value entry; its name into name. */
static kg_envrec_class entry_class(const char *entry, char *name, size_t cap)
{
    const char *eq = strchr(entry, '=');
    if (eq == NULL || eq == entry || (size_t)(eq - entry) >= cap) return KG_ENVREC_IGNORED;
    snprintf(name, cap, "%.*s", (int)(eq - entry), entry);
    return kg_envrec_classify(name);
}

json_t *kg_envrec_environment(char *const *env)
{
    json_t *o = json_object(), *rec = json_object(), *un = json_array();
    size_t n;
    const char **v = sorted(env, &n);
    char name[256];
    for (size_t i = 0; i < n; i++) {
        kg_envrec_class c = entry_class(v[i], name, sizeof name);
        if (c == KG_ENVREC_UNATTESTED) json_array_append_new(un, json_string(v[i]));
        else if (c == KG_ENVREC_RECORDED) json_object_set_new(rec, name, json_string(strchr(v[i], '=') + 1));
    }
    free(v);
    json_object_set_new(o, "recorded", rec);
    json_object_set_new(o, "unattested", un);
    return o;
}

int kg_envrec_unattested(char *const *env, char *buf, size_t cap)
{
    size_t n, len = 0;
    const char **v = sorted(env, &n);
    char name[256];
    int count = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (entry_class(v[i], name, sizeof name) != KG_ENVREC_UNATTESTED) continue;
        int w = snprintf(buf + len, cap - len, "%s%s", count > 0 ? ", " : "", name);
        if (w > 0 && (size_t)w < cap - len) len += (size_t)w;
        count++;
    }
    free(v);
    return count;
}

/* {"path": the program's file, "sha256": its digest (null: unreadable)}
 * for argv0 found as posix_spawnp finds it. */
static json_t *program(const char *argv0, const char *path_env)
{
    char found[PATH_MAX], real[PATH_MAX], hex[65];
    json_t *o = json_object();
    if (!kg_find_program(argv0, path_env, found, sizeof found)) {
        json_object_set_new(o, "path", json_null());
        json_object_set_new(o, "sha256", json_null());
        return o;
    }
    /* a link (cc -> gcc) is recorded as the file it names */
    const char *p = realpath(found, real) != NULL ? real : found;
    json_object_set_new(o, "path", json_string(p));
    json_object_set_new(o, "sha256", kg_sha256_file(p, hex, NULL) == KG_OK ? json_string(hex) : json_null());
    return o;
}

json_t *kg_envrec_programs(const kg_envrec_in *in)
{
    json_t *o = json_object();
    char exe[PATH_MAX], hex[65];
    int have_exe = kg_self_exe(exe, sizeof exe, NULL) == KG_OK;
    int have_sha = kg_exe_sha256(0, hex, NULL) == KG_OK;
    json_t *sup = json_object();
    json_object_set_new(sup, "path", have_exe ? json_string(exe) : json_null());
    json_object_set_new(sup, "sha256", have_sha ? json_string(hex) : json_null());
    json_object_set_new(o, "supervisor", sup);
    json_t *w = json_deep_copy(sup);
    json_object_set_new(w, "check", json_string("each worker reports the SHA-256 of its own image in its hello frame; "
                                                "one that differs is a watch.csv worker event, and a run that signs "
                                                "stops"));
    json_object_set_new(o, "worker", w);
    if (in->worker_wrapper != NULL && in->worker_wrapper[0] != '\0') {
        char first[PATH_MAX];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(in->worker_wrapper, " "), in->worker_wrapper);
        json_t *wr = program(first, in->path_env);
        json_object_set_new(wr, "words", json_string(in->worker_wrapper));
        json_object_set_new(o, "worker_wrapper", wr);
    }
    json_object_set_new(o, "arm_host", in->arm_host != NULL ? program(in->arm_host, in->path_env)
                                                             : json_deep_copy(sup));
    if (in->compiler != NULL) {
        json_t *cc = program(in->compiler, in->path_env);
        json_object_set_new(cc, "command", json_string(in->compiler));
        json_object_set_new(cc, "version", json_string(in->compiler_version != NULL ? in->compiler_version : ""));
        json_object_set_new(o, "compiler", cc);
    }
    if (in->python != NULL) {
        json_t *lh = json_object();
        json_object_set_new(lh, "python", program(in->python, in->path_env));
        json_object_set_new(lh, "flags", json_string(in->python_flags != NULL ? in->python_flags : ""));
        json_object_set_new(lh, "script_sha256", json_string(in->helper_sha256 != NULL ? in->helper_sha256 : ""));
        json_object_set_new(o, "library_helper", lh);
    }
    if (in->ops_python != NULL) {
        json_t *oh = json_object();
        json_object_set_new(oh, "python", program(in->ops_python, in->path_env));
        json_object_set_new(oh, "flags", json_string(in->python_flags != NULL ? in->python_flags : ""));
        json_object_set_new(oh, "script_sha256", json_string(in->ops_helper_sha256 != NULL ? in->ops_helper_sha256
                                                                                            : ""));
        json_t *v = in->ops_versions != NULL && in->ops_versions[0] ? json_loads(in->ops_versions, 0, NULL) : NULL;
        json_object_set_new(oh, "versions", json_is_object(v) ? v : json_null());
        if (v != NULL && !json_is_object(v)) json_decref(v);
        json_object_set_new(o, "ops_helper", oh);
    }
    return o;
}
