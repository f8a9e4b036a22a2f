/* pyop.c: the keys of an op declared in Python ([op NAME] with reference
 * = python:FILE:FUNCTION, docs/ops.md "Ops in Python"): each key's value,
 * the checks of the whole section (tensors, expressions over the declared
 * variables only, the bound), and its canonical text. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/plan_impl.h"
#include "plan/expr.h"
#include "base/util.h"

static const char *const pykeys[KG_PYK_COUNT] = { "reference", "tensors", "vars", "inputs", "outputs", "requires",
                                                   "flops", "bytes", "heldout", "bound", "rtol", "atol" };

static int pykey_index(const char *name)
{
    for (int k = 0; k < KG_PYK_COUNT; k++)
        if (strcmp(pykeys[k], name) == 0) return k;
    return -1;
}

int plan_pyop_is_key(const char *name) { return pykey_index(name) >= 0; }

static int set_text(plan_ctx *ctx, char *dst, size_t cap, const char *v, int line, const char *lt, size_t ll)
{
    if (strlen(v) >= cap) {
        plan_perr(ctx, line, "value too long", lt, ll, "keep it under %d characters", (int)cap);
        return 1;
    }
    snprintf(dst, cap, "%s", v);
    return 0;
}

/* reference = python:FILE:FUNCTION */
static void set_reference(plan_ctx *ctx, kg_opdecl *od, const char *v, int line, const char *lt, size_t ll)
{
    const char *fix = "write reference = python:FILE:FUNCTION (FILE relative to the plan's folder, e.g. "
                      "python:ref.py:saxpy)";
    if (strncmp(v, "python:", 7) != 0) {
        plan_perr(ctx, line, "bad reference", lt, ll, "%s", fix);
        return;
    }
    const char *file = v + 7, *colon = strrchr(file, ':');
    if (colon == NULL || colon == file || colon[1] == '\0') {
        plan_perr(ctx, line, "bad reference", lt, ll, "%s", fix);
        return;
    }
    const char *fn = colon + 1;
    int ok = isalpha((unsigned char)fn[0]) || fn[0] == '_';
    for (const char *p = fn; *p && ok; p++) ok = isalnum((unsigned char)*p) || *p == '_';
    if (!ok || strlen(fn) >= sizeof od->py.function) {
        plan_perr(ctx, line, "bad reference function", lt, ll, "the FUNCTION is a Python name of at most %d "
                  "characters", (int)sizeof od->py.function - 1);
        return;
    }
    size_t fl = (size_t)(colon - file);
    if (fl >= sizeof od->source) {
        plan_perr(ctx, line, "value too long", lt, ll, "keep paths under %d characters", (int)sizeof od->source);
        return;
    }
    memcpy(od->source, file, fl);
    od->source[fl] = '\0';
    snprintf(od->py.function, sizeof od->py.function, "%s", fn);
    od->python = 1;
}

static int parse_tol(const char *v, double *out)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || errno != 0 || !isfinite(x) || x < 0) return -1;
    *out = x;
    return 0;
}

