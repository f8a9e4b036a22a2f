/* hardcoded_shape.c: planted defect: gemm_bt that assumes K is a multiple of 16 (a benchmark-shape specialisation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    float *C = a->out[0];
    int64_t M = a->M, N = a->N, K = a->K & ~(int64_t)15;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += kg_load(a->in[0], a->dtype, i * a->K + k) * kg_load(a->in[1], a->dtype, j * a->K + k);
            KGATE_STORE(&C[i * N + j], acc);
        }
}
