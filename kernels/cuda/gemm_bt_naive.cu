/* gemm_bt_naive.cu: C = A * B^T, one thread per output element.
 *
 * The plain reference kernel of the cuda backend: A[M,K] and B[N,K]
 * row-major in the case dtype (KG_DTYPE 0 f32, 1 f16, 2 bf16), C[M,N]
 * float32, accumulation in float32.  It is slow on purpose (every thread
 * streams a row of A and a row of B from global memory) and serves as
 * the baseline that faster kernels are gated against.
 *
 * No headers besides kgate/kernel.h, whose kg_in_t / kg_in_load decode
 * 16-bit inputs from their raw bits.
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * kgate: ops = gemm_bt
 * kgate: entry = gemm_bt_naive
 * kgate: grid = ceildiv(N, 16), ceildiv(M, 16)
 * kgate: block = 16, 16
 * kgate: args = A, B, C, M, N, K
 */
#include "kgate/kernel.h"

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