int plan_pyop_key(plan_ctx *ctx, kg_opdecl *od, const char *name, const char *v, int line, const char *lt,
                  size_t ll)
{
    int k = pykey_index(name);
    kg_pyopdecl *py = &od->py;
    if (py->lines[k] != 0) {
        plan_perr(ctx, line, "duplicate key", lt, ll, "'%s' is already set in op '%s' (line %d)", name, od->name,
                  py->lines[k]);
        return 1;
    }
    py->lines[k] = line;
    switch (k) {
    case KG_PYK_REFERENCE: set_reference(ctx, od, v, line, lt, ll); break;
    case KG_PYK_TENSORS:
        if (strcmp(v, "numpy") != 0 && strcmp(v, "torch") != 0)
            plan_perr(ctx, line, "bad tensors", lt, ll, "tensors = numpy (the default) or torch");
        py->torch = strcmp(v, "torch") == 0;
        break;
    case KG_PYK_VARS: set_text(ctx, py->vars, sizeof py->vars, v, line, lt, ll); break;
    case KG_PYK_INPUTS: set_text(ctx, py->inputs, sizeof py->inputs, v, line, lt, ll); break;
    case KG_PYK_OUTPUTS: set_text(ctx, py->outputs, sizeof py->outputs, v, line, lt, ll); break;
    case KG_PYK_REQUIRES: set_text(ctx, py->requires, sizeof py->requires, v, line, lt, ll); break;
    case KG_PYK_FLOPS: set_text(ctx, py->flops, sizeof py->flops, v, line, lt, ll); break;
    case KG_PYK_BYTES: set_text(ctx, py->bytes, sizeof py->bytes, v, line, lt, ll); break;
    case KG_PYK_HELDOUT:
        py->has_heldout = 1;
        set_text(ctx, py->heldout, sizeof py->heldout, v, line, lt, ll);
        break;
    case KG_PYK_BOUND:
        if (strcmp(v, "library") != 0 && strcmp(v, "tolerance") != 0)
            plan_perr(ctx, line, "bad bound", lt, ll, "bound = library (the default) or bound = tolerance with "
                      "rtol and atol");
        py->tolerance = strcmp(v, "tolerance") == 0;
        break;
    case KG_PYK_RTOL:
    case KG_PYK_ATOL:
        if (parse_tol(v, k == KG_PYK_RTOL ? &py->rtol : &py->atol) != 0)
            plan_perr(ctx, line, "bad tolerance", lt, ll, "%s is a finite number >= 0, e.g. %s", name,
                      k == KG_PYK_RTOL ? "1e-3" : "1e-5");
        break;
    default: break;
    }
    return 1;
}

static int dtype_of(const char *s)
{
    for (int d = 0; d < KG_DT_COUNT; d++)
        if (strcmp(kg_dtype_name((kg_dtype)d), s) == 0) return d;
    return -1;
}

/* One tensor at *p: NAME[dims][:DTYPE]; advances *p. */
static int one_tensor(const char **p, kg_tensordecl *t, char *why, size_t cap)
{
    const char *s = *p, *n0 = s;
    memset(t, 0, sizeof *t);
    t->dtype = -1;
    while (isalnum((unsigned char)*s) || *s == '_') s++;
    size_t nl = (size_t)(s - n0);
    if (nl == 0 || isdigit((unsigned char)n0[0]) || nl >= sizeof t->name || *s != '[') {
        snprintf(why, cap, "'%.40s': a tensor is NAME[dim, ...] with an optional :DTYPE (e.g. X[n, m]:f32)", n0);
        return -1;
    }
    memcpy(t->name, n0, nl);
    const char *close = strchr(s, ']');
    if (close == NULL) {
        snprintf(why, cap, "'%.40s': no ']' closes the dimensions", n0);
        return -1;
    }
    const char *d = s + 1;
    while (d <= close) {
        const char *e = d;
        int depth = 0;
        while (e < close && !(depth == 0 && *e == ',')) {
            depth += *e == '(' ? 1 : *e == ')' ? -1 : 0;
            e++;
        }
        if (t->ndims == KG_PLAN_MAX_DIMS) {
            snprintf(why, cap, "tensor %s has more than %d dimensions", t->name, KG_PLAN_MAX_DIMS);
            return -1;
        }
        while (d < e && isspace((unsigned char)*d)) d++;
        size_t dl = (size_t)(e - d);
        while (dl > 0 && isspace((unsigned char)d[dl - 1])) dl--;
        if (dl == 0 || dl >= sizeof t->dims[0]) {
            snprintf(why, cap, "tensor %s: dimension %d is %s", t->name, t->ndims + 1, dl ? "too long" : "empty");
            return -1;
        }
        memcpy(t->dims[t->ndims++], d, dl);
        d = e + 1;
    }
    s = close + 1;
    if (*s == ':') {
        const char *d0 = ++s;
        while (isalnum((unsigned char)*s)) s++;
        char dn[16];
        snprintf(dn, sizeof dn, "%.*s", (int)(s - d0 < 15 ? s - d0 : 15), d0);
        if ((t->dtype = dtype_of(dn)) < 0) {
            snprintf(why, cap, "tensor %s: dtype '%s' (f32, f16, bf16, f64, i32, i8, e4m3 or e5m2)", t->name, dn);
            return -1;
        }
    }
    if (*s != '\0' && !isspace((unsigned char)*s)) {
        snprintf(why, cap, "tensor %s: '%.20s' after it (separate tensors with spaces)", t->name, s);
        return -1;
    }
    *p = s;
    return 0;
}

