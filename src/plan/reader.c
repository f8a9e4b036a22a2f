/* reader.c: a plan's text into its sections and keys, through libinih.
 *
 * Lines reach libinih through our own reader (ini_parse_stream).  The
 * reader counts lines, so every message has the right line whatever the
 * libinih build; it takes section headers itself (libinih truncates long
 * section names and never reports empty sections); it strips leading
 * blanks so that no line becomes a libinih continuation line; and it
 * refuses lines that libinih would split.  Before any of that, the bytes:
 * UTF-8 text without NUL or control characters. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "plan/plan_impl.h"

static int grow(plan_ctx *ctx, void **arr, size_t elem, int *cap, int n, void **lines)
{
    if (n < *cap) return 0;
    int ncap = *cap ? *cap * 2 : 8;
    void *a = realloc(*arr, (size_t)ncap * elem);
    if (a == NULL) { plan_perr_nomem(ctx); return -1; }
    *arr = a;
    void *l = realloc(*lines, (size_t)ncap * sizeof(key_lines));
    if (l == NULL) { plan_perr_nomem(ctx); return -1; }
    *lines = l;
    *cap = ncap;
    return 0;
}

/* A section header as written: the whole header p[0..hlen) (for
 * messages), its kind and its name nm[0..nlen). */
typedef struct header {
    const char *p;
    size_t hlen;
    int sec, line;
    const char *nm;
    size_t nlen;
} header;

/* Splits the header line p[0..n) starting with '[' into h; 0, or -1 with
 * a message.  The ']' that closes the '[' of p[0] is found by depth: an
 * expanded name, [arm x[A=1]], holds a pair of its own. */
static int header_split(plan_ctx *ctx, const char *p, size_t n, header *h)
{
    const int line = ctx->lineno;
    const char *close = NULL;
    int depth = 0;
    for (size_t i = 0; i < n && close == NULL; i++) {
        if (p[i] == '[') depth++;
        else if (p[i] == ']' && --depth == 0) close = p + i;
    }
    if (close == NULL) {
        plan_perr(ctx, line, "unterminated section header", p, n, "close it with ']', e.g. [case NAME]");
        return -1;
    }
    const char *after = close + 1;
    while (after < p + n && (*after == ' ' || *after == '\t')) after++;
    if (after < p + n && *after != ';' && *after != '#') {
        plan_perr(ctx, line, "text after section header", p, n, "put keys on their own lines below the header");
        return -1;
    }
    const char *s = p + 1, *e = close;
    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    const char *w = s;
    while (w < e && !isspace((unsigned char)*w)) w++;
    size_t wlen = (size_t)(w - s);
    const char *nm = w;
    while (nm < e && isspace((unsigned char)*nm)) nm++;
    *h = (header){ .p = p, .hlen = (size_t)(close + 1 - p), .sec = SEC_NONE, .line = line, .nm = nm,
                   .nlen = (size_t)(e - nm) };
    for (int i = SEC_CAMPAIGN; i <= SEC_OP; i++)
        if (wlen == strlen(plan_sec_names[i]) && memcmp(s, plan_sec_names[i], wlen) == 0) h->sec = i;
    if (h->sec == SEC_NONE) {
        plan_perr(ctx, line, "unknown section", p, h->hlen,
                  "sections are [campaign], [op NAME], [case NAME], [arm NAME] and [gate]");
        return -1;
    }
    return 0;
}

