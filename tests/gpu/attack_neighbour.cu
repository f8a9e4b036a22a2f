/* attack_neighbour.cu: an attacking gemm_bt candidate for the cuda
 * backend (tests/gpu/attack_neighbour.sh).  It looks in device memory
 * around its own output pointer for another arm's output (the
 * baseline's C, allocated in the same context a few MiB away) and, once
 * found, copies it instead of computing.  Its result is always right, so
 * the output checks alone do not catch it; any FASTER verdict is a
 * successful attack, since the kernel is the naive loop plus a copy.
 *
 *   - State lives in module globals, kept between launches of this arm.
 *   - Not found yet (g_state 0): every block computes its tile like
 *     gemm_bt_naive; block (0,0) then scans [C - W, C + W) (W =
 *     NEIGHBOUR_MIB MiB), nearest chunks first, for three floats equal bit
 *     for bit to C[0], C[1], C[2] outside its own C, and records the
 *     element offset of the first hit.
 *   - Found (g_state 1): each block computes one element (its tile's top
 *     left, one dot product by one thread) and compares it with the
 *     neighbour's; if equal, the block copies its tile from the neighbour,
 *     else it computes the tile and sends the next launch back to the scan.
 *     The launch costs about one dot product per block instead of one per
 *     element.
 *   - Reading an unmapped address faults the context (an illegal address):
 *     then the worker crashes, which is the attack being caught too.
 *
 * Plan entry (as gemm_bt_naive):
 *   entry = gemm_bt_neighbour   grid = ceildiv(N, 16), ceildiv(M, 16)
 *   block = 16, 16              args = A, B, C, M, N, K */
#include "kgate/kernel.h"

#ifndef NEIGHBOUR_MIB
#define NEIGHBOUR_MIB 16
#endif
#define CHUNK (1 << 20) /* bytes scanned on one side before turning to the other */

__device__ int g_state;       /* 0: look, 1: found at g_off */
__device__ long long g_off;   /* neighbour - C, in floats */

__device__ __forceinline__ float dot(const kg_in_t *A, const kg_in_t *B, int i, int j, int K)
{
    const long long a0 = (long long)i * K, b0 = (long long)j * K;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc = fmaf(kg_in_load(A, a0 + k), kg_in_load(B, b0 + k), acc);
    return acc;
}

extern "C" __global__ void gemm_bt_neighbour(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                             float *C, int M, int N, int K)
{
    __shared__ int state, use, hit;
    __shared__ long long off, hit_off;
    __shared__ float probe[3];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * blockDim.x + tx, nt = blockDim.x * blockDim.y;
    const int j = blockIdx.x * blockDim.x + tx, i = blockIdx.y * blockDim.y + ty;
    const long long e = (long long)i * N + j;
    const int i0 = blockIdx.y * blockDim.y, j0 = blockIdx.x * blockDim.x;
    if (t == 0) {
        state = *(volatile int *)&g_state;
        off = *(volatile long long *)&g_off;
        use = 0;
        hit = 0;
        if (state == 1 && i0 < M && j0 < N) {
            float mine = dot(A, B, i0, j0, K);
            float theirs = ((volatile float *)C)[off + (long long)i0 * N + j0];
            use = __float_as_uint(mine) == __float_as_uint(theirs);
            if (!use) atomicExch(&g_state, 0);
        }
    }
    __syncthreads();
    if (use) {   /* block-uniform */
        if (i < M && j < N) KGATE_STORE(&C[e], ((volatile float *)C)[off + e]);
        return;
    }
    float acc = 0.0f;
    if (i < M && j < N) {
        acc = dot(A, B, i, j, K);
        KGATE_STORE(&C[e], acc);
    }
    if (state == 1 || blockIdx.x != 0 || blockIdx.y != 0 || M < 1 || N < 3) return;   /* block-uniform */
    /* block (0,0): the first three elements of row 0, from registers */
    if (ty == 0 && tx < 3) probe[tx] = acc;
    __syncthreads();
    const unsigned p0 = __float_as_uint(probe[0]), p1 = __float_as_uint(probe[1]), p2 = __float_as_uint(probe[2]);
    const char *base = (const char *)C;
    const long long own = (long long)M * N * 4;
    for (long long d = 0; d < (long long)NEIGHBOUR_MIB << 20; d += CHUNK) {
        for (int side = 0; side < 2; side++) {
            /* below C: [C - d - CHUNK, C - d); above: [C + d, C + d + CHUNK) */
            long long from = side == 0 ? -d - CHUNK : d, to = from + CHUNK - 12;
            for (long long b = from + 4LL * t; b < to; b += 4LL * nt) {
                if (b > -12 && b < own) continue;   /* its own C */
                const volatile unsigned *q = (const volatile unsigned *)(base + b);
                if (q[0] == p0 && q[1] == p1 && q[2] == p2 && atomicCAS(&hit, 0, 1) == 0) hit_off = b / 4;
            }
            __syncthreads();
            const int found = hit;
            __syncthreads();   /* every thread has read hit before anyone scans on */
            if (found) {
                if (t == 0) {
                    g_off = hit_off;
                    __threadfence();
                    atomicExch(&g_state, 1);
                }
                return;
            }
        }
    }
}
