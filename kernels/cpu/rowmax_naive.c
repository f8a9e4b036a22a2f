/* rowmax_naive.c: CPU baseline for rowmax, Y[i] = max_j X[i,j]. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    int64_t M = a->M, N = a->N;
    for (int64_t i = 0; i < M; i++) {
        float m = kg_load(a->in[0], a->dtype, i * N);
        for (int64_t j = 1; j < N; j++) {
            float v = kg_load(a->in[0], a->dtype, i * N + j);
            if (v > m) m = v;
        }
        KGATE_STORE(&Y[i], m);
    }
}
