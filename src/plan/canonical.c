/* canonical.c: the canonical form of a plan, every key written from the
 * key table in one order and spelling, and its SHA-256, the plan's hash:
 * two plans that mean the same have the same hash; and a plan's smoke
 * run, whose canonical form is made again (kg_plan_smoke). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/plan_impl.h"
#include "base/util.h"

/* 1 when a F_QUIET key holds its default (enum, real or bool keys). */
static int quiet_default(const plan_key *k, const void *f)
{
    if (!(k->flags & F_QUIET) || k->def == NULL) return 0;
    if (k->kind == K_ENUM) {
        int v;
        memcpy(&v, f, sizeof v);
        return k->words[v >= 0 ? v : 0] != NULL && v >= 0 && strcmp(k->words[v], k->def) == 0;
    }
    if (k->kind == K_REAL || k->kind == K_FRAC) {
        double v;
        memcpy(&v, f, sizeof v);
        return v == strtod(k->def, NULL);
    }
    if (k->kind == K_BOOL) {
        int v;
        memcpy(&v, f, sizeof v);
        return v == (strcmp(k->def, "yes") == 0);
    }
    return 0;
}

static void write_section(kg_sb *tb, int sec, const void *base, int is_control)
{
    for (int i = 0; i < plan_nkeys; i++) {
        const plan_key *k = &plan_keys[i];
        if (k->sec != sec || (is_control && (k->flags & F_INHERIT))) continue;
        const void *f = (const char *)base + k->off;
        if (quiet_default(k, f)) continue;
        switch (k->kind) {
        case K_INT: {
            int v;
            memcpy(&v, f, sizeof v);
            if (!((k->flags & F_UNSET) && v == -1)) kg_sb_printf(tb, "%s = %d\n", k->key, v);
            break;
        }
        case K_I64: {
            int64_t v;
            memcpy(&v, f, sizeof v);
            if (!((k->flags & F_UNSET) && v == -1))
                kg_sb_printf(tb, "%s = %" PRId64 "\n", k->key, v);
            break;
        }
        case K_U64: {
            uint64_t v;
            memcpy(&v, f, sizeof v);
            kg_sb_printf(tb, "%s = %" PRIu64 "\n", k->key, v);
            break;
        }
        case K_REAL: case K_FRAC: {
            double v;
            char num[40];
            memcpy(&v, f, sizeof v);
            plan_format_real(v, num, sizeof num);
            kg_sb_printf(tb, "%s = %s\n", k->key, num);
            break;
        }
        case K_BOOL: {
            int v;
            memcpy(&v, f, sizeof v);
            kg_sb_printf(tb, "%s = %s\n", k->key, v ? "yes" : "no");
            break;
        }
        case K_ENUM: {
            int v, n = 0;
            memcpy(&v, f, sizeof v);
            while (k->words[n]) n++;
            kg_sb_printf(tb, "%s = %s\n", k->key, v >= 0 && v < n ? k->words[v] : "?");
            break;
        }
        default: {
            const char *s = f;
            if (s[0] != '\0') kg_sb_printf(tb, "%s = %.*s\n", k->key, (int)k->size, s);
            break;
        }
        }
    }
}

int plan_make_canonical(kg_plan *plan)
{
    int rc = KG_OK;
    kg_sb tb = {0};
    kg_sb_printf(&tb, "[campaign]\n");
    write_section(&tb, SEC_CAMPAIGN, &plan->campaign, 0);
    for (int o = 0; o < plan->nops; o++) {
        if (plan->ops[o].python) plan_pyop_canonical(&tb, &plan->ops[o]);
        else kg_sb_printf(&tb, "\n[op %s]\nsource = %s\nsha256 = %s\n", plan->ops[o].name, plan->ops[o].source,
                          plan->ops[o].sha256);
    }
    for (int c = 0; c < plan->ncases; c++) {
        kg_sb_printf(&tb, "\n[case %s]\n", plan->cases[c].name);
        write_section(&tb, SEC_CASE, &plan->cases[c], 0);
        /* the op's variables, by name: the order they were written in
         * does not change the hash */
        const kg_case *kc = &plan->cases[c];
        int order[KG_CASE_VARS];
        kg_case_var_order(kc, order);
        for (int k = 0; k < kc->nvars; k++)
            kg_sb_printf(&tb, "%s = %s\n", kc->vars[order[k]].name, kc->vars[order[k]].text);
    }
    for (int a = 0; a < plan->narms; a++) {
        kg_sb_printf(&tb, "\n[arm %s]\n", plan->arms[a].name);
        write_section(&tb, SEC_ARM, &plan->arms[a], plan->arms[a].role == KG_ROLE_CONTROL);
    }
    kg_sb_printf(&tb, "\n[gate]\n");
    write_section(&tb, SEC_GATE, &plan->gate, 0);
    if (tb.oom) {
        rc = KG_ENOMEM;
        goto done;
    }
    kg_sha256_hex(tb.buf, tb.len, plan->hash);
    plan->canonical = tb.buf;
    tb.buf = NULL;
done:
    free(tb.buf);
    return rc;
}

int kg_plan_smoke(kg_plan *plan, kg_err *err)
{
    if (plan == NULL) return kg_errorf(err, KG_EINTERNAL, "kg_plan_smoke: no plan");
    kg_campaign *cp = &plan->campaign;
    cp->processes = KG_SMOKE_PROCESSES;
    cp->rounds = KG_SMOKE_ROUNDS;
    cp->samples = KG_SMOKE_SAMPLES;
    cp->warmup = KG_SMOKE_WARMUP;
    cp->looks = 1;
    cp->quiet_s = 0;
    cp->smoke = 1;
    free(plan->canonical);
    plan->canonical = NULL;
    int rc = plan_make_canonical(plan);
    if (rc != KG_OK) return kg_errorf(err, rc, "%s: cannot build the smoke run's canonical plan", plan->path);
    return KG_OK;
}
