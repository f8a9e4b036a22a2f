/* launch.c: an arm's launch specs on a case, for any GPU backend (see
 * launch.h): argument lists and launch geometry.
 *
 * Nothing here calls a device: it reads the plan's strings and the
 * case's variables, and says what is wrong with them in the plan's
 * terms. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/launch.h"
#include "plan/expr.h"

/* ---------------------------------------------------------------- args */

/* An integer (or yes/no) variable of the case, by name. */
static int var_value(const kg_case *c, const char *name, int64_t *v)
{
    kg_var_type ty;
    if (!kg_case_var(c, name, &ty, v, NULL) || ty == KG_VAR_REAL) return 0;
    return 1;
}

/* A real argument: float by default or under :f32, double under :f64. */
static int real_arg(kg_carg *a, double rv, const char *arm, const char *tok, const char *suffix, kg_err *err)
{
    if (suffix[0] == '\0' || strcmp(suffix, "f32") == 0) {
        a->kind = KG_CARG_F32;
        a->value.f32 = (float)rv;
        return KG_OK;
    }
    if (strcmp(suffix, "f64") == 0) {
        a->kind = KG_CARG_F64;
        a->value.f64 = rv;
        return KG_OK;
    }
    return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': unknown suffix ':%s' for a real value "
                     "(use :f32 or :f64)", arm, tok, suffix);
}

/* An argument written as a value: an integer expression over the case's
 * variables (`ceildiv(N,256)`, `B*D`: the grid grammar), or a real
 * literal (`0.5`, `1e-5`), passed as the suffix says (int by default,
 * :i64; float by default, :f64). */
static int parse_expr_arg(const char *arm, const char *tok, const char *text, const char *suffix, const kg_case *c,
                          kg_carg *a, kg_err *err)
{
    char *end = NULL;
    double rv = strtod(text, &end);
    int real_lit = end != NULL && end != text && *end == '\0' && strpbrk(text, ".eE") != NULL;
    if (real_lit) return real_arg(a, rv, arm, tok, suffix, err);
    int64_t v = 0;
    int rc = kg_expr_eval("args", text, c, &v, err);
    if (rc != KG_OK) return rc;
    if (suffix[0] == '\0' || strcmp(suffix, "i32") == 0) {
        if (v < INT32_MIN || v > INT32_MAX)
            return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s' = %lld does not fit a 32-bit int for case "
                             "'%s' (write it with :i64 and take an int64_t)", arm, tok, (long long)v, c->name);
        a->kind = KG_CARG_I32;
        a->value.i32 = (int32_t)v;
        return KG_OK;
    }
    if (strcmp(suffix, "i64") == 0) {
        a->kind = KG_CARG_I64;
        a->value.i64 = v;
        return KG_OK;
    }
    return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': unknown suffix ':%s' (use :i32 or :i64)", arm, tok,
                     suffix);
}

/* A buffer's tensor map: suffix "tmap:RxC" or "tmap:RxC:swN". */
static int tmap_arg(const char *arm, const char *tok, const char *suffix, kg_carg *a, kg_err *err)
{
    unsigned r = 0, cols = 0, sw = 0;
    int used = 0, used2 = 0;
    int ok = sscanf(suffix, "tmap:%ux%u%n", &r, &cols, &used) == 2;
    if (ok && suffix[used] != '\0')
        ok = sscanf(suffix + used, ":sw%u%n", &sw, &used2) == 1 && suffix[used + used2] == '\0';
    if (!ok || strchr(suffix, '-') != NULL)
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': a tensor map is written NAME:tmap:RxC or "
                         "NAME:tmap:RxC:swN (a box of R rows and C columns; swizzle N = 32, 64 or 128 bytes)",
                         arm, tok);
    if (r < 1 || r > 256 || cols < 1 || cols > 256)
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': the box is %ux%u; each side is 1 to 256 "
                         "elements (the TMA's limit)", arm, tok, r, cols);
    if (sw != 0 && sw != 32 && sw != 64 && sw != 128)
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': swizzle %u bytes; the TMA swizzles 32, 64 "
                         "or 128 bytes (or leave :swN out for none)", arm, tok, sw);
    a->tmap.out = a->kind == KG_CARG_OUT;
    a->tmap.box[0] = r;
    a->tmap.box[1] = cols;
    a->tmap.swizzle = sw;
    a->kind = KG_CARG_TMAP;
    return KG_OK;
}

