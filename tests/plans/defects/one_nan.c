/* one_nan.c: planted defect: an honest gemm_bt with one NaN in the middle of C. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
static void gemm(const kg_kargs *a)
{
    float *C = a->out[0];
    int64_t M = a->M, N = a->N, K = a->K;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += kg_load(a->in[0], a->dtype, i * K + k) * kg_load(a->in[1], a->dtype, j * K + k);
            KGATE_STORE(&C[i * N + j], acc);
        }
}
void kernel(const kg_kargs *a)
{
    gemm(a);
    ((float *)a->out[0])[(a->M * a->N) / 2] = NAN;
}
