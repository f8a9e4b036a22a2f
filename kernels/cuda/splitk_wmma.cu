/* splitk_wmma.cu: split-K C = A * B^T on the tensor cores through the
 * nvcuda::wmma API (16x16x16 fragments, f16 or bf16 in, float32
 * accumulate), writing float32 partials, or C directly in its dense form.
 *
 * Same tiling, staging, split rule and pipeline as splitk_fma.cu: 128
 * threads own a 32x64 output tile; K slices of 32 are staged in shared
 * memory as raw 16-bit rows of PITCH elements.  Warp w computes rows
 * 16*(w/2)..+16 and columns 32*(w%2)..+32 as two 16x16 accumulators; B
 * staged as [n][k] rows is the col-major K x N operand.  Accumulators are
 * stored straight to global memory with store_matrix_sync (ldm = N).
 *
 * wmma::load_matrix_sync needs ldm a multiple of 8 16-bit elements and
 * 256-bit aligned fragment pointers: PITCH = 40 satisfies both, PITCH = 36
 * does not, so this kernel refuses to compile at pitch 36 (the pitch
 * comparison is made on splitk_fma.cu and splitk_mma.cu).
 *
 * bf16: by default wmma on __nv_bfloat16 fragments (exact inputs, full
 * range); BF16_VIA_F16=1 stages bf16 through f16 as the published kernels
 * did (exact for |x| in [2^-14, 65504]).  f32 inputs have no kernel here
 * (use splitk_fma.cu): KG_DTYPE=0 stops with an error naming that.
 *
 * Defines: PITCH = 40 (a multiple of 8), PIPE = 0 | 1, DENSE = 0 | 1,
 * BF16_VIA_F16 = 0 | 1; meanings as in splitk_fma.cu.
 * Preconditions (checked; a violation traps): M % 32 == 0, N % 64 == 0,
 *   K % 32 == 0, blockDim = (128, 1, 1), DENSE implies gridDim.z == 1;
 *   pointers 32-byte aligned (any cuMemAlloc pointer).
 * Split s of S = gridDim.z: k in [s*Ks, min(K, (s+1)*Ks)),
 *   Ks = 32 * ceildiv(ceildiv(K, S), 32); the final split clamped to K.
 * Static shared: (1 + PIPE) * 96 * PITCH * 2 bytes.
 *
 * Plan entry (gemm_splitk, partials, then splitk_accum):
 *   source = kernels/cuda/splitk_wmma.cu  entry = splitk_wmma
 *   defines = PITCH=40 PIPE=1
 *   grid = N / 64, M / 32, splits         block = 128       shared = 0
 *   args = A, B, ws, M, N, K
 *   entry2 = splitk_accum   grid2 = ceildiv(M * N, 1024)   block2 = 256
 *   shared2 = 0             args2 = ws, C, M, N, splits
 * Plan entry (dense, op gemm_bt or gemm_splitk):
 *   defines = PITCH=40 PIPE=1 DENSE=1
 *   grid = N / 64, M / 32, 1              block = 128       shared = 0
 *   args = A, B, C, M, N, K
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * The partials and the accumulation pass; a dense arm (DENSE=1) gives its
 * own grid, block, shared and args = A, B, C, M, N, K, and so takes no
 * launch geometry from here (only entry and requires).
 * kgate: ops = gemm_splitk, gemm_bt
 * kgate: entry = splitk_wmma
 * kgate: requires = M % 32 == 0, N % 64 == 0, K % 32 == 0
 * kgate: grid = N / 64, M / 32, splits; block = 128; shared = 0
 * kgate: args = A, B, ws, M, N, K
 * kgate: entry2 = splitk_accum; grid2 = ceildiv(M * N, 1024); block2 = 256; shared2 = 0
 * kgate: args2 = ws, C, M, N, splits
 */
/* staging, contract, split rule and K walk: shared with splitk_fma.cu and splitk_mma.cu */
#define KG_SPLITK_TC 1
#include "splitk_common.cu"

#if PITCH % 8 != 0
#error "splitk_wmma.cu needs PITCH a multiple of 8 and at least 32 (wmma ldm rule); use 40"
#endif
#include <mma.h>
#if KG_MMA_F16
typedef __half kg_frag_t;
#else
#include <cuda_bf16.h>
typedef __nv_bfloat16 kg_frag_t;
#endif

using namespace nvcuda;
typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, kg_frag_t, wmma::row_major> kg_fa;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, kg_frag_t, wmma::col_major> kg_fb;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> kg_fc;

__device__ __forceinline__ void kg_wmma_slice(const kg_in_t *As, const kg_in_t *Bs, int wm, int wn,
                                              kg_fc acc[2])
{
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        kg_fa a;
        wmma::load_matrix_sync(a, (const kg_frag_t *)(As + wm * PITCH + kk), PITCH);
#pragma unroll
        for (int j = 0; j < 2; j++) {
            kg_fb b;
            wmma::load_matrix_sync(b, (const kg_frag_t *)(Bs + (wn + 16 * j) * PITCH + kk), PITCH);
            wmma::mma_sync(acc[j], a, b, acc[j]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(NT)
splitk_wmma(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B, float *__restrict__ out,
           int M, int N, int K)
{
    __shared__ __align__(128) kg_in_t As[NBUF][BM * PITCH];
    __shared__ __align__(128) kg_in_t Bs[NBUF][BN * PITCH];
    kg_splitk_check(M, N, K);

    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = (warp / 2) * 16, wn = (warp % 2) * 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    kg_fc acc[2];
    wmma::fill_fragment(acc[0], 0.0f);
    wmma::fill_fragment(acc[1], 0.0f);

    kg_splitk_walk(A, B, K, m0, n0, tid, As, Bs,
                   [&](const kg_in_t *as, const kg_in_t *bs) { kg_wmma_slice(as, bs, wm, wn, acc); });

    float *o = kg_splitk_out(out, M, N);
#pragma unroll
    for (int j = 0; j < 2; j++) {
#if DENSE
        /* final values pass through KGATE_STORE (zero under the negative) */
        for (int e = 0; e < acc[j].num_elements; e++) KGATE_STORE(&acc[j].x[e], acc[j].x[e]);
#endif
        wmma::store_matrix_sync(o + (long long)(m0 + wm) * N + n0 + wn + 16 * j, acc[j], N,
                                wmma::mem_row_major);
    }
}

/* the accumulation pass (entry2 of split arms) */
#include "splitk_accum.cu"
