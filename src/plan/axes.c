/* axes.c: axes (docs/plan-format.md, "Axes"): the {a, b} lists in the
 * values of a [case] or [arm] section, and the variants they expand the
 * section into, the Cartesian product of their values, each named
 * BASE[A=1,B=2]. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/plan_impl.h"

/* "case keys dtype M N ...; arm keys entry defines ...": the keys that take
 * axes, for messages (launch 2 and 3 keys and the fake_ keys folded). */
static void axis_keys_text(char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int sec = SEC_CASE; sec <= SEC_ARM; sec++) {
        int fake = 0;
        o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%s keys", sec == SEC_CASE ? "" : "; ",
                              plan_sec_names[sec]);
        if (sec == SEC_CASE) o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, " (and the op's variables)");
        for (int i = 0; i < plan_nkeys && o < cap; i++) {
            const plan_key *k = &plan_keys[i];
            size_t kl = strlen(k->key);
            if (k->sec != sec || !(k->flags & F_AXIS) || isdigit((unsigned char)k->key[kl - 1])) continue;
            if (strncmp(k->key, "fake_", 5) == 0 && fake++) continue;
            o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, " %s",
                                  strncmp(k->key, "fake_", 5) == 0 ? "fake_*" : k->key);
        }
    }
    if (o < cap) snprintf(buf + o, cap - o, " (and entry2, grid2, ... of launches 2 and 3)");
}

/* The axes of the current section, made on first use; NULL when out of memory. */
static sec_axes *current_axes(plan_ctx *ctx)
{
    if (ctx->naxsec > 0) {
        sec_axes *last = ctx->axes[ctx->naxsec - 1];
        if (last->sec == ctx->sec && last->idx == ctx->idx) return last;
    }
    if (ctx->naxsec == ctx->axsec_cap) {
        int ncap = ctx->axsec_cap ? ctx->axsec_cap * 2 : 8;
        sec_axes **a = realloc(ctx->axes, (size_t)ncap * sizeof *a);
        if (a == NULL) return NULL;
        ctx->axes = a;
        ctx->axsec_cap = ncap;
    }
    sec_axes *sa = calloc(1, sizeof *sa);
    if (sa == NULL) return NULL;
    sa->sec = ctx->sec;
    sa->idx = ctx->idx;
    ctx->axes[ctx->naxsec++] = sa;
    return sa;
}

static const sec_axes *find_axes(const plan_ctx *ctx, int sec, int idx)
{
    for (int i = 0; i < ctx->naxsec; i++)
        if (ctx->axes[i]->sec == sec && ctx->axes[i]->idx == idx) return ctx->axes[i];
    return NULL;
}

int plan_parse_axes(plan_ctx *ctx, int ki, const char *v, int line, const char *ltext, size_t llen)
{
    const plan_key *k = &plan_keys[ki];
    if (!(k->flags & F_AXIS)) {
        char keys[600];
        axis_keys_text(keys, sizeof keys);
        plan_perr(ctx, line, "this key takes no axis", ltext, llen, "'%s' takes one value; {a, b} lists go in %s",
             k->key, keys);
        return -1;
    }
    return plan_parse_axes_of(ctx, ki, k->key, v, line, ltext, llen);
}

/* One value being read for its axes, and where messages point. */
typedef struct axis_src {
    plan_ctx *ctx;
    const char *key, *v;
    size_t n;
    int line;
    const char *ltext;
    size_t llen;
} axis_src;

/* The name of the list v[i..j]: the key's for a whole value, else NAME
 * of "NAME={" or "-DNAME={".  0, or -1 with a message. */
static int axis_name(const axis_src *src, size_t i, size_t j, char name[KG_NAME_MAX])
{
    const char *v = src->v;
    if (i == 0 && j == src->n - 1) {
        snprintf(name, KG_NAME_MAX, "%s", src->key);
        return 0;
    }
    size_t e = i > 0 && v[i - 1] == '=' ? i - 1 : i, b = e;
    while (b > 0 && (isalnum((unsigned char)v[b - 1]) || v[b - 1] == '_')) b--;
    int starts = b == 0 || v[b - 1] == ' ' || v[b - 1] == '\t';
    if (!starts && v[b - 1] == '-' && v[b] == 'D' && (b == 1 || v[b - 2] == ' ' || v[b - 2] == '\t')) {
        starts = 1;
        b++;
    }
    if (e == i || b == e || !starts || !(isalpha((unsigned char)v[b]) || v[b] == '_') || e - b >= KG_NAME_MAX) {
        plan_perr(src->ctx, src->line, "axis without a name", src->ltext, src->llen,
                  "a list inside a value follows its name, NAME={a, b} (e.g. defines = PITCH={36, 40}); or the "
                  "whole value is the list, %s = {a, b}", src->key);
        return -1;
    }
    if (j + 1 < src->n && v[j + 1] != ' ' && v[j + 1] != '\t') {
        plan_perr(src->ctx, src->line, "text right after an axis", src->ltext, src->llen,
                  "NAME={a, b} ends its word: put a blank after '}'");
        return -1;
    }
    snprintf(name, KG_NAME_MAX, "%.*s", (int)(e - b), v + b);
    return 0;
}

