/* pyops.c: ops declared in Python ([op NAME] with reference =
 * python:FILE:FUNCTION, docs/ops.md "Ops in Python"): a generic kg_op made
 * from the declaration (sizes and shapes from the dims, dtypes,
 * admission from `requires` and positive dims, flops and bytes, rows and
 * columns, held-out variables), whose reference runs in kgate's Python
 * helper (pyops_helper.py, embedded in the binary): one `python3 -I -B`
 * process per process that needs references, reused across cases,
 * talking base/frame.h's framing over a socket pair, getting the float64
 * inputs and the reference's exact source text as memfds and writing the
 * float64 outputs into memfds.  Everything it returns is checked here
 * (count, shapes, non-finite values from finite inputs); a reference that
 * raises, hangs, dies or breaks the protocol is an error naming the op
 * and the reference, and the next call starts a fresh helper. */
#include <errno.h>
#include <float.h>
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
#include "kgate/gen.h"
#include "ops/ops_internal.h"
#include "plan/expr.h"
#include "base/frame.h"
#include "base/util.h"
#include "toolchain/spawn.h"
#include "kg_pyops_py.h"

extern char **environ;

enum { PY_HELLO = 1, PY_LOAD = 2, PY_CALL = 3, PY_QUIT = 4 };
#define PY_MAX_BYTES 65536

typedef struct pyop {
    kg_op op;
    kg_opdecl decl;
    kg_tensordecl in[KG_MAX_IN], out[KG_MAX_OUT];
    char summary[160];
    char scalars[KG_TEXT_MAX];
    char shown[KG_PATH_MAX + KG_NAME_MAX + 8];   /* FILE:FUNCTION, for messages */
    char *text;                                 /* the reference's source, exactly what runs */
    size_t len;
    int loaded;                                 /* loaded into the running helper */
} pyop;

static pyop *pyops[KG_PLAN_MAX_OPS * 4];
static int npyops;

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
    int pinned;           /* started by kg_pyops_start: never started again (a confined caller) */
    char dead[900];       /* why the pinned helper ended; "" while it runs */
} H = { 0, -1, -1, 0, "", "", "", 0, 0, "" };

static pyop *find(const char *name)
{
    for (int i = 0; name != NULL && i < npyops; i++)
        if (strcmp(pyops[i]->decl.name, name) == 0) return pyops[i];
    return NULL;
}

void kg_pyops_configure(const kg_pyops_conf *c)
{
    snprintf(conf.python, sizeof conf.python, "%s", c->python != NULL ? c->python : "");
    conf.limit_s = c->limit_s > 0 ? c->limit_s : 600;
    conf.confine = c->confine;
    conf.hook = c->hook;
    conf.arg = c->arg;
    conf.env = c->env;
}

void kg_pyops_source_sha256(char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    out[0] = '\0';
    if (EVP_Digest(kg_pyops_py, sizeof kg_pyops_py - 1, md, &n, EVP_sha256(), NULL) != 1 || n != 32) return;
    for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

const char *kg_pyops_versions(void) { return H.versions; }

/* ------------------------------------------------------------ shapes */

/* The dims of tensor t for case c into dims: the count of dimensions, or
 * -1 (why) when one does not evaluate or is not positive. */
static int eval_dims(const kg_tensordecl *t, const kg_case *c, int64_t dims[], char *why, size_t cap)
{
    for (int d = 0; d < t->ndims; d++) {
        kg_err e = { 0 };
        if (kg_expr_eval("dimension", t->dims[d], c, &dims[d], &e) != KG_OK) {
            snprintf(why, cap, "%s", e.msg);
            return -1;
        }
        if (dims[d] < 1) {
            snprintf(why, cap, "tensor %s: dimension %d (%s) is %lld; dimensions must be >= 1", t->name, d + 1,
                     t->dims[d], (long long)dims[d]);
            return -1;
        }
    }
    return t->ndims;
}

/* Elements of t for c: 0 when its dims do not evaluate, are not
 * positive or hold more than KG_OPS_MAX_ELEMS. */
static int64_t count_of(const kg_tensordecl *t, const kg_case *c)
{
    int64_t dims[KG_PLAN_MAX_DIMS], n = 1;
    char why[8];
    if (eval_dims(t, c, dims, why, sizeof why) < 0) return 0;
    for (int d = 0; d < t->ndims; d++) {
        if (dims[d] > KG_OPS_MAX_ELEMS || n > KG_OPS_MAX_ELEMS / dims[d]) return 0;
        n *= dims[d];
    }
    return n;
}

static void py_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    const pyop *p = find(c->op);
    if (p == NULL) return;
    for (int i = 0; i < p->op.nin; i++) in_elems[i] = count_of(&p->in[i], c);
    for (int o = 0; o < p->op.nout; o++) out_elems[o] = count_of(&p->out[o], c);
}

