/* gemm_nt_naive.c: CPU baseline for gemm_nt, C[M,N] = A[M,K] * B[K,N],
 * one float32 accumulator per element, k in order. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    float *C = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += kg_load(a->in[0], dt, i * K + k) * kg_load(a->in[1], dt, k * N + j);
            KGATE_STORE(&C[i * N + j], acc);
        }
}
