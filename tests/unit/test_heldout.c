/* test_heldout.c: the held-out shapes (src/check/heldout.c), the conditions of
 * an arm's requires (src/plan/expr.c) and the plan's check of them (src/plan/plan.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "plan/expr.h"
#include "check/heldout.h"
#include "kgate/op.h"
#include "kgate/plan.h"

static kg_case mk(const char *op, int64_t M, int64_t N, int64_t K, int64_t splits)
{
    kg_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "c");
    snprintf(c.op, sizeof c.op, "%s", op);
    c.dtype = KG_DT_F32;
    c.M = M; c.N = N; c.K = K; c.splits = splits;
    c.eps = 1e-5;
    c.scale = 1.0;
    c.primary = 1;
    return c;
}

static void test_conds(void)
{
    kg_case c = mk("gemm_bt", 64, 96, 45, -1);
    kg_err err = { 0 };
    int ok = -1;
    char why[200];
    CHECK(kg_expr_eval_conds("requires", "M % 16 == 0, N % 32 == 0", &c, &ok, why, sizeof why, &err) == KG_OK);
    CHECK(ok == 1 && why[0] == '\0');
    CHECK(kg_expr_eval_conds("requires", "M % 16 == 0, K % 8 == 0", &c, &ok, why, sizeof why, &err) == KG_OK);
    CHECK(ok == 0);
    CHECK_STR_CONTAINS(why, "K % 8 == 0 (5 against 0)");
    /* every comparison */
    static const struct { const char *t; int want; } cs[] = {
        { "K != 44", 1 }, { "K < 45", 0 }, { "K <= 45", 1 }, { "K > 44", 1 }, { "K >= 46", 0 },
        { "ceildiv(K, 8) * 8 == 48", 1 }, { "min(M, N) == 64, max(M, N) == 96", 1 }, { "", 1 }, { "  ", 1 } };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        CHECK_MSG(kg_expr_eval_conds("requires", cs[i].t, &c, &ok, why, sizeof why, &err) == KG_OK, "%s: %s",
                  cs[i].t, err.msg);
        CHECK_MSG(ok == cs[i].want, "'%s' gives %d", cs[i].t, ok);
    }
    /* errors: no comparison, a trailing comma, an unset variable, a division by zero */
    kg_err_clear(&err);
    CHECK(kg_expr_check_conds("requires", "K % 8", &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "expected a comparison");
    CHECK(kg_expr_check_conds("requires", "K % 8 = 0", &err) == KG_EINPUT);
    CHECK(kg_expr_check_conds("requires", "K % 8 == 0,", &err) == KG_EINPUT);
    CHECK(kg_expr_check_conds("requires", "K % 8 == 0, N > 2", &err) == KG_OK);
    CHECK(kg_expr_eval_conds("requires", "splits > 1", &c, &ok, why, sizeof why, &err) == KG_EINPUT);
    kg_err_clear(&err);
    CHECK(kg_expr_eval_conds("requires", "K / (M - 64) == 1", &c, &ok, why, sizeof why, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "division by zero");
}

static int64_t var(const kg_case *c, char v)
{
    return v == 'M' ? c->M : v == 'N' ? c->N : c->K;
}

static void test_shapes(void)
{
    static const struct { const char *op; int64_t M, N, K, splits; int want; } cs[] = {
        { "gemm_bt", 64, 64, 64, -1, 6 }, { "gemm_bt", 24, 32, 64, -1, 6 }, { "rowsum", 128, 256, -1, -1, 5 },
        { "softmax", 2, 2, -1, -1, 3 }, { "gemm_splitk", 16, 16, 8, 8, 6 }, { "layernorm", 1, 7, -1, -1, -1 }, { "rowsum", 4, 16, -1, -1, 5 },
        { "gemm_nt", 1, 1, 1, -1, 0 } };
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        kg_case c = mk(cs[t].op, cs[t].M, cs[t].N, cs[t].K, cs[t].splits);
        const kg_op *op = kg_op_find(c.op);
        CHECK(op != NULL);
        if (op == NULL) continue;
        kg_case s[KG_HELDOUT_MAX], s2[KG_HELDOUT_MAX];
        int n = kg_heldout_shapes(&c, op, 42, s, KG_HELDOUT_MAX);
        CHECK_MSG(cs[t].want < 0 ? n >= 2 : n == cs[t].want, "%s %lldx%lldx%lld: %d shapes, want %d", c.op, (long long)c.M, (long long)c.N,
                  (long long)c.K, n, cs[t].want);
        /* deterministic from the seed */
        CHECK(kg_heldout_shapes(&c, op, 42, s2, KG_HELDOUT_MAX) == n);
        CHECK(memcmp(s, s2, (size_t)n * sizeof *s) == 0);
        for (int i = 0; i < n; i++) {
            char why[256];
            CHECK(op->admissible(&s[i], why, sizeof why) == 0);
            for (const char *p = "MNK"; *p; p++) {
                if (strchr(op->vars, *p) == NULL) continue;
                CHECK_MSG(var(&s[i], *p) >= 1 && var(&s[i], *p) <= var(&c, *p), "%s shape %d: %c = %lld", c.op, i,
                          *p, (long long)var(&s[i], *p));
            }
            CHECK(!(s[i].M == c.M && s[i].N == c.N && s[i].K == c.K));
            for (int j = 0; j < i; j++) CHECK(!(s[i].M == s[j].M && s[i].N == s[j].N && s[i].K == s[j].K));
            if (c.splits > 0) CHECK(s[i].splits >= 1 && s[i].splits <= s[i].K);
            CHECK(strcmp(s[i].name, c.name) == 0 && s[i].dtype == c.dtype && s[i].scale == c.scale);
        }
        /* the first shapes take one variable down by one, in the op's order */
        if (n > 0 && c.M > 1) CHECK(s[0].M == c.M - 1 && s[0].N == c.N);
    }
    /* the odd shape moves with the seed */
    kg_case c = mk("gemm_bt", 200, 300, 400, -1);
    const kg_op *op = kg_op_find("gemm_bt");
    kg_case a[KG_HELDOUT_MAX], b[KG_HELDOUT_MAX];
    int moved = 0;
    int na = kg_heldout_shapes(&c, op, 1, a, KG_HELDOUT_MAX);
    for (uint64_t seed = 2; seed < 8; seed++) {
        int nb = kg_heldout_shapes(&c, op, seed, b, KG_HELDOUT_MAX);
        CHECK(na == nb);
        for (int i = 0; i < na && i < nb; i++) moved |= a[i].M != b[i].M || a[i].N != b[i].N || a[i].K != b[i].K;
        for (int i = 0; i < nb; i++)
            if (b[i].M != c.M - 1 && b[i].M != c.M && b[i].M != c.M / 2 + 1) CHECK(b[i].M % 2 == 1 && b[i].N % 2 == 1);
    }
    CHECK(moved);
    char name[96];
    kg_heldout_name(&a[0], op, name, sizeof name);
    CHECK(strcmp(name, "heldout[M=199 N=300 K=400]") == 0);
    kg_case r = mk("rowsum", 5, 9, -1, -1);
    kg_heldout_name(&r, kg_op_find("rowsum"), name, sizeof name);
    CHECK(strcmp(name, "heldout[M=5 N=9]") == 0);
}

