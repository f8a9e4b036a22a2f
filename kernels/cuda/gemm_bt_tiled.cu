/* gemm_bt_tiled.cu: C = A * B^T with 32x32 output tiles staged through
 * shared memory.
 *
 * Same contract as gemm_bt_naive.cu (A[M,K], B[N,K] in the case dtype,
 * C[M,N] float32, float32 accumulation).  A block of 32x8 threads owns a
 * 32x32 tile of C; each thread accumulates four outputs of one column.
 * K is walked in slices of 32: both A and B rows are contiguous in K, so
 * the slice loads are coalesced for both operands.  The tiles live in
 * dynamic shared memory (the plan declares its size), padded by one
 * column against bank conflicts.  Any M, N, K (edges are masked).
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * kgate: ops = gemm_bt
 * kgate: entry = gemm_bt_tiled
 * kgate: grid = ceildiv(N, 32), ceildiv(M, 32)
 * kgate: block = 32, 8
 * kgate: shared = 2 * 32 * 33 * 4
 * kgate: args = A, B, C, M, N, K
 */
#include "kgate/kernel.h"

#define TILE 32
#define ROWS 8       /* blockDim.y; each thread covers TILE / ROWS rows */
#define LD (TILE + 1)

extern "C" __global__ void gemm_bt_tiled(const kg_in_t *__restrict__ A,
                                         const kg_in_t *__restrict__ B, float *__restrict__ C,
                                         int M, int N, int K)
{
    extern __shared__ float smem[];
    float *As = smem;             /* [TILE][LD]: As[r][k] = A[i0 + r][k0 + k] */
    float *Bs = smem + TILE * LD; /* [TILE][LD]: Bs[c][k] = B[j0 + c][k0 + k] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
    float acc[TILE / ROWS];
    for (int r = 0; r < TILE / ROWS; r++) acc[r] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int k = k0 + tx;
        for (int r = ty; r < TILE; r += ROWS) {
            const int i = i0 + r, j = j0 + r;
            As[r * LD + tx] = (i < M && k < K) ? kg_in_load(A, (long long)i * K + k) : 0.0f;
            Bs[r * LD + tx] = (j < N && k < K) ? kg_in_load(B, (long long)j * K + k) : 0.0f;
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
        if (i < M) KGATE_STORE(&C[(long long)i * N + j], acc[r]);
    }
}
