/* test_pyops.c: the pieces of ops declared in Python that are pure: the
 * tensors of their inputs and outputs keys (src/plan/pyop.c) and the
 * library bound (src/ops/pyops.c, kg_pyops_library_bound; its derivation
 * over six ops is tools/bench/pyop_bound.py).  Here, over many seeds: a
 * float32 row sum whose "library" is pairwise, as numpy's is, and honest
 * kernels that sum sequentially, backwards and in blocks, which must pass;
 * a term dropped and a bfloat16 accumulator, which must fail; a lucky zero
 * library error at one element and a zero row, which must not make the
 * bound 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kgate/op.h"
#include "kgate/philox.h"

static void tensors(void)
{
    kg_tensordecl t[KG_MAX_IN];
    char why[256];
    int n = kg_plan_tensors("X[n] Y0[n, m]:f32  Z[ceildiv(n, 2), max(m, 4)]:bf16", t, KG_MAX_IN, why, sizeof why);
    CHECK_MSG(n == 3, "%d tensors: %s", n, why);
    CHECK(strcmp(t[0].name, "X") == 0 && t[0].ndims == 1 && strcmp(t[0].dims[0], "n") == 0 && t[0].dtype == -1);
    CHECK(strcmp(t[1].name, "Y0") == 0 && t[1].ndims == 2 && strcmp(t[1].dims[1], "m") == 0 &&
          t[1].dtype == KG_DT_F32);
    CHECK(t[2].ndims == 2 && strcmp(t[2].dims[0], "ceildiv(n, 2)") == 0 && strcmp(t[2].dims[1], "max(m, 4)") == 0 &&
          t[2].dtype == KG_DT_BF16);
    CHECK(kg_plan_tensors("X[n", t, KG_MAX_IN, why, sizeof why) < 0);
    CHECK_STR_CONTAINS(why, "no ']'");
    CHECK(kg_plan_tensors("X[n]:q7", t, KG_MAX_IN, why, sizeof why) < 0);
    CHECK_STR_CONTAINS(why, "dtype 'q7'");
    CHECK(kg_plan_tensors("X[n] X[n]", t, KG_MAX_IN, why, sizeof why) < 0);
    CHECK_STR_CONTAINS(why, "named twice");
    CHECK(kg_plan_tensors("X[]", t, KG_MAX_IN, why, sizeof why) < 0);
    CHECK(kg_plan_tensors("", t, KG_MAX_IN, why, sizeof why) == 0);
    CHECK(kg_plan_tensors("A[n] B[n] C[n] D[n] E[n]", t, 4, why, sizeof why) < 0);
}

static double f32(double x) { return (double)(float)x; }

static double bf16(double x)
{
    float f = (float)x;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    b = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
    memcpy(&f, &b, sizeof f);
    return (double)f;
}

/* float32 sums of x[0..n-1]: pairwise (numpy's), sequential, backwards,
 * in blocks of 32, bf16-accumulated */
static double pairwise(const double *x, int n)
{
    if (n <= 8) {
        double s = 0;
        for (int i = 0; i < n; i++) s = f32(s + x[i]);
        return s;
    }
    return f32(pairwise(x, n / 2) + pairwise(x + n / 2, n - n / 2));
}

static double sequential(const double *x, int n, int back, double (*acc)(double))
{
    double s = 0;
    for (int i = 0; i < n; i++) s = acc(s + x[back ? n - 1 - i : i]);
    return s;
}

static double blocked(const double *x, int n)
{
    double s = 0;
    for (int b = 0; b < n; b += 32) s = f32(s + sequential(x + b, n - b < 32 ? n - b : 32, 0, f32));
    return s;
}

enum { ROWS = 64, COLS = 1024 };

/* max over the rows of |v - ref| / bound */
static double worst(const double *v, const double *ref, const double *bound)
{
    double w = 0;
    for (int r = 0; r < ROWS; r++) {
        double e = fabs(v[r] - ref[r]);
        double q = e == 0 ? 0 : bound[r] > 0 ? e / bound[r] : (double)INFINITY;
        if (q > w) w = q;
    }
    return w;
}

