/* gemm_tf32.c: precision cheat: an f32 gemm_bt that rounds A and B to
 * TF32 (10 explicit mantissa bits, round to nearest, ties away, as the
 * PTX cvt.rna.tf32.f32 does) before multiplying, accumulating in float32.
 * This is what a tensor-core TF32 GEMM computes; under the f32 contract
 * it must be INCORRECT, under `precision = tf32` admitted.  With
 * TF32_TRUNCATE defined it drops the 13 low bits instead (truncation:
 * docs/measurements/cpu-2026-12-05-tf32-truncation/). */
#include <stdint.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);

static float tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) { /* finite: round the 13 low bits away */
#ifndef TF32_TRUNCATE
        u += 0x1000u;                       /* half of the dropped ulp: ties away from zero */
#endif
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
