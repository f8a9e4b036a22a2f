/* expr.c: launch-geometry expressions (see expr.h).
 *
 * A recursive-descent parser that evaluates while it parses: the
 * expressions are a few dozen characters, evaluated once per arm and
 * case, so no tree is built.  It does not know devices or launch limits. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "kgate/plan.h"
#include "plan/expr.h"

typedef struct expr_state {
    const char *what;
    const char *text;
    size_t pos;
    const kg_case *kase;   /* NULL in check-only mode: variables read as 1 */
    kg_err *err;
} expr_state;

static int parse_expr(expr_state *s, int64_t *v);

static int fail(expr_state *s, size_t pos, const char *problem)
{
    return kg_errorf(s->err, KG_EINPUT, "%s expression '%s' at column %zu: %s", s->what,
                     s->text, pos + 1, problem);
}

static void skip_space(expr_state *s)
{
    while (s->text[s->pos] != '\0' && isspace((unsigned char)s->text[s->pos])) s->pos++;
}

/* Arithmetic errors depend on the case; a syntax check ignores them. */
static int arith_fail(expr_state *s, size_t pos, const char *problem)
{
    if (s->kase == NULL) return KG_OK;
    return fail(s, pos, problem);
}

static int apply(expr_state *s, size_t pos, char op, int64_t a, int64_t b, int64_t *out)
{
    int64_t r = 0;
    switch (op) {
    case '+':
        if (__builtin_add_overflow(a, b, &r)) return arith_fail(s, pos, "integer overflow in '+'");
        break;
    case '-':
        if (__builtin_sub_overflow(a, b, &r)) return arith_fail(s, pos, "integer overflow in '-'");
        break;
    case '*':
        if (__builtin_mul_overflow(a, b, &r)) return arith_fail(s, pos, "integer overflow in '*'");
        break;
    case '/': case '%': case 'c':
        if (b == 0) {
            *out = 0;
            return arith_fail(s, pos, "division by zero");
        }
        if (a < 0 || b < 0) {
            *out = 0;
            return arith_fail(s, pos, "negative operand of a division (use non-negative values)");
        }
        if (op == '/') r = a / b;
        else if (op == '%') r = a % b;
        else r = a / b + (a % b != 0);
        break;
    case '<': r = a < b ? a : b; break;
    case '>': r = a > b ? a : b; break;
    default: return fail(s, pos, "internal: unknown operator");
    }
    *out = r;
    return KG_OK;
}

static int parse_variable(expr_state *s, size_t start, const char *name, size_t len, int64_t *v)
{
    char nm[KG_VAR_NAME_MAX];
    if (len >= sizeof nm) return fail(s, start, "name too long (case variables have at most 31 characters)");
    memcpy(nm, name, len);
    nm[len] = '\0';
    if (s->kase == NULL) {
        /* checked without a case: any name may be a variable of the op */
        *v = 1;
        return KG_OK;
    }
    kg_var_type ty;
    int64_t x;
    if (!kg_case_var(s->kase, nm, &ty, &x, NULL)) {
        if (kg_var_is_shape(nm))
            return kg_errorf(s->err, KG_EINPUT, "%s expression '%s' at column %zu: case '%s' does not set %s",
                             s->what, s->text, start + 1, s->kase->name, nm);
        char buf[320];
        snprintf(buf, sizeof buf, "unknown name '%s': case '%s' does not set it (use the case's variables, "
                 "ceildiv, min, max)", nm, s->kase->name);
        return fail(s, start, buf);
    }
    if (ty == KG_VAR_REAL)
        return kg_errorf(s->err, KG_EINPUT, "%s expression '%s' at column %zu: %s is a real; launch expressions "
                         "are integers", s->what, s->text, start + 1, nm);
    *v = x;
    return KG_OK;
}

static int parse_call(expr_state *s, size_t start, char op, int64_t *v)
{
    /* s->pos is just after the function name */
    skip_space(s);
    if (s->text[s->pos] != '(') return fail(s, s->pos, "expected '(' after the function name");
    s->pos++;
    int64_t a = 0, b = 0;
    int rc = parse_expr(s, &a);
    if (rc != KG_OK) return rc;
    skip_space(s);
    if (s->text[s->pos] != ',') return fail(s, s->pos, "expected ',' between the two arguments");
    s->pos++;
    rc = parse_expr(s, &b);
    if (rc != KG_OK) return rc;
    skip_space(s);
    if (s->text[s->pos] != ')') return fail(s, s->pos, "expected ')' after the second argument");
    s->pos++;
    return apply(s, start, op, a, b, v);
}

