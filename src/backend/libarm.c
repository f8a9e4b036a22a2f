/* libarm.c: library arms (libarm.h): the table of calls, the embedded
 * helper, and the worker's end of its protocol. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "backend/hostlink.h"
#include "backend/launch.h"
#include "backend/libarm.h"
#include "toolchain/spawn.h"
#include "kgate/op.h"
#include "kg_libarm_py.h"
#include "base/util.h"

extern char **environ;

/* The calls per library and op: the first of an op is its default.  The
 * helper's table (libarm_helper.py, CALLS) must hold the same names and
 * expressions; tests/cli/libarm.sh compares the two. */
static const struct {
    const char *lib, *op, *call, *expr;
} calls[] = {
    { "numpy", "rowsum", "numpy.sum", "numpy.sum(X, axis=1, dtype=float32, out=Y)" },
    { "numpy", "rowmax", "numpy.max", "numpy.max(X, axis=1, out=Y)" },
    { "numpy", "softmax", "numpy.softmax", "Y = exp(X - max(X, axis=1)); Y /= sum(Y, axis=1) (float32)" },
    { "numpy", "layernorm", "numpy.layer_norm", "(X - mean) / sqrt(var + eps) * gamma + beta (float32)" },
    { "numpy", "rmsnorm", "numpy.rms_norm", "X / sqrt(mean(X^2) + eps) * weight (float32)" },
    { "numpy", "gemm_bt", "numpy.matmul", "numpy.matmul(A, B.T, out=C) (float32)" },
    { "numpy", "gemm_splitk", "numpy.matmul", "numpy.matmul(A, B.T, out=C) (float32)" },
    { "numpy", "gemm_nt", "numpy.matmul", "numpy.matmul(A, B, out=C) (float32)" },
    { "torch", "rowsum", "torch.sum", "torch.sum(X, dim=1, dtype=torch.float32, out=Y)" },
    { "torch", "rowmax", "torch.amax", "torch.amax(X, dim=1)" },
    { "torch", "softmax", "torch.softmax", "torch.softmax(X, dim=1, dtype=torch.float32)" },
    { "torch", "layernorm", "torch.nn.functional.layer_norm",
      "torch.nn.functional.layer_norm(X.float(), (N,), gamma.float(), beta.float(), eps)" },
    { "torch", "rmsnorm", "torch.nn.functional.rms_norm",
      "torch.nn.functional.rms_norm(X.float(), (N,), weight.float(), eps)" },
    { "torch", "gemm_bt", "torch.mm", "torch.mm(A, B.t(), out_dtype=torch.float32)" },
    { "torch", "gemm_splitk", "torch.mm", "torch.mm(A, B.t(), out_dtype=torch.float32)" },
    { "torch", "gemm_nt", "torch.mm", "torch.mm(A, B, out_dtype=torch.float32)" },
};
#define NCALLS ((int)(sizeof calls / sizeof calls[0]))

int kg_libarm_is(const kg_arm *arm)
{
    return arm != NULL && (strcmp(arm->builtin, "torch") == 0 || strcmp(arm->builtin, "numpy") == 0);
}

int kg_libarm_call(const kg_arm *arm, const char *op, const char **name, const char **expr, kg_err *err)
{
    char have[512] = "";
    size_t used = 0;
    if (kg_arm_is_pycall(arm)) {
        /* any op: the function gets the op's tensors and variables */
        if (name != NULL) *name = arm->call;
        if (expr != NULL) *expr = KG_LIBARM_PY_EXPR;
        return KG_OK;
    }
    for (int i = 0; i < NCALLS; i++) {
        if (strcmp(calls[i].lib, arm->builtin) != 0 || strcmp(calls[i].op, op) != 0) continue;
        if (arm->call[0] == '\0' || strcmp(arm->call, calls[i].call) == 0) {
            if (name != NULL) *name = calls[i].call;
            if (expr != NULL) *expr = calls[i].expr;
            return KG_OK;
        }
        int w = snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "", calls[i].call);
        if (w > 0 && (size_t)w < sizeof have - used) used += (size_t)w;
    }
    if (used == 0) {
        char ops[512] = "";
        size_t u = 0;
        for (int i = 0; i < NCALLS; i++) {
            if (strcmp(calls[i].lib, arm->builtin) != 0) continue;
            int w = snprintf(ops + u, sizeof ops - u, "%s%s", u ? ", " : "", calls[i].op);
            if (w > 0 && (size_t)w < sizeof ops - u) u += (size_t)w;
        }
        return kg_errorf(err, KG_EINPUT, "arm '%s': builtin = %s has no call for op '%s' (it has calls for %s; "
                         "docs/library-arms.md)", arm->name, arm->builtin, op, ops);
    }
    return kg_errorf(err, KG_EINPUT, "arm '%s': op '%s' has no %s call '%s' (set call = %s, or leave call out for "
                     "the default)", arm->name, op, arm->builtin, arm->call, have);
}

const char *kg_libarm_source(size_t *len)
{
    if (len != NULL) *len = sizeof kg_libarm_py - 1;
    return kg_libarm_py;
}

