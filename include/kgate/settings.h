/* kgate/settings.h: what kgate takes from the environment.
 *
 * The command line (src/cli/) reads every environment variable kgate
 * honours once, at the start of a process, into one kg_settings, and
 * hands it down through the run, worker and backend options.  Library
 * code never calls getenv: what it needs from the environment arrives
 * here, so that a test or an embedding program states it outright.
 *
 * Every pointer may be NULL (the variable is unset or empty), which means
 * the default written next to it; forbid alone tells unset (NULL: the
 * default list) from set but empty ("": no names).  kg_settings_defaults() gives a
 * settings object with every default, for callers with no environment. */
#ifndef KGATE_SETTINGS_H
#define KGATE_SETTINGS_H

typedef struct kg_settings {
    const char *cc;                 /* KGATE_CC: compiler for cpu arms; NULL: "cc" */
    const char *include_dir;        /* KGATE_INCLUDE: folder holding kgate/kernel.h; NULL: found
                                     * next to the executable */
    const char *forbid;             /* KGATE_FORBID: comma-separated process names; NULL: the
                                     * default list (KG_QUIET_DEFAULT_FORBID) */
    const char *lock_dir;           /* KGATE_LOCK_DIR: device lock folder; NULL: the user's own
                                     * (run/lock.h), or /tmp/kgate-locks for a shared device (a GPU) */
    const char *worker_wrapper;     /* KGATE_WORKER_WRAPPER: program the workers run under,
                                     * e.g. "compute-sanitizer --tool memcheck"; NULL: none */
    int negative;                   /* KGATE_NEGATIVE=1: build arms as the numerical negative */
    const char *negative_arm;       /* KGATE_NEGATIVE_ARM: only this arm; NULL: every arm */
    double fake_sleep_ms;           /* KGATE_FAKE_SLEEP_MS: fake backend sleeps per sample; 0: none */
    long fault_write_after;         /* KGATE_FAULT_WRITE_AFTER: atomic writes that succeed before
                                     * the next ones fail as on a full disk; -1: never */
    const char *cuda_home;          /* CUDA_HOME: toolkit root; NULL: system paths */
    const char *cuda_path;          /* CUDA_PATH: also tried, after cuda_home, for the toolkit's
                                     * include folder; NULL: not set */
    const char *cuda_visible;       /* CUDA_VISIBLE_DEVICES, quoted in messages only */
    const char *lib_cuda;           /* KGATE_LIBCUDA: libcuda to dlopen; NULL: libcuda.so.1 */
    const char *lib_nvrtc;          /* KGATE_LIBNVRTC */
    const char *lib_nvml;           /* KGATE_LIBNVML */
    const char *lib_cublaslt;       /* KGATE_LIBCUBLASLT */
    const char *fake_device_pids;   /* KGATE_FAKE_DEVICE_PIDS: a file of process IDs, one per line,
                                     * that the fake backend lists as its device's compute
                                     * processes (read at every look); NULL: it lists none */
    const char *device_node;        /* KGATE_DEVICE_NODE: the file whose holders are kgate's own
                                     * device processes where the device's process IDs are
                                     * counted (tests); NULL: /dev/nvidiaN, N digits */
    const char *armhost_exe;        /* no variable: the program the cpu and cuda backends exec
                                     * as `PROGRAM armhost` for an untrusted arm (tests and
                                     * embedding programs); NULL: this executable */
    const char *hide_dir;           /* no variable: the folder of the key this campaign signs
                                     * with, which a worker's arm hosts must not read (the
                                     * supervisor passes it, `kgate worker --hide DIR`); NULL: none */
    const char *evidence_dir;       /* no variable: the campaign's evidence folder, which a
                                     * worker's cuda arm hosts must not see (the worker sets it
                                     * from --out); NULL: none */
    const char *home_dir;           /* HOME: the user's folder, which op code run for verify must
                                     * not see (check/opserver.h); NULL: unset */
    const char *key_dir;            /* the folder of the default signing key,
                                     * $XDG_CONFIG_HOME/kgate, else $HOME/.config/kgate (attest.h);
                                     * NULL: neither variable is set */
    int fake_crash_close;           /* KGATE_FAKE_CRASH_CLOSE=1: a fake-backend worker
                                     * crashes as it closes the backend, after its records (tests) */
    int fake_crash_at;              /* KGATE_FAKE_CRASH_AT=N: an arm's fake_crash / fake_hang strikes at
                                     * its Nth timed call of the process, warm-ups included (tests);
                                     * 0: its first */
    const char *fake_device;        /* KGATE_FAKE_DEVICE: the model name the fake backend
                                     * describes its device by (meta.json's device), so that tests
                                     * can make campaigns of two devices (kgate compare); NULL:
                                     * "scripted timings (no hardware)" */
    const char *fake_model;         /* KGATE_FAKE_MODEL: the model the fake backend's device
                                     * names (tests of kgate merge's device check); NULL: none */
    const char *python;             /* KGATE_PYTHON: the Python a library arm's helper runs
                                     * with (builtin = torch or numpy); the command line resolves
                                     * python3 on PATH when unset; NULL: /usr/bin/python3 */
    int no_steal_credit;            /* KGATE_STEAL_CREDIT=0: CPU time an arm host seems to
                                     * use after its reply is never charged to its CPU's steal
                                     * (docs/cpu-backend.md, "Steal"): for a dedicated host, and
                                     * tests; 0: charged (the default) */
    const char *cache_dir;          /* KGATE_CACHE_DIR: the folder of the compile cache of cpu arms
                                     * (src/backend/armcache.h); the command line uses
                                     * $XDG_CACHE_HOME/kgate, else $HOME/.cache/kgate, when it is
                                     * unset; NULL: no cache */
    int no_cache;                   /* KGATE_CACHE=0, or run/check --no-cache: every arm is compiled,
                                     * the cache neither read nor written */
    const char *peaks_file;         /* KGATE_PEAKS: a peaks.json whose peaks the cpu backend reports
                                     * instead of measuring them, recorded as "from FILE, not
                                     * measured" (tests: every scenario but the test of the peaks);
                                     * NULL: measured */
    const char *path_env;           /* PATH: where a program named without a '/' (the compiler,
                                     * the worker wrapper) is found, for the record of what ran
                                     * (environment.json's programs); NULL: unset */
    char *const *environ_list;      /* the whole environment as the command line found it
                                     * (NAME=value, NULL-terminated), of which environment.json
                                     * records what changes kgate's behaviour (evidence/envrec.h);
                                     * NULL: none */
    const char *runtime_dir;        /* XDG_RUNTIME_DIR: the user's runtime folder, where the user's
                                     * own device locks go (run/lock.h); NULL: unset */
    const char *tmp_dir;            /* TMPDIR: the temporary folder, where the user's own device
                                     * locks go without XDG_RUNTIME_DIR; NULL: /tmp */
} kg_settings;

/* Every default: no variable set. */
const kg_settings *kg_settings_defaults(void);

#endif