int kg_launch_tmap_shape(const char *arm, const kg_case *c, kg_carg *a, const int64_t *dims, int ndims, kg_dtype dt,
                         kg_err *err)
{
    static const int bytes[KG_DT_COUNT] = { [KG_DT_F32] = 4, [KG_DT_F16] = 2, [KG_DT_BF16] = 2, [KG_DT_F64] = 8,
                                            [KG_DT_I32] = 4, [KG_DT_I8] = 1, [KG_DT_E4M3] = 1, [KG_DT_E5M2] = 1 };
    if ((int)dt < 0 || (int)dt >= KG_DT_COUNT || bytes[dt] == 0 || ndims < 1)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': argument %s:tmap: the TMA has no type "
                         "for this buffer", arm, c->name, a->name);
    uint64_t rows = 1, cols = (uint64_t)dims[ndims - 1];
    for (int i = 0; i < ndims - 1; i++) rows *= (uint64_t)dims[i];
    uint64_t esz = (uint64_t)bytes[dt];
    const kg_carg_tmap *t = &a->tmap;
    const char *why = NULL;
    char buf[160];
    if (rows > (1ull << 32) || cols > (1ull << 32)) {
        why = "a dimension over 2^32";
    } else if (cols * esz % 16 != 0) {
        snprintf(buf, sizeof buf, "its row pitch, %llu columns x %llu bytes, is not a multiple of 16 bytes",
                 (unsigned long long)cols, (unsigned long long)esz);
        why = buf;
    } else if (t->box[1] * esz % 16 != 0) {
        snprintf(buf, sizeof buf, "a box row, %u columns x %llu bytes, is not a multiple of 16 bytes", t->box[1],
                 (unsigned long long)esz);
        why = buf;
    } else if (t->swizzle != 0 && t->box[1] * esz > t->swizzle) {
        snprintf(buf, sizeof buf, "a box row, %u columns x %llu bytes, is wider than the %u-byte swizzle",
                 t->box[1], (unsigned long long)esz, t->swizzle);
        why = buf;
    }
    if (why != NULL)
        return kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': argument %s:tmap:%ux%u: %s (the TMA "
                         "cannot address it)", arm, c->name, a->name, t->box[0], t->box[1], why);
    a->tmap.rows = rows;
    a->tmap.cols = cols;
    a->tmap.elem_bytes = (uint32_t)esz;
    a->tmap.dtype = (int32_t)dt;
    return KG_OK;
}

