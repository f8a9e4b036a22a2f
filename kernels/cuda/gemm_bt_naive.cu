/* gemm_bt_naive.cu: C = A * B^T, one thread per output element.
 *
 * The plain reference kernel of the cuda backend: A[M,K] and B[N,K]
 * row-major in the case dtype (KG_DTYPE 0 f32, 1 f16, 2 bf16), C[M,N]
 * float32, accumulation in float32.  It is slow on purpose (every thread
 * streams a row of A and a row of B from global memory) and serves as
 * the baseline that faster kernels are gated against.
 *
 * Plan entry:
 *   source = kernels/cuda/gemm_bt_naive.cu   entry = gemm_bt_naive
 *   grid = ceildiv(N, 16), ceildiv(M, 16)    block = 16, 16
 *   args = A, B, C, M, N, K
 *
 * No headers besides kgate/kernel.h: 16-bit inputs are decoded from
 * their raw bits. */
#include "kgate/kernel.h"

#ifndef KG_DTYPE
#define KG_DTYPE 0
#endif

#if KG_DTYPE == 0
typedef float kg_in_t;
__device__ __forceinline__ float kg_in_load(const kg_in_t *p, long long i) { return p[i]; }
#elif KG_DTYPE == 1
typedef unsigned short kg_in_t;
__device__ __forceinline__ float kg_in_load(const kg_in_t *p, long long i)
{
    float f;
    unsigned short h = p[i];
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
#elif KG_DTYPE == 2
typedef unsigned short kg_in_t;
__device__ __forceinline__ float kg_in_load(const kg_in_t *p, long long i)
{
    return __uint_as_float(((unsigned)p[i]) << 16);
}
#else
#error "KG_DTYPE must be 0 (f32), 1 (f16) or 2 (bf16)"
#endif

extern "C" __global__ void gemm_bt_naive(const kg_in_t *__restrict__ A,
                                         const kg_in_t *__restrict__ B, float *__restrict__ C,
                                         int M, int N, int K)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const long long a0 = (long long)i * K, b0 = (long long)j * K;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc = fmaf(kg_in_load(A, a0 + k), kg_in_load(B, b0 + k), acc);
    KGATE_STORE(&C[(long long)i * N + j], acc);
}
