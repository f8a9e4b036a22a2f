/* test_cuda_confine.c: the cuda arm host's confinement, against code that
 * took over the host (a cubin exploiting the driver's module parser runs as
 * the host, on the CPU).  With the stand-in driver of
 * tests/unit/fake_libcuda.c (the default, no GPU), an entry named
 * exploit_WHAT makes the driver's cuModuleGetFunction do WHAT inside
 * `kgate armhost --cuda` (tests/unit/cuda_exploit.h); with
 * KGATE_TEST_CUDA_REAL=1 (a GPU: tools/device/trust_run.sh) the driver is
 * the real one and the host is build/tests/cuda_host_attack, kgate's host
 * with a load hook that does the same after the real cuModuleLoadData
 * (KGATE_TEST_CUDA_HOST=PROGRAM names another host program).
 *
 * Checks: an honest arm loads, binds, runs and is right under the
 * confinement; exec, an internet socket, a unix socket, ptrace of the
 * worker, a signal to the worker and a file written outside are each
 * stopped, the host killed and the system call named ("made a forbidden
 * system call (NAME)"), with no effect; the signing key's folder is out of
 * its sight where the host has a mount namespace of its own (said
 * otherwise), and so is a change of an existing file through a shared
 * mapping, where its mounts are read-only; its environment is kgate's own (no LD_PRELOAD, no variable
 * of the worker's, HOME its private folder). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "kgate/backend.h"
#include "kgate/oracle.h"
#include "backend/cuda_api.h"

#define ARM(name, entry)                                                                         \
    "[arm " name "]\nop = gemm_bt\nrole = candidate\n"                                            \
    "source = kernels/cuda/gemm_bt_naive.cu\nentry = " entry "\n"                               \
    "grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n"

static const char plan_text[] =
    "[campaign]\nname = confine\nbackend = cuda\nquiet = 0\ntimeout = 60\n"
    "[case c]\nop = gemm_bt\ndtype = f32\nM = 5\nN = 7\nK = 3\n"
    "[arm base]\nop = gemm_bt\nrole = baseline\ntrusted = yes\n"
    "source = kernels/cuda/gemm_bt_naive.cu\nentry = gemm_bt_naive\n"
    "grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n"
    ARM("honest", "gemm_bt_naive")
    ARM("x_exec", "exploit_exec") ARM("x_socket", "exploit_socket") ARM("x_unix", "exploit_unix")
    ARM("x_ptrace", "exploit_ptrace") ARM("x_kill", "exploit_kill") ARM("x_write", "exploit_write")
    ARM("x_key", "exploit_key") ARM("x_env", "exploit_env") ARM("x_mapwrite", "exploit_mapwrite");

enum { M = 5, N = 7, K = 3 };

static volatile sig_atomic_t usr1;
static void on_usr1(int sig) { (void)sig; usr1++; }

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

/* what this process wrote to stderr from offset *at on (the hosts' output
 * comes through it), appended to buf */
static void take_stderr(const char *path, long *at, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    fseek(f, *at, SEEK_SET);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    *at += (long)n;
    fclose(f);
}

/* Loads arm a (exploit WHAT), its host's output captured: rc, the error
 * and what the host said, each printed for the log. */
static int load_attack(kg_backend *be, const kg_plan *plan, int a, const char *cap_path, long *at, int real_stderr,
                       kg_kernel **k, kg_err *err, char *said, size_t cap)
{
    kg_err_clear(err);
    *k = NULL;
    int rc = kg_backend_load(be, plan, a, 0, NULL, k, err);
    /* a host that lives on says nothing until it is closed */
    kg_backend_unload(be, *k);
    *k = NULL;
    fflush(stderr);
    take_stderr(cap_path, at, said, cap);
    dprintf(real_stderr, "test_cuda_confine: arm %s: load rc %d: %s\n  host said: %s\n", plan->arms[a].name, rc,
            rc == KG_OK ? "ok" : err->msg, said[0] ? said : "(nothing)\n");
    return rc;
}