static int parse_one_arg(const char *arm, const char *tok, const char *const *in_names, int nin,
                         const char *const *out_names, int nout, const kg_case *c, kg_carg *a,
                         kg_err *err)
{
    char name[64];
    const char *suffix = "";
    snprintf(name, sizeof name, "%s", tok);
    char *colon = strchr(name, ':');
    if (colon != NULL) {
        *colon = '\0';
        suffix = colon + 1;
    }
    memset(a, 0, sizeof *a);
    int is_expr = strpbrk(name, "+-*/%() ") != NULL || (name[0] >= '0' && name[0] <= '9');
    if (!is_expr && strlen(name) >= sizeof a->name)
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s' is too long", arm, tok);
    snprintf(a->name, sizeof a->name, "%.31s", name);
    int is_buffer = 0;
    for (int i = 0; i < nin && !is_buffer; i++)
        if (strcmp(name, in_names[i]) == 0) { a->kind = KG_CARG_IN; a->index = i; is_buffer = 1; }
    for (int o = 0; o < nout && !is_buffer; o++)
        if (strcmp(name, out_names[o]) == 0) { a->kind = KG_CARG_OUT; a->index = o; is_buffer = 1; }
    if (!is_buffer && (strcmp(name, "WS") == 0 || strcmp(name, "ws") == 0)) {
        a->kind = KG_CARG_WS;
        is_buffer = 1;
    }
    if (!is_buffer && strcmp(name, "none") == 0 && suffix[0] == '\0') {
        a->kind = KG_CARG_NONE;
        return KG_OK;
    }
    /* a null pointer (8 zero bytes): the trailing scratch pointers of a
     * Triton kernel that uses no scratch memory, for instance */
    if (!is_buffer && strcmp(name, "null") == 0 && suffix[0] == '\0') {
        a->kind = KG_CARG_I64;
        a->value.i64 = 0;
        return KG_OK;
    }
    if (is_buffer) {
        if (suffix[0] != '\0' && strncmp(suffix, "tmap", 4) == 0 && a->kind != KG_CARG_WS)
            return tmap_arg(arm, tok, suffix, a, err);
        if (suffix[0] != '\0')
            return kg_errorf(err, KG_EINPUT,
                             "arm '%s': argument '%s': a buffer takes no type suffix but :tmap:RxC[:swN] "
                             "(a TMA tensor map of it)", arm, tok);
        return KG_OK;
    }
    int64_t v = 0;
    if (kg_var_is_shape(name) && !var_value(c, name, &v))
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': case '%s' does not set %s", arm, tok, c->name,
                         name);
    if (var_value(c, name, &v)) {
        if (v < 0)
            return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': case '%s' does not set %s",
                             arm, tok, c->name, name);
        if (suffix[0] == '\0' || strcmp(suffix, "i32") == 0) {
            if (v > INT32_MAX)
                return kg_errorf(err, KG_EINPUT,
                                 "arm '%s': argument '%s' = %lld does not fit a 32-bit int "
                                 "for case '%s' (write %s:i64 and take an int64_t)",
                                 arm, tok, (long long)v, c->name, name);
            a->kind = KG_CARG_I32;
            a->value.i32 = (int32_t)v;
            return KG_OK;
        }
        if (strcmp(suffix, "i64") == 0) {
            a->kind = KG_CARG_I64;
            a->value.i64 = v;
            return KG_OK;
        }
        return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%s': unknown suffix ':%s' "
                         "(use :i32 or :i64)", arm, tok, suffix);
    }
    if (is_expr) return parse_expr_arg(arm, tok, name, suffix, c, a, err);
    kg_var_type rty;
    double rv = 0;
    if (kg_case_var(c, name, &rty, NULL, &rv) && rty == KG_VAR_REAL) {
        /* eps, or a real variable of the op */
        return real_arg(a, rv, arm, tok, suffix, err);
    }
    char vocab[256] = "";
    size_t used = 0;
    for (int i = 0; i < nin; i++)
        used += (size_t)snprintf(vocab + used, sizeof vocab - used, "%s ", in_names[i]);
    for (int o = 0; o < nout && used < sizeof vocab; o++)
        used += (size_t)snprintf(vocab + used, sizeof vocab - used, "%s ", out_names[o]);
    if (used < sizeof vocab) snprintf(vocab + used, sizeof vocab - used, "WS M N K splits eps null, and the op's "
                                      "variables the case sets");
    return kg_errorf(err, KG_EINPUT, "arm '%s': unknown argument '%s' (the op's vocabulary: %s)",
                     arm, tok, vocab);
}

int kg_launch_args_parse(const char *arm, const char *text, const char *const *in_names, int nin,
                         const char *const *out_names, int nout, const kg_case *c,
                         kg_carg *args, int *nargs, kg_err *err)
{
    *nargs = 0;
    const char *p = text;
    int n = 0;
    for (;;) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        if (*p == '\0') break;
        const char *start = p;
        int depth = 0; /* an expression's parentheses hold commas and blanks */
        while (*p != '\0' && (depth > 0 || (*p != ',' && *p != ' ' && *p != '\t'))) {
            if (*p == '(') depth++;
            else if (*p == ')' && depth > 0) depth--;
            p++;
        }
        char tok[64];
        size_t len = (size_t)(p - start);
        if (len >= sizeof tok)
            return kg_errorf(err, KG_EINPUT, "arm '%s': argument '%.40s...' is too long", arm,
                             start);
        memcpy(tok, start, len);
        tok[len] = '\0';
        if (n == KG_LAUNCH_MAX_ARGS)
            return kg_errorf(err, KG_EINPUT, "arm '%s': more than %d kernel arguments", arm,
                             KG_LAUNCH_MAX_ARGS);
        int rc = parse_one_arg(arm, tok, in_names, nin, out_names, nout, c, &args[n], err);
        if (rc != KG_OK) return rc;
        n++;
    }
    for (int i = 0; i < n && n > 1; i++)
        if (args[i].kind == KG_CARG_NONE)
            return kg_errorf(err, KG_EINPUT, "arm '%s': 'none' must stand alone in args", arm);
    if (n == 1 && args[0].kind == KG_CARG_NONE) n = 0; /* args = none: a kernel without parameters */
    else if (n == 0)
        return kg_errorf(err, KG_EINPUT, "arm '%s': args is empty (list the kernel's parameters "
                         "in order, e.g. args = A, B, C, M, N, K, or args = none)", arm);
    *nargs = n;
    return KG_OK;
}

