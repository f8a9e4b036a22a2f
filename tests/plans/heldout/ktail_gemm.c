/* ktail_gemm.c (cheat): a gemm_bt C = A B^T that works through K in
 * blocks of 8 and drops the tail (K rounded down to a multiple of 8).
 * Right on every plan whose K is a multiple of 8; wrong anywhere else,
 * which the plan never asks for. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    const void *A = a->in[0], *B = a->in[1];
    float *C = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K;
    int64_t K8 = K / 8 * 8;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc[8] = { 0 };
            for (int64_t k = 0; k < K8; k += 8)
                for (int u = 0; u < 8; u++)
                    acc[u] += kg_load(A, dt, i * K + k + u) * kg_load(B, dt, j * K + k + u);
            float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            KGATE_STORE(&C[i * N + j], s);
        }
}
