/* gemm_i8.c: the gemm_i8 op of examples/ops/gemm_i8.c on the CPU.
 * A int8 [M, K], B int8 [N, K], C int32 [M, N], exact.
 *   gemm_i8_naive   one output at a time, an int32 accumulator
 *   gemm_i8_tiled   four columns of B at once (A's row read once per four)
 *   gemm_i8_short   wrong: an int16 accumulator, which wraps once the sum
 *                   leaves [-32768, 32767]; kgate must reject it */
#include "kgate/kernel.h"

void gemm_i8_naive(const kg_kargs *a)
{
    const int8_t *A = a->in[0], *B = a->in[1];
    int32_t *C = a->out[0];
    int64_t M = kg_var_i(a, "M", 0), N = kg_var_i(a, "N", 0), K = kg_var_i(a, "K", 0);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int32_t acc = 0;
            for (int64_t k = 0; k < K; k++) acc += (int32_t)A[m * K + k] * (int32_t)B[n * K + k];
            KGATE_STORE(&C[m * N + n], acc);
        }
}

void gemm_i8_tiled(const kg_kargs *a)
{
    const int8_t *A = a->in[0], *B = a->in[1];
    int32_t *C = a->out[0];
    int64_t M = kg_var_i(a, "M", 0), N = kg_var_i(a, "N", 0), K = kg_var_i(a, "K", 0);
    for (int64_t m = 0; m < M; m++) {
        const int8_t *ar = A + m * K;
        int64_t n = 0;
        for (; n + 4 <= N; n += 4) {
            const int8_t *b0 = B + n * K, *b1 = b0 + K, *b2 = b1 + K, *b3 = b2 + K;
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (int64_t k = 0; k < K; k++) {
                int32_t x = ar[k];
                s0 += x * b0[k];
                s1 += x * b1[k];
                s2 += x * b2[k];
                s3 += x * b3[k];
            }
            KGATE_STORE(&C[m * N + n], s0);
            KGATE_STORE(&C[m * N + n + 1], s1);
            KGATE_STORE(&C[m * N + n + 2], s2);
            KGATE_STORE(&C[m * N + n + 3], s3);
        }
        for (; n < N; n++) {
            int32_t acc = 0;
            for (int64_t k = 0; k < K; k++) acc += (int32_t)ar[k] * (int32_t)B[n * K + k];
            KGATE_STORE(&C[m * N + n], acc);
        }
    }
}

void gemm_i8_short(const kg_kargs *a)
{
    const int8_t *A = a->in[0], *B = a->in[1];
    int32_t *C = a->out[0];
    int64_t M = kg_var_i(a, "M", 0), N = kg_var_i(a, "N", 0), K = kg_var_i(a, "K", 0);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            uint16_t acc = 0;  /* int16 arithmetic, wrapping */
            for (int64_t k = 0; k < K; k++)
                acc = (uint16_t)(acc + (uint16_t)((int32_t)A[m * K + k] * (int32_t)B[n * K + k]));
            KGATE_STORE(&C[m * N + n], (int32_t)(int16_t)acc);
        }
}
