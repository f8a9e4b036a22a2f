/* splitk_uninit_ws.c: planted defect: split-K that adds its partials into the workspace without clearing it (depends on what the workspace held). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    float *C = a->out[0], *P = a->ws;
    int64_t M = a->M, N = a->N, K = a->K, S = a->splits, chunk = (K + S - 1) / S;
    for (int64_t s = 0; s < S; s++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                for (int64_t k = s * chunk; k < K && k < (s + 1) * chunk; k++)
                    P[(s * M + i) * N + j] += kg_load(a->in[0], a->dtype, i * K + k) * kg_load(a->in[1], a->dtype, j * K + k);
    for (int64_t e = 0; e < M * N; e++) {
        float acc = 0.0f;
        for (int64_t s = 0; s < S; s++) acc += P[s * M * N + e];
        KGATE_STORE(&C[e], acc);
    }
}
