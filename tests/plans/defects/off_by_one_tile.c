/* off_by_one_tile.c: planted defect: gemm_bt in 8-column tiles whose loop bound drops the ragged last tile. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    float *C = a->out[0];
    int64_t M = a->M, N = a->N, K = a->K;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j0 = 0; j0 + 8 <= N; j0 += 8) /* should be j0 < N */
            for (int64_t j = j0; j < j0 + 8; j++) {
                float acc = 0.0f;
                for (int64_t k = 0; k < K; k++)
                    acc += kg_load(a->in[0], a->dtype, i * K + k) * kg_load(a->in[1], a->dtype, j * K + k);
                KGATE_STORE(&C[i * N + j], acc);
            }
}