static int py_shape(const kg_case *c, int out, int i, int64_t dims[])
{
    const pyop *p = find(c->op);
    char why[8];
    if (p == NULL) return 0;
    const kg_tensordecl *t = out ? &p->out[i] : &p->in[i];
    return eval_dims(t, c, dims, why, sizeof why) < 0 ? 0 : t->ndims;
}

static kg_dtype py_in_dtype(const kg_case *c, int i)
{
    const pyop *p = find(c->op);
    return p != NULL && p->in[i].dtype >= 0 ? (kg_dtype)p->in[i].dtype : c->dtype;
}

static kg_dtype py_out_dtype(const kg_case *c, int o)
{
    const pyop *p = find(c->op);
    return p != NULL && p->out[o].dtype >= 0 ? (kg_dtype)p->out[o].dtype : c->dtype;
}

static int py_admissible(const kg_case *c, char *why, size_t cap)
{
    const pyop *p = find(c->op);
    int64_t dims[KG_PLAN_MAX_DIMS];
    if (p == NULL) {
        snprintf(why, cap, "op %s is not loaded", c->op);
        return 1;
    }
    for (int k = 0; k < p->op.nin + p->op.nout; k++) {
        const kg_tensordecl *t = k < p->op.nin ? &p->in[k] : &p->out[k - p->op.nin];
        if (eval_dims(t, c, dims, why, cap) < 0) return 1;
        if (count_of(t, c) == 0) {
            snprintf(why, cap, "tensor %s holds more than %lld elements", t->name, (long long)KG_OPS_MAX_ELEMS);
            return 1;
        }
    }
    if (p->decl.py.requires[0] == '\0') return 0;
    int ok = 0;
    char failed[KG_TEXT_MAX + 64] = "";
    kg_err e = { 0 };
    if (kg_expr_eval_conds("requires", p->decl.py.requires, c, &ok, failed, sizeof failed, &e) != KG_OK) {
        snprintf(why, cap, "%s", e.msg);
        return 1;
    }
    if (!ok) snprintf(why, cap, "op %s requires %s", p->decl.name, failed);
    return !ok;
}

static double eval_or_zero(const char *text, const char *what, const kg_case *c)
{
    int64_t v = 0;
    kg_err e = { 0 };
    if (text[0] == '\0' || kg_expr_eval(what, text, c, &v, &e) != KG_OK || v < 0) return 0;
    return (double)v;
}

static double py_flops(const kg_case *c)
{
    const pyop *p = find(c->op);
    return p != NULL ? eval_or_zero(p->decl.py.flops, "flops", c) : 0;
}

static double py_min_bytes(const kg_case *c)
{
    const pyop *p = find(c->op);
    return p != NULL ? eval_or_zero(p->decl.py.bytes, "bytes", c) : 0;
}

static void py_in_rows(const kg_case *c, int64_t rows[])
{
    const pyop *p = find(c->op);
    for (int i = 0; p != NULL && i < p->op.nin; i++) {
        int64_t dims[KG_PLAN_MAX_DIMS];
        char why[8];
        rows[i] = p->in[i].ndims > 1 && eval_dims(&p->in[i], c, dims, why, sizeof why) > 1 ? dims[0] : 1;
    }
}

