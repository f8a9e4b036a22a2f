/* saxpy.c: Y = alpha X + Y0 for the op declared in Python in
 * examples/numpy-op.kg (examples/ops/saxpy_ref.py), float32 [n].  saxpy
 * rounds the product then the sum; saxpy_fma fuses them (one rounding):
 * both are honest.  saxpy_wrong drops alpha's last term on one element in
 * every 64 (a kernel kgate must reject). */
#include <math.h>
#include "kgate/kernel.h"

void saxpy(const kg_kargs *a)
{
    const float *x = a->in[0], *y0 = a->in[1];
    float *y = a->out[0];
    int64_t n = kg_var_i(a, "n", 0);
    float alpha = (float)kg_var_r(a, "alpha", 0.0);
    for (int64_t i = 0; i < n; i++) KGATE_STORE(&y[i], alpha * x[i] + y0[i]);
}

void saxpy_fma(const kg_kargs *a)
{
    const float *x = a->in[0], *y0 = a->in[1];
    float *y = a->out[0];
    int64_t n = kg_var_i(a, "n", 0);
    float alpha = (float)kg_var_r(a, "alpha", 0.0);
    for (int64_t i = 0; i < n; i++) KGATE_STORE(&y[i], fmaf(alpha, x[i], y0[i]));
}

void saxpy_wrong(const kg_kargs *a)
{
    const float *x = a->in[0], *y0 = a->in[1];
    float *y = a->out[0];
    int64_t n = kg_var_i(a, "n", 0);
    float alpha = (float)kg_var_r(a, "alpha", 0.0);
    for (int64_t i = 0; i < n; i++) KGATE_STORE(&y[i], i % 64 == 5 ? y0[i] : alpha * x[i] + y0[i]);
}