/* A value's character as a variant's name holds it: a quoted value's
 * characters outside the axis characters become '_'. */
static char name_char(const plan_axis *ax, int w, char c)
{
    return ax->vquoted[w] && !plan_axis_char((unsigned char)c) ? '_' : c;
}

/* 1 when values w and u of ax give one name (or are one value) */
static int same_name(const plan_axis *ax, const char *tmpl, int w, int u)
{
    if (ax->vlen[w] != ax->vlen[u]) return 0;
    for (int t = 0; t < ax->vlen[w]; t++)
        if (name_char(ax, w, tmpl[ax->vpos[w] + t]) != name_char(ax, u, tmpl[ax->vpos[u] + t])) return 0;
    return 1;
}

/* A quoted value "..." at v[a..z) (quotes included): its text is 1 or more
 * printable characters, none of '"', '{', '}'.  0, or -1 with a message. */
static int quoted_value(const axis_src *src, const plan_axis *ax, size_t a, size_t z)
{
    const char *v = src->v;
    int ok = z - a >= 3 && v[z - 1] == '"';
    for (size_t t = a + 1; ok && t + 1 < z; t++)
        ok = v[t] >= 0x20 && v[t] < 0x7f && v[t] != '"' && v[t] != '{' && v[t] != '}';
    if (!ok)
        plan_perr(src->ctx, src->line, "bad quoted value in an axis", v + a, z - a,
                  "%s: a quoted value is \"TEXT\", TEXT 1 or more printable characters without '\"', '{' or '}' "
                  "(e.g. {\"-O2 -march=native\", -O3})", ax->name);
    return ok ? 0 : -1;
}

/* The end of the item of the list v[p..j) that starts at p: the next
 * comma outside quotes, or j. */
static size_t item_end(const char *v, size_t p, size_t j)
{
    int in = 0;
    size_t q = p;
    for (; q < j && (in || v[q] != ','); q++)
        if (v[q] == '"') in = !in;
    return q;
}

/* The values of the list v[i..j] (i at '{', j at '}') into ax: each
 * non-empty, of axis characters or quoted, once.  0, or -1 with a message. */
static int axis_values(const axis_src *src, plan_axis *ax, size_t i, size_t j)
{
    const char *v = src->v;
    plan_ctx *ctx = src->ctx;
    for (size_t p = i + 1; p <= j;) {
        size_t q = item_end(v, p, j);
        size_t a = p, z = q;
        while (a < z && isspace((unsigned char)v[a])) a++;
        while (z > a && isspace((unsigned char)v[z - 1])) z--;
        int quoted = a < z && v[a] == '"';
        if (quoted) {
            if (quoted_value(src, ax, a, z) != 0) return -1;
            a++;
            z--;
        }
        if (a == z) {
            int empty = 1;
            for (size_t t = i + 1; t < j; t++) empty &= isspace((unsigned char)v[t]) != 0;
            plan_perr(ctx, src->line, empty ? "empty axis" : "empty value in an axis", src->ltext, src->llen,
                      "%s: give one or more values, separated by commas, e.g. {1, 2}", ax->name);
            return -1;
        }
        for (size_t t = a; t < z && !quoted; t++)
            if (!plan_axis_char((unsigned char)v[t])) {
                plan_perr(ctx, src->line, "bad value in an axis", v + a, z - a,
                          "%s: a value is letters, digits, '_', '.', '-' or '+' (it becomes part of the names); "
                          "quote one that holds other characters, e.g. {\"-O2 -march=native\", -O3}", ax->name);
                return -1;
            }
        if (ax->nvalues < PLAN_AXIS_VALUES_MAX) {
            ax->vpos[ax->nvalues] = (unsigned char)a;
            ax->vlen[ax->nvalues] = (unsigned char)(z - a);
            ax->vquoted[ax->nvalues] = (unsigned char)quoted;
        }
        for (int w = 0; w < ax->nvalues && ax->nvalues < PLAN_AXIS_VALUES_MAX; w++)
            if (same_name(ax, v, w, ax->nvalues)) {
                plan_perr(ctx, src->line, "duplicate value in an axis", v + a, z - a,
                          "%s: each value once; two variants would have one name (a quoted value's characters "
                          "outside A-Z a-z 0-9 _ . - + are '_' in the name)", ax->name);
                return -1;
            }
        if (ax->nvalues >= PLAN_AXIS_VALUES_MAX) {
            plan_perr(ctx, src->line, "too many values in an axis", src->ltext, src->llen, "%s: at most %d values",
                      ax->name, PLAN_AXIS_VALUES_MAX);
            return -1;
        }
        ax->nvalues++;
        p = q + 1;
    }
    return 0;
}

