/* splitk_fma.cu: split-K C = A * B^T on the CUDA cores (software FMA),
 * writing float32 partials, or C directly in its dense form.
 *
 * The baseline of the split-K family (docs/replication.md).  A block of
 * 128 threads owns a 32x64 tile of the output and one K range; K is walked
 * in slices of 32 staged through shared memory in the input dtype (f32, or
 * the raw 16-bit f16/bf16 bits, converted to float exactly at use: bf16 is
 * not staged through f16 here, which would lose its range).
 *
 * Defines:
 *   PITCH = 36 | 40  staging row length in elements (>= 32, even).  40
 *                    makes a 16-bit row 80 bytes, so each 16-byte chunk of
 *                    a staged row stays 16-byte aligned (one 128-bit
 *                    shared store); 36 (72 bytes) needs two 64-bit stores.
 *   PIPE = 0 | 1     1: software pipeline, two staging buffers; the next
 *                    slice's global loads are in flight while the current
 *                    slice is multiplied, one barrier per slice.
 *   DENSE = 0 | 1    1: write C[M,N] through KGATE_STORE (no partials);
 *                    then grid.z must be 1 and the kernel is a gemm_bt.
 *
 * Preconditions (checked; a violation traps, which fails the run):
 *   M % 32 == 0, N % 64 == 0, K % 32 == 0, blockDim = (128, 1, 1),
 *   A, B, out 16-byte aligned (any cuMemAlloc pointer).
 * Split s = blockIdx.z of S = gridDim.z covers k in
 *   [s * Ks, min(K, (s + 1) * Ks)),  Ks = 32 * ceildiv(ceildiv(K, S), 32),
 * the final split clamped to K; a split past K writes zero partials.
 * When K / S is a multiple of 32 this is the op's split rule exactly.
 * Output: partials out[s][M][N] (float32, the op's ws), or C with DENSE.
 * Static shared: (1 + PIPE) * 96 * PITCH * sizeof(input) bytes
 *   (f16/bf16: 6912 / 7680 per buffer at pitch 36 / 40; f32 twice that).
 *
 * Plan entry (gemm_splitk, partials + kernels/cuda/splitk_accum.cu):
 *   source = kernels/cuda/splitk_fma.cu   entry = splitk_fma
 *   defines = PITCH=40 PIPE=0
 *   grid = N / 64, M / 32, splits         block = 128       shared = 0
 *   args = A, B, ws, M, N, K
 *   entry2 = splitk_accum   grid2 = ceildiv(M * N, 1024)   block2 = 256
 *   shared2 = 0             args2 = ws, C, M, N, splits
 * Plan entry (dense, one launch; op gemm_bt or gemm_splitk):
 *   defines = PITCH=40 PIPE=0 DENSE=1
 *   grid = N / 64, M / 32, 1              block = 128       shared = 0
 *   args = A, B, C, M, N, K
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * The partials and the accumulation pass; a dense arm (DENSE=1) gives its
 * own grid, block, shared and args = A, B, C, M, N, K, and so takes no
 * launch geometry from here (only entry and requires).
 * kgate: ops = gemm_splitk, gemm_bt
 * kgate: entry = splitk_fma
 * kgate: requires = M % 32 == 0, N % 64 == 0, K % 32 == 0
 * kgate: grid = N / 64, M / 32, splits; block = 128; shared = 0
 * kgate: args = A, B, ws, M, N, K
 * kgate: entry2 = splitk_accum; grid2 = ceildiv(M * N, 1024); block2 = 256; shared2 = 0
 * kgate: args2 = ws, C, M, N, splits
 */
/* staging, contract, split rule and K walk: shared with splitk_wmma.cu and splitk_mma.cu */
#include "splitk_common.cu"

/* Thread (ty, tx) = (tid / 16, tid % 16) accumulates rows 4ty..4ty+3 and
 * columns tx + 16c (c < 4) of the tile: a staged A value is broadcast to
 * the 16 threads of a half-warp, B rows are read 16 apart. */
__device__ __forceinline__ void kg_fma_slice(const kg_in_t *As, const kg_in_t *Bs, int ty, int tx,
                                             float acc[4][4])
{
#pragma unroll 8
    for (int kk = 0; kk < BK; kk++) {
        float a[4], b[4];
#pragma unroll
        for (int r = 0; r < 4; r++) a[r] = kg_in_cvt(As[(4 * ty + r) * PITCH + kk]);
#pragma unroll
        for (int c = 0; c < 4; c++) b[c] = kg_in_cvt(Bs[(tx + 16 * c) * PITCH + kk]);
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
    }
}

extern "C" __global__ void __launch_bounds__(NT)
splitk_fma(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B, float *__restrict__ out,
           int M, int N, int K)
{
    __shared__ __align__(16) kg_in_t As[NBUF][BM * PITCH];
    __shared__ __align__(16) kg_in_t Bs[NBUF][BN * PITCH];
    kg_splitk_check(M, N, K);

    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    float acc[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) acc[r][c] = 0.0f;

    kg_splitk_walk(A, B, K, m0, n0, tid, As, Bs,
                   [&](const kg_in_t *as, const kg_in_t *bs) { kg_fma_slice(as, bs, ty, tx, acc); });

    float *o = kg_splitk_out(out, M, N);
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            float *p = o + (long long)(m0 + 4 * ty + r) * N + n0 + tx + 16 * c;
#if DENSE
            KGATE_STORE(p, acc[r][c]);
#else
            *p = acc[r][c];
#endif
        }
}

/* the accumulation pass (entry2 of split arms) */
#include "splitk_accum.cu"