static int64_t py_out_cols(const kg_case *c, int o)
{
    const pyop *p = find(c->op);
    int64_t dims[KG_PLAN_MAX_DIMS];
    char why[8];
    if (p == NULL || p->out[o].ndims < 2 || eval_dims(&p->out[o], c, dims, why, sizeof why) < 2) return 0;
    return dims[p->out[o].ndims - 1];
}

/* ------------------------------------------------------------ helper */

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
 * reaped; its folder removed.  Every op is to be loaded again. */
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
    if (H.dir[0] != '\0') {
        char script[PATH_MAX + 32];
        snprintf(script, sizeof script, "%s/kgate_pyops.py", H.dir);
        unlink(script);
        rmdir(H.dir);
        H.dir[0] = '\0';
    }
    for (int i = 0; i < npyops; i++) pyops[i]->loaded = 0;
}

void kg_pyops_stop(void) { helper_end(1); }

long kg_pyops_pid(void) { return H.pid > 0 ? (long)H.pid : 0; }

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

static int any_torch(void)
{
    for (int i = 0; i < npyops; i++)
        if (pyops[i]->decl.py.torch) return 1;
    return 0;
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
                     (char *)"--torch", (char *)(any_torch() ? "yes" : "no"), (char *)"--confine",
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
    json_t *r = NULL;
    double lim = conf.limit_s > 120 ? conf.limit_s : 120;
    rc = helper_wait(PY_HELLO, lim, "did not start:", &r, err);
    if (rc != KG_OK) return rc;
    char *v = json_dumps(json_object_get(r, "versions"), JSON_COMPACT | JSON_SORT_KEYS);
    snprintf(H.versions, sizeof H.versions, "%s", v != NULL ? v : "null");
    free(v);
    json_decref(r);
    return KG_OK;
}

/* The helper, started when it is not running: on the configured Python,
 * and where that one cannot import the library, /usr/bin/python3. */
static int helper_up(kg_err *err)
{
    if (H.pid > 0 && H.sock >= 0) return KG_OK;
    if (H.pinned)
        return kg_errorf(err, KG_EIO, "kgate's Python helper ended earlier: %.800s", H.dead[0] ? H.dead : "no reason "
                         "known");
    helper_end(0);
    const char *py = kg_python_pick(conf.python);
    int rc = spawn_on(py, err);
    /* where the configured Python cannot import the library, or does not
     * start at all (a confined helper cannot reach a Python under a hidden
     * folder, such as a shim under $HOME) */
    if (rc != KG_OK && rc != KG_ENOMEM && strcmp(py, "/usr/bin/python3") != 0 &&
        access("/usr/bin/python3", X_OK) == 0) {
        kg_err first = *err;
        helper_end(1);
        kg_err_clear(err);
        rc = spawn_on("/usr/bin/python3", err);
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
                         any_torch() ? " and PyTorch" : "");
    }
    return KG_OK;
}

/* A memfd holding len bytes of data (NULL: zeros): the descriptor or -1. */
static int memfd_with(const char *name, const void *data, size_t len)
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

/* Loads op p into the helper: its source as a memfd, hashed there. */
static int load_op(pyop *p, kg_err *err)
{
    if (p->loaded) return KG_OK;
    int fd = memfd_with("kgate-op-source", p->text, p->len);
    if (fd < 0) return kg_errorf(err, KG_EIO, "op '%s': memfd: %s", p->decl.name, strerror(errno));
    json_t *m = json_object();
    json_object_set_new(m, "name", json_string(p->decl.name));
    json_object_set_new(m, "file", json_string(p->decl.source));
    json_object_set_new(m, "function", json_string(p->decl.py.function));
    json_object_set_new(m, "torch", json_boolean(p->decl.py.torch));
    json_object_set_new(m, "sha256", json_string(p->decl.sha256));
    int rc = helper_send(PY_LOAD, m, &fd, 1, err);
    close(fd);
    json_decref(m);
    json_t *r = NULL;
    if (rc == KG_OK) rc = helper_wait(PY_LOAD, conf.limit_s, "ended loading the reference:", &r, err);
    json_decref(r);
    if (rc == KG_OK) p->loaded = 1;
    return rc;
}

