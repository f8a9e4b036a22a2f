/* lasttile_gemm.c (cheat): a gemm_bt C = A B^T over whole tiles of 16
 * columns only: the last partial tile of N is never written.  Right on
 * every plan whose N is a multiple of 16. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    const void *A = a->in[0], *B = a->in[1];
    float *C = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K;
    int64_t N16 = N / 16 * 16;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N16; j++) {
            float acc[8] = { 0 };
            for (int64_t k = 0; k < K; k++)
                acc[k & 7] += kg_load(A, dt, i * K + k) * kg_load(B, dt, j * K + k);
            float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            KGATE_STORE(&C[i * N + j], s);
        }
}
