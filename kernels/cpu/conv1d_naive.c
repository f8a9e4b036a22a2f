/* conv1d_naive.c: the conv1d op of examples/ops/conv1d.c on the CPU,
 * one output at a time.  X bfloat16 [B, L], F float32 [W], Y bfloat16
 * [B, L - W + 1]; float32 accumulation, one rounding to bfloat16 at the
 * end.  The variables come by name (kg_var_i). */
#include "kgate/kernel.h"

void conv1d_naive(const kg_kargs *a)
{
    const uint16_t *x = a->in[0];
    const float *f = a->in[1];
    uint16_t *y = a->out[0];
    int64_t B = kg_var_i(a, "B", 0), L = kg_var_i(a, "L", 0), W = kg_var_i(a, "W", 0), n = L - W + 1;
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < n; i++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < W; k++) acc += kg_bf16_to_f32(x[b * L + i + k]) * f[k];
            KGATE_STORE(&y[b * n + i], kg_f32_to_bf16(acc));
        }
}

/* A wrong kernel kgate must reject: the filter reversed (a convolution
 * in the signal-processing sense, not the op's correlation). */
void conv1d_flipped(const kg_kargs *a)
{
    const uint16_t *x = a->in[0];
    const float *f = a->in[1];
    uint16_t *y = a->out[0];
    int64_t B = kg_var_i(a, "B", 0), L = kg_var_i(a, "L", 0), W = kg_var_i(a, "W", 0), n = L - W + 1;
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < n; i++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < W; k++) acc += kg_bf16_to_f32(x[b * L + i + k]) * f[W - 1 - k];
            KGATE_STORE(&y[b * n + i], kg_f32_to_bf16(acc));
        }
}