static void rowsum_seeds(void)
{
    double *x = malloc(sizeof(double) * ROWS * COLS), xp[COLS];
    double ref[ROWS], lib[ROWS], libp[ROWS], bound[ROWS], v[5][ROWS];
    double honest = 0, wrong_least = (double)INFINITY, bf_least = (double)INFINITY;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        for (int r = 0; r < ROWS; r++) {
            double *row = x + (size_t)r * COLS;
            for (int i = 0; i < COLS; i++)
                row[i] = f32((r == ROWS - 1 ? 4.0 : 1.0) * (double)kg_philox_uniform(seed, (uint32_t)r, (uint64_t)i));
            ref[r] = 0;
            for (int i = 0; i < COLS; i++) ref[r] += row[i];
            lib[r] = pairwise(row, COLS);
            /* the helper's "libp": the inputs one float32 roundoff away */
            for (int i = 0; i < COLS; i++)
                xp[i] = f32(row[i] * (1 + 0x1p-23 * ((kg_philox_uniform(seed + 99, (uint32_t)r, (uint64_t)i) > 0.0f) ? 1
                                                                                                                : -1)));
            libp[r] = pairwise(xp, COLS);
            v[0][r] = sequential(row, COLS, 0, f32);
            v[1][r] = sequential(row, COLS, 1, f32);
            v[2][r] = blocked(row, COLS);
            v[3][r] = f32(ref[r] - row[COLS - 1]);          /* the last term dropped */
            v[4][r] = sequential(row, COLS, 0, bf16);       /* a bfloat16 accumulator */
        }
        kg_pyops_library_bound(ref, lib, libp, ROWS, 0, COLS, KG_DT_F32, bound);
        for (int k = 0; k < 3; k++) {
            double w = worst(v[k], ref, bound);
            if (w > honest) honest = w;
        }
        double w3 = worst(v[3], ref, bound), w4 = worst(v[4], ref, bound);
        if (w3 < wrong_least) wrong_least = w3;
        if (w4 < bf_least) bf_least = w4;
    }
    CHECK_MSG(honest <= 1.0, "an honest float32 row sum erred %.3g x its library bound", honest);
    CHECK_MSG(wrong_least > 1.0, "a row sum with a term dropped passed: %.3g x its bound", wrong_least);
    CHECK_MSG(bf_least > 1.0, "a bfloat16-accumulated row sum passed: %.3g x its bound", bf_least);
    free(x);
}

/* A lucky zero library error at one element does not make its bound 0;
 * a row whose reference is all zero keeps a floor from the output's scale. */
static void guards(void)
{
    double ref[8] = { 1.0, 2.0, 3.0, 4.0, 0, 0, 0, 0 }, lib[8], bound[8];
    for (int i = 0; i < 8; i++) lib[i] = ref[i] + 1e-7 * (i + 1);
    lib[2] = ref[2];   /* lucky */
    kg_pyops_library_bound(ref, lib, NULL, 8, 4, 4, KG_DT_F32, bound);
    CHECK_MSG(bound[2] >= KG_PYOPS_K * 2e-7, "the lucky element's bound is %.3g", bound[2]);
    for (int i = 4; i < 8; i++) CHECK_MSG(bound[i] > 0, "the zero row's bound %d is 0", i);
    /* the errors of the perturbed evaluation count too */
    double libp[8];
    for (int i = 0; i < 8; i++) libp[i] = ref[i] + 1e-3;
    double b2[8];
    kg_pyops_library_bound(ref, lib, libp, 8, 4, 4, KG_DT_F32, b2);
    CHECK(b2[0] >= KG_PYOPS_K * 1e-3);
    /* a non-finite library value is not a bound */
    lib[1] = NAN;
    kg_pyops_library_bound(ref, lib, NULL, 8, 4, 4, KG_DT_F32, bound);
    CHECK(isfinite(bound[1]) && bound[1] > 0);
}

int main(void)
{
    tensors();
    rowsum_seeds();
    guards();
    return kg_test_finish("test_pyops");
}