static const struct { int arm; const char *what, *call; } denied[] = {
    { 2, "exec", "execve" }, { 3, "socket", "socket" }, { 4, "unix", "socket" }, { 5, "ptrace", "ptrace" },
    { 6, "kill", "kill" }, { 7, "write", "openat" },
};

/* What the hosts said and did, once all have ended: no denied call had an
 * effect, the key's folder and a file outside were out of reach where the
 * host's namespace allows it, the environment was kgate's. */
static void check_effects(const char *said, const char *sandbox, const char *marker, const char *victim,
                          const char *home)
{
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        char ok_text[64];
        snprintf(ok_text, sizeof ok_text, "EXPLOIT %s: succeeded", denied[i].what);
        CHECK_MSG(strstr(said, ok_text) == NULL, "%s: it had no effect", denied[i].what);
    }
    CHECK_MSG(usr1 == 0, "the worker got no signal from a host (%d)", (int)usr1);
    CHECK_MSG(access(marker, F_OK) != 0, "no file written outside (%s)", marker);
    unlink(marker);
    /* the signing key's folder, hidden where the host has a mount namespace */
    if (strstr(sandbox, "hide") != NULL) {
        CHECK_MSG(strstr(said, "SECRET-KEY-LINE-1") == NULL, "the key's folder is out of the host's sight");
    } else {
        CHECK_MSG(strstr(sandbox, "seccomp") != NULL, "the host is confined");
        fprintf(stderr, "test_cuda_confine: no mount namespace for the host here: the key's folder is not hidden "
                "(docs/security.md says so)\n");
    }
    /* an existing file changed through a shared mapping: stopped where the
     * host's mounts are read-only */
    FILE *vf = fopen(victim, "r");
    char vtext[16] = "";
    if (vf != NULL) {
        if (fgets(vtext, sizeof vtext, vf) == NULL) vtext[0] = '\0';
        fclose(vf);
    }
    unlink(victim);
    if (strstr(sandbox, "rofs") != NULL) {
        CHECK_MSG(strcmp(vtext, "ORIGINAL") == 0, "a file outside is unchanged (%s)", vtext);
        CHECK_MSG(strstr(said, "EXPLOIT mapwrite: failed (Read-only file system)") != NULL,
                  "the open for writing met a read-only mount");
    } else {
        fprintf(stderr, "test_cuda_confine: no read-only mounts for the host here: an existing file it can open was "
                "%s through a shared mapping (docs/security.md says so)\n",
                strcmp(vtext, "ORIGINAL") == 0 ? "not changed" : "changed");
    }
    /* its environment is kgate's own */
    CHECK_MSG(strstr(said, "EXPLOIT env: PATH=") != NULL, "the host printed its environment");
    CHECK_MSG(strstr(said, "KGATE_TEST_WORKER_ONLY") == NULL, "no variable of the worker's");
    CHECK_MSG(strstr(said, "LD_PRELOAD") == NULL, "no LD_PRELOAD");
    char home_line[320];
    snprintf(home_line, sizeof home_line, "EXPLOIT env: HOME=%s\n", home);
    CHECK_MSG(strstr(said, home_line) == NULL, "HOME is not the worker's");
}

/* The honest arm (arm 1): loads, binds, runs and is right under the
 * confinement; its resources' sandbox text into sandbox. */
