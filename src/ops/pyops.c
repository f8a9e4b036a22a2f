/* pyops.c: ops declared in Python ([op NAME] with reference =
 * python:FILE:FUNCTION, docs/ops.md "Ops in Python"): a generic kg_op made
 * from the declaration (sizes and shapes from the dims, dtypes,
 * admission from `requires` and positive dims, flops and bytes, rows and
 * columns, held-out variables), whose reference runs in kgate's Python
 * helper (pyhelper.h: one `python3 -I -B` process per process that needs
 * references, reused across cases), which gets the float64 inputs and the
 * reference's exact source text as memfds and writes the float64 outputs
 * into memfds; and the library bound, from the same function evaluated in
 * the case's dtype.  Everything the helper returns is checked here
 * (count, non-finite values from finite inputs; the helper checks shapes
 * and dtypes); a reference that raises, hangs, dies or breaks the
 * protocol is an error naming the op, the reference and the case. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kgate/gen.h"
#include "ops/ops_internal.h"
#include "ops/pyhelper.h"
#include "plan/expr.h"
#include "base/util.h"

typedef struct pyop {
    kg_op op;
    kg_opdecl decl;
    kg_tensordecl in[KG_MAX_IN], out[KG_MAX_OUT];
    char summary[160];
    char scalars[KG_TEXT_MAX];
    char shown[KG_PATH_MAX + KG_NAME_MAX + 8];   /* FILE:FUNCTION, for messages */
    char *text;                                 /* the reference's source, exactly what runs */
    size_t len;
    unsigned loaded;                            /* the helper generation it was loaded into; 0 none */
} pyop;

static pyop *pyops[KG_PLAN_MAX_OPS * 4];
static int npyops;

static pyop *find(const char *name)
{
    for (int i = 0; name != NULL && i < npyops; i++)
        if (strcmp(pyops[i]->decl.name, name) == 0) return pyops[i];
    return NULL;
}

void kg_pyops_configure(const kg_pyops_conf *c) { kg_pyhelper_configure(c); }
void kg_pyops_source_sha256(char out[65]) { kg_pyhelper_source_sha256(out); }
const char *kg_pyops_versions(void) { return kg_pyhelper_versions(); }
void kg_pyops_stop(void) { kg_pyhelper_stop(); }
long kg_pyops_pid(void) { return kg_pyhelper_pid(); }

static int any_torch(void)
{
    for (int i = 0; i < npyops; i++)
        if (pyops[i]->decl.py.torch) return 1;
    return 0;
}

void kg_pyops_prestart(void)
{
    if (npyops > 0) kg_pyhelper_begin(any_torch());
}

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

/* Loads op p into the helper: its source as a memfd, hashed there. */
static int load_op(pyop *p, kg_err *err)
{
    if (p->loaded == kg_pyhelper_generation()) return KG_OK;
    int fd = kg_pyhelper_memfd("kgate-op-source", p->text, p->len);
    if (fd < 0) return kg_errorf(err, KG_EIO, "op '%s': memfd: %s", p->decl.name, strerror(errno));
    json_t *m = json_object();
    json_object_set_new(m, "name", json_string(p->decl.name));
    json_object_set_new(m, "file", json_string(p->decl.source));
    json_object_set_new(m, "function", json_string(p->decl.py.function));
    json_object_set_new(m, "torch", json_boolean(p->decl.py.torch));
    json_object_set_new(m, "sha256", json_string(p->decl.sha256));
    json_t *r = NULL;
    int rc = kg_pyhelper_ask(KG_PYH_LOAD, m, &fd, 1, "ended loading the reference:", &r, err);
    close(fd);
    json_decref(m);
    json_decref(r);
    if (rc == KG_OK) p->loaded = kg_pyhelper_generation();
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
    int rc = kg_pyhelper_up(any_torch(), err);
    if (rc == KG_OK) rc = load_op(p, err);
    if (rc != KG_OK) return rc;
    int64_t ie[KG_MAX_IN] = { 0 }, oe[KG_MAX_OUT] = { 0 };
    py_sizes(c, ie, oe);
    int fds[KG_MAX_IN + KG_MAX_OUT], nfd = 0, finite = 1;
    json_t *m = json_object(), *ins = json_array(), *outs = json_array();
    for (int i = 0; i < p->op.nin; i++) {
        for (int64_t e = 0; e < ie[i] && finite; e++) finite = isfinite(in[i][e]);
        json_array_append_new(ins, tensor_json(&p->in[i], c, py_in_dtype(c, i)));
        if ((fds[nfd] = kg_pyhelper_memfd("kgate-in", in[i], (size_t)ie[i] * sizeof(double))) < 0) break;
        nfd++;
    }
    for (int o = 0; o < p->op.nout && nfd == p->op.nin + o; o++) {
        json_array_append_new(outs, tensor_json(&p->out[o], c, py_out_dtype(c, o)));
        if ((fds[nfd] = kg_pyhelper_memfd("kgate-out", NULL, (size_t)oe[o] * sizeof(double))) < 0) break;
        nfd++;
    }
    json_object_set_new(m, "name", json_string(p->decl.name));
    json_object_set_new(m, "mode", json_string(mode));
    json_object_set_new(m, "vars", vars_of(p, c));
    json_object_set_new(m, "in", ins);
    json_object_set_new(m, "out", outs);
    if (nfd != p->op.nin + p->op.nout) rc = kg_errorf(err, KG_EIO, "op '%s': memfd: %s", p->decl.name,
                                                      strerror(errno));
    json_t *r = NULL;
    if (rc == KG_OK) rc = kg_pyhelper_ask(KG_PYH_CALL, m, fds, nfd, "ended in the call:", &r, err);
    json_decref(m);
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
        /* the library's error includes its output's rounding, as a kernel's does; the perturbed
         * evaluation's is the function's sensitivity alone (rounded to a 16-bit output it would
         * vanish wherever it is under half a unit of the output, while a kernel's float32 error
         * that is 16 times larger does not) */
        for (int64_t e = 0; e < oe[o]; e++) cache.lib[o][e] = store_as(cache.lib[o][e], dt);
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
    int rc = kg_pyhelper_up(any_torch(), err);
    for (int i = 0; i < npyops && rc == KG_OK; i++) rc = load_op(pyops[i], err);
    return rc == KG_OK ? kg_pyhelper_pin(fd, err) : rc;
}
