/* rmsnorm_naive.c: CPU baseline for rmsnorm over rows: the float32 mean
 * of squares, one reciprocal square root, then the scaling. */
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
        float s = 0.0f;
        for (int64_t j = 0; j < N; j++) {
            float x = kg_load(a->in[0], dt, i * N + j);
            s += x * x;
        }
        float r = 1.0f / sqrtf(s / (float)N + eps);
        for (int64_t j = 0; j < N; j++)
            KGATE_STORE(&Y[i * N + j], kg_load(a->in[0], dt, i * N + j) * r * kg_load(a->in[1], dt, j));
    }
}