static int parse_primary(expr_state *s, int64_t *v)
{
    skip_space(s);
    size_t start = s->pos;
    char ch = s->text[s->pos];
    if (ch == '(') {
        s->pos++;
        int rc = parse_expr(s, v);
        if (rc != KG_OK) return rc;
        skip_space(s);
        if (s->text[s->pos] != ')') return fail(s, s->pos, "expected ')'");
        s->pos++;
        return KG_OK;
    }
    if (isdigit((unsigned char)ch)) {
        int64_t x = 0;
        while (isdigit((unsigned char)s->text[s->pos])) {
            int d = s->text[s->pos] - '0';
            if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, d, &x))
                return fail(s, start, "integer literal too large");
            s->pos++;
        }
        if (isalpha((unsigned char)s->text[s->pos]) || s->text[s->pos] == '_')
            return fail(s, s->pos, "junk after an integer literal");
        *v = x;
        return KG_OK;
    }
    if (isalpha((unsigned char)ch) || ch == '_') {
        while (isalnum((unsigned char)s->text[s->pos]) || s->text[s->pos] == '_') s->pos++;
        const char *name = s->text + start;
        size_t len = s->pos - start;
        if (len == 7 && strncmp(name, "ceildiv", 7) == 0) return parse_call(s, start, 'c', v);
        if (len == 3 && strncmp(name, "min", 3) == 0) return parse_call(s, start, '<', v);
        if (len == 3 && strncmp(name, "max", 3) == 0) return parse_call(s, start, '>', v);
        return parse_variable(s, start, name, len, v);
    }
    if (ch == '\0' || ch == ',') return fail(s, start, "expected a value, found the end");
    char buf[48];
    snprintf(buf, sizeof buf, "unexpected character '%c'", ch);
    return fail(s, start, buf);
}

static int parse_unary(expr_state *s, int64_t *v)
{
    skip_space(s);
    if (s->text[s->pos] == '-') {
        size_t pos = s->pos++;
        int64_t x = 0;
        int rc = parse_unary(s, &x);
        if (rc != KG_OK) return rc;
        return apply(s, pos, '-', 0, x, v);
    }
    return parse_primary(s, v);
}

static int parse_term(expr_state *s, int64_t *v)
{
    int rc = parse_unary(s, v);
    while (rc == KG_OK) {
        skip_space(s);
        char op = s->text[s->pos];
        if (op != '*' && op != '/' && op != '%') break;
        size_t pos = s->pos++;
        int64_t rhs = 0;
        rc = parse_unary(s, &rhs);
        if (rc == KG_OK) rc = apply(s, pos, op, *v, rhs, v);
    }
    return rc;
}

static int parse_expr(expr_state *s, int64_t *v)
{
    int rc = parse_term(s, v);
    while (rc == KG_OK) {
        skip_space(s);
        char op = s->text[s->pos];
        if (op != '+' && op != '-') break;
        size_t pos = s->pos++;
        int64_t rhs = 0;
        rc = parse_term(s, &rhs);
        if (rc == KG_OK) rc = apply(s, pos, op, *v, rhs, v);
    }
    return rc;
}

static int eval_list(const char *what, const char *text, const kg_case *c, int64_t *out,
                     int max, int64_t fill, int *n, kg_err *err)
{
    expr_state s = { what, text, 0, c, err };
    int count = 0;
    for (int i = 0; i < max; i++) out[i] = fill;
    if (n != NULL) *n = 0;
    skip_space(&s);
    if (text[s.pos] == '\0') return KG_OK;
    for (;;) {
        if (count == max) {
            char buf[64];
            snprintf(buf, sizeof buf, "more than %d values", max);
            return fail(&s, s.pos, buf);
        }
        int64_t v = 0;
        int rc = parse_expr(&s, &v);
        if (rc != KG_OK) return rc;
        out[count++] = v;
        skip_space(&s);
        if (text[s.pos] == '\0') break;
        if (text[s.pos] != ',') return fail(&s, s.pos, "expected an operator, ',' or the end");
        s.pos++;
    }
    if (n != NULL) *n = count;
    return KG_OK;
}

int kg_expr_eval_list(const char *what, const char *text, const kg_case *c, int64_t *out,
                      int max, int64_t fill, int *n, kg_err *err)
{
    if (c == NULL) return kg_errorf(err, KG_EINTERNAL, "%s expression evaluated without a case", what);
    return eval_list(what, text, c, out, max, fill, n, err);
}

int kg_expr_eval(const char *what, const char *text, const kg_case *c, int64_t *out,
                 kg_err *err)
{
    int n = 0;
    int rc = kg_expr_eval_list(what, text, c, out, 1, 0, &n, err);
    if (rc != KG_OK) return rc;
    if (n == 0) return kg_errorf(err, KG_EINPUT, "%s expression is empty", what);
    return KG_OK;
}

int kg_expr_check_list(const char *what, const char *text, int max, kg_err *err)
{
    int64_t vals[8];
    if (max < 1 || max > 8) return kg_errorf(err, KG_EINTERNAL, "expression list of %d values", max);
    return eval_list(what, text, NULL, vals, max, 1, NULL, err);
}

