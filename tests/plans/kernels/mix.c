/* mix.c: kernels for the test op tests/plans/ops/mix.c.
 *   mix_ok    honest: y0 in double, y1 in int32, y2 and y3 in float
 *   mix_f32   y0 computed in float32: a precision downgrade
 *   mix_skip  never writes y1 */
#include "kgate/kernel.h"

static void mix(const kg_kargs *a, int f32, int skip)
{
    const double *x0 = a->in[0];
    const int32_t *x1 = a->in[1];
    const int8_t *x2 = a->in[2];
    const uint8_t *x3 = a->in[3], *x4 = a->in[4];
    const uint16_t *x5 = a->in[5];
    double *y0 = a->out[0];
    int32_t *y1 = a->out[1];
    float *y2 = a->out[2];
    uint16_t *y3 = a->out[3];
    int64_t n = kg_var_i(a, "N", 0);
    for (int64_t e = 0; e < n; e++) {
        if (f32) KGATE_STORE(&y0[e], (double)(2.0f * (float)x0[e] + (float)x1[e]));
        else KGATE_STORE(&y0[e], 2.0 * x0[e] + (double)x1[e]);
        if (!skip) KGATE_STORE(&y1[e], x1[e] + 3 * (int32_t)x2[e]);
        KGATE_STORE(&y2[e], kg_e5m2_to_f32(x3[e]) * kg_e4m3_to_f32(x4[e]));
        KGATE_STORE(&y3[e], kg_f32_to_f16(kg_f16_to_f32(x5[e]) + kg_e4m3_to_f32(x4[e])));
    }
}

void mix_ok(const kg_kargs *a) { mix(a, 0, 0); }
void mix_f32(const kg_kargs *a) { mix(a, 1, 0); }
void mix_skip(const kg_kargs *a) { mix(a, 0, 1); }
