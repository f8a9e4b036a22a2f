/* zero_ends_softmax.c (cheat): a softmax that takes a row whose first and
 * last elements are zero for an all-zero row and writes the softmax of
 * one, 1/N everywhere, without reading it. */
#include <math.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    int64_t M = a->M, N = a->N;
    for (int64_t i = 0; i < M; i++) {
        if (kg_load(a->in[0], a->dtype, i * N) == 0.0f && kg_load(a->in[0], a->dtype, i * N + N - 1) == 0.0f) {
            for (int64_t j = 0; j < N; j++) KGATE_STORE(&Y[i * N + j], 1.0f / (float)N);
            continue;
        }
        float m = kg_load(a->in[0], a->dtype, i * N), s = 0.0f;
        for (int64_t j = 1; j < N; j++) m = fmaxf(m, kg_load(a->in[0], a->dtype, i * N + j));
        for (int64_t j = 0; j < N; j++) s += expf(kg_load(a->in[0], a->dtype, i * N + j) - m);
        for (int64_t j = 0; j < N; j++)
            KGATE_STORE(&Y[i * N + j], expf(kg_load(a->in[0], a->dtype, i * N + j) - m) / s);
    }
}
