/* layernorm_naive.c: CPU baseline for layernorm over rows, two passes in
 * float32 (mean, then the variance of the centred values). */
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
