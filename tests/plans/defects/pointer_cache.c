/* pointer_cache.c: planted defect: computes once per input pointer and replays the stored output for later calls with the same pointer, whatever the inputs now hold. */
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
static const void *last_in;
static float cache[1 << 16]; /* static: nothing to free (the worker runs under leak checkers) */
void kernel(const kg_kargs *a)
{
    size_t bytes = (size_t)(a->M * a->N) * sizeof(float);
    if (bytes > sizeof cache) {
        gemm(a);
        return;
    }
    if (a->in[0] == last_in) {
        memcpy(a->out[0], cache, bytes);
        return;
    }
    gemm(a);
    memcpy(cache, a->out[0], bytes);
    last_in = a->in[0];
}
