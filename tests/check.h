/* tests/check.h: the assertions of kgate's unit tests.
 * Each failed CHECK prints file:line and the expression and counts; a
 * test program returns kg_test_finish(), non-zero when anything failed. */
#ifndef KGATE_TEST_CHECK_H
#define KGATE_TEST_CHECK_H
#include <math.h>
#include <stdio.h>
#include <string.h>

static int kg_test_failed, kg_test_checked;

#define CHECK(cond) do { kg_test_checked++; if (!(cond)) { kg_test_failed++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define CHECK_MSG(cond, ...) do { kg_test_checked++; if (!(cond)) { kg_test_failed++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* |a - b| <= atol + rtol * |b| */
#define CHECK_NEAR(a, b, atol, rtol) do { double kg_a_ = (a), kg_b_ = (b); kg_test_checked++; \
    if (!(fabs(kg_a_ - kg_b_) <= (atol) + (rtol) * fabs(kg_b_))) { kg_test_failed++; \
    fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.17g, %s = %.17g\n", __FILE__, __LINE__, \
            #a, kg_a_, #b, kg_b_); } } while (0)

#define CHECK_STR_CONTAINS(hay, needle) do { const char *kg_h_ = (hay); kg_test_checked++; \
    if (kg_h_ == NULL || strstr(kg_h_, (needle)) == NULL) { kg_test_failed++; \
    fprintf(stderr, "%s:%d: expected \"%s\" in \"%s\"\n", __FILE__, __LINE__, (needle), \
            kg_h_ ? kg_h_ : "(null)"); } } while (0)

static inline int kg_test_finish(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, kg_test_checked, kg_test_failed);
    return kg_test_failed != 0;
}
#endif
