/* sumdiff_naive.c: the C baseline of the sumdiff test op (ops/sumdiff.c). */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a)
{
    const float *x = a->in[0], *y = a->in[1];
    float *s = a->out[0], *d = a->out[1];
    int64_t n = kg_var_i(a, "n", 0);
    float alpha = (float)kg_var_r(a, "alpha", 1.0);
    for (int64_t i = 0; i < n; i++) {
        KGATE_STORE(&s[i], x[i] + alpha * y[i]);
        KGATE_STORE(&d[i], x[i] - y[i]);
    }
}