/* The case's variables as the op declares them (name: int, real, bool). */
static json_t *vars_of(const pyop *p, const kg_case *c)
{
    json_t *v = json_object();
    char buf[KG_TEXT_MAX];
    snprintf(buf, sizeof buf, "%s", p->decl.py.vars);
    for (char *sv = NULL, *t = strtok_r(buf, " ", &sv); t != NULL; t = strtok_r(NULL, " ", &sv)) {
        char *colon = strchr(t, ':');
        const char *ty = colon != NULL ? colon + 1 : "int";
        if (colon != NULL) *colon = '\0';
        if (strcmp(ty, "real") == 0) json_object_set_new(v, t, json_real(kg_op_var_r(c, t, 0.0)));
        else if (strcmp(ty, "bool") == 0) json_object_set_new(v, t, json_boolean(kg_op_var_i(c, t, 0) != 0));
        else json_object_set_new(v, t, json_integer((json_int_t)kg_op_var_i(c, t, 0)));
    }
    return v;
}

static json_t *tensor_json(const kg_tensordecl *t, const kg_case *c, kg_dtype dt)
{
    json_t *o = json_object(), *sh = json_array();
    int64_t dims[KG_PLAN_MAX_DIMS];
    char why[8];
    int n = eval_dims(t, c, dims, why, sizeof why);
    for (int d = 0; d < n; d++) json_array_append_new(sh, json_integer((json_int_t)dims[d]));
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "shape", sh);
    json_object_set_new(o, "dtype", json_string(kg_dtype_name(dt)));
    return o;
}

/* One call of p's function on case c: mode "ref" (float64) or "lib" (the
 * case's dtypes), the outputs into out[] as float64.  The outputs are
 * checked: non-finite values where every input is finite are refused. */
static int call_fn(pyop *p, const kg_case *c, const char *mode, const double *const in[], double *const out[],
                   kg_err *err)
{
    int rc = helper_up(err);
    if (rc == KG_OK) rc = load_op(p, err);
    if (rc != KG_OK) return rc;
    int64_t ie[KG_MAX_IN] = { 0 }, oe[KG_MAX_OUT] = { 0 };
    py_sizes(c, ie, oe);
    int fds[KG_MAX_IN + KG_MAX_OUT], nfd = 0, finite = 1;
    json_t *m = json_object(), *ins = json_array(), *outs = json_array();
    for (int i = 0; i < p->op.nin; i++) {
        for (int64_t e = 0; e < ie[i] && finite; e++) finite = isfinite(in[i][e]);
        json_array_append_new(ins, tensor_json(&p->in[i], c, py_in_dtype(c, i)));
        if ((fds[nfd] = memfd_with("kgate-in", in[i], (size_t)ie[i] * sizeof(double))) < 0) break;
        nfd++;
    }
    for (int o = 0; o < p->op.nout && nfd == p->op.nin + o; o++) {
        json_array_append_new(outs, tensor_json(&p->out[o], c, py_out_dtype(c, o)));
        if ((fds[nfd] = memfd_with("kgate-out", NULL, (size_t)oe[o] * sizeof(double))) < 0) break;
        nfd++;
    }
    json_object_set_new(m, "name", json_string(p->decl.name));
    json_object_set_new(m, "mode", json_string(mode));
    json_object_set_new(m, "vars", vars_of(p, c));
    json_object_set_new(m, "in", ins);
    json_object_set_new(m, "out", outs);
    if (nfd != p->op.nin + p->op.nout) rc = kg_errorf(err, KG_EIO, "op '%s': memfd: %s", p->decl.name,
                                                      strerror(errno));
    if (rc == KG_OK) rc = helper_send(PY_CALL, m, fds, nfd, err);
    json_decref(m);
    json_t *r = NULL;
    if (rc == KG_OK) rc = helper_wait(PY_CALL, conf.limit_s, "ended in the call:", &r, err);
    json_decref(r);
    for (int o = 0; o < p->op.nout && rc == KG_OK; o++) {
        size_t want = (size_t)oe[o] * sizeof(double), at = 0;
        while (at < want) {
            ssize_t g = pread(fds[p->op.nin + o], (char *)out[o] + at, want - at, (off_t)at);
            if (g <= 0) break;
            at += (size_t)g;
        }
        if (at != want) rc = kg_errorf(err, KG_EIO, "op '%s': output %s could not be read back", p->decl.name,
                                       p->out[o].name);
        for (int64_t e = 0; e < oe[o] && rc == KG_OK && finite; e++)
            if (!isfinite(out[o][e]))
                rc = kg_errorf(err, KG_EINPUT, "returned %s at element %lld of output %s from finite inputs",
                               isnan(out[o][e]) ? "NaN" : "an infinity", (long long)e, p->out[o].name);
    }
    for (int k = 0; k < nfd; k++) close(fds[k]);
    return rc;
}

