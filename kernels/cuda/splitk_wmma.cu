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
 *   args = A, B, C, M, N, K */
#include "kgate/kernel.h"

#ifndef KG_DTYPE
#define KG_DTYPE 0
#endif
#ifndef PITCH
#define PITCH 40
#endif
#ifndef PIPE
#define PIPE 0
#endif
#ifndef DENSE
#define DENSE 0
#endif
#ifndef BF16_VIA_F16
#define BF16_VIA_F16 0
#endif

#if KG_DTYPE == 0
#error "splitk_wmma.cu takes f16 or bf16 inputs only (KG_DTYPE 1 or 2); f32 cases use splitk_fma.cu"
#elif KG_DTYPE != 1 && KG_DTYPE != 2
#error "KG_DTYPE must be 1 (f16) or 2 (bf16)"
#endif
#if PITCH < 32 || PITCH % 8 != 0
#error "splitk_wmma.cu needs PITCH a multiple of 8 and at least 32 (wmma ldm rule); use 40"
#endif
#include <mma.h>
#if KG_DTYPE == 1 || BF16_VIA_F16
#include <cuda_fp16.h>
#define KG_MMA_F16 1
typedef __half kg_frag_t;
#else
#include <cuda_bf16.h>
#define KG_MMA_F16 0
typedef __nv_bfloat16 kg_frag_t;
#endif

#define BM 32
#define BN 64
#define BK 32
#define NT 128
#define NBUF (PIPE ? 2 : 1)
#define ES 2
#define CPR (BK * ES / 16)     /* 16-byte chunks per staged row: 4 */
#define EPC (16 / ES)          /* elements per chunk: 8 */
#define A_CH (BM * CPR / NT)   /* 1 */
#define B_CH (BN * CPR / NT)   /* 2 */

typedef unsigned short kg_in_t;

struct kg_slice {
    uint4 a[A_CH];
    uint4 b[B_CH];
};

__device__ __forceinline__ void kg_gload(kg_slice &f, const kg_in_t *__restrict__ A,
                                         const kg_in_t *__restrict__ B, int m0, int n0, int k0,
                                         int K, int tid)
{
#pragma unroll
    for (int i = 0; i < A_CH; i++) {
        const int idx = tid + i * NT, r = idx / CPR, c = idx % CPR;
        f.a[i] = __ldg((const uint4 *)(A + (long long)(m0 + r) * K + k0 + c * EPC));
    }
#pragma unroll
    for (int i = 0; i < B_CH; i++) {
        const int idx = tid + i * NT, r = idx / CPR, c = idx % CPR;
        f.b[i] = __ldg((const uint4 *)(B + (long long)(n0 + r) * K + k0 + c * EPC));
    }
}

#if KG_DTYPE == 2 && BF16_VIA_F16
/* two bf16 in one word -> two f16, round to nearest */
__device__ __forceinline__ unsigned kg_bf2h(unsigned w)
{
    const __half lo = __float2half_rn(__uint_as_float(w << 16));
    const __half hi = __float2half_rn(__uint_as_float(w & 0xffff0000u));
    return (unsigned)__half_as_ushort(lo) | ((unsigned)__half_as_ushort(hi) << 16);
}
#endif

__device__ __forceinline__ void kg_sput(kg_in_t *s, int r, int c, uint4 v)
{
#if KG_DTYPE == 2 && BF16_VIA_F16
    v.x = kg_bf2h(v.x); v.y = kg_bf2h(v.y); v.z = kg_bf2h(v.z); v.w = kg_bf2h(v.w);
#endif
    kg_in_t *p = s + r * PITCH + c * EPC;
#if (PITCH * ES) % 16 == 0
    *(uint4 *)p = v;
#elif (PITCH * ES) % 8 == 0
    ((uint2 *)p)[0] = make_uint2(v.x, v.y);
    ((uint2 *)p)[1] = make_uint2(v.z, v.w);
#else
    ((unsigned *)p)[0] = v.x; ((unsigned *)p)[1] = v.y;
    ((unsigned *)p)[2] = v.z; ((unsigned *)p)[3] = v.w;
#endif
}

__device__ __forceinline__ void kg_sstore(const kg_slice &f, kg_in_t *As, kg_in_t *Bs, int tid)
{
#pragma unroll
    for (int i = 0; i < A_CH; i++) {
        const int idx = tid + i * NT;
        kg_sput(As, idx / CPR, idx % CPR, f.a[i]);
    }
#pragma unroll
    for (int i = 0; i < B_CH; i++) {
        const int idx = tid + i * NT;
        kg_sput(Bs, idx / CPR, idx % CPR, f.b[i]);
    }
}

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
    if (M % BM != 0 || N % BN != 0 || K % BK != 0 || blockDim.x != NT || blockDim.y != 1 ||
        blockDim.z != 1 || (DENSE && gridDim.z != 1))
        __trap();

    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = (warp / 2) * 16, wn = (warp % 2) * 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int S = gridDim.z, s = blockIdx.z;
    const int ks = ((K + S - 1) / S + BK - 1) / BK * BK;
    const int kb = min(K, s * ks), ke = min(K, kb + ks);

    kg_fc acc[2];
    wmma::fill_fragment(acc[0], 0.0f);
    wmma::fill_fragment(acc[1], 0.0f);

    kg_slice f;
#if PIPE
    if (kb < ke) {
        kg_gload(f, A, B, m0, n0, kb, K, tid);
        kg_sstore(f, As[0], Bs[0], tid);
        __syncthreads();
    }
    for (int k0 = kb; k0 < ke; k0 += 2 * BK) {
        bool more = k0 + BK < ke;
        if (more) kg_gload(f, A, B, m0, n0, k0 + BK, K, tid);
        kg_wmma_slice(As[0], Bs[0], wm, wn, acc);
        if (more) kg_sstore(f, As[1], Bs[1], tid);
        __syncthreads();
        if (!more) break;
        more = k0 + 2 * BK < ke;
        if (more) kg_gload(f, A, B, m0, n0, k0 + 2 * BK, K, tid);
        kg_wmma_slice(As[1], Bs[1], wm, wn, acc);
        if (more) kg_sstore(f, As[0], Bs[0], tid);
        __syncthreads();
    }
#else
    for (int k0 = kb; k0 < ke; k0 += BK) {
        kg_gload(f, A, B, m0, n0, k0, K, tid);
        kg_sstore(f, As[0], Bs[0], tid);
        __syncthreads();
        kg_wmma_slice(As[0], Bs[0], wm, wn, acc);
        __syncthreads();
    }
#endif

#if DENSE
    float *o = out;
#else
    float *o = out + (long long)s * M * N;
#endif
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
