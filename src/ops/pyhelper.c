/* pyhelper.c: kgate's Python ops helper, the process (pyhelper.h). */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "ops/pyhelper.h"
#include "base/frame.h"
#include "base/util.h"
#include "toolchain/spawn.h"
#include "kg_pyops_py.h"

extern char **environ;

#define PY_MAX_BYTES KG_PYH_MAX_BYTES
enum { PY_HELLO = KG_PYH_HELLO, PY_QUIT = KG_PYH_QUIT };

static struct {
    char python[PATH_MAX];
    double limit_s;
    int confine;
    int (*hook)(void *);
    void *arg;
    char *const *env;
} conf = { "", 600, 0, NULL, NULL, NULL };

/* The running helper. */
static struct {
    pid_t pid;
    int sock, outfd;
    uint32_t seq;
    char dir[PATH_MAX];
    char versions[1024];
    char out[4096];       /* the last of its output */
    size_t outlen;
    int pinned;           /* pinned (kg_pyhelper_pin): never started again (a confined caller) */
    char dead[900];       /* why the pinned helper ended; "" while it runs */
    unsigned gen;         /* counts the helpers started */
    int torch;            /* started with torch imported */
    int hello_due;        /* spawned by kg_pyhelper_begin, its hello not yet read */
    char py[PATH_MAX];    /* the Python it runs on */
} H = { 0, -1, -1, 0, "", "", "", 0, 0, "", 0, 0, 0, "" };

void kg_pyhelper_configure(const kg_pyops_conf *c)
{
    snprintf(conf.python, sizeof conf.python, "%s", c->python != NULL ? c->python : "");
    conf.limit_s = c->limit_s > 0 ? c->limit_s : 600;
    conf.confine = c->confine;
    conf.hook = c->hook;
    conf.arg = c->arg;
    conf.env = c->env;
}

