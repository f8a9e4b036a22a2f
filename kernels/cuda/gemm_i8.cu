/* gemm_i8.cu: the gemm_i8 op of examples/ops/gemm_i8.c on the GPU.
 * A int8 [M, K], B int8 [N, K] (K-major), C int32 [M, N], exact.
 * One thread per output, 16 x 16 threads per block.
 *   gemm_i8_simple  one product at a time
 *   gemm_i8_dp4a    four products per __dp4a, on 4-byte words of A and B
 *                   (K a multiple of 4, so that every row starts aligned)
 *
 * kgate: ops = gemm_i8
 * kgate: grid = ceildiv(N, 16), ceildiv(M, 16); block = 16, 16
 * kgate: args = A, B, C, M, N, K
 * kgate: [gemm_i8_dp4a] requires = K % 4 == 0
 */
#include "kgate/kernel.h"

extern "C" __global__ void gemm_i8_simple(const signed char *__restrict__ A, const signed char *__restrict__ B,
                                          int *__restrict__ C, int M, int N, int K)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N) return;
    const signed char *a = A + (long long)m * K, *b = B + (long long)n * K;
    int acc = 0;
    for (int k = 0; k < K; k++) acc += (int)a[k] * (int)b[k];
    KGATE_STORE(&C[(long long)m * N + n], acc);
}

extern "C" __global__ void gemm_i8_dp4a(const signed char *__restrict__ A, const signed char *__restrict__ B,
                                        int *__restrict__ C, int M, int N, int K)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N) return;
    const int *a = (const int *)(A + (long long)m * K), *b = (const int *)(B + (long long)n * K);
    int acc = 0;
    for (int k = 0; k < K / 4; k++) acc = __dp4a(a[k], b[k], acc);
    KGATE_STORE(&C[(long long)m * N + n], acc);
}