/* err's message prefixed with the op, the reference and the case. */
static int blame(const pyop *p, const kg_case *c, const char *mode, int rc, kg_err *err)
{
    if (rc == KG_OK || err == NULL) return rc;
    char old[KG_ERR_MSG_MAX];
    snprintf(old, sizeof old, "%s", err->msg);
    kg_err_clear(err);
    return kg_errorf(err, rc == KG_ENOMEM ? rc : KG_EINPUT, "op '%s': reference %.200s%s on case '%s': %.700s (fix "
                     "the reference, or the op's declared shapes)", p->decl.name, p->shown,
                     strcmp(mode, "lib") == 0 ? " in the case's dtype" : "", c->name, old);
}

/* ------------------------------------------------------------ bounds */

/* The library evaluation of the last reference, per output, for the
 * bound that follows it (oracle.c asks the bound of each output right
 * after the reference, with the same arrays). */
static struct {
    const kg_case *kase;
    const double *ref[KG_MAX_OUT];
    uint64_t sum[KG_MAX_OUT];
    double *lib[KG_MAX_OUT];
    double *libp[KG_MAX_OUT];
    int64_t n[KG_MAX_OUT];
    int nout;
} cache;

static uint64_t sum_of(const double *x, int64_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &x[i], sizeof b);
        h = (h ^ b) * 1099511628211ull;
    }
    return h;
}

static void cache_clear(void)
{
    for (int o = 0; o < KG_MAX_OUT; o++) {
        free(cache.lib[o]);
        free(cache.libp[o]);
        cache.lib[o] = cache.libp[o] = NULL;
        cache.ref[o] = NULL;
    }
    cache.kase = NULL;
    cache.nout = 0;
}

/* x stored in dtype dt, as a kernel stores it. */
static double store_as(double x, kg_dtype dt)
{
    if (!isfinite(x) || dt == KG_DT_F64) return x;
    float f = (float)x;
    if (dt == KG_DT_BF16) return (double)kg_gen_bf16_to_f32(kg_gen_bf16(f));
    if (dt == KG_DT_F16) return (double)kg_gen_f16_to_f32(kg_gen_f16(f));
    return (double)f;
}

/* The library evaluation of case c on in (float64 of the rounded
 * inputs) into the cache, keyed by the reference arrays ref. */
