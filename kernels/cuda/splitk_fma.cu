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
 *   args = A, B, C, M, N, K */
#include "kgate/kernel.h"

#ifndef KG_DTYPE
#define KG_DTYPE 0
#endif
#if KG_DTYPE == 1
#include <cuda_fp16.h>
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

#if PITCH < 32 || PITCH % 2 != 0
#error "PITCH must be even and at least 32"
#endif

#define BM 32            /* output rows per block */
#define BN 64            /* output columns per block */
#define BK 32            /* K slice */
#define NT 128           /* threads per block */
#define NBUF (PIPE ? 2 : 1)

#if KG_DTYPE == 0
typedef float kg_in_t;
#define ES 4
__device__ __forceinline__ float kg_cvt(float v) { return v; }
#elif KG_DTYPE == 1
typedef unsigned short kg_in_t;
#define ES 2
__device__ __forceinline__ float kg_cvt(unsigned short h) { return __half2float(__ushort_as_half(h)); }
#elif KG_DTYPE == 2
typedef unsigned short kg_in_t;
#define ES 2
__device__ __forceinline__ float kg_cvt(unsigned short h) { return __uint_as_float(((unsigned)h) << 16); }
#else
#error "KG_DTYPE must be 0 (f32), 1 (f16) or 2 (bf16)"
#endif

#define CPR (BK * ES / 16)     /* 16-byte chunks per staged row: 4 (16-bit) or 8 (f32) */
#define EPC (16 / ES)          /* elements per chunk */
#define A_CH (BM * CPR / NT)   /* chunks per thread per slice */
#define B_CH (BN * CPR / NT)

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

/* One 16-byte chunk into a staged row: as wide as the pitch's alignment allows. */
__device__ __forceinline__ void kg_sput(kg_in_t *s, int r, int c, uint4 v)
{
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
        for (int r = 0; r < 4; r++) a[r] = kg_cvt(As[(4 * ty + r) * PITCH + kk]);
#pragma unroll
        for (int c = 0; c < 4; c++) b[c] = kg_cvt(Bs[(tx + 16 * c) * PITCH + kk]);
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
    if (M % BM != 0 || N % BN != 0 || K % BK != 0 || blockDim.x != NT || blockDim.y != 1 ||
        blockDim.z != 1 || (DENSE && gridDim.z != 1))
        __trap();

    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int S = gridDim.z, s = blockIdx.z;
    const int ks = ((K + S - 1) / S + BK - 1) / BK * BK;
    const int kb = min(K, s * ks), ke = min(K, kb + ks);

    float acc[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) acc[r][c] = 0.0f;

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
        kg_fma_slice(As[0], Bs[0], ty, tx, acc);
        if (more) kg_sstore(f, As[1], Bs[1], tid);
        __syncthreads();
        if (!more) break;
        more = k0 + 2 * BK < ke;
        if (more) kg_gload(f, A, B, m0, n0, k0 + 2 * BK, K, tid);
        kg_fma_slice(As[1], Bs[1], ty, tx, acc);
        if (more) kg_sstore(f, As[0], Bs[0], tid);
        __syncthreads();
    }
#else
    for (int k0 = kb; k0 < ke; k0 += BK) {
        kg_gload(f, A, B, m0, n0, k0, K, tid);
        kg_sstore(f, As[0], Bs[0], tid);
        __syncthreads();
        kg_fma_slice(As[0], Bs[0], ty, tx, acc);
        __syncthreads();
    }
#endif

#if DENSE
    float *o = out;
#else
    float *o = out + (long long)s * M * N;
#endif
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
