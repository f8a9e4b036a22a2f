/* conv1d.cu: the conv1d op of examples/ops/conv1d.c (docs/ops.md) on the
 * GPU: X bfloat16 [B, L], F float32 [W], Y bfloat16 [B, L - W + 1].  One
 * thread per output, float32 accumulation, one rounding to bfloat16.
 *
 * Plan entry:
 *   source = kernels/cuda/conv1d.cu   entry = conv1d
 *   grid = ceildiv(L - W + 1, 256), B  block = 256
 *   args = X, F, Y, B, L, W */
#include "kgate/kernel.h"

extern "C" __global__ void conv1d(const unsigned short *__restrict__ X, const float *__restrict__ F,
                                  unsigned short *__restrict__ Y, int B, int L, int W)
{
    const int n = L - W + 1;
    const int i = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y;
    if (b >= B || i >= n) return;
    const unsigned short *x = X + (long long)b * L + i;
    float acc = 0.0f;
    for (int k = 0; k < W; k++) acc += kg_bf16_bits_to_f32(x[k]) * F[k];
    KGATE_STORE(&Y[(long long)b * n + i], kg_f32_to_bf16_bits(acc));
}