void kg_pyhelper_source_sha256(char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    out[0] = '\0';
    if (EVP_Digest(kg_pyops_py, sizeof kg_pyops_py - 1, md, &n, EVP_sha256(), NULL) != 1 || n != 32) return;
    for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

const char *kg_pyhelper_versions(void) { return H.versions; }

static void drain(void)
{
    char buf[4096];
    if (H.outfd < 0) return;
    for (;;) {
        ssize_t r = read(H.outfd, buf, sizeof buf);
        if (r <= 0) return;
        /* keep the last bytes */
        size_t n = (size_t)r;
        if (n >= sizeof H.out - 1) {
            memcpy(H.out, buf + n - (sizeof H.out - 1), sizeof H.out - 1);
            H.outlen = sizeof H.out - 1;
        } else {
            if (H.outlen + n > sizeof H.out - 1) {
                size_t drop = H.outlen + n - (sizeof H.out - 1);
                memmove(H.out, H.out + drop, H.outlen - drop);
                H.outlen -= drop;
            }
            memcpy(H.out + H.outlen, buf, n);
            H.outlen += n;
        }
        H.out[H.outlen] = '\0';
    }
}

/* Ends the helper: QUIT when asked and it is alive, then killed and
 * reaped; its folder removed.  What was loaded into it is gone (a new
 * one has another generation). */
static void helper_end(int polite)
{
    if (H.pid > 0) {
        if (polite && H.sock >= 0) kg_frame_sendmsg(H.sock, PY_QUIT, ++H.seq, NULL, 0, NULL, 0);
        int status = 0;
        for (int i = 0; i < 100 && polite; i++) {
            if (waitpid(H.pid, &status, WNOHANG) == H.pid) {
                H.pid = 0;
                break;
            }
            struct timespec ts = { 0, 5000000 };
            nanosleep(&ts, NULL);
        }
        if (H.pid > 0) {
            kill(-H.pid, SIGKILL);
            kill(H.pid, SIGKILL);
            waitpid(H.pid, &status, 0);
        }
    }
    drain();
    if (H.sock >= 0) close(H.sock);
    if (H.outfd >= 0) close(H.outfd);
    H.pid = 0;
    H.sock = H.outfd = -1;
    H.hello_due = 0;
    if (H.dir[0] != '\0') {
        char script[PATH_MAX + 32];
        snprintf(script, sizeof script, "%s/kgate_pyops.py", H.dir);
        unlink(script);
        rmdir(H.dir);
        H.dir[0] = '\0';
    }
}

void kg_pyhelper_stop(void) { helper_end(1); }

long kg_pyhelper_pid(void) { return H.pid > 0 ? (long)H.pid : 0; }

unsigned kg_pyhelper_generation(void) { return H.gen; }

/* What the helper's end says: its status and the last of its output. */
static void death(int status_known, int status, char *why, size_t cap)
{
    char tail[600] = "";
    drain();
    if (H.outlen > 0) {
        const char *t = H.outlen > 500 ? H.out + H.outlen - 500 : H.out;
        snprintf(tail, sizeof tail, "; its output ends: %.500s", t);
        for (char *q = tail; *q; q++)
            if (*q == '\n' || *q == '\r') *q = ' ';
    }
    if (!status_known) snprintf(why, cap, "stopped answering%s", tail);
    else if (WIFSIGNALED(status))
        snprintf(why, cap, "was killed by signal %d%s%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGSYS ? " (a forbidden system call)" : "", tail);
    else snprintf(why, cap, "ended with status %d%s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, tail);
}

/* Waits up to limit_s for the reply of kind to the last request: its
 * JSON object (status 0) in *reply; KG_EINPUT with the helper's error
 * (it goes on); KG_EIO when it died, hung or broke the protocol (ended). */
static int helper_wait(uint32_t kind, double limit_s, const char *what, json_t **reply, kg_err *err)
{
    unsigned char *buf = malloc(KG_FRAME_HEADER + PY_MAX_BYTES + 1);
    if (buf == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory (Python helper)");
    double end = kg_mono_s() + limit_s;
    char why[800];
    int rc = KG_OK, outfd = H.outfd;
    *reply = NULL;
    for (;;) {
        double left = end - kg_mono_s();
        if (left <= 0) {
            snprintf(why, sizeof why, "did not answer within %.3g s (killed)", limit_s);
            rc = KG_EIO;
            break;
        }
        struct pollfd pf[2] = { { H.sock, POLLIN, 0 }, { outfd, POLLIN, 0 } };
        int r = poll(pf, outfd >= 0 ? 2 : 1, left > 1e6 ? 1000000000 : (int)ceil(left * 1e3));
        if (r < 0 && errno == EINTR) continue;
        if (outfd >= 0 && pf[1].revents) {
            drain();
            if (pf[1].revents & (POLLHUP | POLLERR)) outfd = -1;
        }
        if (r <= 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        kg_frame_rx rx = { .buf = buf, .max_len = PY_MAX_BYTES };
        int got = kg_frame_recvmsg(H.sock, 0, &rx);
        if (got == 0) continue;
        if (got == -1) {
            int status = 0;
            int known = waitpid(H.pid, &status, 0) == H.pid;
            if (known) H.pid = 0;
            death(known, status, why, sizeof why);
            rc = KG_EIO;
            break;
        }
        if (got == -2 || rx.h.kind != kind || rx.h.tag != H.seq) {
            snprintf(why, sizeof why, "broke the protocol (%s)", got == -2 ? rx.why : "a reply nobody asked for");
            rc = KG_EIO;
            break;
        }
        json_error_t je;
        json_t *o = json_loadb((const char *)rx.payload, rx.h.len, JSON_REJECT_DUPLICATES, &je);
        json_t *st = json_object_get(o, "status");
        if (!json_is_object(o) || !json_is_integer(st)) {
            json_decref(o);
            snprintf(why, sizeof why, "broke the protocol (a reply that is not a JSON object with a status)");
            rc = KG_EIO;
            break;
        }
        if (json_integer_value(st) != 0) {
            const char *e = json_string_value(json_object_get(o, "error"));
            rc = kg_errorf(err, KG_EINPUT, "%.900s", e != NULL ? e : "failed, saying nothing");
            json_decref(o);
            free(buf);
            return rc;
        }
        *reply = o;
        free(buf);
        return KG_OK;
    }
    free(buf);
    helper_end(0);
    snprintf(H.dead, sizeof H.dead, "%.100s %.700s", what, why);
    return kg_errorf(err, rc, "kgate's Python helper %s %.700s", what, why);
}

static int helper_send(uint32_t kind, json_t *obj, const int *fds, int nfd, kg_err *err)
{
    char *text = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
    if (text == NULL || strlen(text) > PY_MAX_BYTES) {
        free(text);
        return kg_errorf(err, KG_EINPUT, "a request to the Python helper does not fit one frame (%d bytes)",
                         PY_MAX_BYTES);
    }
    int r = kg_frame_sendmsg(H.sock, kind, ++H.seq, text, strlen(text), fds, nfd);
    free(text);
    if (r != 0) {
        char why[700];
        int status = 0;
        int known = H.pid > 0 && waitpid(H.pid, &status, WNOHANG) == H.pid;
        if (known) H.pid = 0;
        death(known, status, why, sizeof why);
        helper_end(0);
        snprintf(H.dead, sizeof H.dead, "%.800s", why);
        return kg_errorf(err, KG_EIO, "kgate's Python helper %s", why);
    }
    return KG_OK;
}

/* In the helper's child before its exec (no confinement asked): it dies
 * with the process that started it, even inside a reference that never
 * returns. */
static int die_with_parent(void *arg)
{
    (void)arg;
    return prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0;
}

/* Spawns the helper on py and reads its hello. */
static int spawn_on(const char *py, kg_err *err)
{
    snprintf(H.dir, sizeof H.dir, "/tmp/kgate-pyop-XXXXXX");
    if (mkdtemp(H.dir) == NULL) {
        H.dir[0] = '\0';
        return kg_errorf(err, KG_EIO, "cannot make a folder for the Python helper under /tmp: %s", strerror(errno));
    }
    chmod(H.dir, 0755);
    char script[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/kgate_pyops.py", H.dir);
    int rc = kg_write_atomic(script, kg_pyops_py, sizeof kg_pyops_py - 1, err);
    if (rc != KG_OK) return rc;
    chmod(script, 0644);
    char *argv[] = { (char *)py, (char *)KG_PY_FLAG_ISOLATED, (char *)KG_PY_FLAG_NOBYTECODE, script,
                     (char *)"--torch", (char *)(H.torch ? "yes" : "no"), (char *)"--confine",
                     (char *)(conf.confine ? "yes" : "no"), NULL };
    kg_spawned sp;
    char why[300];
    if (kg_spawn_linked(py, argv, conf.env != NULL ? conf.env : environ, 3, 0,
                        conf.hook != NULL ? conf.hook : die_with_parent, conf.arg, &sp, why, sizeof why) != 0)
        return kg_errorf(err, KG_EIO, "cannot start kgate's Python helper (%s): %s", py, why);
    H.pid = sp.pid;
    H.sock = sp.sock;
    H.outfd = sp.outfd;
    H.seq = 0;
    H.outlen = 0;
    H.gen++;
    snprintf(H.py, sizeof H.py, "%s", py);
    H.hello_due = 1;
    return KG_OK;
}

/* The hello of the helper spawn_on started: its versions. */
static int read_hello(kg_err *err)
{
    H.hello_due = 0;
    json_t *r = NULL;
    double lim = conf.limit_s > 120 ? conf.limit_s : 120;
    int rc = helper_wait(PY_HELLO, lim, "did not start:", &r, err);
    if (rc != KG_OK) return rc;
    char *v = json_dumps(json_object_get(r, "versions"), JSON_COMPACT | JSON_SORT_KEYS);
    snprintf(H.versions, sizeof H.versions, "%s", v != NULL ? v : "null");
    free(v);
    json_decref(r);
    return KG_OK;
}

void kg_pyhelper_begin(int torch)
{
    if (H.pinned || (H.pid > 0 && H.sock >= 0 && (H.torch || !torch))) return;
    helper_end(1);
    H.torch = torch;
    kg_err e = { 0 };
    if (spawn_on(kg_python_pick(conf.python), &e) != KG_OK) helper_end(0);
}

int kg_pyhelper_up(int torch, kg_err *err)
{
    if (H.pid > 0 && H.sock >= 0 && (H.torch || !torch) && !H.hello_due) return KG_OK;
    if (H.pinned)
        return kg_errorf(err, KG_EIO, "kgate's Python helper ended earlier: %.800s", H.dead[0] ? H.dead : "no reason "
                         "known");
    const char *py = kg_python_pick(conf.python);
    int rc;
    if (H.pid > 0 && H.sock >= 0 && (H.torch || !torch) && H.hello_due) {
        /* begun by kg_pyhelper_begin: its hello now */
        rc = read_hello(err);
    } else {
        helper_end(1);
        H.torch = torch;
        rc = spawn_on(py, err);
        if (rc == KG_OK) rc = read_hello(err);
    }
    /* where the configured Python cannot import the library, or does not
     * start at all (a confined helper cannot reach a Python under a hidden
     * folder, such as a shim under $HOME) */
    if (rc != KG_OK && rc != KG_ENOMEM && strcmp(py, "/usr/bin/python3") != 0 &&
        access("/usr/bin/python3", X_OK) == 0) {
        kg_err first = *err;
        helper_end(1);
        kg_err_clear(err);
        rc = spawn_on("/usr/bin/python3", err);
        if (rc == KG_OK) rc = read_hello(err);
        if (rc != KG_OK) *err = first;
        else kg_err_clear(err);
    }
    if (rc != KG_OK) {
        char old[KG_ERR_MSG_MAX];
        snprintf(old, sizeof old, "%s", err->msg);
        helper_end(0);
        kg_err_clear(err);
        return kg_errorf(err, KG_EINPUT, "kgate's Python helper (%s) could not start: %.700s (install numpy%s for "
                         "that Python, or name another one with KGATE_PYTHON)", py, old,
                         H.torch ? " and PyTorch" : "");
    }
    return KG_OK;
}

int kg_pyhelper_memfd(const char *name, const void *data, size_t len)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)(len ? len : 8)) != 0) {
        close(fd);
        return -1;
    }
    for (size_t at = 0; data != NULL && at < len;) {
        ssize_t w = pwrite(fd, (const char *)data + at, len - at, (off_t)at);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        at += (size_t)w;
    }
    return fd;
}


int kg_pyhelper_ask(uint32_t kind, json_t *req, const int *fds, int nfd, const char *what, json_t **reply,
                    kg_err *err)
{
    *reply = NULL;
    int rc = helper_send(kind, req, fds, nfd, err);
    return rc == KG_OK ? helper_wait(kind, conf.limit_s, what, reply, err) : rc;
}

int kg_pyhelper_pin(int fd, kg_err *err)
{
    /* the helper has read its script: nothing is left to remove later
     * (a confined caller may remove no file) */
    if (H.dir[0] != '\0') {
        char script[PATH_MAX + 32];
        snprintf(script, sizeof script, "%s/kgate_pyops.py", H.dir);
        unlink(script);
        rmdir(H.dir);
        H.dir[0] = '\0';
    }
    if (fd >= 0 && H.sock != fd) {
        if (dup2(H.sock, fd) < 0) return kg_errorf(err, KG_EIO, "dup2: %s", strerror(errno));
        close(H.sock);
        H.sock = fd;
    }
    H.pinned = fd >= 0;
    if (fd >= 0 && H.outfd >= 0) {
        /* its output is not read from here on (the caller closes what it does not keep) */
        close(H.outfd);
        H.outfd = -1;
    }
    return KG_OK;
}