/* ------------------------------------------------------------ geometry */

int kg_launch_chain_length(const kg_arm *arm, int *n, kg_err *err)
{
    *n = 1;
    for (int i = 0; i < KG_EXTRA_LAUNCHES; i++) {
        if (arm->extra[i].entry[0] == '\0') continue;
        if (*n != i + 1)
            return kg_errorf(err, KG_EINPUT, "arm '%s': entry%d is set but entry%d is not (the "
                             "launches of a chain are numbered without gaps)", arm->name, i + 2,
                             i + 1);
        *n = i + 2;
    }
    return KG_OK;
}

int kg_launch_geometry(const kg_arm *arm, const kg_case *c, kg_launch_geom *g, kg_err *err)
{
    return kg_launch_geometry_at(arm, 1, c, g, err);
}

int kg_launch_geometry_at(const kg_arm *arm, int launch, const kg_case *c, kg_launch_geom *g,
                          kg_err *err)
{
    int64_t grid[3], block[3], shared = 0;
    int ng = 0, nb = 0;
    char what[KG_NAME_MAX + 32];
    memset(g, 0, sizeof *g);
    if (launch < 1 || launch > 1 + KG_EXTRA_LAUNCHES)
        return kg_errorf(err, KG_EINTERNAL, "arm '%s': no launch %d", arm->name, launch);
    const char *grid_text = launch == 1 ? arm->grid : arm->extra[launch - 2].grid;
    const char *block_text = launch == 1 ? arm->block : arm->extra[launch - 2].block;
    const char *shared_text = launch == 1 ? arm->shared : arm->extra[launch - 2].shared;
    /* the plan's key names: grid, grid2, grid3 */
    char sfx[4] = "";
    if (launch > 1) snprintf(sfx, sizeof sfx, "%d", launch);
    snprintf(what, sizeof what, "arm '%s' grid%s", arm->name, sfx);
    int rc = kg_expr_eval_list(what, grid_text, c, grid, 3, 1, &ng, err);
    if (rc != KG_OK) return rc;
    snprintf(what, sizeof what, "arm '%s' block%s", arm->name, sfx);
    rc = kg_expr_eval_list(what, block_text, c, block, 3, 1, &nb, err);
    if (rc != KG_OK) return rc;
    if (ng == 0 || nb == 0)
        return kg_errorf(err, KG_EINPUT, "arm '%s': %s%s is empty (a GPU arm declares grid%s and "
                         "block%s for every launch, e.g. grid%s = ceildiv(N, 64), ceildiv(M, 64))",
                         arm->name, ng == 0 ? "grid" : "block", sfx, sfx, sfx, sfx);
    if (shared_text[0] != '\0') {
        snprintf(what, sizeof what, "arm '%s' shared%s", arm->name, sfx);
        rc = kg_expr_eval(what, shared_text, c, &shared, err);
        if (rc != KG_OK) return rc;
    }
    static const char xyz[] = "xyz";
    for (int i = 0; i < 3; i++) {
        if (grid[i] < 1 || block[i] < 1)
            return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': %s%s.%c is %lld (must be >= 1)",
                             arm->name, c->name, grid[i] < 1 ? "grid" : "block", sfx, xyz[i],
                             (long long)(grid[i] < 1 ? grid[i] : block[i]));
    }
    if (grid[0] > INT32_MAX || grid[1] > 65535 || grid[2] > 65535)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': grid%s (%lld, %lld, %lld) exceeds "
                         "the CUDA limits (2^31-1, 65535, 65535)", arm->name, c->name, sfx,
                         (long long)grid[0], (long long)grid[1], (long long)grid[2]);
    if (block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
        block[0] * block[1] * block[2] > 1024)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': block%s (%lld, %lld, %lld) exceeds "
                         "the CUDA limits (1024 threads, z <= 64)", arm->name, c->name, sfx,
                         (long long)block[0], (long long)block[1], (long long)block[2]);
    if (shared < 0 || shared > INT32_MAX)
        return kg_errorf(err, KG_EINPUT, "arm '%s' on case '%s': shared%s = %lld bytes is out of "
                         "range", arm->name, c->name, sfx, (long long)shared);
    for (int i = 0; i < 3; i++) {
        g->grid[i] = (unsigned)grid[i];
        g->block[i] = (unsigned)block[i];
    }
    g->shared_bytes = (unsigned)shared;
    return KG_OK;
}
