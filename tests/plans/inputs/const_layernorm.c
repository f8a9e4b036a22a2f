/* const_layernorm.c (wrong): a two-pass layernorm with a "fast path" for a
 * row of equal values that writes 0 (the centred value), forgetting that
 * beta is still added: right on every row that is not constant. */
#include <math.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N;
    float eps = (float)a->eps;
    for (int64_t i = 0; i < M; i++) {
        float x0 = kg_load(a->in[0], dt, i * N);
        int constant = 1;
        for (int64_t j = 1; j < N && constant; j++) constant = kg_load(a->in[0], dt, i * N + j) == x0;
        if (constant && x0 != 0.0f) {
            for (int64_t j = 0; j < N; j++) KGATE_STORE(&Y[i * N + j], 0.0f);
            continue;
        }
        float s = 0.0f, v = 0.0f;
        for (int64_t j = 0; j < N; j++) s += kg_load(a->in[0], dt, i * N + j);
        float mu = s / (float)N;
        for (int64_t j = 0; j < N; j++) {
            float d = kg_load(a->in[0], dt, i * N + j) - mu;
            v += d * d;
        }
        float r = 1.0f / sqrtf(v / (float)N + eps);
        for (int64_t j = 0; j < N; j++) {
            float d = kg_load(a->in[0], dt, i * N + j) - mu;
            KGATE_STORE(&Y[i * N + j], d * r * kg_load(a->in[1], dt, j) + kg_load(a->in[2], dt, j));
        }
    }
}
