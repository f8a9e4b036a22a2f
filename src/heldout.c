/* heldout.c: the held-out shapes near a case (see heldout.h).
 *
 * Pure: shapes from a case and a seed, names, and an arm's `requires`.
 * The worker runs the checks (worker.c, phase_check_heldout). */
#include <stdio.h>
#include <string.h>
#include "heldout.h"
#include "expr.h"

static int64_t *var_of(kg_case *c, char v)
{
    switch (v) {
    case 'M': return &c->M;
    case 'N': return &c->N;
    case 'K': return &c->K;
    default: return NULL;
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

static int same_shape(const kg_case *a, const kg_case *b)
{
    return a->M == b->M && a->N == b->N && a->K == b->K && a->splits == b->splits;
}

/* Keeps s when it differs from c and from out[0..n), and the op admits
 * it (splits lowered to K first). */
static int keep(const kg_case *c, const kg_op *op, kg_case *s, kg_case *out, int n, int cap)
{
    if (n >= cap) return n;
    if (s->splits > 0 && s->K > 0 && s->splits > s->K) s->splits = s->K;
    if (same_shape(s, c)) return n;
    for (int i = 0; i < n; i++)
        if (same_shape(s, &out[i])) return n;
    char why[256];
    if (op->admissible(s, why, sizeof why) != 0) return n;
    out[n] = *s;
    return n + 1;
}

int kg_heldout_shapes(const kg_case *c, const kg_op *op, uint64_t seed, kg_case *out, int cap)
{
    char vars[8];
    int nv = 0, n = 0;
    if (c == NULL || op == NULL || out == NULL || cap <= 0) return 0;
    for (const char *p = op->vars; *p != '\0' && nv < (int)sizeof vars; p++)
        if (*p == 'M' || *p == 'N' || *p == 'K') vars[nv++] = *p;
    if (nv == 0) return 0;
    uint64_t st = seed;
    kg_case s;
    /* each variable minus one alone: a tail in that dimension only, with
     * the others still aligned (fast paths keyed on the others) */
    for (int i = 0; i < nv; i++) {
        s = *c;
        int64_t *v = var_of(&s, vars[i]);
        if (*v > 1) {
            (*v)--;
            n = keep(c, op, &s, out, n, cap);
        }
    }
    /* every variable minus one */
    s = *c;
    for (int i = 0; i < nv; i++) {
        int64_t *v = var_of(&s, vars[i]);
        if (*v > 1) (*v)--;
    }
    n = keep(c, op, &s, out, n, cap);
    /* every variable at half plus one (a partial last tile of a tile
     * near half the case), never above the case's value */
    s = *c;
    for (int i = 0; i < nv; i++) {
        int64_t *v = var_of(&s, vars[i]);
        int64_t h = *v / 2 + 1;
        *v = h < *v ? h : *v;
    }
    n = keep(c, op, &s, out, n, cap);
    /* every variable at a random odd value no larger than the case's,
     * drawn again (a bounded number of times) while it repeats a shape
     * above, so that the number of shapes does not depend on the seed
     * but for the smallest cases */
    for (int attempt = 0; attempt < 32; attempt++) {
        s = *c;
        for (int i = 0; i < nv; i++) {
            int64_t *v = var_of(&s, vars[i]);
            *v = odd_upto(*v, next64(&st));
        }
        int before = n;
        n = keep(c, op, &s, out, n, cap);
        if (n > before || n >= cap) break;
    }
    return n;
}

void kg_heldout_name(const kg_case *s, const kg_op *op, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap == 0) return;
    buf[0] = '\0';
    len += (size_t)snprintf(buf, cap, "heldout[");
    int first = 1;
    for (const char *p = op != NULL ? op->vars : "MNK"; *p != '\0' && len < cap; p++) {
        int64_t v = *p == 'M' ? s->M : *p == 'N' ? s->N : *p == 'K' ? s->K : -1;
        if (*p != 'M' && *p != 'N' && *p != 'K') continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s%c=%lld", first ? "" : " ", *p, (long long)v);
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
