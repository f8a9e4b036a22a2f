/* env.c: the environment kgate honours, read once, at the start of a
 * kgate process, into a kg_settings (include/kgate/settings.h) that the
 * commands hand down through the run and worker options.  Nothing else
 * in the command line reads the environment. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

extern char **environ;

/* The variable's value; NULL when it is unset or empty. */
static const char *text(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

int kg_cli_settings_from_env(kg_settings *s, kg_err *err)
{
    *s = *kg_settings_defaults();
    s->cc = text("KGATE_CC");
    s->include_dir = text("KGATE_INCLUDE");
    /* set but empty is a list of no names (quiet.c): only unset means the default list */
    s->forbid = getenv("KGATE_FORBID");
    s->lock_dir = text("KGATE_LOCK_DIR");
    s->worker_wrapper = text("KGATE_WORKER_WRAPPER");
    s->negative_arm = text("KGATE_NEGATIVE_ARM");
    s->cuda_home = text("CUDA_HOME");
    s->cuda_path = text("CUDA_PATH");
    s->cuda_visible = getenv("CUDA_VISIBLE_DEVICES"); /* quoted as it is, empty included */
    s->lib_cuda = text("KGATE_LIBCUDA");
    s->lib_nvrtc = text("KGATE_LIBNVRTC");
    s->lib_nvml = text("KGATE_LIBNVML");
    s->lib_cublaslt = text("KGATE_LIBCUBLASLT");
    s->fake_device_pids = text("KGATE_FAKE_DEVICE_PIDS");
    s->device_node = text("KGATE_DEVICE_NODE");
    s->fake_device = text("KGATE_FAKE_DEVICE");
    s->fake_model = text("KGATE_FAKE_MODEL");
    /* a library arm's Python: KGATE_PYTHON, else python3 found on PATH (an
     * absolute path: the helper is exec'd without a search) */
    static char python[PATH_MAX];
    s->python = text("KGATE_PYTHON");
    const char *path = text("PATH");
    if (s->python != NULL && strchr(s->python, '/') == NULL) {
        static char named[128];
        snprintf(named, sizeof named, "%s", s->python);
        s->python = NULL;
        for (const char *p = path; p != NULL && *p && s->python == NULL;) {
            const char *c = strchr(p, ':');
            size_t l = c != NULL ? (size_t)(c - p) : strlen(p);
            snprintf(python, sizeof python, "%.*s/%s", (int)l, p, named);
            if (l > 0 && access(python, X_OK) == 0) s->python = python;
            p = c != NULL ? c + 1 : NULL;
        }
        if (s->python == NULL) return kg_errorf(err, KG_EUSAGE, "KGATE_PYTHON='%s': no such program on PATH", named);
    }
    for (const char *p = path; s->python == NULL && p != NULL && *p;) {
        const char *c = strchr(p, ':');
        size_t l = c != NULL ? (size_t)(c - p) : strlen(p);
        snprintf(python, sizeof python, "%.*s/python3", (int)l, p);
        if (l > 0 && python[0] == '/' && access(python, X_OK) == 0) s->python = python;
        p = c != NULL ? c + 1 : NULL;
    }
    /* the default signing key's folder (kgate key init, kgate run) */
    static char key_dir[PATH_MAX];
    const char *xdg = text("XDG_CONFIG_HOME"), *home = text("HOME");
    if (xdg != NULL) snprintf(key_dir, sizeof key_dir, "%s/kgate", xdg);
    else if (home != NULL) snprintf(key_dir, sizeof key_dir, "%s/.config/kgate", home);
    s->key_dir = xdg != NULL || home != NULL ? key_dir : NULL;
    s->home_dir = home;
    /* the compile cache of cpu arms: KGATE_CACHE_DIR, else $XDG_CACHE_HOME/kgate,
     * else $HOME/.cache/kgate */
    static char cache_dir[PATH_MAX];
    const char *xdg_cache = text("XDG_CACHE_HOME");
    s->cache_dir = text("KGATE_CACHE_DIR");
    if (s->cache_dir == NULL && xdg_cache != NULL) snprintf(cache_dir, sizeof cache_dir, "%s/kgate", xdg_cache);
    else if (s->cache_dir == NULL && home != NULL) snprintf(cache_dir, sizeof cache_dir, "%s/.cache/kgate", home);
    if (s->cache_dir == NULL && (xdg_cache != NULL || home != NULL)) s->cache_dir = cache_dir;
    s->peaks_file = text("KGATE_PEAKS");
    s->path_env = path;
    s->environ_list = environ;
    s->runtime_dir = text("XDG_RUNTIME_DIR");
    s->tmp_dir = text("TMPDIR");

    const char *v;
    long long n;
    if ((v = text("KGATE_NEGATIVE")) != NULL) {
        if (kg_cli_read_int(v, 0, 1, &n) != KG_OK)
            return kg_errorf(err, KG_EUSAGE, "KGATE_NEGATIVE must be 0 or 1, not '%s'", v);
        s->negative = (int)n;
    }
    if ((v = text("KGATE_FAKE_SLEEP_MS")) != NULL &&
        kg_cli_read_real(v, 0, 1e6, &s->fake_sleep_ms) != KG_OK)
        return kg_errorf(err, KG_EUSAGE, "KGATE_FAKE_SLEEP_MS must be a number of milliseconds from 0 to 1e6, not '%s'",
                         v);
    if ((v = text("KGATE_FAKE_CRASH_CLOSE")) != NULL) {
        if (kg_cli_read_int(v, 0, 1, &n) != KG_OK)
            return kg_errorf(err, KG_EUSAGE, "KGATE_FAKE_CRASH_CLOSE must be 0 or 1, not '%s'", v);
        s->fake_crash_close = (int)n;
    }
    if ((v = text("KGATE_FAKE_CRASH_AT")) != NULL) {
        if (kg_cli_read_int(v, 1, 1000000000, &n) != KG_OK)
            return kg_errorf(err, KG_EUSAGE, "KGATE_FAKE_CRASH_AT must be a timed call's number from 1 to 1e9, not "
                             "'%s'", v);
        s->fake_crash_at = (int)n;
    }
    if ((v = text("KGATE_STEAL_CREDIT")) != NULL) {
        if (kg_cli_read_int(v, 0, 1, &n) != KG_OK)
            return kg_errorf(err, KG_EUSAGE, "KGATE_STEAL_CREDIT must be 0 or 1, not '%s'", v);
        s->no_steal_credit = n == 0;
    }
    if ((v = text("KGATE_CACHE")) != NULL) {
        if (kg_cli_read_int(v, 0, 1, &n) != KG_OK)
            return kg_errorf(err, KG_EUSAGE, "KGATE_CACHE must be 0 (no compile cache) or 1, not '%s'", v);
        s->no_cache = n == 0;
    }
    if ((v = text("KGATE_FAULT_WRITE_AFTER")) != NULL) {
        if (kg_cli_read_int(v, 0, LONG_MAX, &n) != KG_OK)
            return kg_errorf(err, KG_EUSAGE, "KGATE_FAULT_WRITE_AFTER must be a whole number of writes >= 0, not '%s'",
                             v);
        s->fault_write_after = (long)n;
    }
    return KG_OK;
}
