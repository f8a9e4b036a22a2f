/* gemm_splitk_naive.c: CPU split-K gemm, C[M,N] = A[M,K] * B[N,K]^T in
 * two passes: float32 partials of each K chunk into the workspace
 * ws[splits,M,N] (written before being read: the worker poisons it), then
 * the accumulation of the partials in split order into C. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    float *C = a->out[0], *P = a->ws;
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K, S = a->splits;
    int64_t chunk = (K + S - 1) / S;
    for (int64_t s = 0; s < S; s++) {
        int64_t k0 = s * chunk, k1 = k0 + chunk < K ? k0 + chunk : K;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float acc = 0.0f;
                for (int64_t k = k0; k < k1; k++)
                    acc += kg_load(a->in[0], dt, i * K + k) * kg_load(a->in[1], dt, j * K + k);
                P[(s * M + i) * N + j] = acc;
            }
    }
    for (int64_t e = 0; e < M * N; e++) {
        float acc = 0.0f;
        for (int64_t s = 0; s < S; s++) acc += P[s * M * N + e];
        KGATE_STORE(&C[e], acc);
    }
}
