/* test_expr.c: launch-geometry expressions (src/plan/expr.c). */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "plan/expr.h"

static kg_case make_case(void)
{
    kg_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "tall");
    strcpy(c.op, "gemm_bt");
    c.M = 96; c.N = 512; c.K = 2048; c.splits = -1;
    return c;
}

static int64_t eval_ok(const char *text)
{
    kg_case c = make_case();
    kg_err err = { 0 };
    int64_t v = -12345;
    int rc = kg_expr_eval("test", text, &c, &v, &err);
    CHECK_MSG(rc == KG_OK, "'%s': %s", text, err.msg);
    return v;
}

static void expect_error(const char *text, const char *needle, int code)
{
    kg_case c = make_case();
    kg_err err = { 0 };
    int64_t v = 0;
    int rc = kg_expr_eval("grid", text, &c, &v, &err);
    CHECK_MSG(rc == code, "'%s' gave rc %d (%s)", text, rc, err.msg);
    CHECK_STR_CONTAINS(err.msg, needle);
    CHECK_STR_CONTAINS(err.msg, "grid expression");
}

int main(void)
{
    /* values, precedence, associativity */
    CHECK(eval_ok("42") == 42);
    CHECK(eval_ok("M") == 96);
    CHECK(eval_ok("  N  ") == 512);
    CHECK(eval_ok("1 + 2 * 3") == 7);
    CHECK(eval_ok("(1 + 2) * 3") == 9);
    CHECK(eval_ok("10 - 4 - 3") == 3);
    CHECK(eval_ok("100 / 10 / 5") == 2);
    CHECK(eval_ok("17 % 5") == 2);
    CHECK(eval_ok("-3 + 5") == 2);
    CHECK(eval_ok("--3") == 3);
    CHECK(eval_ok("ceildiv(N, 64)") == 8);
    CHECK(eval_ok("ceildiv(M, 64)") == 2);
    CHECK(eval_ok("ceildiv(0, 64)") == 0);
    CHECK(eval_ok("ceildiv(65,64)") == 2);
    CHECK(eval_ok("min(M, N)") == 96);
    CHECK(eval_ok("max(M, N)") == 512);
    CHECK(eval_ok("max(min(M, 64), ceildiv(K, 1024)) * 2") == 128);
    CHECK(eval_ok("(64 * 64 + 64 * 64) * 4") == 32768);
    CHECK(eval_ok("M*N*K") == (int64_t)96 * 512 * 2048);

    /* errors name the expression and the column */
    expect_error("ceildiv(N, 64", "column 14: expected ')'", KG_EINPUT);
    expect_error("N + Q", "column 5: unknown name 'Q'", KG_EINPUT);
    expect_error("N / (M - 96)", "column 3: division by zero", KG_EINPUT);
    expect_error("N % 0", "division by zero", KG_EINPUT);
    expect_error("splits * 2", "case 'tall' does not set splits", KG_EINPUT);
    expect_error("N $ 2", "column 3: expected an operator", KG_EINPUT);
    expect_error("N +", "column 4: expected a value", KG_EINPUT);
    expect_error("", "empty", KG_EINPUT);
    expect_error("ceildiv(N)", "expected ','", KG_EINPUT);
    expect_error("min N", "expected '('", KG_EINPUT);
    expect_error("12abc", "junk after an integer literal", KG_EINPUT);
    expect_error("99999999999999999999", "too large", KG_EINPUT);
    expect_error("9223372036854775807 + 1", "overflow", KG_EINPUT);
    expect_error("M * 4611686018427387904", "overflow", KG_EINPUT);
    expect_error("(0 - 7) / 2", "negative operand", KG_EINPUT);
    expect_error("ceildiv(-1, 2)", "negative operand", KG_EINPUT);
    expect_error("1, 2", "more than 1 values", KG_EINPUT);

    /* lists */
    {
        kg_case c = make_case();
        kg_err err = { 0 };
        int64_t g[3] = { 0, 0, 0 };
        int n = -1;
        CHECK(kg_expr_eval_list("grid", "ceildiv(N, 64), ceildiv(M, 64)", &c, g, 3, 1, &n, &err) == KG_OK);
        CHECK(n == 2 && g[0] == 8 && g[1] == 2 && g[2] == 1);
        CHECK(kg_expr_eval_list("block", "", &c, g, 3, 1, &n, &err) == KG_OK);
        CHECK(n == 0 && g[0] == 1 && g[1] == 1 && g[2] == 1);
        CHECK(kg_expr_eval_list("block", "16, 16, 1, 1", &c, g, 3, 1, &n, &err) == KG_EINPUT);
        CHECK_STR_CONTAINS(err.msg, "more than 3 values");
        kg_err_clear(&err);
        CHECK(kg_expr_eval_list("block", "16,", &c, g, 3, 1, &n, &err) == KG_EINPUT);
        CHECK_STR_CONTAINS(err.msg, "expected a value");
    }

    /* syntax check without a case: arithmetic errors are case-dependent */
    {
        kg_err err = { 0 };
        CHECK(kg_expr_check_list("grid", "ceildiv(N, 64), M / (K - 1)", 3, &err) == KG_OK);
        /* any name may be a variable of the op (docs/ops.md): the plan
         * check (kg_plan_check_ops) names one that a case does not set */
        CHECK(kg_expr_check_list("grid", "ceildiv(N, 64), W", 3, &err) == KG_OK);
        CHECK(kg_expr_check_list("grid", "ceildiv(N, 64), W(", 3, &err) == KG_EINPUT);
    }
    return kg_test_finish("test_expr");
}