/* The g-th list of the value, v[i..j], as a new axis of section sa. */
static int add_axis(const axis_src *src, sec_axes *sa, int ki, int g, size_t i, size_t j)
{
    char name[KG_NAME_MAX];
    if (axis_name(src, i, j, name) != 0) return -1;
    for (int x = 0; x < sa->naxes; x++)
        if (strcmp(sa->ax[x].name, name) == 0) {
            plan_perr(src->ctx, src->line, "axis named twice", src->ltext, src->llen,
                      "axis '%s' is already a list on line %d; a section has one axis of a name", name,
                      sa->ax[x].line);
            return -1;
        }
    if (sa->naxes >= PLAN_AXES_MAX) {
        plan_perr(src->ctx, src->line, "too many axes", src->ltext, src->llen, "a section has at most %d axes",
                  PLAN_AXES_MAX);
        return -1;
    }
    plan_axis *ax = &sa->ax[sa->naxes];
    memset(ax, 0, sizeof *ax);
    ax->ki = ki;
    ax->g = g;
    ax->line = src->line;
    snprintf(ax->name, sizeof ax->name, "%s", name);
    snprintf(ax->tmpl, sizeof ax->tmpl, "%s", src->v);
    if (axis_values(src, ax, i, j) != 0) return -1;
    sa->naxes++;
    return 0;
}

int plan_parse_axes_of(plan_ctx *ctx, int ki, const char *key, const char *v, int line, const char *ltext,
                       size_t llen)
{
    if (ctx->bracketed) {
        plan_perr(ctx, line, "axis in a section with an expanded name", ltext, llen,
                  "a section named NAME[AXIS=VALUE] is one variant already: give the {a, b} lists in the section NAME");
        return -1;
    }
    sec_axes *sa = current_axes(ctx);
    if (sa == NULL) {
        plan_perr_nomem(ctx);
        return -1;
    }
    const axis_src src = { ctx, key, v, strlen(v), line, ltext, llen };
    int g = 0;
    for (size_t i = 0; i < src.n; i++) {
        if (v[i] == '}') {
            plan_perr(ctx, line, "'}' without '{'", ltext, llen, "an axis is a list in braces, e.g. %s = {1, 2}", key);
            return -1;
        }
        if (v[i] != '{') continue;
        size_t j = i + 1;
        int in = 0; /* inside a quoted value: its '{' and '}' are refused by quoted_value */
        while (j < src.n && (in || (v[j] != '}' && v[j] != '{'))) {
            if (v[j] == '"') in = !in;
            j++;
        }
        if (in) {
            plan_perr(ctx, line, "unclosed '\"' in an axis", ltext, llen,
                      "a quoted value ends with '\"', e.g. %s = {\"-O2 -march=native\", -O3}", key);
            return -1;
        }
        if (j == src.n || v[j] == '{') {
            plan_perr(ctx, line, j == src.n ? "unclosed '{'" : "'{' inside an axis", ltext, llen,
                      "an axis is one list {a, b, c}: close it with '}'; lists do not nest");
            return -1;
        }
        if (add_axis(&src, sa, ki, g++, i, j) != 0) return -1;
        i = j;
    }
    return 0;
}

/* The name and line of section i of kind sec (the name is the first
 * member of kg_case and kg_arm alike). */
static const char *section_name(const plan_ctx *ctx, int sec, int i, int *line)
{
    if (sec == SEC_CASE) {
        *line = ctx->plan->cases[i].line;
        return ctx->plan->cases[i].name;
    }
    *line = ctx->plan->arms[i].line;
    return ctx->plan->arms[i].name;
}

/* The variants of the sections of kind sec, in all (*total), each
 * section within PLAN_EXPAND_MAX; 0 when none has axes. */
