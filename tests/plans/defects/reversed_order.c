/* reversed_order.c: planted defect: an honest gemm_bt summing k in reverse order: correct, but not bit-identical to the naive arm (fails parity). */
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
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t k = K - 1; k >= 0; k--)
                acc += kg_load(a->in[0], a->dtype, i * K + k) * kg_load(a->in[1], a->dtype, j * K + k);
            KGATE_STORE(&C[i * N + j], acc);
        }
}