static int library_eval(pyop *p, const kg_case *c, const double *const in[], const double *const ref[],
                        kg_err *err)
{
    int64_t ie[KG_MAX_IN] = { 0 }, oe[KG_MAX_OUT] = { 0 };
    py_sizes(c, ie, oe);
    cache_clear();
    for (int o = 0; o < p->op.nout; o++) {
        cache.lib[o] = malloc((size_t)(oe[o] ? oe[o] : 1) * sizeof(double));
        cache.libp[o] = malloc((size_t)(oe[o] ? oe[o] : 1) * sizeof(double));
        if (cache.lib[o] == NULL || cache.libp[o] == NULL) {
            cache_clear();
            return kg_errorf(err, KG_ENOMEM, "out of memory (library evaluation of op '%s')", p->decl.name);
        }
    }
    int rc = call_fn(p, c, "lib", in, cache.lib, err);
    if (rc == KG_OK) rc = call_fn(p, c, "libp", in, cache.libp, err);
    if (rc != KG_OK) {
        cache_clear();
        return blame(p, c, "lib", rc, err);
    }
    cache.kase = c;
    cache.nout = p->op.nout;
    for (int o = 0; o < p->op.nout; o++) {
        kg_dtype dt = py_out_dtype(c, o);
        for (int64_t e = 0; e < oe[o]; e++) {
            cache.lib[o][e] = store_as(cache.lib[o][e], dt);
            cache.libp[o][e] = store_as(cache.libp[o][e], dt);
        }
        cache.ref[o] = ref[o];
        cache.n[o] = oe[o];
        cache.sum[o] = ref[o] != NULL ? sum_of(ref[o], oe[o]) : 0;
    }
    return KG_OK;
}

static int py_reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    pyop *p = find(c->op);
    if (p == NULL) return kg_errorf(err, KG_EINTERNAL, "op %s is not loaded", c->op);
    int rc = blame(p, c, "ref", call_fn(p, c, "ref", in, out, err), err);
    if (rc == KG_OK && !p->decl.py.tolerance) rc = library_eval(p, c, in, (const double *const *)out, err);
    return rc;
}

/* The median of x[0..n-1] (scratch: n doubles). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void kg_pyops_library_bound(const double *ref, const double *lib, const double *libp, int64_t n, int64_t cols,
                            int64_t nred, kg_dtype out, double *bound)
{
    int64_t row = cols > 0 ? cols : 256;
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    double *scratch = malloc((size_t)(row > 0 ? row : 1) * sizeof(double));
    double u_out = kg_ops_unit_roundoff(out), u_acc = out == KG_DT_F64 ? 0x1p-53 : 0x1p-24;
    double grow = sqrt((double)(nred > 1 ? nred : 1));
    if (e == NULL || scratch == NULL) {
        /* no memory: no element can be matched, and the checks say so */
        for (int64_t i = 0; i < n; i++) bound[i] = 0;
        free(e);
        free(scratch);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        /* the library's error, and its error on inputs one roundoff away */
        double a = fabs(lib[i] - ref[i]), b = libp != NULL ? fabs(libp[i] - ref[i]) : 0;
        if (!isfinite(a)) a = 0;   /* the library failed there: the row's errors and the floor bound it */
        if (!isfinite(b)) b = 0;
        e[i] = a > b ? a : b;
    }
    double least = 0;   /* a row's scale is at least 1/16 of the output's (a zero row's bound is not 0) */
    for (int64_t i = 0; i < n; i++)
        if (fabs(ref[i]) > least && isfinite(ref[i])) least = fabs(ref[i]);
    least /= 16;
    for (int64_t r0 = 0; r0 < n; r0 += row) {
        int64_t m = n - r0 < row ? n - r0 : row;
        double scale = least;
        for (int64_t i = 0; i < m; i++) {
            scratch[i] = e[r0 + i];
            if (fabs(ref[r0 + i]) > scale) scale = fabs(ref[r0 + i]);
        }
        qsort(scratch, (size_t)m, sizeof *scratch, cmp_double);
        double med = m % 2 ? scratch[m / 2] : 0.5 * (scratch[m / 2 - 1] + scratch[m / 2]);
        double floor_ = KG_PYOPS_FLOOR * u_acc * grow * scale;
        for (int64_t i = 0; i < m; i++) {
            double x = e[r0 + i] > med ? e[r0 + i] : med;
            bound[r0 + i] = KG_PYOPS_K * x + floor_ + 2.0 * u_out * fabs(ref[r0 + i]);
        }
    }
    free(e);
    free(scratch);
}