static void honest_arm(kg_backend *be, const kg_plan *plan, int real_stderr, char *sandbox, size_t cap)
{
    kg_err err = { 0 };
    float A[M * K], B[N * K], C[M * N + 64], want[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (float)(i % 5) - 1.5f;
    for (int i = 0; i < N * K; i++) B[i] = (float)(i % 3) + 0.25f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc += A[i * K + k] * B[j * K + k];
            want[i * N + j] = acc;
        }
    kg_dbuf a = { 0 }, b = { 0 }, c = { 0 };
    kg_kernel *k = NULL;
    int rc = kg_backend_alloc(be, sizeof A, &a, &err);
    if (rc == KG_OK) rc = kg_backend_alloc(be, sizeof(float) * M * N + kg_guard_bytes(), &c, &err);
    if (rc == KG_OK) rc = kg_backend_alloc(be, sizeof B, &b, &err);
    if (rc == KG_OK) rc = kg_backend_upload(be, &a, 0, A, sizeof A, &err);
    if (rc == KG_OK) rc = kg_backend_upload(be, &b, 0, B, sizeof B, &err);
    if (rc == KG_OK) rc = kg_backend_load(be, plan, 1, 0, NULL, &k, &err);
    kg_binding bind;
    memset(&bind, 0, sizeof bind);
    bind.kase = &plan->cases[0];
    bind.nin = 2;
    bind.in[0] = a;
    bind.in[1] = b;
    bind.nout = 1;
    bind.out[0] = c;
    bind.out_bytes[0] = sizeof(float) * M * N;
    bind.pack = 2;
    if (rc == KG_OK) rc = kg_backend_bind(be, k, &bind, &err);
    if (rc == KG_OK) rc = kg_backend_run(be, k, &err);
    if (rc == KG_OK) rc = kg_backend_download(be, C, &c, 0, sizeof(float) * M * N, &err);
    CHECK_MSG(rc == KG_OK, "the honest arm under the confinement: %s", err.msg);
    int right = rc == KG_OK;
    for (int i = 0; i < M * N && right; i++) right = C[i] == want[i];
    CHECK_MSG(right, "the honest arm's output is right");
    kg_resources res;
    if (rc == KG_OK && kg_backend_resources(be, k, 0, &res, &err) == KG_OK) snprintf(sandbox, cap, "%s", res.sandbox);
    dprintf(real_stderr, "test_cuda_confine: the honest arm's host: %s\n", sandbox);
    CHECK_STR_CONTAINS(sandbox, "seccomp");
    kg_backend_unload(be, k);
    kg_backend_free(be, &a);
    kg_backend_free(be, &b);
    kg_backend_free(be, &c);
}

