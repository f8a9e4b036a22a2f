/* lookup.c: the queries of a parsed plan (kgate/plan.h): cases, arms
 * and ops by name, which arms run on which case, the names of variants,
 * case variables, dtypes and roles, source paths; and the syntax of
 * names and name lists the parser shares (plan_impl.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "plan/plan_impl.h"

int plan_simple_name_ok(const char *s, size_t len)
{
    if (len < 1 || len > KG_NAME_MAX - 1) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isalnum(c) || c == '_' || c == '.' || c == '-') || c >= 0x80) return 0;
    }
    return 1;
}

int plan_ident_ok(const char *s)
{
    size_t len = strlen(s);
    if (len < 1 || len > KG_NAME_MAX - 1) return 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80 || !(isalnum(c) || c == '_')) return 0;
    }
    return 1;
}

/* A character of an axis value: a letter, a digit, '_', '.', '-' or '+'. */
int plan_axis_char(unsigned char c)
{
    return c < 0x80 && (isalnum(c) || c == '_' || c == '.' || c == '-' || c == '+');
}

/* An expanded name, the name of one variant of a section with axes:
 * BASE[A=1] or BASE[A=1,B=2]; BASE and each axis name as plan_simple_name_ok, each
 * value 1+ plan_axis_char; 63 characters at most in all. */
int plan_expanded_name_ok(const char *s, size_t len)
{
    if (len < 4 || len > KG_NAME_MAX - 1 || s[len - 1] != ']') return 0;
    const char *open = memchr(s, '[', len);
    if (open == NULL || !plan_simple_name_ok(s, (size_t)(open - s))) return 0;
    const char *p = open + 1, *end = s + len - 1;
    if (p == end) return 0;
    for (;;) {
        const char *q = p;
        while (q < end && *q != '=') q++;
        if (q == end || !plan_simple_name_ok(p, (size_t)(q - p))) return 0;
        p = q + 1;
        q = p;
        while (q < end && *q != ',') q++;
        if (q == p) return 0;
        for (const char *c = p; c < q; c++)
            if (!plan_axis_char((unsigned char)*c)) return 0;
        if (q == end) return 1;
        p = q + 1;
        if (p == end) return 0;
    }
}

/* A case or arm name: a plain one or an expanded one. */
int plan_any_name_ok(const char *s, size_t len) { return plan_simple_name_ok(s, len) || plan_expanded_name_ok(s, len); }

/* Length of the first item of the comma-separated list at p; a comma
 * inside [...] (an expanded name's) does not end it. */
size_t plan_list_item(const char *p)
{
    size_t i = 0;
    int depth = 0;
    for (; p[i] != '\0'; i++) {
        if (p[i] == '[') depth++;
        else if (p[i] == ']' && depth > 0) depth--;
        else if (p[i] == ',' && depth == 0) break;
    }
    return i;
}

/* 1 when the list item p[0..l) names the case or arm `name`: its name, or
 * the base of a variant (the item "sq" names sq[M=96] and sq[M=256]). */
int plan_item_names(const char *p, size_t l, const char *name)
{
    return strncmp(name, p, l) == 0 && (name[l] == '\0' || name[l] == '[');
}

int plan_list_has(const char *list, const char *name)
{
    const char *p = list;
    while (*p) {
        size_t l = plan_list_item(p);
        if (plan_item_names(p, l, name)) return 1;
        if (p[l] == '\0') break;
        p += l + 1;
    }
    return 0;
}

void kg_plan_free(kg_plan *plan)
{
    if (plan == NULL) return;
    free(plan->cases);
    free(plan->arms);
    free(plan->canonical);
    free(plan);
}

int kg_case_var(const kg_case *c, const char *name, kg_var_type *type, int64_t *i, double *r)
{
    if (c == NULL || name == NULL) return 0;
    const struct { const char *n; int64_t v; } ints[] = { { "M", c->M }, { "N", c->N }, { "K", c->K },
                                                        { "splits", c->splits } };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
        if (strcmp(name, ints[k].n) == 0) {
            if (ints[k].v < 0) return 0;
            if (type) *type = KG_VAR_INT;
            if (i) *i = ints[k].v;
            if (r) *r = (double)ints[k].v;
            return 1;
        }
    if (strcmp(name, "eps") == 0 || strcmp(name, "scale") == 0) {
        double v = name[0] == 'e' ? c->eps : c->scale;
        if (type) *type = KG_VAR_REAL;
        if (i) *i = (int64_t)v;
        if (r) *r = v;
        return 1;
    }
    for (int k = 0; k < c->nvars; k++)
        if (strcmp(name, c->vars[k].name) == 0) {
            if (type) *type = c->vars[k].type;
            if (i) *i = c->vars[k].i;
            if (r) *r = c->vars[k].r;
            return 1;
        }
    return 0;
}

int kg_var_is_shape(const char *name)
{
    return strcmp(name, "M") == 0 || strcmp(name, "N") == 0 || strcmp(name, "K") == 0 || strcmp(name, "splits") == 0;
}

