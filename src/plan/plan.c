/* plan.c: campaign plans (see kgate/plan.h), parsed in steps, one job a
 * file (plan_impl.h): the text read into sections and keys (reader.c),
 * checked (check.c), its axes expanded (axes.c), the kernel contracts of
 * its arms' sources applied (contract.c), and its canonical form and
 * SHA-256 made (canonical.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/plan_impl.h"

/* The steps of a parse, in order; each does nothing once one failed. */
static void parse_steps(plan_ctx *ctx)
{
    plan_read(ctx);                                     /* reader.c */
    if (!ctx->failed) plan_check_nonempty(ctx);         /* check.c */
    if (!ctx->failed) plan_expand_axes(ctx);            /* axes.c */
    if (!ctx->failed) plan_check_sections(ctx);         /* check.c */
    /* the kernel contracts of the arms' sources, before a control copies its baseline */
    for (int a = 0; a < ctx->plan->narms && !ctx->failed; a++) plan_apply_contract(ctx, a);   /* contract.c */
    if (!ctx->failed) plan_check_campaign(ctx);         /* check.c */
    if (!ctx->failed) plan_complete(ctx);               /* check.c */
}

static int parse_plan(const char *text, size_t len, const char *name, const char *base_dir, int recorded,
                      kg_plan **out, kg_err *err)
{
    int rc = KG_OK;
    plan_ctx ctx;
    kg_plan *plan = NULL;
    memset(&ctx, 0, sizeof ctx);
    ctx.recorded = recorded;
    if (out == NULL) return kg_errorf(err, KG_EINTERNAL, "kg_plan_parse: out is NULL");
    *out = NULL;
    if (name == NULL) name = "<plan>";
    if (text == NULL && len > 0) return kg_errorf(err, KG_EINTERNAL, "kg_plan_parse: text is NULL");
    if (len > PLAN_FILE_MAX_BYTES)
        return kg_errorf(err, KG_EINPUT, "%s:1: plan too large: '%zu bytes' (at most %u bytes)",
                         name, len, PLAN_FILE_MAX_BYTES);
    plan = calloc(1, sizeof *plan);
    if (plan == NULL) return kg_errorf(err, KG_ENOMEM, "%s: out of memory", name);
    snprintf(plan->path, sizeof plan->path, "%s", name);
    snprintf(plan->base_dir, sizeof plan->base_dir, "%s", base_dir ? base_dir : ".");

    ctx.text = text ? text : "";
    ctx.len = len;
    ctx.name = name;
    ctx.plan = plan;
    plan_apply_defaults(&ctx, SEC_CAMPAIGN, &plan->campaign);
    plan_apply_defaults(&ctx, SEC_GATE, &plan->gate);
    if (ctx.code == KG_EINTERNAL) {
        rc = kg_errorf(err, KG_EINTERNAL, "%s", ctx.emsg);
        goto done;
    }
    parse_steps(&ctx);
    if (ctx.failed) {
        rc = kg_errorf(err, ctx.code, "%s", ctx.emsg);
        goto done;
    }
    rc = plan_make_canonical(plan);
    if (rc != KG_OK) {
        kg_errorf(err, rc, "%s: cannot build the canonical plan: %s", name, kg_strerror(rc));
        goto done;
    }
    *out = plan;
    plan = NULL;
done:
    for (int i = 0; i < ctx.naxsec; i++) free(ctx.axes[i]);
    free(ctx.axes);
    free(ctx.case_lines);
    free(ctx.arm_lines);
    kg_plan_free(plan);
    return rc;
}

int kg_plan_parse(const char *text, size_t len, const char *name, const char *base_dir,
                  kg_plan **out, kg_err *err)
{
    return parse_plan(text, len, name, base_dir, 0, out, err);
}

int kg_plan_parse_recorded(const char *text, size_t len, const char *name, const char *base_dir,
                           kg_plan **out, kg_err *err)
{
    return parse_plan(text, len, name, base_dir, 1, out, err);
}

int kg_plan_load(const char *path, kg_plan **out, kg_err *err)
{
    int rc = KG_OK;
    FILE *fp = NULL;
    char *text = NULL;
    size_t len = 0, cap = 0;
    if (out == NULL || path == NULL)
        return kg_errorf(err, KG_EINTERNAL, "kg_plan_load: NULL argument");
    *out = NULL;
    fp = fopen(path, "rb");
    if (fp == NULL) {
        rc = kg_errorf(err, KG_EIO, "%s: cannot open plan: %s", path, strerror(errno));
        goto done;
    }
    for (;;) {
        if (len == cap) {
            if (cap > PLAN_FILE_MAX_BYTES) {
                rc = kg_errorf(err, KG_EINPUT, "%s:1: plan too large: '%zu bytes' (at most %u bytes)",
                               path, len, PLAN_FILE_MAX_BYTES);
                goto done;
            }
            size_t ncap = cap ? cap * 2 : 4096;
            char *t = realloc(text, ncap + 1);
            if (t == NULL) {
                rc = kg_errorf(err, KG_ENOMEM, "%s: out of memory reading the plan", path);
                goto done;
            }
            text = t;
            cap = ncap;
        }
        size_t n = fread(text + len, 1, cap - len, fp);
        len += n;
        if (n == 0) break;
    }
    if (ferror(fp)) {
        rc = kg_errorf(err, KG_EIO, "%s: cannot read plan: %s", path, strerror(errno));
        goto done;
    }
    text[len] = '\0';

    /* relative sources resolve against the plan's own folder */
    char dir[KG_PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char *real = realpath(dir, NULL);
    if (real != NULL && strlen(real) < sizeof dir) snprintf(dir, sizeof dir, "%s", real);
    free(real);
    rc = kg_plan_parse(text, len, path, dir, out, err);
done:
    if (fp != NULL) fclose(fp);
    free(text);
    return rc;
}
