/* cheat_inputs.cu: CUDA versions of the structured-row and held-out
 * cheats of tests/plans/inputs/ and tests/plans/heldout/ (driven by
 * tests/gpu/cheat_inputs.sh).
 *
 *   rowsum_rows, rowmax_rows   honest baselines, one thread per row
 *   rowsum_zero_ends   one thread per row; a row whose first and last
 *                      elements are zero is taken for padding and gets 0
 *   rowmax_from_zero   one thread per row; the running maximum starts at 0
 *   gemm_bt_ktail      gemm_bt_naive over K rounded down to a multiple of
 *                      16 (right on aligned plans only)
 *   gemm_bt_k16        the same loop with no tail, honest when K % 16 == 0
 *                      (its plan entry says so with requires)
 *
 * Plan entries: rowsum/rowmax grid = ceildiv(M, 128), block = 128,
 * args = X, Y, M, N; gemm grid = ceildiv(N, 16), ceildiv(M, 16),
 * block = 16, 16, args = A, B, C, M, N, K. */
#include "kgate/kernel.h"

extern "C" __global__ void rowsum_rows(const kg_in_t *__restrict__ X, float *__restrict__ Y, int M, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    const long long r = (long long)i * N;
    float acc = 0.0f;
    for (int j = 0; j < N; j++) acc += kg_in_load(X, r + j);
    KGATE_STORE(&Y[i], acc);
}

extern "C" __global__ void rowmax_rows(const kg_in_t *__restrict__ X, float *__restrict__ Y, int M, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    const long long r = (long long)i * N;
    float m = kg_in_load(X, r);
    for (int j = 1; j < N; j++) m = fmaxf(m, kg_in_load(X, r + j));
    KGATE_STORE(&Y[i], m);
}

extern "C" __global__ void rowsum_zero_ends(const kg_in_t *__restrict__ X, float *__restrict__ Y, int M, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    const long long r = (long long)i * N;
    float acc = 0.0f;
    if (!(kg_in_load(X, r) == 0.0f && kg_in_load(X, r + N - 1) == 0.0f))
        for (int j = 0; j < N; j++) acc += kg_in_load(X, r + j);
    KGATE_STORE(&Y[i], acc);
}

extern "C" __global__ void rowmax_from_zero(const kg_in_t *__restrict__ X, float *__restrict__ Y, int M, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    const long long r = (long long)i * N;
    float m = 0.0f;
    for (int j = 0; j < N; j++) m = fmaxf(m, kg_in_load(X, r + j));
    KGATE_STORE(&Y[i], m);
}

extern "C" __global__ void gemm_bt_ktail(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                         float *__restrict__ C, int M, int N, int K)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const long long a0 = (long long)i * K, b0 = (long long)j * K;
    const int K16 = K / 16 * 16;
    float acc = 0.0f;
    for (int k = 0; k < K16; k++) acc = fmaf(kg_in_load(A, a0 + k), kg_in_load(B, b0 + k), acc);
    KGATE_STORE(&C[(long long)i * N + j], acc);
}

extern "C" __global__ void gemm_bt_k16(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                       float *__restrict__ C, int M, int N, int K)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const long long a0 = (long long)i * K, b0 = (long long)j * K;
    float acc[16];
    for (int u = 0; u < 16; u++) acc[u] = 0.0f;
    for (int k = 0; k < K; k += 16)
#pragma unroll
        for (int u = 0; u < 16; u++) acc[u] = fmaf(kg_in_load(A, a0 + k + u), kg_in_load(B, b0 + k + u), acc[u]);
    float s = 0.0f;
    for (int u = 0; u < 16; u++) s += acc[u];
    KGATE_STORE(&C[(long long)i * N + j], s);
}
