/* reduce_common.cu: the machinery shared by the row-reduction family
 * (reduce_sum.cu, reduce_softmax.cu, reduce_layernorm.cu,
 * reduce_rmsnorm.cu), which include it.  It defines no kernel.
 *
 * Geometry, as compile-time defines (the plan's `defines`; the names carry
 * a prefix because one-letter macros would clash with template parameter
 * names in the CUDA headers nvcc includes implicitly):
 *   RED_T = T  threads per group (a power of two, 1..1024; default 32).  A
 *      group reduces its rows together: shuffles within a warp, and for
 *      T > 32 one pass through shared memory across the group's warps.
 *   RED_P = P  rows per group (1..16; default 1): a group owns rows
 *      g*P .. g*P+P-1 and reduces all P at once (one exchange for P values).
 *   RED_L = L  lanes (elements) per thread per load (default 1): L > 1
 *      loads L consecutive elements with one vector load (L * element size
 *      bytes: at most 16, so L <= 4 for f32 and L <= 8 for f16/bf16);
 *      outputs of the row-to-row ops are stored with matching float vector
 *      stores.  Vector loads need every row start aligned, i.e.
 *      N % L == 0; for other N the kernels fall back to scalar loads
 *      (correct for any N, slower).
 * A block of B = blockDim.x threads holds G = B / T groups, so the grid is
 *   grid = ceildiv(M, P * B / T).
 * Preconditions (checked; a violation traps): B % 32 == 0, B % T == 0,
 *   B <= 1024, gridDim.y == gridDim.z == 1, blockDim.y == blockDim.z == 1.
 * Rows past M (the last block) take part in the group exchanges with
 * empty data and store nothing.  Accumulation is float32 in a fixed
 * order for a given geometry: results are deterministic.
 *
 * Final stores go through KGATE_STORE (into a register vector first where
 * the store is a vector store), so the numerical negative zeroes them. */
#ifndef KG_REDUCE_COMMON_CU
#define KG_REDUCE_COMMON_CU

#include "kgate/kernel.h"

#ifndef RED_T
#define RED_T 32
#endif
#ifndef RED_P
#define RED_P 1
#endif
#ifndef RED_L
#define RED_L 1
#endif

#if RED_T < 1 || RED_T > 1024 || (RED_T & (RED_T - 1)) != 0
#error "RED_T (threads per group) must be a power of two from 1 to 1024"
#endif
#if RED_P < 1 || RED_P > 16
#error "RED_P (rows per group) must be 1..16"
#endif

/* kg_in_t, KG_IN_BYTES and kg_in_cvt come from kgate/kernel.h */
#define VB (RED_L * KG_IN_BYTES)   /* bytes per vector load */
#if VB == 16
typedef uint4 kg_raw_t;
#elif VB == 8
typedef uint2 kg_raw_t;
#elif VB == 4
typedef unsigned kg_raw_t;
#elif VB == 2
typedef unsigned short kg_raw_t;
#else
#error "RED_L * element size must be 2, 4, 8 or 16 bytes (RED_L <= 4 for f32, RED_L <= 8 for f16/bf16, RED_L a power of two)"
#endif

union kg_vec {
    kg_raw_t r;
    kg_in_t e[RED_L];
};

/* L float outputs, stored with the widest aligned vector stores */
union kg_ovec {
#if RED_L >= 4
    float4 v[RED_L / 4];
#elif RED_L == 2
    float2 v[1];
#else
    float v[1];
#endif
    float f[RED_L];
};

#define KG_WARP_MASK 0xffffffffu
/* NVRTC has no math.h, hence no INFINITY */
#define KG_NEG_INF __int_as_float(0xff800000)

struct kg_op_sum {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct kg_op_max {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/* The traps: a geometry the plan declared wrong fails loudly instead of
 * leaving rows unwritten. */
__device__ __forceinline__ void kg_reduce_check(void)
{
    if (blockDim.x % 32 != 0 || blockDim.x % RED_T != 0 || blockDim.x > 1024 || blockDim.y != 1 ||
        blockDim.z != 1 || gridDim.y != 1 || gridDim.z != 1)
        __trap();
}

__device__ __forceinline__ int kg_group(void)
{
    return blockIdx.x * (blockDim.x / RED_T) + threadIdx.x / RED_T;
}

__device__ __forceinline__ int kg_lane(void)
{
    return threadIdx.x % RED_T;
}

/* Reduces v[0..NV) over the T threads of each group; every thread of the
 * group gets the results.  Every thread of the block must call it. */
template <int NV, class Op>
__device__ __forceinline__ void kg_group_reduce(float (&v)[NV], Op op)
{
#pragma unroll
    for (int o = (RED_T < 32 ? RED_T : 32) / 2; o > 0; o >>= 1)
#pragma unroll
        for (int p = 0; p < NV; p++) v[p] = op(v[p], __shfl_xor_sync(KG_WARP_MASK, v[p], o));
#if RED_T > 32
    __shared__ float red[32][NV];
    const int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0)
#pragma unroll
        for (int p = 0; p < NV; p++) red[warp][p] = v[p];
    __syncthreads();
    const int w0 = (threadIdx.x / RED_T) * (RED_T / 32);
#pragma unroll
    for (int p = 0; p < NV; p++) {
        float r = red[w0][p];
        for (int i = 1; i < RED_T / 32; i++) r = op(r, red[w0 + i][p]);
        v[p] = r;
    }
    __syncthreads(); /* red is reused by the next call */
#endif
}

/* Calls f(j, x[j]) for this thread's share of the row: chunks of L
 * elements, T * L apart (vector loads), or single elements T apart when
 * N % L != 0. */
template <class F>
__device__ __forceinline__ void kg_row_for(const kg_in_t *__restrict__ x, int N, int lt, F f)
{
#if RED_L > 1
    if (N % RED_L == 0) {
        for (int j = lt * RED_L; j < N; j += RED_T * RED_L) {
            kg_vec u;
            u.r = __ldg((const kg_raw_t *)(x + j));
#pragma unroll
            for (int e = 0; e < RED_L; e++) f(j + e, kg_in_cvt(u.e[e]));
        }
        return;
    }
#endif
    for (int j = lt; j < N; j += RED_T) f(j, kg_in_cvt(__ldg(x + j)));
}

/* y[j] = f(j, x[j]) over this thread's share of the row, same traversal
 * as kg_row_for; every value passes through KGATE_STORE. */
template <class F>
__device__ __forceinline__ void kg_row_map(const kg_in_t *__restrict__ x, float *__restrict__ y,
                                           int N, int lt, F f)
{
#if RED_L > 1
    if (N % RED_L == 0) {
        for (int j = lt * RED_L; j < N; j += RED_T * RED_L) {
            kg_vec u;
            u.r = __ldg((const kg_raw_t *)(x + j));
            kg_ovec o;
#pragma unroll
            for (int e = 0; e < RED_L; e++) KGATE_STORE(&o.f[e], f(j + e, kg_in_cvt(u.e[e])));
#pragma unroll
            for (int q = 0; q < (int)(sizeof o.v / sizeof o.v[0]); q++)
                ((decltype(&o.v[0]))(y + j))[q] = o.v[q];
        }
        return;
    }
#endif
    for (int j = lt; j < N; j += RED_T) KGATE_STORE(&y[j], f(j, kg_in_cvt(__ldg(x + j))));
}

/* one element of a per-column parameter row (gamma, beta, weight) */
__device__ __forceinline__ float kg_param(const kg_in_t *__restrict__ w, int j)
{
    return kg_in_cvt(__ldg(w + j));
}

#endif