/* [op NAME]: an op declared in the plan (docs/ops.md). */
static void begin_op(plan_ctx *ctx, const header *h)
{
    kg_plan *plan = ctx->plan;
    if (h->nlen == 0 || !plan_simple_name_ok(h->nm, h->nlen)) {
        plan_perr(ctx, h->line, h->nlen == 0 ? "section needs a name" : "bad op name", h->p, h->hlen,
                  "write [op NAME], NAME of 1-63 letters, digits, '_', '.', '-'");
        return;
    }
    char onm[KG_NAME_MAX];
    snprintf(onm, sizeof onm, "%.*s", (int)h->nlen, h->nm);
    int prev = kg_plan_find_op(plan, onm);
    if (prev >= 0) {
        plan_perr(ctx, h->line, "duplicate op", h->p, h->hlen, "op names must differ; '%s' is on line %d", onm,
                  plan->ops[prev].line);
        return;
    }
    if (plan->nops >= KG_PLAN_MAX_OPS) {
        plan_perr(ctx, h->line, "too many ops", h->p, h->hlen, "a plan declares at most %d ops", KG_PLAN_MAX_OPS);
        return;
    }
    kg_opdecl *od = &plan->ops[plan->nops];
    memset(od, 0, sizeof *od);
    memcpy(od->name, onm, h->nlen + 1);
    od->line = h->line;
    ctx->idx = plan->nops++;
    ctx->sec = SEC_OP;
}

/* [campaign] and [gate]: no name, once each. */
static void begin_single(plan_ctx *ctx, const header *h)
{
    kg_plan *plan = ctx->plan;
    if (h->nlen != 0) {
        plan_perr(ctx, h->line, "section takes no name", h->p, h->hlen, "write [%s]", plan_sec_names[h->sec]);
        return;
    }
    int *prev = h->sec == SEC_CAMPAIGN ? &plan->campaign.line : &plan->gate.line;
    if (*prev != 0) {
        plan_perr(ctx, h->line, "duplicate section", h->p, h->hlen, "[%s] may appear once; the first is on line %d",
                  plan_sec_names[h->sec], *prev);
        return;
    }
    *prev = h->line;
    ctx->sec = h->sec;
    ctx->idx = 0;
}

/* [case NAME] and [arm NAME]: a new section of its kind, its defaults
 * set, named NAME (a plain name, or a variant's expanded name). */
static void begin_named(plan_ctx *ctx, const header *h)
{
    kg_plan *plan = ctx->plan;
    int is_case = h->sec == SEC_CASE;
    if (h->nlen == 0) {
        plan_perr(ctx, h->line, "section needs a name", h->p, h->hlen, "write [%s NAME]", plan_sec_names[h->sec]);
        return;
    }
    if (!plan_any_name_ok(h->nm, h->nlen)) {
        plan_perr(ctx, h->line, "bad section name", h->p, h->hlen,
                  "names are 1-63 letters, digits, '_', '.', '-' (or a variant's expanded name, NAME[AXIS=VALUE,...])");
        return;
    }
    ctx->bracketed = memchr(h->nm, '[', h->nlen) != NULL;
    char nbuf[KG_NAME_MAX];
    snprintf(nbuf, sizeof nbuf, "%.*s", (int)h->nlen, h->nm);
    int prev = is_case ? kg_plan_find_case(plan, nbuf) : kg_plan_find_arm(plan, nbuf);
    int *count = is_case ? &plan->ncases : &plan->narms;
    if (prev >= 0) {
        plan_perr(ctx, h->line, is_case ? "duplicate case" : "duplicate arm", h->p, h->hlen,
                  "%s names must differ; '%s' is on line %d", is_case ? "case" : "arm", nbuf,
                  is_case ? plan->cases[prev].line : plan->arms[prev].line);
        return;
    }
    if (*count >= PLAN_SECTIONS_MAX) {
        plan_perr(ctx, h->line, is_case ? "too many cases" : "too many arms", h->p, h->hlen, "at most %d",
                  PLAN_SECTIONS_MAX);
        return;
    }
    int grown = is_case ? grow(ctx, (void **)&plan->cases, sizeof *plan->cases, &ctx->cases_cap, *count,
                               (void **)&ctx->case_lines)
                        : grow(ctx, (void **)&plan->arms, sizeof *plan->arms, &ctx->arms_cap, *count,
                               (void **)&ctx->arm_lines);
    if (grown != 0) return;
    int i = (*count)++;
    memset(plan_section_lines(ctx, h->sec, i), 0, sizeof(key_lines));
    void *base = plan_section_base(ctx, h->sec, i);
    memset(base, 0, is_case ? sizeof(kg_case) : sizeof(kg_arm));
    plan_apply_defaults(ctx, h->sec, base);
    if (is_case) {
        memcpy(plan->cases[i].name, nbuf, h->nlen + 1);
        plan->cases[i].line = h->line;
    } else {
        memcpy(plan->arms[i].name, nbuf, h->nlen + 1);
        plan->arms[i].line = h->line;
    }
    ctx->idx = i;
    ctx->sec = h->sec;
}

