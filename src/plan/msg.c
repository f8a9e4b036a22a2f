/* msg.c: the plan parser's messages (plan_impl.h): FILE:LINE, the
 * problem, the offending text (non-printable bytes escaped, at most
 * PLAN_SHOW_MAX characters) and the fix.  The first error wins. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "plan/plan_impl.h"

void plan_show_text(char *out, size_t cap, const char *text, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)text[i];
        if (o >= PLAN_SHOW_MAX) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        }
    }
    out[o] = '\0';
}

__attribute__((format(printf, 6, 7)))
void plan_perr(plan_ctx *ctx, int line, const char *problem, const char *text, size_t len,
                 const char *fix_fmt, ...)
{
    if (ctx->failed) return;
    char shown[PLAN_SHOW_MAX * 4 + 16];
    char fix[512];
    va_list ap;
    va_start(ap, fix_fmt);
    vsnprintf(fix, sizeof fix, fix_fmt, ap);
    va_end(ap);
    plan_show_text(shown, sizeof shown, text ? text : "", text ? len : 0);
    snprintf(ctx->emsg, sizeof ctx->emsg, "%s:%d: %s: '%s' (%s)", ctx->name, line, problem,
             shown, fix);
    ctx->failed = 1;
    ctx->code = KG_EINPUT;
    ctx->eline = line;
}

void plan_perr_nomem(plan_ctx *ctx)
{
    if (ctx->failed) return;
    snprintf(ctx->emsg, sizeof ctx->emsg, "%s: out of memory while parsing the plan", ctx->name);
    ctx->failed = 1;
    ctx->code = KG_ENOMEM;
    ctx->eline = 0;
}

/* Text of line n (1-based) of the plan, without its newline. */
const char *plan_line_text(const plan_ctx *ctx, int n, size_t *len)
{
    const char *p = ctx->text, *end = ctx->text + ctx->len;
    for (int i = 1; i < n && p < end; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
    while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == ' ' || p[l - 1] == '\t')) l--;
    while (l > 0 && (*p == ' ' || *p == '\t')) { p++; l--; }
    *len = l;
    return p;
}

void plan_header_text(char *buf, size_t cap, const char *sec, const char *name)
{
    snprintf(buf, cap, "[%s %s]", sec, name);
}
