/* tailtile.cu: a fused single-launch gemm_bt C = A * B^T whose column tail
 * is covered either serially (64 + 16) or by one 96-column tile.
 *
 * Same contract as gemm_bt_naive.cu (A[M,K], B[N,K] in the case dtype,
 * C[M,N] float32, float32 accumulation, one launch, no workspace).  It is
 * the subject of a tail-tile experiment, not a fast GEMM: software FMA,
 * 128 threads per block, 32 output rows per block.
 *
 * Column blocks: block x < gridDim.x - 1 owns 64 columns starting at
 * 64 * x; the last block owns the tail, columns [64 * (gridDim.x - 1), N),
 * whose width W is in 1..96 (33..96 whenever N > 32; N = 592 gives
 * 8 blocks of 64 and a tail of 80).  The tail is covered by
 *   TAIL = 0  (the old kernel, "serial 64 + 16"): a 64-column pass, then
 *             16-column passes until N, each pass a complete walk of K in
 *             the same block (W = 80: 64 + 16, two walks);
 *   TAIL = 1  (the candidate): one 96-column pass, columns past N masked.
 *
 * Bit parity between the two: every output C[i][j] is one chain
 * acc = fmaf(A[i][k], B[j][k], acc) for k = 0, 1, ..., K - 1 starting from
 * +0, whatever pass or tile width computes it (the K walk stops at K, it
 * never adds padding), so TAIL = 0 and TAIL = 1 write the same bits; the
 * plan's `parity` check holds them to it.  Masked rows and columns are
 * computed on zeros and never stored.  Any M, N, K >= 1.
 *
 * A pass of width BN (64, 16 or 96): K in slices of 32, A[32 rows][32 k]
 * and B[BN rows][32 k] read with consecutive k across a warp (coalesced)
 * and staged transposed in static shared memory ([k][row], pitch + 1,
 * conflict-free stores); each thread owns rows ty + 8r (r < 4) and columns
 * tx + 16c (c < BN / 16) of the tile, tx = tid % 16, ty = tid / 16.
 *
 * Contract (traps on a violation): blockDim = (128, 1, 1),
 * gridDim.x == max(1, ceildiv(N - 32, 64)), gridDim.y == ceildiv(M, 32).
 *
 * Plan entry (TAIL = 0 or 1):
 *   source = kernels/cuda/tailtile.cu   entry = gemm_bt_tailtile
 *   defines = TAIL=0
 *   grid = ceildiv(max(N, 33) - 32, 64), ceildiv(M, 32)
 *   block = 128   shared = 0 (static)   args = A, B, C, M, N, K
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * The plan gives defines = TAIL=0 or TAIL=1.
 * kgate: ops = gemm_bt
 * kgate: entry = gemm_bt_tailtile
 * kgate: grid = ceildiv(max(N, 33) - 32, 64), ceildiv(M, 32)
 * kgate: block = 128; shared = 0
 * kgate: args = A, B, C, M, N, K
 */
#include "kgate/kernel.h"

#ifndef TAIL
#define TAIL 0
#endif
#if TAIL != 0 && TAIL != 1
#error "TAIL must be 0 (serial 64 + 16) or 1 (one 96-column tail tile)"
#endif

#define TT_BM 32                         /* output rows per block */
#define TT_BK 32                         /* K slice */
#define TT_NT 128                        /* threads per block */
#define TT_BNMAX (TAIL ? 96 : 64)        /* widest pass */
#define TT_PA (TT_BM + 1)                /* staged A pitch (floats) */
#define TT_PB (TT_BNMAX + 1)             /* staged B pitch (floats) */

/* One pass: columns [j0, j0 + BN) of rows [i0, i0 + 32), a complete walk of K. */
template <int BN>
__device__ __forceinline__ void tt_pass(const kg_in_t *__restrict__ A,
                                        const kg_in_t *__restrict__ B, float *__restrict__ C,
                                        int M, int N, int K, int i0, int j0, float *As, float *Bs)
{
    constexpr int TN = BN / 16;
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int lk = tid % TT_BK, lr = tid / TT_BK; /* load lane: k offset, first row */
    float acc[4][TN];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < TN; c++) acc[r][c] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TT_BK) {
        const int k = k0 + lk;
        const bool kin = k < K;
#pragma unroll
        for (int p = 0; p < TT_BM / 4; p++) {
            const int r = lr + 4 * p, i = i0 + r;
            As[lk * TT_PA + r] = (kin && i < M) ? kg_in_load(A, (long long)i * K + k) : 0.0f;
        }
#pragma unroll
        for (int p = 0; p < BN / 4; p++) {
            const int c = lr + 4 * p, j = j0 + c;
            Bs[lk * TT_PB + c] = (kin && j < N) ? kg_in_load(B, (long long)j * K + k) : 0.0f;
        }
        __syncthreads();
        const int kn = min(TT_BK, K - k0);
        if (kn == TT_BK) {
#pragma unroll 8
            for (int kk = 0; kk < TT_BK; kk++) {
                float a[4], b[TN];
#pragma unroll
                for (int r = 0; r < 4; r++) a[r] = As[kk * TT_PA + ty + 8 * r];
#pragma unroll
                for (int c = 0; c < TN; c++) b[c] = Bs[kk * TT_PB + tx + 16 * c];
#pragma unroll
                for (int r = 0; r < 4; r++)
#pragma unroll
                    for (int c = 0; c < TN; c++) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
            }
        } else {
            /* the last, partial slice: stop at K (adding the zero padding
             * could turn an accumulated -0 into +0) */
            for (int kk = 0; kk < kn; kk++) {
                float a[4], b[TN];
#pragma unroll
                for (int r = 0; r < 4; r++) a[r] = As[kk * TT_PA + ty + 8 * r];
#pragma unroll
                for (int c = 0; c < TN; c++) b[c] = Bs[kk * TT_PB + tx + 16 * c];
#pragma unroll
                for (int r = 0; r < 4; r++)
#pragma unroll
                    for (int c = 0; c < TN; c++) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = i0 + ty + 8 * r;
        if (i >= M) continue;
#pragma unroll
        for (int c = 0; c < TN; c++) {
            const int j = j0 + tx + 16 * c;
            if (j < N) KGATE_STORE(&C[(long long)i * N + j], acc[r][c]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(TT_NT)
gemm_bt_tailtile(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                 float *__restrict__ C, int M, int N, int K)
{
    __shared__ float As[TT_BK * TT_PA];
    __shared__ float Bs[TT_BK * TT_PB];
    const int nbx = N > 32 ? (N - 32 + 63) / 64 : 1;
    if (blockDim.x != TT_NT || blockDim.y != 1 || blockDim.z != 1 || (int)gridDim.x != nbx ||
        (int)gridDim.y != (M + TT_BM - 1) / TT_BM || M < 1 || N < 1 || K < 1)
        __trap();
    const int i0 = blockIdx.y * TT_BM, j0 = blockIdx.x * 64;
    if ((int)blockIdx.x < nbx - 1) {
        tt_pass<64>(A, B, C, M, N, K, i0, j0, As, Bs);
        return;
    }
#if TAIL
    tt_pass<96>(A, B, C, M, N, K, i0, j0, As, Bs);
#else
    tt_pass<64>(A, B, C, M, N, K, i0, j0, As, Bs);
    for (int j = j0 + 64; j < N; j += 16) tt_pass<16>(A, B, C, M, N, K, i0, j, As, Bs);
#endif
}
