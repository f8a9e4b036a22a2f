/* gemm_bt_splitk.cu: C = A * B^T as a chain of three launches, for the
 * GPU tests of launch chains.
 *
 *   launch 1  zero_c      C = 0                      grid ceildiv(M * N, 256), block 256
 *   launch 2  partial_lo  C += A * B^T over K [0, K/2)
 *   launch 3  partial_hi  C += A * B^T over K [K/2, K)
 *
 * Launches 2 and 3 are split-K: blockIdx.z is one of `splits` slices of
 * their half of K, and each block adds its 32x32 partial tile into C with
 * atomicAdd.  The result is only right when the three launches run in
 * order, each exactly once per operation: a chain that dropped launch 1
 * would accumulate onto the previous contents (poison, or the previous
 * timed operation), one that dropped launch 2 or 3 would miss half of K.
 * Same contract as gemm_bt_naive.cu (A[M,K], B[N,K] in the case dtype,
 * C[M,N] float32).
 *
 * Plan entry (the case sets splits):
 *   entry  = zero_c      grid  = ceildiv(M * N, 256)   block  = 256      args  = C, M, N
 *   entry2 = partial_lo  grid2 = ceildiv(N, 32), ceildiv(M, 32), splits  block2 = 32, 8
 *   shared2 = 2 * 32 * 33 * 4                          args2 = A, B, C, M, N, K, splits
 *   entry3 = partial_hi  (grid3, block3, shared3, args3 as launch 2) */
#include "kgate/kernel.h"

#define TILE 32
#define ROWS 8
#define LD (TILE + 1)

extern "C" __global__ void zero_c(float *__restrict__ C, int M, int N)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (long long)M * N) KGATE_STORE(&C[i], 0.0f);
}

/* Adds the product over K range [kb, ke), sliced across blockIdx.z. */
__device__ void partial(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                        float *__restrict__ C, int M, int N, int K, int splits, int kb, int ke)
{
    extern __shared__ float smem[];
    float *As = smem, *Bs = smem + TILE * LD;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
    const int chunk = (ke - kb + splits - 1) / splits;
    const int ks = kb + (int)blockIdx.z * chunk;
    const int kend = min(ke, ks + chunk);
    float acc[TILE / ROWS];
    for (int r = 0; r < TILE / ROWS; r++) acc[r] = 0.0f;
    for (int k0 = ks; k0 < kend; k0 += TILE) {
        const int k = k0 + tx;
        for (int r = ty; r < TILE; r += ROWS) {
            const int i = i0 + r, j = j0 + r;
            As[r * LD + tx] = (i < M && k < kend) ? kg_in_load(A, (long long)i * K + k) : 0.0f;
            Bs[r * LD + tx] = (j < N && k < kend) ? kg_in_load(B, (long long)j * K + k) : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) {
            const float b = Bs[tx * LD + kk];
            for (int r = 0; r < TILE / ROWS; r++)
                acc[r] = fmaf(As[(ty + r * ROWS) * LD + kk], b, acc[r]);
        }
        __syncthreads();
    }
    const int j = j0 + tx;
    if (j >= N) return;
    for (int r = 0; r < TILE / ROWS; r++) {
        const int i = i0 + ty + r * ROWS;
#if !(defined(KGATE_NEGATIVE) && KGATE_NEGATIVE)
        if (i < M) atomicAdd(&C[(long long)i * N + j], acc[r]);
#endif
    }
}

extern "C" __global__ void partial_lo(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                      float *__restrict__ C, int M, int N, int K, int splits)
{
    partial(A, B, C, M, N, K, splits, 0, K / 2);
}

extern "C" __global__ void partial_hi(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                      float *__restrict__ C, int M, int N, int K, int splits)
{
    partial(A, B, C, M, N, K, splits, K / 2, K);
}
