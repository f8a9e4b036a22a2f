/* gemm_tf32_trunc.c: an f32 gemm_bt that drops the 13 low mantissa bits of A and B
 * (truncation toward zero, what a tensor core is understood to do with raw f32
 * operands in shared memory) before multiplying, accumulating in float32: the
 * experiment of README.md beside it, against tests/contracts/gemm_tf32.c (round
 * to nearest, cvt.rna.tf32.f32). */
#include <stdint.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);

static float tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) { /* finite: drop the 13 low bits (truncation) */
        u &= 0xffffe000u;
    }
    memcpy(&x, &u, sizeof x);
    return x;
}

void kernel(const kg_kargs *a)
{
    float *C = a->out[0];
    int64_t M = a->M, N = a->N, K = a->K;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += tf32(kg_load(a->in[0], a->dtype, i * K + k)) *
                       tf32(kg_load(a->in[1], a->dtype, j * K + k));
            KGATE_STORE(&C[i * N + j], acc);
        }
}