/* A declared op's variables by name: every integer variable of .vars
 * varies (reals and yes/no never), or those .heldout_vars names. */
static int adm_all(const kg_case *c, char *why, size_t cap)
{
    (void)c;
    (void)why;
    (void)cap;
    return 0;
}

static void setvar(kg_case *c, const char *name, kg_var_type t, int64_t i, double r)
{
    kg_var *v = &c->vars[c->nvars++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->type = t;
    v->i = i;
    v->r = r;
    snprintf(v->text, sizeof v->text, t == KG_VAR_REAL ? "%.17g" : "%.0f", t == KG_VAR_REAL ? r : (double)i);
}

static void test_declared_vars(void)
{
    kg_op op;
    memset(&op, 0, sizeof op);
    op.abi = KG_OP_ABI;
    op.name = "decl";
    op.vars = "B L alpha:real causal:bool";
    op.admissible = adm_all;
    kg_case c = mk("decl", -1, -1, -1, -1);
    setvar(&c, "B", KG_VAR_INT, 8, 8);
    setvar(&c, "L", KG_VAR_INT, 300, 300);
    setvar(&c, "alpha", KG_VAR_REAL, 0, 0.5);
    setvar(&c, "causal", KG_VAR_BOOL, 1, 1);
    kg_case s[KG_HELDOUT_MAX];
    int n = kg_heldout_shapes(&c, &op, 7, s, KG_HELDOUT_MAX);
    CHECK(n == 5); /* B-1, L-1, both -1, both half+1, both odd */
    int64_t b, l;
    double alpha;
    for (int i = 0; i < n; i++) {
        CHECK(kg_case_var(&s[i], "B", NULL, &b, NULL) && kg_case_var(&s[i], "L", NULL, &l, NULL));
        CHECK(b >= 1 && b <= 8 && l >= 1 && l <= 300 && (b != 8 || l != 300));
        CHECK(kg_case_var(&s[i], "alpha", NULL, NULL, &alpha) && alpha == 0.5);
        CHECK(s[i].vars[3].i == 1);
        char want[16];
        snprintf(want, sizeof want, "%lld", (long long)b);
        CHECK(strcmp(s[i].vars[0].text, want) == 0); /* the text follows the value */
    }
    CHECK(kg_case_var(&s[0], "B", NULL, &b, NULL) && b == 7);
    CHECK(kg_case_var(&s[1], "L", NULL, &l, NULL) && l == 299);
    char name[96];
    kg_heldout_name(&s[0], &op, name, sizeof name);
    CHECK(strcmp(name, "heldout[B=7 L=300]") == 0);
    /* .heldout_vars narrows the set; "" turns held-out shapes off */
    op.heldout_vars = "L";
    n = kg_heldout_shapes(&c, &op, 7, s, KG_HELDOUT_MAX);
    CHECK(n >= 2);
    for (int i = 0; i < n; i++) CHECK(kg_case_var(&s[i], "B", NULL, &b, NULL) && b == 8);
    kg_heldout_name(&s[0], &op, name, sizeof name);
    CHECK(strcmp(name, "heldout[L=299]") == 0);
    op.heldout_vars = "";
    CHECK(kg_heldout_shapes(&c, &op, 7, s, KG_HELDOUT_MAX) == 0);
}

static const char *plan_text =
    "[case g]\nop = gemm_bt\ndtype = f32\nM = 64\nN = 64\nK = 64\n"
    "[case h]\nop = gemm_bt\ndtype = f32\nM = 64\nN = 64\nK = 40\n"
    "[arm base]\nop = gemm_bt\nrole = baseline\nsource = x.c\nrequires = K % 8 == 0\n"
    "[arm ctl]\nop = gemm_bt\nrole = control\nof = base\n"
    "[arm fast]\nop = gemm_bt\nsource = y.c\ncases = g\nrequires = K % 64 == 0, N >= 64\n";

static void test_plan(void)
{
    kg_plan *p = NULL;
    kg_err err = { 0 };
    CHECK_MSG(kg_plan_parse(plan_text, strlen(plan_text), "t.kg", ".", &p, &err) == KG_OK, "%s", err.msg);
    if (p != NULL) {
        CHECK(strcmp(p->arms[0].requires, "K % 8 == 0") == 0);
        CHECK(strcmp(p->arms[1].requires, "K % 8 == 0") == 0);   /* a control inherits it */
        CHECK_STR_CONTAINS(p->canonical, "requires = K % 64 == 0, N >= 64\n");
        int ok = 1;
        char why[128];
        CHECK(kg_heldout_supported(&p->arms[2], &p->cases[1], &ok, why, sizeof why, &err) == KG_OK && ok == 0);
        CHECK_STR_CONTAINS(why, "K % 64 == 0 (40 against 0)");
        kg_plan_free(p);
    }
    /* without requires the canonical form (and so every plan's hash) is unchanged */
    const char *plain = "[case g]\nop = rowsum\ndtype = f32\nM = 4\nN = 4\n[arm b]\nop = rowsum\nrole = baseline\n"
                        "source = x.c\n";
    CHECK(kg_plan_parse(plain, strlen(plain), "p.kg", ".", &p, &err) == KG_OK);
    if (p != NULL) {
        CHECK(strstr(p->canonical, "requires") == NULL);
        kg_plan_free(p);
    }
    char bad[1024];
    snprintf(bad, sizeof bad, "%s", plan_text);
    char *at = strstr(bad, "cases = g\n");
    memcpy(at, "cases = h\n", 10);
    p = NULL;
    kg_err_clear(&err);
    /* a case the arm runs on violating it: the arm is INADMISSIBLE there (a
     * note at load; the worker records it before any launch) */
    CHECK_MSG(kg_plan_parse(bad, strlen(bad), "b.kg", ".", &p, &err) == KG_OK, "%s", err.msg);
    if (p != NULL) {
        int noted = 0;
        for (int i = 0; i < p->nnotes; i++)
            noted |= strstr(p->notes[i], "arm 'fast' is INADMISSIBLE on case 'h': its requires K % 64 == 0 (40 "
                                         "against 0) does not hold") != NULL;
        CHECK(noted);
        kg_plan_free(p);
        p = NULL;
    }
    /* ... but a case that no baseline can run is an error */
    snprintf(bad, sizeof bad, "%s", plan_text);
    at = strstr(bad, "requires = K % 8 == 0\n");
    memcpy(at, "requires = K + 0 > 40", 21);
    kg_err_clear(&err);
    CHECK(kg_plan_parse(bad, strlen(bad), "b.kg", ".", &p, &err) == KG_EINPUT && p == NULL);
    CHECK_STR_CONTAINS(err.msg, "b.kg:7: no baseline arm of the case meets its requires");
    CHECK_STR_CONTAINS(err.msg, "case 'h': K + 0 > 40");
    const char *unset = "[case g]\nop = rowsum\ndtype = f32\nM = 4\nN = 4\n[arm b]\nop = rowsum\nrole = baseline\n"
                        "source = x.c\nrequires = K > 1\n";
    kg_err_clear(&err);
    CHECK(kg_plan_parse(unset, strlen(unset), "u.kg", ".", &p, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "requires cannot be evaluated on a case");
}

int main(void)
{
    test_conds();
    test_shapes();
    test_declared_vars();
    test_plan();
    return kg_test_finish("test_heldout");
}