/* The reduction length of op p on case c: its flops over twice its output
 * elements, else its longest input row (the last dimension). */
static int64_t reduction_of(const pyop *p, const kg_case *c)
{
    int64_t ie[KG_MAX_IN] = { 0 }, oe[KG_MAX_OUT] = { 0 }, outs = 0, longest = 1;
    py_sizes(c, ie, oe);
    for (int o = 0; o < p->op.nout; o++) outs += oe[o];
    double fl = py_flops(c);
    if (fl > 0 && outs > 0) return (int64_t)(fl / (2.0 * (double)outs)) > 1 ? (int64_t)(fl / (2.0 * (double)outs)) : 1;
    for (int i = 0; i < p->op.nin; i++) {
        int64_t dims[KG_PLAN_MAX_DIMS];
        char why[8];
        int nd = eval_dims(&p->in[i], c, dims, why, sizeof why);
        if (nd > 0 && dims[nd - 1] > longest) longest = dims[nd - 1];
    }
    return longest;
}

static void py_bound(const kg_case *c, const double *const in[], const double *ref, int o, double *bound)
{
    pyop *p = find(c->op);
    int64_t ie[KG_MAX_IN] = { 0 }, oe[KG_MAX_OUT] = { 0 };
    if (p == NULL) return;
    py_sizes(c, ie, oe);
    if (p->decl.py.tolerance) {
        for (int64_t e = 0; e < oe[o]; e++) bound[e] = p->decl.py.atol + p->decl.py.rtol * fabs(ref[e]);
        return;
    }
    int hit = cache.kase == c && o < cache.nout && cache.ref[o] == ref && cache.n[o] == oe[o] &&
              cache.sum[o] == sum_of(ref, oe[o]);
    if (!hit) {
        /* another reference than the last: evaluate the library on in */
        const double *refs[KG_MAX_OUT] = { 0 };
        refs[o] = ref;
        kg_err e = { 0 };
        if (library_eval(p, c, in, refs, &e) != KG_OK) {
            /* no library evaluation: no element can be matched (the
             * reference's own error was reported already) */
            fprintf(stderr, "kgate: %s\n", e.msg);
            for (int64_t k = 0; k < oe[o]; k++) bound[k] = 0;
            return;
        }
    }
    kg_pyops_library_bound(ref, cache.lib[o], cache.libp[o], oe[o], py_out_cols(c, o), reduction_of(p, c),
                           py_out_dtype(c, o), bound);
}

void kg_pyops_contract(const char *op, char *buf, size_t cap)
{
    const pyop *p = find(op);
    if (p == NULL) buf[0] = '\0';
    else if (p->decl.py.tolerance) snprintf(buf, cap, "rtol %.3g, atol %.3g", p->decl.py.rtol, p->decl.py.atol);
    else snprintf(buf, cap, "library bound (k=%g, floor=%g u32 sqrt(n))", KG_PYOPS_K, KG_PYOPS_FLOOR);
}

/* ------------------------------------------------------------ registry */

