/* gemm_bt_naive.c: the reference-shaped CPU baseline for gemm_bt,
 * C[M,N] = A[M,K] * B[N,K]^T with a float32 accumulator per element.
 *
 * One plain triple loop, no blocking and no vectorisation: the slow,
 * obviously correct arm that faster CPU kernels are measured against. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    const void *A = a->in[0], *B = a->in[1];
    float *C = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K;
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += kg_load(A, dt, i * K + k) * kg_load(B, dt, j * K + k);
            KGATE_STORE(&C[i * N + j], acc);
        }
    }
}