int kg_plan_tensors(const char *text, kg_tensordecl *out, int max, char *why, size_t cap)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (*p == '\0') break;
        if (n == max) {
            snprintf(why, cap, "more than %d tensors", max);
            return -1;
        }
        if (one_tensor(&p, &out[n], why, cap) != 0) return -1;
        for (int i = 0; i < n; i++)
            if (strcmp(out[i].name, out[n].name) == 0) {
                snprintf(why, cap, "tensor %s is named twice", out[n].name);
                return -1;
            }
        n++;
    }
    if (n == 0) snprintf(why, cap, "no tensor (write NAME[dim, ...], e.g. X[n])");
    return n;
}

/* 1 when name is a variable of vars ("n alpha:real"); *type 'i', 'r' or 'b'. */
static int has_var(const char *vars, const char *name, size_t nl, char *type)
{
    const char *p = vars;
    while (*p) {
        while (*p == ' ') p++;
        const char *s = p;
        while (*p && *p != ' ' && *p != ':') p++;
        size_t l = (size_t)(p - s);
        char ty = 'i';
        if (*p == ':') {
            ty = p[1] == 'r' ? 'r' : p[1] == 'b' ? 'b' : 'i';
            while (*p && *p != ' ') p++;
        }
        if (l == nl && l > 0 && strncmp(s, name, nl) == 0) {
            if (type != NULL) *type = ty;
            return 1;
        }
    }
    return 0;
}

/* Every name of an expression is an integer variable of vars (or a
 * function): 0, or -1 with why. */
static int names_declared(const char *expr, const char *vars, char *why, size_t cap)
{
    for (const char *p = expr; *p;) {
        if (!(isalpha((unsigned char)*p) || *p == '_')) {
            p++;
            continue;
        }
        const char *s = p;
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        size_t l = (size_t)(p - s);
        if ((l == 7 && strncmp(s, "ceildiv", 7) == 0) || (l == 3 && (strncmp(s, "min", 3) == 0 ||
                                                                     strncmp(s, "max", 3) == 0)))
            continue;
        char ty = 'i';
        if (!has_var(vars, s, l, &ty)) {
            snprintf(why, cap, "'%.*s' in '%.60s' is not a variable of the op (declare it in vars)", (int)l, s, expr);
            return -1;
        }
        if (ty != 'i') {
            snprintf(why, cap, "'%.*s' in '%.60s' is a %s; dimensions and counts are integers", (int)l, s, expr,
                     ty == 'r' ? "real" : "yes/no");
            return -1;
        }
    }
    return 0;
}