/* ---- conditions (an arm's `requires`) ---- */

/* The comparison at s->pos: its code ('=' '!' '<' 'l' '>' 'g') and its
 * length, or 0. */
static int cmp_op(const expr_state *s, int *len)
{
    const char *p = s->text + s->pos;
    *len = 2;
    if (p[0] == '=' && p[1] == '=') return '=';
    if (p[0] == '!' && p[1] == '=') return '!';
    if (p[0] == '<' && p[1] == '=') return 'l';
    if (p[0] == '>' && p[1] == '=') return 'g';
    *len = 1;
    if (p[0] == '<') return '<';
    if (p[0] == '>') return '>';
    return 0;
}

static int cmp_holds(int op, int64_t a, int64_t b)
{
    switch (op) {
    case '=': return a == b;
    case '!': return a != b;
    case '<': return a < b;
    case 'l': return a <= b;
    case '>': return a > b;
    default: return a >= b;
    }
}

static int eval_conds(const char *what, const char *text, const kg_case *c, int *ok, char *failed,
                      size_t cap, kg_err *err)
{
    expr_state s = { what, text, 0, c, err };
    *ok = 1;
    if (failed != NULL && cap > 0) failed[0] = '\0';
    skip_space(&s);
    if (text[s.pos] == '\0') return KG_OK;
    for (;;) {
        skip_space(&s);
        size_t start = s.pos;
        int64_t a = 0, b = 0;
        int rc = parse_expr(&s, &a);
        if (rc != KG_OK) return rc;
        skip_space(&s);
        int len = 0, op = cmp_op(&s, &len);
        if (op == 0) return fail(&s, s.pos, "expected a comparison (==, !=, <, <=, >, >=)");
        s.pos += (size_t)len;
        if ((rc = parse_expr(&s, &b)) != KG_OK) return rc;
        size_t end = s.pos;
        skip_space(&s);
        if (c != NULL && *ok && !cmp_holds(op, a, b)) {
            *ok = 0;
            while (end > start && isspace((unsigned char)text[end - 1])) end--;
            if (failed != NULL && cap > 0)
                snprintf(failed, cap, "%.*s (%lld against %lld)", (int)(end - start), text + start,
                         (long long)a, (long long)b);
        }
        if (text[s.pos] == '\0') break;
        if (text[s.pos] != ',') return fail(&s, s.pos, "expected an operator, ',' or the end");
        s.pos++;
    }
    return KG_OK;
}

int kg_expr_eval_conds(const char *what, const char *text, const kg_case *c, int *ok, char *failed,
                       size_t cap, kg_err *err)
{
    if (c == NULL) return kg_errorf(err, KG_EINTERNAL, "%s evaluated without a case", what);
    return eval_conds(what, text, c, ok, failed, cap, err);
}

int kg_expr_check_conds(const char *what, const char *text, kg_err *err)
{
    int ok = 1;
    return eval_conds(what, text, NULL, &ok, NULL, 0, err);
}

int kg_plan_check_arm_names(const kg_plan *plan, kg_err *err)
{
    for (int a = 0; a < plan->narms; a++) {
        const kg_arm *arm = &plan->arms[a];
        for (int c = 0; c < plan->ncases; c++) {
            const kg_case *kc = &plan->cases[c];
            if (strcmp(kc->op, arm->op) != 0 || !kg_plan_arm_applies(plan, a, c)) continue;
            const char *what[] = { "grid", "block", "shared", "grid2", "block2", "shared2", "grid3", "block3",
                                   "shared3" };
            const char *text[] = { arm->grid, arm->block, arm->shared, arm->extra[0].grid, arm->extra[0].block,
                                   arm->extra[0].shared, arm->extra[1].grid, arm->extra[1].block,
                                   arm->extra[1].shared };
            for (size_t k = 0; k < sizeof what / sizeof what[0]; k++) {
                if (text[k][0] == '\0') continue;
                int64_t v[3];
                kg_err e = { 0 };
                if (kg_expr_eval_list(what[k], text[k], kc, v, 3, 1, NULL, &e) != KG_OK &&
                    (strstr(e.msg, "unknown name") != NULL || strstr(e.msg, "does not set") != NULL))
                    return kg_errorf(err, KG_EINPUT, "%s:%d: arm '%s': %s", plan->path, arm->line, arm->name, e.msg);
            }
            int ok = 1;
            kg_err e = { 0 };
            if (arm->requires[0] != '\0' &&
                kg_expr_eval_conds("requires", arm->requires, kc, &ok, NULL, 0, &e) != KG_OK &&
                (strstr(e.msg, "unknown name") != NULL || strstr(e.msg, "does not set") != NULL))
                return kg_errorf(err, KG_EINPUT, "%s:%d: arm '%s': %s", plan->path, arm->line, arm->name, e.msg);
        }
    }
    return KG_OK;
}
