/* splitk_common.cu: the machinery shared by the split-K family
 * (splitk_fma.cu, splitk_wmma.cu, splitk_mma.cu), which include it.  It
 * defines no kernel: each variant keeps its own multiply of one staged
 * slice and its own output stores; the contract, the split rule, the
 * staging of A and B and the K walk (with or without the pipeline) live
 * here, so that the variants differ only where their arithmetic does.
 *
 * Defines read here (the plan's `defines`):
 *   PITCH = staging row length in elements (even, >= 32; default 40).
 *   PIPE = 0 | 1   two staging buffers, the next slice's global loads in
 *                  flight while the current one is multiplied.
 *   DENSE = 0 | 1  the kernel writes C (grid.z must be 1), not partials.
 *   BF16_VIA_F16 = 0 | 1  (tensor-core variants only) stage bf16 as f16.
 * The tensor-core variants define KG_SPLITK_TC 1 before including this
 * file: f32 inputs are then refused, and BF16_VIA_F16 is honoured (the
 * FMA variant converts bf16 exactly at use and never stages through f16).
 *
 * Tiling: 128 threads own a 32x64 output tile; K is walked in slices of
 * 32, each staged in shared memory as rows of PITCH input elements (A rows
 * m0.., B rows n0..: both contiguous in K, so B staged as [n][k] is the
 * K x N operand in column-major order).  Each thread loads 16-byte chunks
 * (A_CH of A, B_CH of B per slice) with __ldg and stores them as wide as
 * the pitch's alignment allows.
 *
 * Contract (kg_splitk_check traps on a violation): M % 32 == 0,
 * N % 64 == 0, K % 32 == 0, blockDim = (128, 1, 1), DENSE implies
 * gridDim.z == 1.  Split s = blockIdx.z of S = gridDim.z covers k in
 *   [s * Ks, min(K, (s + 1) * Ks)),  Ks = 32 * ceildiv(ceildiv(K, S), 32),
 * the final split clamped to K; a split past K walks nothing (its
 * accumulators stay zero). */
#ifndef KG_SPLITK_COMMON_CU
#define KG_SPLITK_COMMON_CU

#include "kgate/kernel.h"

#ifndef PITCH
#define PITCH 40
#endif
#ifndef PIPE
#define PIPE 0
#endif
#ifndef DENSE
#define DENSE 0
#endif
#ifndef KG_SPLITK_TC
#define KG_SPLITK_TC 0
#endif

#if PITCH < 32 || PITCH % 2 != 0
#error "PITCH must be even and at least 32"
#endif

#if KG_SPLITK_TC
#ifndef BF16_VIA_F16
#define BF16_VIA_F16 0
#endif
#if KG_DTYPE == 0
#error "splitk_wmma.cu and splitk_mma.cu take f16 or bf16 inputs only (KG_DTYPE 1 or 2); f32 cases use splitk_fma.cu"
#endif
#if KG_DTYPE == 1 || BF16_VIA_F16
#include <cuda_fp16.h>
#define KG_MMA_F16 1       /* the tensor cores see f16 */
#else
#define KG_MMA_F16 0       /* the tensor cores see bf16 */
#endif
#define KG_STAGE_BF2H (KG_DTYPE == 2 && BF16_VIA_F16)
#else
#define KG_STAGE_BF2H 0
#endif

#define BM 32            /* output rows per block */
#define BN 64            /* output columns per block */
#define BK 32            /* K slice */
#define NT 128           /* threads per block */
#define NBUF (PIPE ? 2 : 1)

#define CPR (BK * KG_IN_BYTES / 16)  /* 16-byte chunks per staged row: 4 (16-bit) or 8 (f32) */
#define EPC (16 / KG_IN_BYTES)       /* elements per chunk */
#define A_CH (BM * CPR / NT)         /* chunks per thread per slice */
#define B_CH (BN * CPR / NT)

/* One slice's global loads of one thread, held in registers. */
struct kg_slice {
    uint4 a[A_CH];
    uint4 b[B_CH];
};

