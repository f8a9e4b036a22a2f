/* cases.c: a case's op variables (keys of [case] outside the key
 * table) and the sections of ops declared in the plan, [op NAME]
 * (docs/ops.md): their keys, and each op's source found and hashed. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "plan/plan_impl.h"
#include "base/util.h"

/* A key of [case] outside the key table: a variable of the case's op
 * (kg_plan_check_ops checks it against the op's declaration).  A value
 * that is one list, S = {128, 256}, is an axis over the variable: the
 * case expands like a case with axes over its keys. */
int plan_case_var(plan_ctx *ctx, const char *name, const char *v, int line, const char *ltext, size_t llen)
{
    kg_case *c = &ctx->plan->cases[ctx->idx];
    for (int i = 0; i < c->nvars; i++)
        if (strcmp(c->vars[i].name, name) == 0) {
            plan_perr(ctx, line, "duplicate key", ltext, llen, "variable '%s' is already set in case '%s'", name,
                 c->name);
            return 1;
        }
    if (c->nvars >= KG_CASE_VARS) {
        plan_perr(ctx, line, "too many variables", ltext, llen, "a case sets at most %d op variables", KG_CASE_VARS);
        return 1;
    }
    kg_var *x = &c->vars[c->nvars];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    if (strpbrk(v, "{}") != NULL) {
        size_t vl = strlen(v);
        if (v[0] != '{' || vl < 2 || v[vl - 1] != '}' || strchr(v + 1, '{') != NULL || strchr(v, '}') != v + vl - 1) {
            plan_perr(ctx, line, "an op variable's axis is its whole value", ltext, llen,
                 "write %s = {a, b, c}: one list, nothing before or after it", name);
            return 1;
        }
        if (plan_parse_axes_of(ctx, AXIS_VAR(c->nvars), name, v, line, ltext, llen) != 0) return 1;
        /* the values are set when the section expands (expand_kind); the
         * text stays the list until then */
        snprintf(x->text, sizeof x->text, "%.*s", (int)(sizeof x->text - 1), v);
        c->nvars++;
        return 1;
    }
    if (plan_set_var_value(ctx, x, v, line, ltext, llen) != 0) return 1;
    c->nvars++;
    return 1;
}

/* The keys of [op NAME]: source (required) and sha256 (the source's, as
 * the canonical form writes it). */
int plan_op_key(plan_ctx *ctx, const char *name, const char *v, int line, const char *ltext, size_t llen)
{
    kg_opdecl *od = &ctx->plan->ops[ctx->idx];
    int is_src = strcmp(name, "source") == 0, is_sha = strcmp(name, "sha256") == 0;
    if (plan_pyop_is_key(name)) return plan_pyop_key(ctx, od, name, v, line, ltext, llen);
    if (!is_src && !is_sha) {
        plan_perr(ctx, line, "unknown key", name, strlen(name), "keys of [op]: source sha256 (a C op); reference "
                  "tensors vars inputs outputs requires flops bytes heldout bound rtol atol (an op in Python)");
        return 1;
    }
    if (is_src && od->python) {
        plan_perr(ctx, line, "both source and reference", ltext, llen, "an op is C (source = FILE.c) or Python "
                  "(reference = python:FILE:FUNCTION), not both: remove one");
        return 1;
    }
    char *dst = is_src ? od->source : od->sha256;
    if (dst[0] != '\0') {
        plan_perr(ctx, line, "duplicate key", ltext, llen, "'%s' is already set in op '%s'", name, od->name);
        return 1;
    }
    size_t vl = strlen(v);
    if (vl == 0) {
        plan_perr(ctx, line, "missing value", ltext, llen, is_src ? "source: the op's C file, e.g. ops/conv1d.c"
                                                            : "sha256: 64 lowercase hex digits");
        return 1;
    }
    if (is_src && vl >= sizeof od->source) {
        plan_perr(ctx, line, "value too long", ltext, llen, "keep paths under %d characters", (int)sizeof od->source);
        return 1;
    }
    if (is_sha && (vl != 64 || strspn(v, "0123456789abcdef") != 64)) {
        plan_perr(ctx, line, "bad sha256", ltext, llen, "64 lowercase hex digits (kgate writes it; leave it out)");
        return 1;
    }
    memcpy(dst, v, vl + 1);
    return 1;
}

/* [op NAME]: a source, found beside the plan and hashed; a sha256
 * written in the plan (a canonical plan) must be the source's.  A
 * canonical plan read from an evidence folder takes the folder's copy,
 * sources/op-NAME.c, wherever the plan's source is (an absolute path may
 * name a file edited since the campaign); one read where neither is
 * keeps the sha256 as written. */
void plan_check_op(plan_ctx *ctx, int o)
{
    kg_plan *plan = ctx->plan;
    kg_opdecl *od = &plan->ops[o];
    size_t l;
    const char *t = plan_line_text(ctx, od->line, &l);
    if (od->source[0] == '\0') {
        plan_perr(ctx, od->line, "op has no source", t, l, "add source = the op's C file, or reference = "
                  "python:FILE:FUNCTION (docs/ops.md)");
        return;
    }
    int other = plan_pyop_other_key(od);
    if (!od->python && other >= 0) {
        int ln = od->py.lines[other];
        const char *kt = plan_line_text(ctx, ln, &l);
        plan_perr(ctx, ln, "a Python op's key on a C op", kt, l, "'%s' belongs to an op declared with reference = "
                  "python:FILE:FUNCTION; a C op declares it in its source: remove the line", plan_pyop_key_name(other));
        return;
    }
    if (od->python) {
        plan_pyop_check(ctx, o);
        if (ctx->failed) return;
    }
    char path[2 * KG_PATH_MAX + 2];
    kg_plan_op_source_path(plan, o, path, sizeof path);
    if (od->sha256[0] != '\0' && plan->base_dir[0] != '\0') {
        char copy[2 * KG_PATH_MAX + 2], rel[KG_NAME_MAX + 16];
        kg_plan_op_copy_name(plan, o, rel, sizeof rel);
        snprintf(copy, sizeof copy, "%s/sources/%s", plan->base_dir, rel);
        struct stat st;
        if (stat(copy, &st) == 0) snprintf(path, sizeof path, "%s", copy);
    }
    char hex[65];
    kg_err e = { 0 };
    if (kg_sha256_file(path, hex, &e) != KG_OK) {
        if (od->sha256[0] != '\0') return;
        int ln = od->python && od->py.lines[KG_PYK_REFERENCE] ? od->py.lines[KG_PYK_REFERENCE] : od->line;
        if (ln != od->line) t = plan_line_text(ctx, ln, &l);
        plan_perr(ctx, ln, od->python ? "op reference file not found" : "op source not found", t, l, "%s: %s", path,
                  e.msg);
        return;
    }
    if (od->sha256[0] != '\0' && strcmp(od->sha256, hex) != 0) {
        plan_perr(ctx, od->line, od->python ? "op reference changed" : "op source changed", t, l, "%s hashes to "
                  "%.12s, the plan says %.12s: remove the sha256 line to take the file as it is", path, hex,
                  od->sha256);
        return;
    }
    memcpy(od->sha256, hex, sizeof hex);
}