void kg_case_var_order(const kg_case *c, int order[KG_CASE_VARS])
{
    int done[KG_CASE_VARS] = { 0 };
    for (int k = 0; k < c->nvars; k++) {
        int best = -1;
        for (int j = 0; j < c->nvars; j++)
            if (!done[j] && (best < 0 || strcmp(c->vars[j].name, c->vars[best].name) < 0)) best = j;
        done[best] = 1;
        order[k] = best;
    }
}

void kg_plan_op_source_path(const kg_plan *plan, int o, char *out, size_t cap)
{
    const char *src = plan->ops[o].source;
    if (src[0] == '/' || plan->base_dir[0] == '\0') snprintf(out, cap, "%s", src);
    else snprintf(out, cap, "%s/%s", plan->base_dir, src);
}

int kg_plan_find_op(const kg_plan *plan, const char *name)
{
    if (plan == NULL || name == NULL) return -1;
    for (int i = 0; i < plan->nops; i++)
        if (strcmp(plan->ops[i].name, name) == 0) return i;
    return -1;
}

int kg_plan_find_case(const kg_plan *plan, const char *name)
{
    if (plan == NULL || name == NULL) return -1;
    for (int i = 0; i < plan->ncases; i++)
        if (strcmp(plan->cases[i].name, name) == 0) return i;
    return -1;
}

int kg_plan_find_arm(const kg_plan *plan, const char *name)
{
    if (plan == NULL || name == NULL) return -1;
    for (int i = 0; i < plan->narms; i++)
        if (strcmp(plan->arms[i].name, name) == 0) return i;
    return -1;
}

int kg_plan_arm_applies(const kg_plan *plan, int a, int c)
{
    if (plan == NULL || a < 0 || a >= plan->narms || c < 0 || c >= plan->ncases) return 0;
    const kg_arm *arm = &plan->arms[a];
    const kg_case *cs = &plan->cases[c];
    if (strcmp(arm->op, cs->op) != 0) return 0;
    return arm->cases[0] == '\0' || plan_list_has(arm->cases, cs->name);
}

size_t kg_plan_name_base(const char *name)
{
    if (name == NULL) return 0;
    const char *open = strchr(name, '[');
    return open != NULL && open != name && plan_expanded_name_ok(name, strlen(name)) ? (size_t)(open - name) : 0;
}

/* The j-th "AXIS=VALUE" of expanded name nm: its axis and value spans; 0 when it has none. */
int kg_plan_name_axis(const char *nm, int j, const char **ax, size_t *axl, const char **val, size_t *vall)
{
    const char *p = strchr(nm, '[');
    if (p == NULL) return 0;
    p++;
    for (int k = 0; *p != '\0' && *p != ']'; k++) {
        const char *eq = strchr(p, '='), *e = p + strcspn(p, ",]");
        if (eq == NULL || eq > e) return 0;
        if (k == j) {
            *ax = p;
            *axl = (size_t)(eq - p);
            *val = eq + 1;
            *vall = (size_t)(e - eq - 1);
            return 1;
        }
        p = *e == ',' ? e + 1 : e;
    }
    return 0;
}

int kg_plan_axes_text(const kg_plan *plan, int is_arm, int i, char *buf, size_t cap)
{
    if (cap > 0) buf[0] = '\0';
    int n = plan == NULL ? 0 : is_arm ? plan->narms : plan->ncases;
    if (i < 0 || i >= n || cap == 0) return 0;
#define NAME_AT(k) (is_arm ? plan->arms[k].name : plan->cases[k].name)
    const char *nm = NAME_AT(i);
    size_t b = kg_plan_name_base(nm);
    if (b == 0) return 0;
    int count = 0;
    for (int k = 0; k < n; k++)
        count += kg_plan_name_base(NAME_AT(k)) == b && strncmp(NAME_AT(k), nm, b) == 0;
    size_t o = 0;
    const char *ax, *val;
    size_t axl, vall;
    for (int j = 0; kg_plan_name_axis(nm, j, &ax, &axl, &val, &vall) && o < cap; j++) {
        o += (size_t)snprintf(buf + o, cap - o, "%s%.*s =", j ? "; " : "", (int)axl, ax);
        /* its values, each once, in the order the variants come */
        int nv = 0;
        for (int k = 0; k < n && o < cap; k++) {
            const char *vk = NAME_AT(k), *axk, *valk;
            size_t axlk, vallk;
            if (!(kg_plan_name_base(vk) == b && strncmp(vk, nm, b) == 0)) continue;
            if (!kg_plan_name_axis(vk, j, &axk, &axlk, &valk, &vallk)) continue;
            int seen = 0;
            for (int q = 0; q < k && !seen; q++) {
                const char *vq = NAME_AT(q), *axq, *valq;
                size_t axlq, vallq;
                seen = kg_plan_name_base(vq) == b && strncmp(vq, nm, b) == 0 &&
                       kg_plan_name_axis(vq, j, &axq, &axlq, &valq, &vallq) && vallq == vallk &&
                       memcmp(valq, valk, vallk) == 0;
            }
            if (seen) continue;
            o += (size_t)snprintf(buf + o, cap - o, "%s %.*s", nv++ ? "," : "", (int)vallk, valk);
        }
    }
#undef NAME_AT
    return count;
}