/* A section header line p[0..n) starting with '['. */
static void section_begin(plan_ctx *ctx, const char *p, size_t n)
{
    header h;
    if (header_split(ctx, p, n, &h) != 0) return;
    ctx->nsections++;
    ctx->bracketed = 0;
    if (h.sec == SEC_OP) begin_op(ctx, &h);
    else if (h.sec == SEC_CAMPAIGN || h.sec == SEC_GATE) begin_single(ctx, &h);
    else begin_named(ctx, &h);
}

/* fgets-style reader over the plan text: one plan line per call. */
static char *plan_reader(char *str, int num, void *stream)
{
    plan_ctx *ctx = stream;
    if (ctx->failed || ctx->pos >= ctx->len) return NULL;
    const char *line = ctx->text + ctx->pos;
    size_t rest = ctx->len - ctx->pos;
    const char *nl = memchr(line, '\n', rest);
    size_t n = nl ? (size_t)(nl - line) : rest;
    ctx->pos += nl ? n + 1 : n;
    ctx->lineno++;
    if (ctx->lineno == 1 && n >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
        line += 3;
        n -= 3;
    }
    if (n > 0 && line[n - 1] == '\r') n--;
    while (n > 0 && (*line == ' ' || *line == '\t')) { line++; n--; }
    while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
    if (n > PLAN_LINE_MAX || num < 3 || n + 2 > (size_t)num) {
        plan_perr(ctx, ctx->lineno, "line too long", line, n, "keep lines to %d characters",
             PLAN_LINE_MAX);
        return NULL;
    }
    if (n > 0 && line[0] == '[') {
        section_begin(ctx, line, n);
        if (ctx->failed) return NULL;
        n = 0; /* libinih sees an empty line: sections are ours */
    }
    memcpy(str, line, n);
    str[n] = '\n';
    str[n + 1] = '\0';
    return str;
}

static int plan_handler(void *user, const char *section, const char *name, const char *value)
{
    plan_ctx *ctx = user;
    (void)section; /* libinih never sees a header; ctx->sec is the section */
    if (ctx->failed) return 1;
    const int line = ctx->lineno;
    size_t llen;
    const char *ltext = plan_line_text(ctx, line, &llen);
    if (ctx->sec == SEC_NONE) {
        plan_perr(ctx, line, "key outside any section", ltext, llen,
             "put it below [campaign], [case NAME], [arm NAME] or [gate]");
        return 1;
    }
    /* a '#' after a blank starts a comment too (libinih only knows ';') */
    char v[PLAN_LINE_MAX + 1];
    snprintf(v, sizeof v, "%s", value ? value : "");
    for (char *h = strchr(v, '#'); h != NULL; h = strchr(h + 1, '#')) {
        if (h > v && (h[-1] == ' ' || h[-1] == '\t')) {
            *h = '\0';
            break;
        }
    }
    size_t vlen = strlen(v);
    while (vlen > 0 && isspace((unsigned char)v[vlen - 1])) v[--vlen] = '\0';

    if (ctx->sec == SEC_OP) return plan_op_key(ctx, name, v, line, ltext, llen);
    int ki = plan_key_index(ctx->sec, name);
    if (ki < 0 && ctx->sec == SEC_CASE && plan_var_name_ok(name)) return plan_case_var(ctx, name, v, line, ltext, llen);
    if (ki < 0) {
        char keys[600];
        size_t o = 0;
        keys[0] = '\0';
        for (int i = 0; i < plan_nkeys && o < sizeof keys; i++)
            if (plan_keys[i].sec == ctx->sec)
                o += (size_t)snprintf(keys + o, sizeof keys - o, "%s%s", o ? " " : "",
                                      plan_keys[i].key);
        plan_perr(ctx, line, "unknown key", name, strlen(name), "keys of [%s]: %s",
             plan_sec_names[ctx->sec], keys);
        return 1;
    }
    const plan_key *k = &plan_keys[ki];
    key_lines *kl = plan_section_lines(ctx, ctx->sec, ctx->idx);
    if (kl->at[ki] != 0) {
        plan_perr(ctx, line, "duplicate key", ltext, llen, "'%s' is already set on line %d", k->key,
             kl->at[ki]);
        return 1;
    }
    if (vlen == 0) {
        plan_perr(ctx, line, "missing value", ltext, llen, "%s: %s", k->key, k->help);
        return 1;
    }
    if (vlen > PLAN_VALUE_MAX) {
        plan_perr(ctx, line, "value too long", ltext, llen, "keep values to %d characters",
             PLAN_VALUE_MAX);
        return 1;
    }
    if (v[0] == ';') {
        /* would read as a comment in the canonical form's "key = value" */
        plan_perr(ctx, line, "value starts with ';'", ltext, llen, "%s: %s", k->key, k->help);
        return 1;
    }
    if (strpbrk(v, "{}") != NULL && (ctx->sec == SEC_CASE || ctx->sec == SEC_ARM || k->kind != K_TEXT)) {
        /* an axis: the values are set when the section expands (plan_expand_axes) */
        if (plan_parse_axes(ctx, ki, v, line, ltext, llen) == 0) kl->at[ki] = line;
        return 1;
    }
    if (plan_set_value(ctx, k, plan_section_base(ctx, ctx->sec, ctx->idx), v, line) != 0) return 1;
    kl->at[ki] = line;
    return 1;
}

