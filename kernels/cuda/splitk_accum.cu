/* splitk_accum.cu: the accumulation pass of split-K,
 *   C[i] = sum_{s=0}^{splits-1} ws[s][i],   i < M*N,
 * over the float32 partials written by splitk_fma / splitk_wmma /
 * splitk_mma (launch 1 of the same arm).
 *
 * Each thread sums VEC consecutive outputs (VEC = 4: 128-bit loads and
 * stores; VEC = 1: scalar) over the splits in order s = 0, 1, ...: the
 * result is deterministic and independent of the launch geometry.  Final
 * values go through KGATE_STORE into a register vector before the one
 * wide store, so the numerical negative zeroes every output.
 *
 * Preconditions: (M * N) % VEC == 0 (N % 64 == 0 in the split-K family
 *   makes this hold), ws and C 16-byte aligned, M * N < 2^31.
 * Grid: ceildiv(M * N, VEC * blockDim.x); any blockDim.x (threads past
 *   the end do nothing).  No shared memory.
 *
 * Plan entry (second launch of a gemm_splitk arm; splitk_fma.cu,
 * splitk_wmma.cu and splitk_mma.cu include this file, so their modules
 * hold this entry too):
 *   entry2 = splitk_accum
 *   grid2 = ceildiv(M * N, 1024)   block2 = 256   shared2 = 0
 *   args2 = ws, C, M, N, splits
 * (KG_ACCUM_VEC=1: grid2 = ceildiv(M * N, 256).) */
#include "kgate/kernel.h"

#ifndef KG_ACCUM_VEC
#define KG_ACCUM_VEC 4
#endif

#if KG_ACCUM_VEC != 4 && KG_ACCUM_VEC != 1
#error "KG_ACCUM_VEC must be 1 or 4"
#endif

extern "C" __global__ void splitk_accum(const float *__restrict__ ws, float *__restrict__ C, int M,
                                        int N, int splits)
{
    const long long total = (long long)M * N;
    const long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * KG_ACCUM_VEC;
    if (i >= total) return;
#if KG_ACCUM_VEC == 4
    float4 acc = __ldg((const float4 *)(ws + i));
    for (int s = 1; s < splits; s++) {
        const float4 p = __ldg((const float4 *)(ws + (long long)s * total + i));
        acc.x += p.x; acc.y += p.y; acc.z += p.z; acc.w += p.w;
    }
    float4 v;
    KGATE_STORE(&v.x, acc.x);
    KGATE_STORE(&v.y, acc.y);
    KGATE_STORE(&v.z, acc.z);
    KGATE_STORE(&v.w, acc.w);
    *(float4 *)(C + i) = v;
#else
    float acc = ws[i];
    for (int s = 1; s < splits; s++) acc += ws[(long long)s * total + i];
    KGATE_STORE(&C[i], acc);
#endif
}
