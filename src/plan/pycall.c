/* pycall.c: a user's Python call as a library arm, `call =
 * python:FILE:FUNCTION` on a builtin = torch or numpy arm
 * (docs/library-arms.md): its parts, its file beside the plan, hashed
 * into the canonical plan (call_sha256), and the plan check that the file
 * is there, unchanged, and defines FUNCTION at its top level.  The plan
 * runs no Python: whether FUNCTION is callable with the op's inputs and
 * variables is the helper's to say when the arm is built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "plan/plan_impl.h"
#include "base/util.h"

int kg_arm_is_pycall(const kg_arm *arm)
{
    return arm != NULL && strncmp(arm->call, KG_PYCALL_PREFIX, strlen(KG_PYCALL_PREFIX)) == 0;
}

int kg_arm_pycall_parts(const kg_arm *arm, char *file, size_t fcap, char *func, size_t ncap)
{
    if (!kg_arm_is_pycall(arm)) return -1;
    const char *p = arm->call + strlen(KG_PYCALL_PREFIX);
    const char *colon = strrchr(p, ':');
    if (colon == NULL) return -1;
    size_t fl = (size_t)(colon - p), nl = strlen(colon + 1);
    if (fl >= fcap || nl >= ncap) return -1;
    memcpy(file, p, fl);
    file[fl] = '\0';
    memcpy(func, colon + 1, nl + 1);
    return 0;
}

void kg_plan_call_path(const kg_plan *plan, int a, char *out, size_t cap)
{
    char file[KG_TEXT_MAX], func[KG_TEXT_MAX];
    out[0] = '\0';
    if (a < 0 || a >= plan->narms || kg_arm_pycall_parts(&plan->arms[a], file, sizeof file, func, sizeof func) != 0)
        return;
    if (file[0] == '/' || plan->base_dir[0] == '\0') snprintf(out, cap, "%s", file);
    else snprintf(out, cap, "%s/%s", plan->base_dir, file);
}

void kg_plan_call_copy(const kg_plan *plan, int a, char *out, size_t cap)
{
    out[0] = '\0';
    if (a >= 0 && a < plan->narms && kg_arm_is_pycall(&plan->arms[a]))
        snprintf(out, cap, "sources/call-%s.py", plan->arms[a].name);
}

/* 1 when s[0..n) is a Python identifier (ASCII). */
static int py_ident(const char *s, size_t n)
{
    if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return 0;
    }
    return 1;
}

/* Length of the identifier at p (0: none). */
static size_t ident_len(const char *p)
{
    size_t n = 0;
    while (py_ident(p, n + 1)) n++;
    return n;
}

/* What the file's top level says of name: 'f' a def, 'a' an async def,
 * 'c' a class, '=' an assignment or import of that name, 0 none; the
 * top-level defs are listed into defs (for the message). */
static int top_level(const char *text, const char *name, char *defs, size_t cap)
{
    size_t nl = strlen(name), used = 0;
    int found = 0;
    defs[0] = '\0';
    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        const char *p = line;
        int kind = 0;
        if (strncmp(p, "async def ", 10) == 0) kind = 'a', p += 10;
        else if (strncmp(p, "def ", 4) == 0) kind = 'f', p += 4;
        else if (strncmp(p, "class ", 6) == 0) kind = 'c', p += 6;
        while (kind && *p == ' ') p++;
        size_t il = ident_len(p);
        if (kind == 'f' && il > 0) {
            int w = snprintf(defs + used, cap - used, "%s%.*s", used ? ", " : "", (int)il, p);
            if (w > 0 && (size_t)w < cap - used) used += (size_t)w;
        }
        if (kind && il == nl && strncmp(p, name, nl) == 0 && !found) found = kind;
        if (!kind && !found && il == nl && strncmp(p, name, nl) == 0) {
            const char *q = p + il;
            while (*q == ' ' || *q == '\t') q++;
            if ((*q == '=' && q[1] != '=') || *q == ':') found = '=';
        }
        if (!kind && !found && (strncmp(p, "from ", 5) == 0 || strncmp(p, "import ", 7) == 0)) {
            /* "from m import a, NAME" or "import m as NAME": the name as a word of the line */
            size_t ll = end != NULL ? (size_t)(end - p) : strlen(p);
            for (size_t i = 0; i + nl <= ll; i++)
                if (strncmp(p + i, name, nl) == 0 && (i == 0 || !py_ident(p + i - 1, 1)) &&
                    (i + nl == ll || !py_ident(p + i + nl, 1)) && i > 0 && p[i - 1] == ' ')
                    found = '=';
        }
        line = end != NULL ? end + 1 : NULL;
    }
    return found;
}

/* The file's text: the evidence folder's copy where the plan is one
 * (a written call_sha256 and sources/call-ARM.py beside it), else FILE
 * beside the plan.  NULL when neither can be read (why in e). */
