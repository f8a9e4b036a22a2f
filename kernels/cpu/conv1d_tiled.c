/* conv1d_tiled.c: the conv1d op of examples/ops/conv1d.c on the CPU,
 * with the signal converted to float32 once per row and eight outputs
 * accumulated at a time (the compiler vectorises the inner loop). */
#include <stdlib.h>
#include "kgate/kernel.h"

void conv1d_tiled(const kg_kargs *a)
{
    const uint16_t *x = a->in[0];
    const float *f = a->in[1];
    uint16_t *y = a->out[0];
    int64_t B = kg_var_i(a, "B", 0), L = kg_var_i(a, "L", 0), W = kg_var_i(a, "W", 0), n = L - W + 1;
    float *row = malloc((size_t)L * sizeof *row);
    if (row == NULL) return;
    for (int64_t b = 0; b < B; b++) {
        for (int64_t j = 0; j < L; j++) row[j] = kg_bf16_to_f32(x[b * L + j]);
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            float acc[8] = { 0 };
            for (int64_t k = 0; k < W; k++)
                for (int t = 0; t < 8; t++) acc[t] += row[i + t + k] * f[k];
            for (int t = 0; t < 8; t++) KGATE_STORE(&y[b * n + i + t], kg_f32_to_bf16(acc[t]));
        }
        for (; i < n; i++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < W; k++) acc += row[i + k] * f[k];
            KGATE_STORE(&y[b * n + i], kg_f32_to_bf16(acc));
        }
    }
    free(row);
}
