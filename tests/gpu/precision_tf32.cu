/* precision_tf32.cu: precision cheat (tests/gpu/run.sh): an f32 gemm_bt
 * that rounds A and B to TF32 with cvt.rna.tf32.f32 (what a tensor-core
 * TF32 GEMM does to its inputs) and accumulates in float32, one thread
 * per output.  Under the f32 contract it must be INCORRECT (before
 * precision contracts it passed at error/bound 0.78 on an H200, K =
 * 1024); with `precision = tf32` it is admitted.
 *
 * Plan entry: entry = gemm_tf32, grid = ceildiv(N, 16), ceildiv(M, 16),
 * block = 16, 16, args = A, B, C, M, N, K. */
#include "kgate/kernel.h"

__device__ __forceinline__ float to_tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

extern "C" __global__ void gemm_tf32(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                     float *__restrict__ C, int M, int N, int K)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const long long a0 = (long long)i * K, b0 = (long long)j * K;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc = fmaf(to_tf32(kg_in_load(A, a0 + k)), to_tf32(kg_in_load(B, b0 + k)), acc);
    KGATE_STORE(&C[(long long)i * N + j], acc);
}
