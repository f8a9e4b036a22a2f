/* nvrtc_count.c: a stand-in NVRTC for tests/cli/cuda_build_fake.sh.  It
 * forwards every call kgate makes to the real NVRTC (KGATE_TEST_NVRTC_REAL,
 * else the places kgate itself tries) and appends one line per
 * nvrtcCompileProgram to the file KGATE_TEST_NVRTC_LOG: "PID NAME" (the
 * program's name as kgate created it), so a test
 * can count the compiles of a campaign and see which processes ran them.
 * Loaded by kgate through KGATE_LIBNVRTC; the types are NVRTC's, written
 * as their C equivalents (nvrtcProgram is a pointer, nvrtcResult an int). */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *real;

static void *sym(const char *name)
{
    if (real == NULL) {
        const char *want = getenv("KGATE_TEST_NVRTC_REAL"), *home = getenv("CUDA_HOME");
        char h64[512] = "", h[512] = "";
        if (home != NULL && home[0] != '\0') {
            snprintf(h64, sizeof h64, "%s/lib64/libnvrtc.so", home);
            snprintf(h, sizeof h, "%s/lib/libnvrtc.so", home);
        }
        const char *names[] = { want, "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", h64, h,
                                "/usr/local/cuda/lib64/libnvrtc.so" };
        for (size_t i = 0; i < sizeof names / sizeof names[0] && real == NULL; i++)
            if (names[i] != NULL && names[i][0] != '\0') real = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (real == NULL) {
            fprintf(stderr, "nvrtc_count: no real NVRTC to forward to (set KGATE_TEST_NVRTC_REAL)\n");
            abort();
        }
    }
    void *f = dlsym(real, name);
    if (f == NULL) {
        fprintf(stderr, "nvrtc_count: the real NVRTC has no %s\n", name);
        abort();
    }
    return f;
}

#define FWD(ret, name, params, args)                                   \
    ret name params;                                                   \
    ret name params                                                    \
    {                                                                  \
        static ret (*f) params;                                        \
        if (f == NULL) *(void **)&f = sym(#name);                      \
        return f args;                                                 \
    }

FWD(const char *, nvrtcGetErrorString, (int r), (r))
FWD(int, nvrtcVersion, (int *major, int *minor), (major, minor))
FWD(int, nvrtcDestroyProgram, (void **p), (p))
FWD(int, nvrtcGetProgramLogSize, (void *p, size_t *n), (p, n))
FWD(int, nvrtcGetProgramLog, (void *p, char *log), (p, log))
FWD(int, nvrtcGetCUBINSize, (void *p, size_t *n), (p, n))
FWD(int, nvrtcGetCUBIN, (void *p, char *out), (p, out))
FWD(int, nvrtcGetPTXSize, (void *p, size_t *n), (p, n))
FWD(int, nvrtcGetPTX, (void *p, char *out), (p, out))

/* the name each program was created with, for the log (threads of one
 * process compile at once: a small table under a lock) */
static struct { void *prog; char name[96]; } names[64];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

int nvrtcCreateProgram(void **p, const char *src, const char *name, int nh, const char *const *h,
                       const char *const *hn);
int nvrtcCreateProgram(void **p, const char *src, const char *name, int nh, const char *const *h,
                       const char *const *hn)
{
    static int (*f)(void **, const char *, const char *, int, const char *const *, const char *const *);
    if (f == NULL) *(void **)&f = sym("nvrtcCreateProgram");
    int r = f(p, src, name, nh, h, hn);
    if (r == 0 && p != NULL) {
        pthread_mutex_lock(&names_lock);
        size_t i = 0;
        while (i < sizeof names / sizeof names[0] && names[i].prog != NULL && names[i].prog != *p) i++;
        if (i < sizeof names / sizeof names[0]) {
            names[i].prog = *p;
            snprintf(names[i].name, sizeof names[i].name, "%s", name != NULL ? name : "?");
        }
        pthread_mutex_unlock(&names_lock);
    }
    return r;
}

int nvrtcCompileProgram(void *p, int nopt, const char *const *opts);
int nvrtcCompileProgram(void *p, int nopt, const char *const *opts)
{
    static int (*f)(void *, int, const char *const *);
    if (f == NULL) *(void **)&f = sym("nvrtcCompileProgram");
    const char *log = getenv("KGATE_TEST_NVRTC_LOG");
    if (log != NULL && log[0] != '\0') {
        int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) {
            char line[160], name[96] = "?";
            pthread_mutex_lock(&names_lock);
            for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                if (names[i].prog == p) snprintf(name, sizeof name, "%s", names[i].name);
            pthread_mutex_unlock(&names_lock);
            int n = snprintf(line, sizeof line, "%ld %s\n", (long)getpid(), name);
            if (write(fd, line, (size_t)n) != n) abort();
            close(fd);
        }
    }
    return f(p, nopt, opts);
}