/* Rejects NUL bytes, control characters and invalid UTF-8 before libinih
 * sees the text. */
static void check_bytes(plan_ctx *ctx)
{
    const unsigned char *s = (const unsigned char *)ctx->text;
    size_t n = ctx->len;
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = 1;
        int bad = 0;
        if (c == '\n') {
            line++;
            line_start = ++i;
            continue;
        }
        if (c < 0x80) {
            if (c == '\r') bad = !(i + 1 < n && s[i + 1] == '\n');
            else bad = (c < 0x20 && c != '\t') || c == 0x7f;
        } else {
            uint32_t cp;
            if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
            else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
            else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
            else { bad = 1; cp = 0; }
            if (!bad && i + len > n) bad = 1;
            for (size_t j = 1; !bad && j < len; j++) {
                if ((s[i + j] & 0xc0) != 0x80) bad = 1;
                else cp = (cp << 6) | (s[i + j] & 0x3f);
            }
            if (!bad) {
                if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
                    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
                    bad = 1;
            }
            if (bad) len = 1;
        }
        if (bad) {
            size_t end = i;
            while (end < n && s[end] != '\n' && end - line_start < PLAN_SHOW_MAX) end++;
            plan_perr(ctx, line, c == 0 ? "NUL byte in plan" : "binary or non-UTF-8 text in plan",
                 ctx->text + line_start, end - line_start,
                 "a plan is UTF-8 text; byte 0x%02x at column %zu", c, i - line_start + 1);
            return;
        }
        i += len;
    }
}

void plan_read(plan_ctx *ctx)
{
    check_bytes(ctx);
    if (ctx->failed) return;
    int r = ini_parse_stream(plan_reader, ctx, plan_handler, ctx);
    /* r > 0: libinih found a line without '=' (its only complaint, as it
     * never sees headers); it wins when it is the earlier line */
    if (r > 0 && ctx->code != KG_ENOMEM && (!ctx->failed || r < ctx->eline)) {
        size_t l;
        const char *t = plan_line_text(ctx, r, &l);
        ctx->failed = 0;
        plan_perr(ctx, r, "expected 'key = value'", t, l,
                  "a line is a [section], a 'key = value' or a comment starting with ; or #");
    } else if (r < 0 && !ctx->failed) {
        plan_perr_nomem(ctx);
    }
}