static int count_variants(plan_ctx *ctx, int sec, int n, long *total)
{
    int any = 0;
    *total = 0;
    for (int i = 0; i < n; i++) {
        const sec_axes *sa = find_axes(ctx, sec, i);
        long prod = 1;
        for (int x = 0; sa != NULL && x < sa->naxes && prod <= PLAN_EXPAND_MAX; x++) prod *= sa->ax[x].nvalues;
        if (prod > PLAN_EXPAND_MAX) {
            int line;
            const char *nm = section_name(ctx, sec, i, &line);
            char h[KG_NAME_MAX + 16];
            plan_header_text(h, sizeof h, plan_sec_names[sec], nm);
            plan_perr(ctx, line, "a section expands to too many variants", h, strlen(h),
                      "its axes give more than %d combinations; at most %d: shorten the lists or split the section",
                      PLAN_EXPAND_MAX, PLAN_EXPAND_MAX);
            return 0;
        }
        any |= sa != NULL;
        *total += prod;
    }
    if (any && *total > PLAN_SECTIONS_MAX)
        plan_perr(ctx, 1, sec == SEC_CASE ? "too many cases" : "too many arms", "", 0,
                  "the axes expand the plan to %ld %s; at most %d", *total, sec == SEC_CASE ? "cases" : "arms",
                  PLAN_SECTIONS_MAX);
    return any;
}

/* The variant's name, BASE[A=1,B=2], into dst (its name field); 0, or -1
 * with a message when it is too long. */
static int variant_name(plan_ctx *ctx, const sec_axes *sa, const int *pick, const char *base, char *dst, int line)
{
    char name[2 * KG_NAME_MAX + PLAN_AXES_MAX * (KG_NAME_MAX + PLAN_LINE_MAX)];
    size_t nl = (size_t)snprintf(name, sizeof name, "%s[", base);
    for (int x = 0; x < sa->naxes && nl < sizeof name; x++) {
        const plan_axis *ax = &sa->ax[x];
        nl += (size_t)snprintf(name + nl, sizeof name - nl, "%s%s=", x ? "," : "", ax->name);
        for (int t = 0; t < ax->vlen[pick[x]] && nl + 1 < sizeof name; t++)
            name[nl++] = name_char(ax, pick[x], ax->tmpl[ax->vpos[pick[x]] + t]);
        name[nl < sizeof name ? nl : sizeof name - 1] = '\0';
    }
    if (nl < sizeof name) nl += (size_t)snprintf(name + nl, sizeof name - nl, "]");
    if (nl > KG_NAME_MAX - 1) {
        plan_perr(ctx, line, "expanded name too long", name, strlen(name),
                  "a variant's name BASE[AXIS=VALUE,...] has at most %d characters: shorten the section name, the "
                  "axis names or the values", KG_NAME_MAX - 1);
        return -1;
    }
    memcpy(dst, name, nl + 1);
    return 0;
}

/* The value of the key of axis x in the variant `pick`: its template
 * with each {...} list replaced by the picked value of that list's axis. */
static void variant_value(const sec_axes *sa, int x, const int *pick, char *val, size_t cap)
{
    const plan_axis *ax = &sa->ax[x];
    size_t vo = 0;
    int g = 0;
    for (const char *t = ax->tmpl; *t && vo + 1 < cap;) {
        if (*t != '{') {
            val[vo++] = *t++;
            continue;
        }
        const plan_axis *gx = NULL;
        int gi = 0;
        for (int y = 0; y < sa->naxes; y++)
            if (sa->ax[y].ki == ax->ki && sa->ax[y].g == g) {
                gx = &sa->ax[y];
                gi = y;
            }
        if (gx != NULL && vo + gx->vlen[pick[gi]] + 1 < cap) {
            memcpy(val + vo, gx->tmpl + gx->vpos[pick[gi]], gx->vlen[pick[gi]]);
            vo += gx->vlen[pick[gi]];
        }
        const char *close = strchr(t, '}');
        t = close ? close + 1 : t + strlen(t);
        g++;
    }
    val[vo] = '\0';
}

/* The values of the keys with axes of the variant dst, each key once. */
static void variant_values(plan_ctx *ctx, const sec_axes *sa, const int *pick, char *dst)
{
    for (int x = 0; x < sa->naxes && !ctx->failed; x++) {
        const plan_axis *ax = &sa->ax[x];
        int first = 1;
        for (int y = 0; y < x; y++) first &= sa->ax[y].ki != ax->ki;
        if (!first) continue;
        char val[PLAN_LINE_MAX + 1];
        variant_value(sa, x, pick, val, sizeof val);
        if (ax->ki >= 0) {
            plan_set_value(ctx, &plan_keys[ax->ki], dst, val, ax->line);
        } else {
            size_t ll;
            const char *lt = plan_line_text(ctx, ax->line, &ll);
            plan_set_var_value(ctx, &((kg_case *)(void *)dst)->vars[AXIS_VAR_INDEX(ax->ki)], val, ax->line, lt, ll);
        }
    }
}

