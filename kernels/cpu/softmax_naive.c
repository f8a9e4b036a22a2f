/* softmax_naive.c: CPU baseline for softmax over rows: the row max, then
 * exp(x - max) into the output and its float32 sum, then a division. */
#include <math.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    int64_t M = a->M, N = a->N;
    for (int64_t i = 0; i < M; i++) {
        float m = kg_load(a->in[0], a->dtype, i * N), s = 0.0f;
        for (int64_t j = 1; j < N; j++) m = fmaxf(m, kg_load(a->in[0], a->dtype, i * N + j));
        for (int64_t j = 0; j < N; j++) s += expf(kg_load(a->in[0], a->dtype, i * N + j) - m);
        for (int64_t j = 0; j < N; j++)
            KGATE_STORE(&Y[i * N + j], expf(kg_load(a->in[0], a->dtype, i * N + j) - m) / s);
    }
}