static char *call_text(const kg_plan *plan, int a, char *path, size_t cap, size_t *len, kg_err *e)
{
    const kg_arm *arm = &plan->arms[a];
    kg_plan_call_path(plan, a, path, cap);
    if (arm->call_sha256[0] != '\0' && plan->base_dir[0] != '\0') {
        char copy[KG_PATH_MAX + KG_NAME_MAX + 32];
        struct stat st;
        snprintf(copy, sizeof copy, "%s/sources/call-%s.py", plan->base_dir, arm->name);
        if (stat(copy, &st) == 0) snprintf(path, cap, "%s", copy);
    }
    char *text = NULL;
    if (kg_read_file(path, &text, len, e) != KG_OK) return NULL;
    return text;
}

/* The function named, at the file's top level, by its text. */
static void check_function(plan_ctx *ctx, int line, const char *shown, const char *path, const char *text,
                           const char *func)
{
    char defs[400];
    int kind = top_level(text, func, defs, sizeof defs);
    if (kind == 'f' || kind == '=') return;
    if (kind == 'a')
        plan_perr(ctx, line, "call is a coroutine function", shown, strlen(shown), "%s: 'async def %s': kgate calls "
                  "it and takes what it returns; make it a plain def", path, func);
    else if (kind == 'c')
        plan_perr(ctx, line, "call is not a function", shown, strlen(shown), "%s: '%s' is a class; name a function "
                  "that takes the op's inputs and returns its outputs", path, func);
    else
        plan_perr(ctx, line, "call function not found", shown, strlen(shown), "%s defines no '%s' at its top level "
                  "(its functions: %s); name one of them, or add 'def %s(...)'", path, func,
                  defs[0] ? defs : "none", func);
}

void plan_check_pycall(plan_ctx *ctx, int a)
{
    kg_arm *arm = &ctx->plan->arms[a];
    int line = ctx->arm_lines[a].at[plan_key_index(SEC_ARM, "call")];
    int sline = ctx->arm_lines[a].at[plan_key_index(SEC_ARM, "call_sha256")];
    size_t l;
    if (!kg_arm_is_pycall(arm)) {
        if (sline) {
            const char *t = plan_line_text(ctx, sline, &l);
            plan_perr(ctx, sline, "call_sha256 without a python call", t, l,
                      "call_sha256 is the file's of call = python:FILE:FUNCTION; remove it");
        }
        return;
    }
    char shown[PLAN_SHOW_MAX * 4 + 16], file[KG_TEXT_MAX], func[KG_TEXT_MAX];
    plan_show_text(shown, sizeof shown, arm->call, strlen(arm->call));
    if (kg_arm_pycall_parts(arm, file, sizeof file, func, sizeof func) != 0 || file[0] == '\0' ||
        !py_ident(func, strlen(func))) {
        plan_perr(ctx, line, "bad python call", shown, strlen(shown), "call = python:FILE:FUNCTION: FILE a .py file "
                  "beside the plan, FUNCTION a Python name it defines, e.g. python:saxpy_ref.py:saxpy_torch");
        return;
    }
    size_t fl = strlen(file);
    if (fl < 4 || strcmp(file + fl - 3, ".py") != 0) {
        plan_perr(ctx, line, "call file is not a .py file", shown, strlen(shown), "name the Python module that "
                  "defines %s, e.g. python:%s_ref.py:%s", func, func, func);
        return;
    }
    if (sline && (strlen(arm->call_sha256) != 64 || strspn(arm->call_sha256, "0123456789abcdef") != 64)) {
        const char *t = plan_line_text(ctx, sline, &l);
        plan_perr(ctx, sline, "bad sha256", t, l, "64 lowercase hex digits (kgate writes it; leave it out)");
        return;
    }
    char path[2 * KG_PATH_MAX + 2], hex[65];
    size_t len = 0;
    kg_err e = { 0 };
    char *text = call_text(ctx->plan, a, path, sizeof path, &len, &e);
    if (text == NULL) {
        /* a recorded plan away from its folder keeps the hash as written */
        if (arm->call_sha256[0] != '\0' && ctx->recorded) return;
        plan_perr(ctx, line, "call file not found", shown, strlen(shown), "%s: put the file beside the plan, or "
                  "name it relative to the plan's folder", e.msg);
        return;
    }
    kg_sha256_hex(text, len, hex);
    if (arm->call_sha256[0] != '\0' && strcmp(arm->call_sha256, hex) != 0) {
        plan_perr(ctx, sline ? sline : line, "call file changed", shown, strlen(shown), "%s hashes to %.12s, the "
                  "plan says %.12s: remove the call_sha256 line to take the file as it is", path, hex,
                  arm->call_sha256);
        free(text);
        return;
    }
    if (strlen(text) != len)
        plan_perr(ctx, line, "call file is not text", shown, strlen(shown), "%s holds a NUL byte; name a Python "
                  "source file", path);
    else
        check_function(ctx, line, shown, path, text, func);
    free(text);
    memcpy(arm->call_sha256, hex, sizeof hex);
}
