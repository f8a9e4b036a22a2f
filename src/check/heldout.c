/* heldout.c: the held-out shapes near a case (see heldout.h).
 *
 * Pure: shapes from a case and a seed, names, and an arm's `requires`.
 * The worker runs the checks (worker.c, phase_check_heldout). */
#include <stdio.h>
#include <string.h>
#include "check/heldout.h"
#include "plan/expr.h"

/* The variables held-out shapes vary: the op's .heldout_vars, else every
 * integer variable of its .vars (`NAME`, not `NAME:real` or `NAME:bool`),
 * at most KG_HELDOUT_VARS; for the built-in ops, M, N and K. */
typedef struct hvars {
    int n;
    char name[KG_HELDOUT_VARS][KG_VAR_NAME_MAX];
} hvars;

static void heldout_vars(const kg_op *op, hvars *hv)
{
    const char *list = op->heldout_vars != NULL ? op->heldout_vars : op->vars;
    hv->n = 0;
    for (const char *p = list != NULL ? list : ""; *p != '\0' && hv->n < KG_HELDOUT_VARS;) {
        while (*p == ' ' || *p == '\t') p++;
        const char *b = p;
        while (*p != '\0' && *p != ' ' && *p != '\t' && *p != ':') p++;
        size_t l = (size_t)(p - b);
        int typed = *p == ':' && strncmp(p, ":int", 4) != 0;
        while (*p != '\0' && *p != ' ' && *p != '\t') p++;
        if (l == 0 || l >= KG_VAR_NAME_MAX || typed) continue;
        memcpy(hv->name[hv->n], b, l);
        hv->name[hv->n][l] = '\0';
        hv->n++;
    }
}

/* The value of integer variable name in c; -1 when c does not have it as
 * an integer. */
static int64_t var_get(const kg_case *c, const char *name)
{
    kg_var_type t = KG_VAR_INT;
    int64_t v = -1;
    if (!kg_case_var(c, name, &t, &v, NULL) || t != KG_VAR_INT) return -1;
    return v;
}

/* Sets integer variable name of c to v (a key field or an op variable,
 * its text too, as the canonical form writes it). */
static void var_set(kg_case *c, const char *name, int64_t v)
{
    if (strcmp(name, "M") == 0) { c->M = v; return; }
    if (strcmp(name, "N") == 0) { c->N = v; return; }
    if (strcmp(name, "K") == 0) { c->K = v; return; }
    if (strcmp(name, "splits") == 0) { c->splits = v; return; }
    for (int i = 0; i < c->nvars; i++)
        if (strcmp(c->vars[i].name, name) == 0) {
            c->vars[i].i = v;
            c->vars[i].r = (double)v;
            snprintf(c->vars[i].text, sizeof c->vars[i].text, "%lld", (long long)v);
            return;
        }
}

/* splitmix64: the per-shape random words */
static uint64_t next64(uint64_t *s)
{
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A random odd value in [1, v] (1 when v < 2). */
static int64_t odd_upto(int64_t v, uint64_t r)
{
    if (v < 2) return 1;
    int64_t nodd = (v + 1) / 2;   /* 1, 3, ..., the largest odd <= v */
    return 1 + 2 * (int64_t)(r % (uint64_t)nodd);
}

static int same_shape(const kg_case *a, const kg_case *b, const hvars *hv)
{
    if (a->splits != b->splits) return 0;
    for (int i = 0; i < hv->n; i++)
        if (var_get(a, hv->name[i]) != var_get(b, hv->name[i])) return 0;
    return 1;
}

/* Keeps s when it differs from c and from out[0..n), and the op admits
 * it (splits lowered to K first). */
static int keep(const kg_case *c, const kg_op *op, const hvars *hv, kg_case *s, kg_case *out, int n, int cap)
{
    if (n >= cap) return n;
    if (s->splits > 0 && s->K > 0 && s->splits > s->K) s->splits = s->K;
    if (same_shape(s, c, hv)) return n;
    for (int i = 0; i < n; i++)
        if (same_shape(s, &out[i], hv)) return n;
    char why[256];
    if (op->admissible(s, why, sizeof why) != 0) return n;
    out[n] = *s;
    return n + 1;
}

int kg_heldout_shapes(const kg_case *c, const kg_op *op, uint64_t seed, kg_case *out, int cap)
{
    hvars hv;
    int n = 0;
    if (c == NULL || op == NULL || out == NULL || cap <= 0) return 0;
    heldout_vars(op, &hv);
    int nv = 0;
    for (int i = 0; i < hv.n; i++) {
        if (var_get(c, hv.name[i]) < 0) continue; /* not an integer of this case */
        if (i != nv) memcpy(hv.name[nv], hv.name[i], sizeof hv.name[nv]);
        nv++;
    }
    hv.n = nv;
    if (nv == 0) return 0;
    uint64_t st = seed;
    kg_case s;
    /* each variable minus one alone: a tail in that dimension only, with
     * the others still aligned (fast paths keyed on the others) */
    for (int i = 0; i < nv; i++) {
        s = *c;
        int64_t v = var_get(&s, hv.name[i]);
        if (v > 1) {
            var_set(&s, hv.name[i], v - 1);
            n = keep(c, op, &hv, &s, out, n, cap);
        }
    }
    /* every variable minus one */
    s = *c;
    for (int i = 0; i < nv; i++) {
        int64_t v = var_get(&s, hv.name[i]);
        if (v > 1) var_set(&s, hv.name[i], v - 1);
    }
    n = keep(c, op, &hv, &s, out, n, cap);
    /* every variable at half plus one (a partial last tile of a tile
     * near half the case), never above the case's value */
    s = *c;
    for (int i = 0; i < nv; i++) {
        int64_t v = var_get(&s, hv.name[i]);
        int64_t h = v / 2 + 1;
        var_set(&s, hv.name[i], h < v ? h : v);
    }
    n = keep(c, op, &hv, &s, out, n, cap);
    /* every variable at a random odd value no larger than the case's,
     * drawn again (a bounded number of times) while it repeats a shape
     * above, so that the number of shapes does not depend on the seed
     * but for the smallest cases */
    for (int attempt = 0; attempt < 32; attempt++) {
        s = *c;
        for (int i = 0; i < nv; i++) var_set(&s, hv.name[i], odd_upto(var_get(&s, hv.name[i]), next64(&st)));
        int before = n;
        n = keep(c, op, &hv, &s, out, n, cap);
        if (n > before || n >= cap) break;
    }
    return n;
}

void kg_heldout_name(const kg_case *s, const kg_op *op, char *buf, size_t cap)
{
    static const kg_op mnk = { .vars = "M N K" };
    hvars hv;
    size_t len = 0;
    if (cap == 0) return;
    buf[0] = '\0';
    heldout_vars(op != NULL ? op : &mnk, &hv);
    len += (size_t)snprintf(buf, cap, "heldout[");
    int first = 1;
    for (int i = 0; i < hv.n && len < cap; i++) {
        int64_t v = var_get(s, hv.name[i]);
        if (v < 0) continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s%s=%lld", first ? "" : " ", hv.name[i], (long long)v);
        first = 0;
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
}

int kg_heldout_supported(const kg_arm *arm, const kg_case *s, int *ok, char *why, size_t cap, kg_err *err)
{
    *ok = 1;
    if (why != NULL && cap > 0) why[0] = '\0';
    if (arm->requires[0] == '\0') return KG_OK;
    return kg_expr_eval_conds("requires", arm->requires, s, ok, why, cap, err);
}