/* vars: NAME, NAME:int, NAME:real, NAME:bool, distinct. */
static int check_vars(const char *vars, char *why, size_t cap)
{
    char buf[KG_TEXT_MAX];
    snprintf(buf, sizeof buf, "%s", vars);
    char seen[KG_TEXT_MAX] = " ";
    for (char *sv = NULL, *t = strtok_r(buf, " ", &sv); t != NULL; t = strtok_r(NULL, " ", &sv)) {
        char *c = strchr(t, ':');
        if (c != NULL) {
            *c = '\0';
            if (strcmp(c + 1, "int") != 0 && strcmp(c + 1, "real") != 0 && strcmp(c + 1, "bool") != 0) {
                snprintf(why, cap, "variable %s: type '%s' (NAME, NAME:real or NAME:bool)", t, c + 1);
                return -1;
            }
        }
        int ok = (isalpha((unsigned char)t[0]) || t[0] == '_') && strlen(t) < KG_VAR_NAME_MAX;
        for (const char *q = t; *q && ok; q++) ok = isalnum((unsigned char)*q) || *q == '_';
        if (!ok) {
            snprintf(why, cap, "'%s' is not a variable name (letters, digits and '_')", t);
            return -1;
        }
        char key[KG_VAR_NAME_MAX + 2];
        snprintf(key, sizeof key, " %s ", t);
        if (strstr(seen, key) != NULL) {
            snprintf(why, cap, "variable %s is declared twice", t);
            return -1;
        }
        if (strlen(seen) + strlen(t) + 2 < sizeof seen) strcat(strcat(seen, t), " ");
    }
    return 0;
}

/* The line to blame for key k (the section's when not given). */
static int key_line(const kg_opdecl *od, int k) { return od->py.lines[k] ? od->py.lines[k] : od->line; }

static void fail_key(plan_ctx *ctx, const kg_opdecl *od, int k, const char *problem, const char *why)
{
    size_t l;
    const char *t = plan_line_text(ctx, key_line(od, k), &l);
    plan_perr(ctx, key_line(od, k), problem, t, l, "op '%s': %s", od->name, why);
}

/* The tensors of inputs or outputs, with their dims over declared variables. */
static void check_tensor_key(plan_ctx *ctx, const kg_opdecl *od, int k, const char *text, int max)
{
    kg_tensordecl t[KG_MAX_IN];
    char why[400];
    if (text[0] == '\0') {
        fail_key(ctx, od, k, k == KG_PYK_INPUTS ? "op has no inputs" : "op has no outputs",
                 k == KG_PYK_INPUTS ? "add inputs = NAME[dim, ...] ... (1 to 8 tensors)"
                                    : "add outputs = NAME[dim, ...] ... (1 to 4 tensors)");
        return;
    }
    int n = kg_plan_tensors(text, t, max, why, sizeof why);
    if (n < 0) {
        fail_key(ctx, od, k, "bad tensors", why);
        return;
    }
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < t[i].ndims; d++) {
            kg_err e = { 0 };
            if (kg_expr_check_list("dimension", t[i].dims[d], 1, &e) != KG_OK) {
                fail_key(ctx, od, k, "bad dimension", e.msg);
                return;
            }
            if (names_declared(t[i].dims[d], od->py.vars, why, sizeof why) != 0) {
                fail_key(ctx, od, k, "bad dimension", why);
                return;
            }
        }
        if (k == KG_PYK_OUTPUTS && t[i].dtype >= 0 && t[i].dtype != KG_DT_F32 && t[i].dtype != KG_DT_F16 &&
            t[i].dtype != KG_DT_BF16 && t[i].dtype != KG_DT_F64) {
            snprintf(why, sizeof why, "output %s: dtype %s (a Python op's outputs are f32, f16, bf16 or f64)",
                     t[i].name, kg_dtype_name((kg_dtype)t[i].dtype));
            fail_key(ctx, od, k, "bad output dtype", why);
            return;
        }
    }
}

static void check_expr_key(plan_ctx *ctx, const kg_opdecl *od, int k, const char *text, int conds)
{
    char why[400];
    kg_err e = { 0 };
    if (text[0] == '\0') return;
    int rc = conds ? kg_expr_check_conds(pykeys[k], text, &e) : kg_expr_check_list(pykeys[k], text, 1, &e);
    if (rc != KG_OK) {
        fail_key(ctx, od, k, "bad expression", e.msg);
        return;
    }
    if (names_declared(text, od->py.vars, why, sizeof why) != 0) fail_key(ctx, od, k, "bad expression", why);
}

