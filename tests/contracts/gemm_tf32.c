/* gemm_tf32.c: precision cheat: an f32 gemm_bt that rounds A and B to
 * TF32 (10 explicit mantissa bits, round to nearest, ties away, as the
 * PTX cvt.rna.tf32.f32 does) before multiplying, accumulating in float32.
 * This is what a tensor-core TF32 GEMM computes; under the f32 contract
 * it must be INCORRECT, under `precision = tf32` admitted.  With
 * TF32_TRUNCATE defined it drops the 13 low bits instead (truncation,
 * which the tf32 contract admits too: docs/admission.md), with TF32_MIXED
 * it truncates A and rounds B; with DROP=16 it
 * rounds to bfloat16 (7 mantissa bits), which the tf32 contract must
 * refuse. */
#include <stdint.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);

#ifndef DROP
#define DROP 13   /* low bits dropped: 13 leaves TF32's 10 explicit mantissa bits */
#endif

static float tf32_to(float x, int truncate)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) { /* finite: round the 13 low bits away */
        if (!truncate) u += 1u << (DROP - 1);   /* half of the dropped ulp: ties away from zero */
        u &= ~((1u << DROP) - 1u);
    }
    memcpy(&x, &u, sizeof x);
    return x;
}

#ifdef TF32_TRUNCATE
#define TRUNC_A 1
#define TRUNC_B 1
#elif defined(TF32_MIXED)   /* A truncated, B rounded: one operand raw in shared memory */
#define TRUNC_A 1
#define TRUNC_B 0
#else
#define TRUNC_A 0
#define TRUNC_B 0
#endif

void kernel(const kg_kargs *a)
{
    float *C = a->out[0];
    int64_t M = a->M, N = a->N, K = a->K;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += tf32_to(kg_load(a->in[0], a->dtype, i * K + k), TRUNC_A) *
                       tf32_to(kg_load(a->in[1], a->dtype, j * K + k), TRUNC_B);
            KGATE_STORE(&C[i * N + j], acc);
        }
}