__device__ __forceinline__ void kg_splitk_check(int M, int N, int K)
{
    if (M % BM != 0 || N % BN != 0 || K % BK != 0 || blockDim.x != NT || blockDim.y != 1 ||
        blockDim.z != 1 || (DENSE && gridDim.z != 1))
        __trap();
}

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

#if KG_STAGE_BF2H
/* two bf16 in one word -> two f16, round to nearest */
__device__ __forceinline__ unsigned kg_bf2h(unsigned w)
{
    const __half lo = __float2half_rn(__uint_as_float(w << 16));
    const __half hi = __float2half_rn(__uint_as_float(w & 0xffff0000u));
    return (unsigned)__half_as_ushort(lo) | ((unsigned)__half_as_ushort(hi) << 16);
}
#endif

/* One 16-byte chunk into a staged row: as wide as the pitch's alignment allows. */
__device__ __forceinline__ void kg_sput(kg_in_t *s, int r, int c, uint4 v)
{
#if KG_STAGE_BF2H
    v.x = kg_bf2h(v.x); v.y = kg_bf2h(v.y); v.z = kg_bf2h(v.z); v.w = kg_bf2h(v.w);
#endif
    kg_in_t *p = s + r * PITCH + c * EPC;
#if (PITCH * KG_IN_BYTES) % 16 == 0
    *(uint4 *)p = v;
#elif (PITCH * KG_IN_BYTES) % 8 == 0
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

/* Walks this block's K range (split blockIdx.z of gridDim.z, rule above):
 * stages each slice of A rows m0.. and B rows n0.. into the buffers As /
 * Bs and calls mul(As[b], Bs[b]) once the slice is visible to the whole
 * block.  Every thread of the block must call it (it holds barriers). */
template <typename Mul>
__device__ __forceinline__ void kg_splitk_walk(const kg_in_t *__restrict__ A,
                                               const kg_in_t *__restrict__ B, int K, int m0,
                                               int n0, int tid, kg_in_t (*As)[BM * PITCH],
                                               kg_in_t (*Bs)[BN * PITCH], Mul mul)
{
    const int S = gridDim.z, s = blockIdx.z;
    const int ks = ((K + S - 1) / S + BK - 1) / BK * BK;
    const int kb = min(K, s * ks), ke = min(K, kb + ks);

    kg_slice f;
#if PIPE
    if (kb < ke) {
        kg_gload(f, A, B, m0, n0, kb, K, tid);
        kg_sstore(f, As[0], Bs[0], tid);
        __syncthreads();
    }
    /* two slices per trip, so that the buffer of each step is static */
    for (int k0 = kb; k0 < ke; k0 += 2 * BK) {
        bool more = k0 + BK < ke;
        if (more) kg_gload(f, A, B, m0, n0, k0 + BK, K, tid);
        mul(As[0], Bs[0]);
        if (more) kg_sstore(f, As[1], Bs[1], tid);
        __syncthreads();
        if (!more) break;
        more = k0 + 2 * BK < ke;
        if (more) kg_gload(f, A, B, m0, n0, k0 + 2 * BK, K, tid);
        mul(As[1], Bs[1]);
        if (more) kg_sstore(f, As[0], Bs[0], tid);
        __syncthreads();
    }
#else
    for (int k0 = kb; k0 < ke; k0 += BK) {
        kg_gload(f, A, B, m0, n0, k0, K, tid);
        kg_sstore(f, As[0], Bs[0], tid);
        __syncthreads();
        mul(As[0], Bs[0]);
        __syncthreads();
    }
#endif
}

/* Where this block's results go: C itself (DENSE), else partial s of the
 * op's workspace, out[s][M][N]. */
__device__ __forceinline__ float *kg_splitk_out(float *out, int M, int N)
{
#if DENSE
    (void)M;
    (void)N;
    return out;
#else
    return out + (long long)blockIdx.z * M * N;
#endif
}

#endif
