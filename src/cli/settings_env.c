/* settings_env.c: reads the environment kgate honours, once per process,
 * into the kg_settings the commands hand to the library (see
 * kgate/settings.h), and arms the fault-injection test hook. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "util.h"

/* The variable's value, or NULL when it is unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

const kg_settings *kg_cli_settings(void)
{
    static kg_settings s;
    static int done = 0;
    if (done) return &s;
    done = 1;
    s = *kg_settings_defaults();
    s.cc = env("KGATE_CC");
    s.include_dir = env("KGATE_INCLUDE");
    s.forbid = getenv("KGATE_FORBID");   /* set but empty: forbid nothing */
    s.lock_dir = env("KGATE_LOCK_DIR");
    s.worker_wrapper = getenv("KGATE_WORKER_WRAPPER");
    const char *neg = getenv("KGATE_NEGATIVE");
    s.negative = neg != NULL && strcmp(neg, "1") == 0;
    s.negative_arm = env("KGATE_NEGATIVE_ARM");
    const char *sleep_ms = env("KGATE_FAKE_SLEEP_MS");
    s.fake_sleep_ms = sleep_ms != NULL ? atoi(sleep_ms) : 0;
    const char *fault = env("KGATE_FAULT_WRITE_AFTER");
    s.fault_write_after = fault != NULL ? atol(fault) : -1;
    s.cuda_home = env("CUDA_HOME") != NULL ? env("CUDA_HOME") : env("CUDA_PATH");
    s.cuda_path = env("CUDA_PATH");
    s.cuda_visible = env("CUDA_VISIBLE_DEVICES");
    s.lib_cuda = env("KGATE_LIBCUDA");
    s.lib_nvrtc = env("KGATE_LIBNVRTC");
    s.lib_nvml = env("KGATE_LIBNVML");
    s.lib_cublaslt = env("KGATE_LIBCUBLASLT");
    kg_fault_write_after(s.fault_write_after);
    return &s;
}
