/* rowsum_naive.c: the CPU baseline for rowsum, Y[i] = sum_j X[i,j], one
 * float32 accumulator per row, left to right.  No unrolling. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    const void *X = a->in[0];
    float *Y = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N;
    for (int64_t i = 0; i < M; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < N; j++) acc += kg_load(X, dt, i * N + j);
        KGATE_STORE(&Y[i], acc);
    }
}
