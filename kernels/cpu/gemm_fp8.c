/* gemm_fp8.c: the gemm_fp8 op of examples/ops/gemm_fp8.c on the CPU.
 * A, B e4m3 [M, K] and [N, K]; sa, sb float32 scalars; D bf16 [M, N];
 * amax float32 [M], the row maxima of |D| before its rounding.
 *   gemm_fp8_naive      float32 accumulation, one output at a time
 *   gemm_fp8_amax_late  wrong: amax of the stored bf16 values, off by up
 *                       to half a bf16 ulp; kgate must reject it */
#include <math.h>
#include "kgate/kernel.h"

static void gemm_fp8(const kg_kargs *a, int late)
{
    const uint8_t *A = a->in[0], *B = a->in[1];
    const float sa = *(const float *)a->in[2], sb = *(const float *)a->in[3];
    uint16_t *D = a->out[0];
    float *amax = a->out[1];
    int64_t M = kg_var_i(a, "M", 0), N = kg_var_i(a, "N", 0), K = kg_var_i(a, "K", 0);
    const float s = sa * sb;
    for (int64_t m = 0; m < M; m++) {
        float mx = 0.0f;
        for (int64_t n = 0; n < N; n++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++) acc += kg_e4m3_to_f32(A[m * K + k]) * kg_e4m3_to_f32(B[n * K + k]);
            float d = s * acc;
            uint16_t h = kg_f32_to_bf16(d);
            KGATE_STORE(&D[m * N + n], h);
            float v = late ? fabsf(kg_bf16_to_f32(h)) : fabsf(d);
            if (v > mx) mx = v;
        }
        KGATE_STORE(&amax[m], mx);
    }
}

void gemm_fp8_naive(const kg_kargs *a)
{
    gemm_fp8(a, 0);
}

void gemm_fp8_amax_late(const kg_kargs *a)
{
    gemm_fp8(a, 1);
}