int main(void)
{
    char exe[PATH_MAX], kgate[PATH_MAX + 32], so[PATH_MAX + 32], attack[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 1;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    const char *realv = getenv("KGATE_TEST_CUDA_REAL");
    int real = realv != NULL && strcmp(realv, "1") == 0;
    snprintf(kgate, sizeof kgate, "%s/../kgate", exe);
    snprintf(attack, sizeof attack, "%s/cuda_host_attack", exe);
    char dir[] = "/tmp/kgate-cuda-confine-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    char keys[256], home[256], key[300], cap_path[300], marker[400];
    snprintf(keys, sizeof keys, "%s/keys", dir);
    snprintf(home, sizeof home, "%s/home", dir);
    mkdir(keys, 0700);
    mkdir(home, 0700);
    snprintf(key, sizeof key, "%s/signing-key.pem", keys);
    write_file(key, "SECRET-KEY-LINE-1\n");
    snprintf(marker, sizeof marker, "%s/.config", home);
    mkdir(marker, 0700);
    snprintf(marker, sizeof marker, "%s/.config/kgate", home);
    mkdir(marker, 0700);
    snprintf(so, sizeof so, "%s/signing-key.pem", marker);
    write_file(so, "SECRET-KEY-LINE-1\n");
    /* by the worker's pid alone: in a user namespace the host's uid reads otherwise */
    snprintf(marker, sizeof marker, "/tmp/kgate-exploit-%ld", (long)getpid());
    unlink(marker);
    char victim[440];
    snprintf(victim, sizeof victim, "%s-victim", marker);
    write_file(victim, "ORIGINAL");
    /* variables of the worker's that a host must not get */
    setenv("HOME", home, 1);
    setenv("KGATE_TEST_WORKER_ONLY", "1", 1);
    setenv("LD_PRELOAD", "", 1);
    signal(SIGUSR1, on_usr1);

    kg_settings s = *kg_settings_defaults();
    if (!real) {
        char cmd[3 * PATH_MAX];
        snprintf(so, sizeof so, "%s/libcuda_fake.so", dir);
        snprintf(cmd, sizeof cmd, "cp '%s/libcuda_fake.so' '%s'", exe, so);
        if (system(cmd) != 0) return 1;
        s.lib_cuda = so;
    }
    s.include_dir = "include";
    s.armhost_exe = real ? attack : kgate;
    /* KGATE_TEST_CUDA_HOST=PROGRAM: another host (cuda_host_attack against the stand-in driver) */
    const char *hostv = getenv("KGATE_TEST_CUDA_HOST");
    if (hostv != NULL && hostv[0] != '\0') s.armhost_exe = hostv;
    s.hide_dir = keys;
    kg_cuda_nvrtc nv;
    kg_err err = { 0 };
    if (kg_cuda_nvrtc_load(&nv, &s, &err) != KG_OK) {
        fprintf(stderr, "test_cuda_confine: NVRTC absent, skipped (%s)\n", err.msg);
        return kg_test_finish("test_cuda_confine");
    }
    kg_cuda_nvrtc_unload(&nv);

    kg_plan *plan = NULL;
    CHECK_MSG(kg_plan_parse(plan_text, strlen(plan_text), "confine.kg", ".", &plan, &err) == KG_OK, "%s", err.msg);
    if (plan == NULL) return kg_test_finish("test_cuda_confine");
    kg_backend *be = NULL;
    int rc = kg_backend_open("cuda", plan, &s, &be, NULL, 0, &err);
    CHECK_MSG(rc == KG_OK, "%s", err.msg);
    if (rc != KG_OK) return kg_test_finish("test_cuda_confine");

    /* the hosts' output reaches this process's stderr: captured in a file */
    int real_stderr = dup(2);
    snprintf(cap_path, sizeof cap_path, "%s/stderr", dir);
    int capfd = open(cap_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (capfd < 0 || real_stderr < 0) return 1;
    dup2(capfd, 2);
    close(capfd);
    long at = 0;
    static char said[65536];

    /* the honest arm: loads, binds, runs and is right, confined */
    char sandbox[128] = "";
    honest_arm(be, plan, real_stderr, sandbox, sizeof sandbox);
    kg_kernel *k = NULL;

    /* each denied call: the host is killed and the call named */
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        rc = load_attack(be, plan, denied[i].arm, cap_path, &at, real_stderr, &k, &err, said, sizeof said);
        char want_msg[128];
        snprintf(want_msg, sizeof want_msg, "made a forbidden system call (%s)", denied[i].call);
        CHECK_MSG(rc == KG_EARM, "%s: the load is the arm's fault (rc %d)", denied[i].what, rc);
        CHECK_MSG(strstr(err.msg, want_msg) != NULL, "%s: named: %s", denied[i].what, err.msg);
    }
    /* the signing key's folder; the environment */
    load_attack(be, plan, 8, cap_path, &at, real_stderr, &k, &err, said, sizeof said);
    load_attack(be, plan, 9, cap_path, &at, real_stderr, &k, &err, said, sizeof said);
    load_attack(be, plan, 10, cap_path, &at, real_stderr, &k, &err, said, sizeof said);

    /* the hosts that lived on say what they did as they end */
    kg_backend_close(be);
    fflush(stderr);
    dup2(real_stderr, 2);
    at = 0;
    take_stderr(cap_path, &at, said, sizeof said);
    fprintf(stderr, "test_cuda_confine: the hosts' output:\n%s", said);
    check_effects(said, sandbox, marker, victim, home);
    int st = 0;
    CHECK_MSG(waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD, "no arm host left after close");
    kg_plan_free(plan);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "test_cuda_confine: cannot remove %s\n", dir);
    return kg_test_finish("test_cuda_confine");
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libnvrtc\nleak:libstdc++\nleak:libcuda_fake\n";
}