int kg_arm_is_image(const kg_arm *arm)
{
    return arm != NULL && arm->image[0] != '\0';
}

kg_image_kind kg_image_kind_of(const char *path)
{
    if (path == NULL) return KG_IMAGE_NONE;
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (dot == NULL || dot == base) return KG_IMAGE_NONE;
    if (strcmp(dot, ".so") == 0) return KG_IMAGE_SO;
    if (strcmp(dot, ".cubin") == 0) return KG_IMAGE_CUBIN;
    if (strcmp(dot, ".ptx") == 0) return KG_IMAGE_PTX;
    if (strcmp(dot, ".fatbin") == 0) return KG_IMAGE_FATBIN;
    return KG_IMAGE_NONE;
}

const char *kg_image_kind_name(kg_image_kind k)
{
    switch (k) {
    case KG_IMAGE_SO: return "so";
    case KG_IMAGE_CUBIN: return "cubin";
    case KG_IMAGE_PTX: return "ptx";
    case KG_IMAGE_FATBIN: return "fatbin";
    case KG_IMAGE_NONE: break;
    }
    return "none";
}

int kg_plan_source_path(const kg_plan *plan, int a, char *out, size_t cap, kg_err *err)
{
    if (plan == NULL || out == NULL || cap == 0 || a < 0 || a >= plan->narms)
        return kg_errorf(err, KG_EINTERNAL, "kg_plan_source_path: bad arguments");
    out[0] = '\0';
    const kg_arm *arm = &plan->arms[a];
    /* a control's source is written in its baseline's section */
    int where = a;
    if (arm->role == KG_ROLE_CONTROL) {
        int o = kg_plan_find_arm(plan, arm->of);
        if (o >= 0) where = o;
    }
    int line = plan->arms[where].line;
    char shown[PLAN_SHOW_MAX * 4 + 16];
    int image = kg_arm_is_image(arm);
    const char *file = image ? arm->image : arm->source;
    const char *what = image ? "kernel image" : "kernel source";
    if (file[0] == '\0')
        return kg_errorf(err, KG_EINPUT,
                         "%s:%d: arm has no source: '%s' (it is a builtin arm: %s)", plan->path,
                         line, arm->name, arm->builtin[0] ? arm->builtin : "none");
    int n;
    if (file[0] == '/' || plan->base_dir[0] == '\0')
        n = snprintf(out, cap, "%s", file);
    else
        n = snprintf(out, cap, "%s/%s", plan->base_dir, file);
    if (n < 0 || (size_t)n >= cap) {
        plan_show_text(shown, sizeof shown, file, strlen(file));
        out[0] = '\0';
        return kg_errorf(err, KG_EINPUT, "%s:%d: %s path too long: '%s' (shorten it)",
                         plan->path, line, what, shown);
    }
    struct stat st;
    if (stat(out, &st) != 0 || !S_ISREG(st.st_mode)) {
        plan_show_text(shown, sizeof shown, out, strlen(out));
        int exists = stat(out, &st) == 0;
        out[0] = '\0';
        return kg_errorf(err, KG_EINPUT,
                         "%s:%d: %s %s: '%s' (fix '%s' of [arm %s]; relative "
                         "paths start at the plan's folder %s)",
                         plan->path, line, what, exists ? "is not a regular file" : "not found", shown,
                         image ? "image" : "source", plan->arms[where].name, plan->base_dir);
    }
    return KG_OK;
}

const char *kg_dtype_name(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F32: return "f32";
    case KG_DT_F16: return "f16";
    case KG_DT_BF16: return "bf16";
    case KG_DT_F64: return "f64";
    case KG_DT_I32: return "i32";
    case KG_DT_I8: return "i8";
    case KG_DT_E4M3: return "e4m3";
    case KG_DT_E5M2: return "e5m2";
    }
    return "?";
}

size_t kg_dtype_size(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F32: return 4;
    case KG_DT_F16: return 2;
    case KG_DT_BF16: return 2;
    case KG_DT_F64: return 8;
    case KG_DT_I32: return 4;
    case KG_DT_I8: case KG_DT_E4M3: case KG_DT_E5M2: return 1;
    }
    return 0;
}

const char *kg_role_name(kg_role role)
{
    switch (role) {
    case KG_ROLE_BASELINE: return "baseline";
    case KG_ROLE_CANDIDATE: return "candidate";
    case KG_ROLE_CONTROL: return "control";
    case KG_ROLE_REFERENCE: return "reference";
    }
    return "?";
}

int kg_plan_square(const kg_plan *plan)
{
    long long need = 1;
    for (int c = 0; c < plan->ncases; c++) {
        long long n = 0;
        for (int a = 0; a < plan->narms; a++) n += kg_plan_arm_applies(plan, a, c);
        if (n < 1) continue;
        long long g = need, h = n;
        while (h != 0) {
            long long t = g % h;
            g = h;
            h = t;
        }
        need = need / g * n;
        if (need > KG_PLAN_MAX_PROCESSES) return KG_PLAN_MAX_PROCESSES + 1;
    }
    return (int)need;
}