void plan_pyop_check(plan_ctx *ctx, int o)
{
    kg_opdecl *od = &ctx->plan->ops[o];
    kg_pyopdecl *py = &od->py;
    char why[400];
    if (check_vars(py->vars, why, sizeof why) != 0) {
        fail_key(ctx, od, KG_PYK_VARS, "bad vars", why);
        return;
    }
    check_tensor_key(ctx, od, KG_PYK_INPUTS, py->inputs, KG_MAX_IN);
    check_tensor_key(ctx, od, KG_PYK_OUTPUTS, py->outputs, KG_MAX_OUT);
    check_expr_key(ctx, od, KG_PYK_REQUIRES, py->requires, 1);
    check_expr_key(ctx, od, KG_PYK_FLOPS, py->flops, 0);
    check_expr_key(ctx, od, KG_PYK_BYTES, py->bytes, 0);
    if (py->has_heldout) {
        char buf[KG_TEXT_MAX];
        snprintf(buf, sizeof buf, "%s", py->heldout);
        for (char *sv = NULL, *t = strtok_r(buf, " ", &sv); t != NULL; t = strtok_r(NULL, " ", &sv)) {
            char ty = 'i';
            if (!has_var(py->vars, t, strlen(t), &ty) || ty != 'i') {
                snprintf(why, sizeof why, "'%s' is not an integer variable of the op (heldout names some of vars, "
                         "or none)", t);
                fail_key(ctx, od, KG_PYK_HELDOUT, "bad heldout", why);
                return;
            }
        }
    }
    if (!py->tolerance && (py->lines[KG_PYK_RTOL] || py->lines[KG_PYK_ATOL]))
        fail_key(ctx, od, py->lines[KG_PYK_RTOL] ? KG_PYK_RTOL : KG_PYK_ATOL, "tolerance without bound = tolerance",
                 "add bound = tolerance, or remove rtol and atol to keep the library bound");
    else if (py->tolerance && (!py->lines[KG_PYK_RTOL] || !py->lines[KG_PYK_ATOL]))
        fail_key(ctx, od, KG_PYK_BOUND, "bound = tolerance needs rtol and atol", "add rtol = 1e-3 and atol = 1e-5 "
                 "(|err| <= atol + rtol |ref|)");
    else if (py->tolerance && py->rtol == 0 && py->atol == 0)
        fail_key(ctx, od, KG_PYK_RTOL, "a zero tolerance", "rtol = 0 and atol = 0 admit only exact results; give a "
                 "positive one");
}

int plan_pyop_other_key(const kg_opdecl *od)
{
    for (int k = 0; k < KG_PYK_COUNT; k++)
        if (k != KG_PYK_REFERENCE && od->py.lines[k] != 0) return k;
    return -1;
}

const char *plan_pyop_key_name(int k) { return k >= 0 && k < KG_PYK_COUNT ? pykeys[k] : "?"; }

void plan_pyop_canonical(struct kg_sb *sb, const kg_opdecl *od)
{
    const kg_pyopdecl *py = &od->py;
    kg_sb_printf(sb, "\n[op %s]\nreference = python:%s:%s\nsha256 = %s\ntensors = %s\nvars = %s\ninputs = %s\n"
                 "outputs = %s\n", od->name, od->source, py->function, od->sha256, py->torch ? "torch" : "numpy",
                 py->vars, py->inputs, py->outputs);
    if (py->requires[0]) kg_sb_printf(sb, "requires = %s\n", py->requires);
    if (py->flops[0]) kg_sb_printf(sb, "flops = %s\n", py->flops);
    if (py->bytes[0]) kg_sb_printf(sb, "bytes = %s\n", py->bytes);
    if (py->has_heldout) kg_sb_printf(sb, "heldout = %s\n", py->heldout);
    if (py->tolerance) kg_sb_printf(sb, "bound = tolerance\nrtol = %.17g\natol = %.17g\n", py->rtol, py->atol);
    else kg_sb_printf(sb, "bound = library\n");
}

void kg_plan_op_copy_name(const kg_plan *plan, int o, char *out, size_t cap)
{
    snprintf(out, cap, "op-%s.%s", plan->ops[o].name, plan->ops[o].python ? "py" : "c");
}