static int fill_op(pyop *p, kg_err *err)
{
    char why[400];
    const kg_pyopdecl *py = &p->decl.py;
    int nin = kg_plan_tensors(py->inputs, p->in, KG_MAX_IN, why, sizeof why);
    int nout = nin > 0 ? kg_plan_tensors(py->outputs, p->out, KG_MAX_OUT, why, sizeof why) : -1;
    if (nin < 1 || nout < 1) return kg_errorf(err, KG_EINPUT, "op '%s': %s", p->decl.name, why);
    kg_op *op = &p->op;
    memset(op, 0, sizeof *op);
    op->abi = KG_OP_ABI;
    op->name = p->decl.name;
    snprintf(p->shown, sizeof p->shown, "%s:%s", p->decl.source, py->function);
    snprintf(p->summary, sizeof p->summary, "declared in Python: %.80s (%s)", p->shown, py->torch ? "torch" : "numpy");
    op->summary = p->summary;
    op->vars = py->vars;
    op->nin = nin;
    op->nout = nout;
    for (int i = 0; i < nin; i++) op->in_names[i] = p->in[i].name;
    for (int o = 0; o < nout; o++) op->out_names[o] = p->out[o].name;
    op->sizes = py_sizes;
    op->out_dtype = py_out_dtype;
    op->in_dtype = py_in_dtype;
    op->admissible = py_admissible;
    op->reference = py_reference;
    op->bound = py_bound;
    op->flops = py_flops;
    op->min_bytes = py_min_bytes;
    op->in_rows = py_in_rows;
    op->out_cols = py_out_cols;
    op->shape = py_shape;
    op->heldout_vars = py->has_heldout ? py->heldout : NULL;
    /* the variable names, without their types */
    size_t at = 0;
    p->scalars[0] = '\0';
    for (const char *s = py->vars; *s && at + 1 < sizeof p->scalars;) {
        if (*s == ':') {
            while (*s && *s != ' ') s++;
            continue;
        }
        p->scalars[at++] = *s++;
        p->scalars[at] = '\0';
    }
    op->scalars = p->scalars;
    return KG_OK;
}

int kg_pyops_register(const kg_plan *plan, int o, const char *folder, kg_err *err)
{
    const kg_opdecl *od = &plan->ops[o];
    char path[2 * KG_PATH_MAX + 32], rel[KG_NAME_MAX + 16];
    kg_plan_op_copy_name(plan, o, rel, sizeof rel);
    if (folder != NULL) snprintf(path, sizeof path, "%s/sources/%s", folder, rel);
    else kg_plan_op_source_path(plan, o, path, sizeof path);
    pyop *p = find(od->name);
    if (p != NULL && strcmp(p->decl.sha256, od->sha256) == 0 && memcmp(&p->decl.py, &od->py, sizeof od->py) == 0)
        return KG_OK;
    char *text = NULL;
    size_t len = 0;
    int rc = kg_read_file(path, &text, &len, err);
    if (rc != KG_OK) return rc;
    char hex[65];
    kg_sha256_hex(text, len, hex);
    if (strcmp(hex, od->sha256) != 0) {
        free(text);
        return kg_errorf(err, KG_EINPUT, "%s: op '%s': the reference hashes to %.12s, the plan says %.12s (the file "
                         "changed since the plan was read%s)", path, od->name, hex, od->sha256,
                         folder ? ", or the folder's copy was edited" : ": start again");
    }
    pyop *q = calloc(1, sizeof *q);
    if (q == NULL) {
        free(text);
        return kg_errorf(err, KG_ENOMEM, "out of memory (op '%s')", od->name);
    }
    q->decl = *od;
    q->text = text;
    q->len = len;
    if ((rc = fill_op(q, err)) != KG_OK || kg_ops_register_declared(&q->op) != 0) {
        free(text);
        free(q);
        return rc != KG_OK ? rc : kg_errorf(err, KG_EINPUT, "too many declared ops loaded in one process");
    }
    if (p != NULL) {
        /* the op of this name from an earlier plan in this process: replaced (its memory kept: the registry
         * pointed at it until now) */
        for (int i = 0; i < npyops; i++)
            if (pyops[i] == p) pyops[i] = q;
        return KG_OK;
    }
    if (npyops >= (int)(sizeof pyops / sizeof pyops[0])) return kg_errorf(err, KG_EINPUT, "too many Python ops");
    pyops[npyops++] = q;
    return KG_OK;
}

int kg_pyops_start(int fd, kg_err *err)
{
    if (npyops == 0) return KG_OK;
    int rc = helper_up(err);
    for (int i = 0; i < npyops && rc == KG_OK; i++) rc = load_op(pyops[i], err);
    if (rc != KG_OK) return rc;
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
