/* splitk_mma.cu: split-K C = A * B^T on the tensor cores through inline
 * PTX mma.sync.m16n8k16 (f16 or bf16 in, float32 accumulate), writing
 * float32 partials, or C directly in its dense form.
 *
 * Same tiling, staging, split rule and pipeline as splitk_fma.cu: 128
 * threads own a 32x64 output tile; K slices of 32 are staged in shared
 * memory as raw 16-bit rows of PITCH elements.  Warp w computes rows
 * 16*(w/2)..+16 and columns 32*(w%2)..+32 as four m16n8 tiles, two k16
 * steps per slice.  Fragments are read from the staged rows with 32-bit
 * shared loads (two consecutive k of one row), which every even pitch
 * allows; ldmatrix would need 16-byte-aligned rows (pitch 40 only) and is
 * not used, so that the pitch comparison measures the staging alone.
 *
 * bf16: by default multiplied as bf16 (mma .bf16, exact inputs, full
 * range).  BF16_VIA_F16=1 stages bf16 through f16 as the published
 * kernels did (converted when staged; exact for |x| in [2^-14, 65504],
 * f16 subnormals lose bits, beyond 65504 overflows to infinity).
 * f32 inputs have no kernel here (use splitk_fma.cu): compiling with
 * KG_DTYPE=0 stops with an error naming that.
 *
 * Defines: PITCH = 36 | 40 (even, >= 32), PIPE = 0 | 1, DENSE = 0 | 1,
 * BF16_VIA_F16 = 0 | 1; meanings as in splitk_fma.cu.
 * Preconditions (checked; a violation traps): M % 32 == 0, N % 64 == 0,
 *   K % 32 == 0, blockDim = (128, 1, 1), DENSE implies gridDim.z == 1;
 *   pointers 16-byte aligned.
 * Split s of S = gridDim.z: k in [s*Ks, min(K, (s+1)*Ks)),
 *   Ks = 32 * ceildiv(ceildiv(K, S), 32); the final split clamped to K.
 * Static shared: (1 + PIPE) * 96 * PITCH * 2 bytes.
 *
 * Plan entry (gemm_splitk, partials, then splitk_accum):
 *   source = kernels/cuda/splitk_mma.cu   entry = splitk_mma
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
 * kgate: entry = splitk_mma
 * kgate: requires = M % 32 == 0, N % 64 == 0, K % 32 == 0
 * kgate: grid = N / 64, M / 32, splits; block = 128; shared = 0
 * kgate: args = A, B, ws, M, N, K
 * kgate: entry2 = splitk_accum; grid2 = ceildiv(M * N, 1024); block2 = 256; shared2 = 0
 * kgate: args2 = ws, C, M, N, splits
 */
/* staging, contract, split rule and K walk: shared with splitk_fma.cu and splitk_wmma.cu */
#define KG_SPLITK_TC 1
#include "splitk_common.cu"

__device__ __forceinline__ unsigned kg_lds32(const kg_in_t *p)
{
    return *(const unsigned *)p;
}

__device__ __forceinline__ void kg_mma(float c[4], unsigned a0, unsigned a1, unsigned a2,
                                       unsigned a3, unsigned b0, unsigned b1)
{
#if KG_MMA_F16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

/* One staged slice.  Fragment layout of m16n8k16 (PTX ISA, "Matrix
 * fragments for mma.m16n8k16"): g = lane / 4, t = lane % 4; A regs hold
 * (g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..); B regs hold
 * k = 2t..2t+1 and 2t+8.. of column g; C holds (g, 2t..2t+1) and
 * (g+8, 2t..2t+1). */
__device__ __forceinline__ void kg_mma_slice(const kg_in_t *As, const kg_in_t *Bs, int wm, int wn,
                                             int g, int t, float acc[4][4])
{
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        const kg_in_t *ar = As + (wm + g) * PITCH + kk + 2 * t;
        const unsigned a0 = kg_lds32(ar), a1 = kg_lds32(ar + 8 * PITCH);
        const unsigned a2 = kg_lds32(ar + 8), a3 = kg_lds32(ar + 8 * PITCH + 8);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const kg_in_t *br = Bs + (wn + 8 * j + g) * PITCH + kk + 2 * t;
            kg_mma(acc[j], a0, a1, a2, a3, kg_lds32(br), kg_lds32(br + 8));
        }
    }
}

extern "C" __global__ void __launch_bounds__(NT)
splitk_mma(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B, float *__restrict__ out,
           int M, int N, int K)
{
    __shared__ __align__(16) kg_in_t As[NBUF][BM * PITCH];
    __shared__ __align__(16) kg_in_t Bs[NBUF][BN * PITCH];
    kg_splitk_check(M, N, K);

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int wm = (warp / 2) * 16, wn = (warp % 2) * 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    float acc[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[j][e] = 0.0f;

    kg_splitk_walk(A, B, K, m0, n0, tid, As, Bs, [&](const kg_in_t *as, const kg_in_t *bs) {
        kg_mma_slice(as, bs, wm, wn, g, t, acc);
    });

    float *o = kg_splitk_out(out, M, N);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int col = n0 + wn + 8 * j + 2 * t;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float2 v;
#if DENSE
            KGATE_STORE(&v.x, acc[j][2 * h]);
            KGATE_STORE(&v.y, acc[j][2 * h + 1]);
#else
            v.x = acc[j][2 * h];
            v.y = acc[j][2 * h + 1];
#endif
            *(float2 *)(o + (long long)(m0 + wm + g + 8 * h) * N + col) = v;
        }
    }
}

/* the accumulation pass (entry2 of split arms) */
#include "splitk_accum.cu"