void kg_libarm_source_sha256(char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    out[0] = '\0';
    if (EVP_Digest(kg_libarm_py, sizeof kg_libarm_py - 1, md, &n, EVP_sha256(), NULL) != 1 || n != 32) return;
    for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* ------------------------------------------------------------- helper */

struct kg_libarm {
    kg_hostlink link;
    const kg_plan *plan;
    int arm;
    char kase[KG_NAME_MAX];
    double timeout_s, slowest_s;
    int started;
    int gpu;                       /* the device is a GPU */
    unsigned loads;                /* cases loaded, for fresh cache folders */
    char cache_root[PATH_MAX];     /* torch.compile's caches, one folder per case; "" none */
    char versions[2048];
    char device[96];               /* the cuda backend's "GPU-<uuid>"; "" on the host's CPU */
    int hello_due;                 /* spawned by kg_libarm_begin, its hello not yet read */
    const kg_arm *arm_decl;        /* the arm (for the hello's messages) */
    char py[PATH_MAX];             /* the Python it runs on */
    char script[PATH_MAX + 32];    /* its script, removed once the hello is read */
};

int kg_libarm_alive(const kg_libarm *h)
{
    return h != NULL && h->started && !h->link.dead && h->link.pid > 0;
}

long kg_libarm_pid(const kg_libarm *h)
{
    return kg_libarm_alive(h) ? (long)h->link.pid : -1;
}

const char *kg_libarm_versions(const kg_libarm *h) { return h != NULL ? h->versions : ""; }

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

void kg_libarm_quit(kg_libarm *h)
{
    if (h != NULL && h->started) kg_hostlink_quit(&h->link, KG_LA_QUIT);
}

void kg_libarm_stop(kg_libarm *h)
{
    if (h == NULL) return;
    if (h->started) kg_hostlink_close(&h->link, KG_LA_QUIT, NULL);
    if (h->cache_root[0] != '\0') nftw(h->cache_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(h);
}

static kg_libarm **retired;
static int nretired, capretired;

int kg_libarm_retire(kg_libarm *h, kg_err *err)
{
    if (nretired == capretired) {
        int cap = capretired ? 2 * capretired : 8;
        kg_libarm **v = realloc(retired, (size_t)cap * sizeof *v);
        if (v == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory restarting a library arm's helper");
        retired = v;
        capretired = cap;
    }
    if (h->started) kg_hostlink_close(&h->link, KG_LA_QUIT, NULL);
    h->started = 0;
    retired[nretired++] = h;
    return KG_OK;
}

void kg_libarm_stop_retired(void)
{
    for (int i = 0; i < nretired; i++) kg_libarm_stop(retired[i]);
    free(retired);
    retired = NULL;
    nretired = capretired = 0;
}

static const char *arm_name(const kg_libarm *h) { return h->plan->arms[h->arm].name; }

/* A reply's JSON object and its status ("status": KG_LA_*): 0, or -1
 * when the payload is not a JSON object with an integer status. */
static int parse_reply(const unsigned char *p, uint32_t len, json_t **obj, int *status)
{
    json_error_t je;
    json_t *r = json_loadb((const char *)p, len, JSON_REJECT_DUPLICATES, &je);
    json_t *st = json_object_get(r, "status");
    if (r == NULL || !json_is_object(r) || !json_is_integer(st)) {
        json_decref(r);
        return -1;
    }
    *status = (int)json_integer_value(st);
    *obj = r;
    return 0;
}

/* Sends obj as a request of kind (with nfd descriptors) and waits for the
 * reply, parsed into *reply.  A refusal is KG_EINADMISSIBLE (the helper
 * goes on); any other failure ends the helper (KG_EARM). */
static int ask(kg_libarm *h, uint32_t kind, json_t *obj, const int *fds, int nfd, double limit_s, const char *what,
               json_t **reply, kg_err *err)
{
    *reply = NULL;
    if (!kg_libarm_alive(h))
        return kg_errorf(err, KG_EARM, "arm '%s' on case '%s': its library helper ended earlier%s%.400s", arm_name(h),
                         h->kase, h->link.dead_why[0] ? ": " : "", h->link.dead_why);
    int rc = kg_hostlink_quiet(&h->link, err);
    if (rc != KG_OK) return rc;
    char *text = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
    if (text == NULL || strlen(text) > KG_LA_MAX_BYTES) {
        free(text);
        return kg_errorf(err, KG_EINTERNAL, "arm '%s': a library request does not fit one frame (%d bytes)",
                         arm_name(h), KG_LA_MAX_BYTES);
    }
    double t0 = kg_mono_s();
    int sent = kg_hostlink_send(&h->link, kind, text, strlen(text), fds, nfd);
    free(text);
    if (sent != 0) return kg_hostlink_fault(&h->link, -1, 0, limit_s, err);
    const unsigned char *p = NULL;
    uint32_t len = 0;
    if ((rc = kg_hostlink_wait(&h->link, kind, limit_s, &p, &len, err)) != KG_OK) return rc;
    double dt = kg_mono_s() - t0;
    if (kind == KG_LA_RUN && dt > h->slowest_s) h->slowest_s = dt;
    json_t *r = NULL;
    int status = 0;
    if (parse_reply(p, len, &r, &status) != 0)
        return kg_hostlink_broken(&h->link, "replied with a text that is not a JSON object with a status", err);
    if (status != KG_LA_OK) {
        const char *e = json_string_value(json_object_get(r, "error"));
        char why[900];
        snprintf(why, sizeof why, "%.880s", e != NULL ? e : "no reason given");
        json_decref(r);
        if (status == KG_LA_REFUSED)
            return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': the library call does not take this "
                             "case: %s", arm_name(h), h->kase, why);
        char label[160];
        snprintf(label, sizeof label, "failed %s on case '%s'", what, h->kase);
        return kg_hostlink_refused(&h->link, label, why, err);
    }
    *reply = r;
    return KG_OK;
}

static int spawn_only(kg_libarm *h, const kg_arm *arm, const char *device, const char *py, const char *script,
                      kg_err *err);
static int read_hello(kg_libarm *h, const kg_plan *plan, const kg_arm *arm, const char *py, kg_err *err);

int kg_libarm_begin(const kg_settings *s, const kg_plan *plan, int a, const char *device, double timeout_s,
                    kg_libarm **out, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    *out = NULL;
    kg_libarm *h = calloc(1, sizeof *h);
    if (h == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory starting arm '%s'", arm->name);
    h->plan = plan;
    h->arm = a;
    h->arm_decl = arm;
    h->timeout_s = timeout_s > 0 ? timeout_s : 600;
    h->gpu = device != NULL;
    snprintf(h->kase, sizeof h->kase, "-");
    snprintf(h->device, sizeof h->device, "%s", device != NULL ? device : "");
    int rc = kg_hostlink_init(&h->link, arm->name, 0, KG_LA_MAX_BYTES, err);
    if (rc == KG_OK) rc = kg_hostlink_mkdir(&h->link, err);
    if (rc != KG_OK) {
        kg_libarm_stop(h);
        return rc;
    }
    h->started = 1;
    snprintf(h->script, sizeof h->script, "%s/kgate_libarm.py", h->link.dir);
    size_t len = 0;
    const char *src = kg_libarm_source(&len);
    if ((rc = kg_write_atomic(h->script, src, len, err)) != KG_OK) {
        kg_libarm_stop(h);
        return rc;
    }
    if (arm->compile) {
        snprintf(h->cache_root, sizeof h->cache_root, "/tmp/kgate-libarm-cache-XXXXXX");
        if (mkdtemp(h->cache_root) == NULL) {
            h->cache_root[0] = '\0';
            unlink(h->script);
            kg_libarm_stop(h);
            return kg_errorf(err, KG_EIO, "arm '%s': cannot make a cache folder under /tmp: %s", arm->name,
                             strerror(errno));
        }
    }
    snprintf(h->py, sizeof h->py, "%s", kg_python_pick(s != NULL ? s->python : NULL));
    if ((rc = spawn_only(h, arm, device, h->py, h->script, err)) != KG_OK) {
        unlink(h->script);
        kg_libarm_stop(h);
        return rc;
    }
    h->hello_due = 1;
    *out = h;
    return KG_OK;
}

/* The hello of a helper kg_libarm_begin spawned; when its Python cannot
 * import the library and is not /usr/bin/python3 (the system's, where
 * Debian's numpy lives), that one once more before giving up. */
int kg_libarm_ready(kg_libarm **hp, kg_err *err)
{
    kg_libarm *h = *hp;
    if (h == NULL || !h->hello_due) return KG_OK;
    h->hello_due = 0;
    const kg_plan *plan = h->plan;
    const kg_arm *arm = h->arm_decl;
    int rc = read_hello(h, plan, arm, h->py, err);
    if (rc == KG_EBACKEND && err != NULL && strcmp(h->py, "/usr/bin/python3") != 0 &&
        access("/usr/bin/python3", X_OK) == 0 && strstr(err->msg, "cannot import") != NULL) {
        kg_err first = *err;
        kg_err_clear(err);   /* the first attempt's error is not this one's */
        unlink(h->script);
        kg_hostlink_close(&h->link, KG_LA_QUIT, NULL);
        int r2 = kg_hostlink_init(&h->link, arm->name, 0, KG_LA_MAX_BYTES, err);
        if (r2 == KG_OK) r2 = kg_hostlink_mkdir(&h->link, err);
        snprintf(h->script, sizeof h->script, "%s/kgate_libarm.py", h->link.dir);
        size_t len = 0;
        const char *src = kg_libarm_source(&len);
        if (r2 == KG_OK) r2 = kg_write_atomic(h->script, src, len, err);
        rc = r2;
        if (r2 == KG_OK) {
            snprintf(h->py, sizeof h->py, "/usr/bin/python3");
            const char *dev = h->gpu ? h->device : NULL;
            rc = spawn_only(h, arm, dev, h->py, h->script, err);
            if (rc == KG_OK) rc = read_hello(h, plan, arm, h->py, err);
        }
        if (rc != KG_OK) *err = first;
        else kg_err_clear(err);
    }
    unlink(h->script);
    if (rc != KG_OK) {
        kg_libarm_stop(h);
        *hp = NULL;
    }
    return rc;
}

void kg_libarm_prestart(const kg_settings *s, const kg_plan *plan, kg_libarm **libs, int n, const unsigned char *skip,
                        const char *device, double timeout_s)
{
    for (int a = 0; a < n && a < plan->narms; a++) {
        if (libs[a] != NULL || !kg_libarm_is(&plan->arms[a]) || (skip != NULL && skip[a])) continue;
        kg_err e = { 0 };
        if (kg_libarm_begin(s, plan, a, device, timeout_s, &libs[a], &e) != KG_OK) libs[a] = NULL;
    }
    /* every hello read here, not at the first load: no helper is still
     * importing its library when a case's timing starts */
    for (int a = 0; a < n && a < plan->narms; a++) {
        kg_err e = { 0 };
        if (libs[a] != NULL) (void)kg_libarm_ready(&libs[a], &e);
    }
}

int kg_libarm_start(const kg_settings *s, const kg_plan *plan, int a, const char *device, double timeout_s,
                    kg_libarm **out, kg_err *err)
{
    int rc = kg_libarm_begin(s, plan, a, device, timeout_s, out, err);
    return rc != KG_OK ? rc : kg_libarm_ready(out, err);
}

int kg_libarm_acquire(kg_libarm **slot, const kg_settings *s, const kg_plan *plan, int a, const char *device,
                      double timeout_s, kg_err *err)
{
    /* a helper that ended (a fault) is retired, not freed: kernels of the
     * arm loaded before may still name it, until the backend closes */
    if (*slot != NULL && !kg_libarm_alive(*slot)) {
        int rc = kg_libarm_retire(*slot, err);
        if (rc != KG_OK) return rc;
        *slot = NULL;
    }
    if (*slot != NULL) return kg_libarm_ready(slot, err);
    return kg_libarm_start(s, plan, a, device, timeout_s, slot, err);
}

/* The helper's hello: its versions, or why it could not start. */
static int read_hello(kg_libarm *h, const kg_plan *plan, const kg_arm *arm, const char *py, kg_err *err)
{
    double lim = h->timeout_s > 120 ? h->timeout_s : 120;
    const unsigned char *p = NULL;
    uint32_t len = 0;
    int rc = kg_hostlink_wait(&h->link, KG_LA_HELLO, lim, &p, &len, err);
    if (rc != KG_OK) {
        if (err != NULL) {
            char old[KG_ERR_MSG_MAX];
            snprintf(old, sizeof old, "%s", err->msg);
            snprintf(err->msg, sizeof err->msg, "%.200s:%d: arm '%.64s': its library helper (%.100s) did not start: %.600s",
                     plan->path, arm->line, arm->name, py, old);
        }
        return rc;
    }
    json_t *r = NULL;
    int status = -1;
    if (parse_reply(p, len, &r, &status) != 0 || status != KG_LA_OK) {
        const char *e = json_string_value(json_object_get(r, "error"));
        char why[700];
        snprintf(why, sizeof why, "%.680s", e != NULL ? e : "no hello");
        json_decref(r);
        kg_hostlink_kill(&h->link);
        kg_hostlink_fault(&h->link, -1, 0, lim, NULL);
        return kg_errorf(err, KG_EBACKEND, "%s:%d: arm '%s': its library helper (%s) could not start: %s "
                         "(install %s for that Python, or name another one with KGATE_PYTHON)",
                         plan->path, arm->line, arm->name, py, why,
                         strcmp(arm->builtin, "torch") == 0 ? "PyTorch" : "numpy");
    }
    char *v = json_dumps(json_object_get(r, "versions"), JSON_COMPACT | JSON_SORT_KEYS);
    snprintf(h->versions, sizeof h->versions, "%s", v != NULL ? v : "null");
    free(v);
    json_decref(r);
    return KG_OK;
}

/* Spawns the helper on py (its hello is read by kg_libarm_ready). */
static int spawn_only(kg_libarm *h, const kg_arm *arm, const char *device, const char *py, const char *script,
                      kg_err *err)
{
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%d", KG_LA_MAX_BYTES);
    /* KG_LIBARM_PY_FLAGS: no PYTHONPATH, PYTHONHOME or user site chooses its code */
    char *argv[] = { (char *)py, (char *)"-I", (char *)"-B", (char *)script, (char *)"--max-bytes", bytes, (char *)"--library",
                     (char *)arm->builtin, (char *)"--device", (char *)(device != NULL ? device : "cpu"), (char *)"--threads", (char *)"1", NULL };
    /* the helper is kgate's code: it gets the worker's environment (the
     * library's paths, CUDA_VISIBLE_DEVICES) */
    int rc = kg_hostlink_spawn(&h->link, py, argv, environ, 3, err);
    if (rc != KG_OK) return rc;
    h->link.seq = 0;
    return KG_OK;
}

/* The record of the loaded case from the helper's provenance. */
static void set_record(kg_libarm *h, json_t *prov, char *record)
{
    json_t *rec = json_object();
    const kg_arm *arm = &h->plan->arms[h->arm];
    char sha[65];
    kg_libarm_source_sha256(sha);
    json_object_set_new(rec, "library", json_string(arm->builtin));
    json_t *v = json_loads(h->versions, 0, NULL);
    json_object_set_new(rec, "versions", v != NULL ? v : json_null());
    json_object_set_new(rec, "helper_sha256", json_string(sha));
    json_object_set_new(rec, "timing", json_string(h->gpu ? "CUDA events around one CUDA-graph replay of pack calls, "
                                                   "taken by kgate's helper" : "CLOCK_MONOTONIC_RAW around pack "
                                                   "calls, taken by kgate's helper"));
    const char *k;
    json_t *x;
    json_object_foreach(prov, k, x) json_object_set(rec, k, x);
    char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    if (text != NULL && strlen(text) >= KG_LA_RECORD_MAX) {
        /* too long: the cache's file list goes, its count stays */
        json_t *cache = json_object_get(rec, "cache");
        if (json_is_object(cache)) json_object_del(cache, "files");
        free(text);
        text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    }
    snprintf(record, KG_LA_RECORD_MAX, "%s", text != NULL && strlen(text) < KG_LA_RECORD_MAX ? text : "{}");
    free(text);
    json_decref(rec);
}

static const char *dtype_of(kg_dtype d) { return kg_dtype_name(d); }

/* The request limit: the plan's timeout, or ten times the slowest
 * checked run seen (at least 5 s) per call when that is shorter. */
static double limit(const kg_libarm *h, int ncalls)
{
    double lim = h->timeout_s;
    if (h->slowest_s > 0) {
        double a = 10.0 * h->slowest_s * (ncalls > 0 ? ncalls : 1);
        if (a < 5.0) a = 5.0;
        if (a < lim) lim = a;
    }
    return lim;
}

/* kg_op_shape's shape of a tensor, kept at the plan's case's number of
 * dimensions: where an op gives no .shape, a tensor is 2-D only while its
 * rows (.in_rows) or columns (.out_cols) exceed 1, so a held-out shape of
 * one row (rowsum at M = 1) would reach the call as a vector; it keeps its
 * plan case's [rows, count / rows] or [count / cols, cols] instead.  ref
 * is the plan's case of that name (NULL: none). */
static int shape_of(const kg_op *op, const kg_case *cs, const kg_case *ref, int out, int i, int64_t dims[],
                    char *why, size_t cap)
{
    int nd = kg_op_shape(op, cs, out, i, dims, why, cap);
    int64_t rd[KG_OP_MAX_DIMS];
    if (nd != 1 || ref == NULL || op->shape != NULL || kg_op_shape(op, ref, out, i, rd, why, cap) != 2) return nd;
    int64_t count = dims[0], k = 0;
    if (!out && op->in_rows != NULL) {
        int64_t rows[KG_MAX_IN] = { 0 };
        op->in_rows(cs, rows);
        k = rows[i];
    } else if (out && op->out_cols != NULL) {
        k = op->out_cols(cs, i);
    }
    if (k < 1 || count % k != 0) return nd;
    dims[0] = out ? count / k : k;
    dims[1] = out ? k : count / k;
    return 2;
}

/* The tensors of op for case cs into m: their names and shapes
 * (shape_of), as a python call gets them. */
static int add_tensors(json_t *m, const kg_op *op, const kg_case *cs, const kg_case *ref, kg_err *err)
{
    json_t *names[2] = { json_array(), json_array() }, *shapes[2] = { json_array(), json_array() };
    json_object_set_new(m, "in_names", names[0]);
    json_object_set_new(m, "out_names", names[1]);
    json_object_set_new(m, "in_shapes", shapes[0]);
    json_object_set_new(m, "out_shapes", shapes[1]);
    for (int out = 0; out < 2; out++)
        for (int i = 0; i < (out ? op->nout : op->nin); i++) {
            int64_t dims[KG_OP_MAX_DIMS];
            char why[256] = "";
            int nd = shape_of(op, cs, ref, out, i, dims, why, sizeof why);
            if (nd <= 0) return kg_errorf(err, KG_EINPUT, "case '%s': op %s: %s", cs->name, op->name, why);
            json_t *d = json_array();
            for (int k = 0; k < nd; k++) json_array_append_new(d, json_integer((json_int_t)dims[k]));
            json_array_append_new(shapes[out], d);
            json_array_append_new(names[out], json_string(out ? op->out_names[i] : op->in_names[i]));
        }
    return KG_OK;
}

/* A python call's file, as a sealed memfd (*fd) the LOAD brings, and its
 * record in m: the evidence folder's copy (sources/call-ARM.py in
 * build_dir's parent folder) in a worker, the plan's file in the supervisor's build
 * (build_dir NULL); either must hash to the plan's call_sha256. */
static int add_pycall(kg_libarm *h, const char *build_dir, json_t *m, int *fd, kg_err *err)
{
    const kg_plan *plan = h->plan;
    const kg_arm *arm = &plan->arms[h->arm];
    char path[2 * PATH_MAX], file[KG_TEXT_MAX], func[KG_TEXT_MAX], hex[65], *text = NULL;
    size_t len = 0;
    *fd = -1;
    if (kg_arm_pycall_parts(arm, file, sizeof file, func, sizeof func) != 0)
        return kg_errorf(err, KG_EINPUT, "arm '%s': a bad python call '%s'", arm->name, arm->call);
    if (build_dir != NULL) {
        /* the folder is build_dir's parent, taken from the text: build_dir
         * need not exist (a plan of library arms alone builds nothing) */
        char folder[PATH_MAX];
        snprintf(folder, sizeof folder, "%s", build_dir);
        size_t n = strlen(folder);
        while (n > 1 && folder[n - 1] == '/') folder[--n] = '\0';
        char *slash = strrchr(folder, '/');
        if (slash == NULL) snprintf(folder, sizeof folder, ".");
        else if (slash == folder) folder[1] = '\0';
        else *slash = '\0';
        snprintf(path, sizeof path, "%s/sources/call-%s.py", folder, arm->name);
    } else {
        kg_plan_call_path(plan, h->arm, path, sizeof path);
    }
    int rc = kg_read_file(path, &text, &len, err);
    if (rc != KG_OK) return rc;
    kg_sha256_hex(text, len, hex);
    if (strcmp(hex, arm->call_sha256) != 0) {
        free(text);
        return kg_errorf(err, KG_EINPUT, "%s:%d: arm '%s': %s hashes to %.12s, not the plan's call_sha256 %.12s: the "
                         "call's file changed; run the campaign again", plan->path, arm->line, arm->name, path, hex,
                         arm->call_sha256);
    }
    int f = memfd_create("kgate-call", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int ok = f >= 0;
    for (size_t off = 0; ok && off < len;) {
        ssize_t w = write(f, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        off += ok ? (size_t)w : 0;
    }
    free(text);
    if (ok) ok = fcntl(f, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0;
    if (!ok) {
        int e = errno;
        if (f >= 0) close(f);
        return kg_errorf(err, KG_EIO, "arm '%s': cannot hand its call's file to the helper: %s", arm->name,
                         strerror(e));
    }
    json_t *py = json_object();
    json_object_set_new(py, "file", json_string(file));
    json_object_set_new(py, "function", json_string(func));
    json_object_set_new(py, "sha256", json_string(hex));
    json_object_set_new(py, "bytes", json_integer((json_int_t)len));
    json_object_set_new(m, "python", py);
    *fd = f;
    return KG_OK;
}

int kg_libarm_load(kg_libarm *h, const kg_case *cs, const char *build_dir, int *slot, char *record, kg_err *err)
{
    *slot = -1;
    record[0] = '\0';
    const kg_arm *arm = &h->plan->arms[h->arm];
    const char *call = NULL;
    int rc = kg_libarm_call(arm, cs->op, &call, NULL, err);
    if (rc != KG_OK) return rc;
    const kg_op *op = kg_op_find(cs->op);
    if (op == NULL) return kg_errorf(err, KG_EINPUT, "case '%s': unknown op '%s'", cs->name, cs->op);
    snprintf(h->kase, sizeof h->kase, "%s", cs->name);
    json_t *m = json_object();
    json_object_set_new(m, "op", json_string(cs->op));
    json_object_set_new(m, "call", json_string(call));
    json_object_set_new(m, "compile", json_boolean(arm->compile));
    /* torch's TF32 (cuDNN convolutions, matmuls): only under a tf32 contract */
    json_object_set_new(m, "tf32", json_boolean(arm->contract.precision == KG_PREC_TF32));
    json_object_set_new(m, "dtype", json_string(dtype_of(cs->dtype)));
    json_t *ind = json_array(), *outd = json_array(), *vars = json_object();
    for (int i = 0; i < op->nin; i++)
        json_array_append_new(ind, json_string(dtype_of(op->in_dtype != NULL ? op->in_dtype(cs, i) : cs->dtype)));
    for (int o = 0; o < op->nout; o++) json_array_append_new(outd, json_string(dtype_of(op->out_dtype(cs, o))));
    if (cs->M >= 0) json_object_set_new(vars, "M", json_integer(cs->M));
    if (cs->N >= 0) json_object_set_new(vars, "N", json_integer(cs->N));
    if (cs->K >= 0) json_object_set_new(vars, "K", json_integer(cs->K));
    if (cs->splits >= 0) json_object_set_new(vars, "splits", json_integer(cs->splits));
    for (int v = 0; v < cs->nvars; v++)
        json_object_set_new(vars, cs->vars[v].name, cs->vars[v].type == KG_VAR_REAL ? json_real(cs->vars[v].r)
                                                    : cs->vars[v].type == KG_VAR_BOOL ? json_boolean(cs->vars[v].i)
                                                                                      : json_integer(cs->vars[v].i));
    json_object_set_new(m, "in_dtypes", ind);
    json_object_set_new(m, "out_dtypes", outd);
    json_object_set_new(m, "vars", vars);
    int cfd = -1;
    int rk = kg_plan_find_case(h->plan, cs->name);
    const kg_case *ref = rk >= 0 && strcmp(h->plan->cases[rk].op, cs->op) == 0 ? &h->plan->cases[rk] : NULL;
    if ((rc = add_tensors(m, op, cs, ref, err)) == KG_OK && kg_arm_is_pycall(arm)) rc = add_pycall(h, build_dir, m, &cfd, err);
    if (rc != KG_OK) {
        json_decref(m);
        return rc;
    }
    json_object_set_new(m, "eps", json_real(cs->eps));
    if (h->cache_root[0] != '\0') {
        char dir[PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/case-%u", h->cache_root, h->loads);
        json_object_set_new(m, "cache_dir", json_string(dir));
    }
    h->loads++;
    json_t *r = NULL;
    double lim = h->timeout_s;
    rc = ask(h, KG_LA_LOAD, m, cfd >= 0 ? &cfd : NULL, cfd >= 0 ? 1 : 0, lim, "to load the case", &r, err);
    if (cfd >= 0) close(cfd);
    json_decref(m);
    if (rc != KG_OK) return rc;
    json_t *prov = json_object_get(r, "provenance"), *sl = json_object_get(r, "slot");
    if (!json_is_integer(sl) || json_integer_value(sl) < 0 || json_integer_value(sl) > 1000000) {
        json_decref(r);
        return kg_hostlink_broken(&h->link, "replied a load with no slot", err);
    }
    *slot = (int)json_integer_value(sl);
    json_t *empty = json_object();
    set_record(h, json_is_object(prov) ? prov : empty, record);
    json_decref(empty);
    json_decref(r);
    return KG_OK;
}

void kg_libarm_unload(kg_libarm *h, int slot)
{
    if (!kg_libarm_alive(h) || slot < 0) return;
    json_t *m = json_object(), *r = NULL;
    json_object_set_new(m, "slot", json_integer(slot));
    kg_err e = { 0 };
    ask(h, KG_LA_UNLOAD, m, NULL, 0, limit(h, 1), "to unload a case", &r, &e);
    json_decref(m);
    json_decref(r);
}

int kg_libarm_bind(kg_libarm *h, int slot, const kg_libarm_buf *bufs, int n, int pack, int nop, char *record,
                   kg_err *err)
{
    json_t *m = json_object(), *arr = json_array();
    json_object_set_new(m, "slot", json_integer(slot));
    int fds[KG_LA_MAX_FDS], nfd = 0;
    for (int i = 0; i < n; i++) {
        if (nfd == KG_LA_MAX_FDS) {
            json_decref(m);
            json_decref(arr);
            return kg_errorf(err, KG_EINTERNAL, "arm '%s': more than %d buffers bound", arm_name(h), KG_LA_MAX_FDS);
        }
        json_t *b = json_object();
        json_object_set_new(b, "role", json_string(bufs[i].role == KG_CARG_IN ? "in" : bufs[i].role == KG_CARG_OUT ? "out" : "ws"));
        json_object_set_new(b, "index", json_integer(bufs[i].index));
        json_object_set_new(b, "set", json_integer(bufs[i].set));
        json_object_set_new(b, "bytes", json_integer((json_int_t)bufs[i].bytes));
        if (bufs[i].has_ipc) {
            char hex[129];
            for (int k = 0; k < 64; k++) snprintf(hex + 2 * k, 3, "%02x", bufs[i].ipc[k]);
            json_object_set_new(b, "ipc", json_string(hex));
        } else {
            fds[nfd++] = bufs[i].fd;
        }
        json_array_append_new(arr, b);
    }
    json_object_set_new(m, "bufs", arr);
    json_object_set_new(m, "pack", json_integer(pack));
    json_object_set_new(m, "nop", json_integer(nop));
    json_t *r = NULL;
    int rc = ask(h, KG_LA_BIND, m, nfd ? fds : NULL, nfd, h->timeout_s, "to bind its buffers", &r, err);
    json_decref(m);
    if (rc != KG_OK) return rc;
    json_t *prov = json_object_get(r, "provenance");
    if (json_is_object(prov)) set_record(h, prov, record);
    json_decref(r);
    return KG_OK;
}

int kg_libarm_run(kg_libarm *h, int slot, kg_err *err)
{
    json_t *m = json_object(), *r = NULL;
    json_object_set_new(m, "slot", json_integer(slot));
    int rc = ask(h, KG_LA_RUN, m, NULL, 0, limit(h, 1), "a checked run", &r, err);
    json_decref(m);
    json_decref(r);
    return rc;
}

int kg_libarm_time_warm(kg_libarm *h, int slot, int pack, int warm, double *ns, double *host_ns, double *warm_ns,
                        uint64_t *warm_bytes, kg_err *err)
{
    *ns = *host_ns = NAN;
    *warm_ns = 0;
    *warm_bytes = 0;
    json_t *m = json_object(), *r = NULL;
    json_object_set_new(m, "slot", json_integer(slot));
    json_object_set_new(m, "pack", json_integer(pack));
    if (warm) json_object_set_new(m, "warm", json_true());
    int rc = ask(h, KG_LA_TIME, m, NULL, 0, limit(h, pack), "a timed sample", &r, err);
    json_decref(m);
    if (rc != KG_OK) return rc;
    double t = json_number_value(json_object_get(r, "ns")), hn = json_number_value(json_object_get(r, "host_ns"));
    int ok = json_is_number(json_object_get(r, "ns")) && isfinite(t) && t > 0 && isfinite(hn) && hn >= 0;
    double wn = json_number_value(json_object_get(r, "warm_ns"));
    json_int_t wb = json_integer_value(json_object_get(r, "warm_bytes"));
    json_decref(r);
    if (!ok) return kg_hostlink_broken(&h->link, "replied a timed sample with no time", err);
    *ns = t;
    *host_ns = hn;
    *warm_ns = isfinite(wn) && wn > 0 ? wn : 0;
    *warm_bytes = wb > 0 ? (uint64_t)wb : 0;
    return KG_OK;
}

int kg_libarm_time(kg_libarm *h, int slot, int pack, double *ns, double *host_ns, kg_err *err)
{
    double wn = 0;
    uint64_t wb = 0;
    return kg_libarm_time_warm(h, slot, pack, 0, ns, host_ns, &wn, &wb, err);
}

/* A python call's file loaded once, on the arm's first case the op
 * admits, before any worker: a file that does not compile, a FUNCTION it
 * lacks, one that is not callable or cannot take the op's inputs and
 * variables stops the campaign, naming the plan's line.  A case the
 * call refuses (a dtype numpy lacks) is left to the workers. */
static int check_pycall(kg_libarm *h, kg_err *err)
{
    const kg_plan *plan = h->plan;
    const kg_arm *arm = &plan->arms[h->arm];
    for (int k = 0; k < plan->ncases; k++) {
        const kg_case *cs = &plan->cases[k];
        const kg_op *op = kg_op_find(cs->op);
        char why[256];
        if (!kg_plan_arm_applies(plan, h->arm, k) || op == NULL ||
            (op->admissible != NULL && op->admissible(cs, why, sizeof why) != 0))
            continue;
        int slot = -1;
        char record[KG_LA_RECORD_MAX];
        int rc = kg_libarm_load(h, cs, NULL, &slot, record, err);
        if (rc == KG_EINADMISSIBLE) continue;
        if (rc != KG_OK) {
            if (err != NULL) {
                char old[KG_ERR_MSG_MAX];
                snprintf(old, sizeof old, "%s", err->msg);
                kg_err_clear(err);
                kg_errorf(err, KG_EINPUT, "%.200s:%d: arm '%.64s': call = %.200s cannot be used: %.700s", plan->path,
                          arm->line, arm->name, arm->call, old);
            }
            return KG_EINPUT;
        }
        kg_libarm_unload(h, slot);
        return KG_OK;
    }
    return KG_OK;
}

/* What can be said of a library arm before its helper starts. */
static int build_static(const kg_plan *plan, int a, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    if (arm->trusted)
        return kg_errorf(err, KG_EINPUT, "%s:%d: arm '%s': trusted = yes on a library arm (its helper is kgate's "
                         "own process already); remove the key", plan->path, arm->line, arm->name);
    for (int k = 0; k < plan->ncases; k++) {
        if (!kg_plan_arm_applies(plan, a, k)) continue;
        int rc = kg_libarm_call(arm, plan->cases[k].op, NULL, NULL, err);
        if (rc != KG_OK) return rc;
    }
    return KG_OK;
}

struct kg_libarm_builds {
    const kg_plan *plan;
    int n;
    int *rc;
    kg_err *err;
};

void kg_libarm_builds_free(kg_libarm_builds *b)
{
    if (b == NULL) return;
    free(b->rc);
    free(b->err);
    free(b);
}

/* Helpers the supervisor's check starts at once, at most. */
#define KG_LA_BUILD_BATCH 8

/* Every library arm of plan checked, the helpers (one per arm, so that a
 * python call is loaded as its own arm's) started side by side, a batch
 * at a time: each arm's result into b. */
static void build_all(kg_libarm_builds *b, const kg_settings *s, const kg_plan *plan, const char *device)
{
    double t = plan->campaign.timeout_s > 0 ? plan->campaign.timeout_s : 600;
    kg_libarm *h[KG_LA_BUILD_BATCH];
    int idx[KG_LA_BUILD_BATCH];
    for (int a = 0; a < b->n;) {
        int m = 0;
        for (; a < b->n && m < KG_LA_BUILD_BATCH; a++) {
            if (!kg_libarm_is(&plan->arms[a])) continue;
            if ((b->rc[a] = build_static(plan, a, &b->err[a])) != KG_OK) continue;
            h[m] = NULL;
            if ((b->rc[a] = kg_libarm_begin(s, plan, a, device, t, &h[m], &b->err[a])) == KG_OK) idx[m++] = a;
        }
        for (int i = 0; i < m; i++) {
            int x = idx[i];
            b->rc[x] = kg_libarm_ready(&h[i], &b->err[x]);
            if (b->rc[x] == KG_OK && kg_arm_is_pycall(&plan->arms[x])) b->rc[x] = check_pycall(h[i], &b->err[x]);
            kg_libarm_stop(h[i]);
        }
    }
}

int kg_libarm_build(kg_libarm_builds **bp, const kg_settings *s, const kg_plan *plan, int a, const char *device,
                    kg_err *err)
{
    kg_libarm_builds *b = *bp;
    if (b != NULL && (b->plan != plan || b->n != plan->narms)) {
        kg_libarm_builds_free(b);
        b = *bp = NULL;
    }
    if (b == NULL) {
        b = calloc(1, sizeof *b);
        if (b != NULL) {
            b->n = plan->narms;
            b->plan = plan;
            b->rc = calloc((size_t)(b->n > 0 ? b->n : 1), sizeof *b->rc);
            b->err = calloc((size_t)(b->n > 0 ? b->n : 1), sizeof *b->err);
        }
        if (b == NULL || b->rc == NULL || b->err == NULL) {
            kg_libarm_builds_free(b);
            return kg_errorf(err, KG_ENOMEM, "out of memory checking the library arms");
        }
        build_all(b, s, plan, device);
        *bp = b;
    }
    if (a < 0 || a >= b->n) return kg_errorf(err, KG_EINTERNAL, "arm %d of a plan of %d arms", a, b->n);
    if (b->rc[a] != KG_OK && err != NULL) *err = b->err[a];
    return b->rc[a];
}