/* Section src (its key lines srcl) with axes sa, as its variants at
 * nw[*o...] (and their key lines at nwl[*o...]). */
static void expand_section(plan_ctx *ctx, const sec_axes *sa, const char *src, const key_lines *srcl, size_t elem,
                           char *nw, key_lines *nwl, int *o)
{
    int line;
    section_name(ctx, sa->sec, sa->idx, &line);
    long prod = 1;
    for (int x = 0; x < sa->naxes; x++) prod *= sa->ax[x].nvalues;
    for (long combo = 0; combo < prod && !ctx->failed; combo++) {
        int pick[PLAN_AXES_MAX];
        long rest = combo;
        for (int x = sa->naxes - 1; x >= 0; x--) {
            pick[x] = (int)(rest % sa->ax[x].nvalues);
            rest /= sa->ax[x].nvalues;
        }
        char *dst = nw + (size_t)*o * elem;
        memcpy(dst, src, elem);
        nwl[*o] = *srcl;
        if (variant_name(ctx, sa, pick, src, dst, line) != 0) break;
        variant_values(ctx, sa, pick, dst);
        (*o)++;
    }
}

/* Sections of kind sec (SEC_CASE or SEC_ARM) with axes become their
 * variants, in place: the Cartesian product of the axes, the first axis
 * varying slowest, each variant named BASE[A=1,B=2] and holding its
 * values in the keys of its axes. */
static void expand_kind(plan_ctx *ctx, int sec)
{
    kg_plan *plan = ctx->plan;
    int is_case = sec == SEC_CASE;
    int n = is_case ? plan->ncases : plan->narms;
    size_t elem = is_case ? sizeof(kg_case) : sizeof(kg_arm);
    char *old = is_case ? (char *)plan->cases : (char *)plan->arms;
    key_lines *oldl = is_case ? ctx->case_lines : ctx->arm_lines;
    long total;
    if (!count_variants(ctx, sec, n, &total) || ctx->failed) return;
    char *nw = calloc((size_t)total, elem);
    key_lines *nwl = calloc((size_t)total, sizeof *nwl);
    if (nw == NULL || nwl == NULL) {
        free(nw);
        free(nwl);
        plan_perr_nomem(ctx);
        return;
    }
    int o = 0;
    for (int i = 0; i < n && !ctx->failed; i++) {
        const char *src = old + (size_t)i * elem;
        const sec_axes *sa = find_axes(ctx, sec, i);
        if (sa != NULL) {
            expand_section(ctx, sa, src, &oldl[i], elem, nw, nwl, &o);
            continue;
        }
        memcpy(nw + (size_t)o * elem, src, elem);
        nwl[o++] = oldl[i];
    }
    if (ctx->failed) {
        free(nw);
        free(nwl);
        return;
    }
    free(old);
    free(oldl);
    if (is_case) {
        plan->cases = (kg_case *)(void *)nw;
        plan->ncases = o;
        ctx->case_lines = nwl;
        ctx->cases_cap = (int)total;
    } else {
        plan->arms = (kg_arm *)(void *)nw;
        plan->narms = o;
        ctx->arm_lines = nwl;
        ctx->arms_cap = (int)total;
    }
}

void plan_expand_axes(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    if (ctx->naxsec == 0) return;
    expand_kind(ctx, SEC_CASE);
    if (!ctx->failed) expand_kind(ctx, SEC_ARM);
    for (int pass = 0; pass < 2 && !ctx->failed; pass++) {
        int n = pass ? plan->narms : plan->ncases;
        for (int j = 1; j < n && !ctx->failed; j++) {
            const char *nj = pass ? plan->arms[j].name : plan->cases[j].name;
            for (int i = 0; i < j; i++) {
                const char *ni = pass ? plan->arms[i].name : plan->cases[i].name;
                if (strcmp(ni, nj) != 0) continue;
                int li = pass ? plan->arms[i].line : plan->cases[i].line;
                int lj = pass ? plan->arms[j].line : plan->cases[j].line;
                plan_perr(ctx, lj, pass ? "duplicate arm" : "duplicate case", nj, strlen(nj),
                     "the sections on lines %d and %d both give this name (a section with axes names each variant "
                     "BASE[AXIS=VALUE]): rename one", li, lj);
                break;
            }
        }
    }
}
