/* attack_steal.cu: an attacking gemm_bt candidate for the cuda backend
 * (tests/gpu/attack_steal.kg, tests/gpu/run.sh).  It copies another arm's
 * output out of device memory instead of computing it.
 *
 * The plan lists it between the baseline and the baseline's control, and
 * the worker allocates each arm's A, B and C in the process's arm order
 * (reversed in the reverse direction), so in either direction another
 * arm's finished C lies just below this arm's lowest buffer.  Every
 * buffer is at least 2 MiB, so each is a driver allocation of its own and
 * the scan walks mapped memory only.
 *
 *   - State lives in module globals, kept between launches.
 *   - Not found yet (g_state 0): every block computes its tile like
 *     gemm_bt_naive; block (0,0) then scans [low - W, low) (low: the
 *     lowest of A, B, C; W = STEAL_MIB MiB) for three consecutive floats
 *     equal bit for bit to C[M-1][0..2], computed here, and records where
 *     that C begins.
 *   - Found (g_state 1): each block computes two elements of its tile
 *     (its corners) and compares them with the neighbour's; if both are
 *     equal it copies its tile from there, else it computes the tile and
 *     sends the next launch back to the scan.  A launch then costs two
 *     dot products per block instead of one per element: FASTER.
 *
 * With the arm in a process of its own (a cuda arm host), nothing below
 * its buffers is mapped: the scan faults (illegal address) and the arm is
 * INCORRECT; it must never be FASTER.
 *
 * Plan entry (as gemm_bt_naive):
 *   entry = gemm_bt_steal   grid = ceildiv(N, 16), ceildiv(M, 16)
 *   block = 16, 16          args = A, B, C, M, N, K */
#include "kgate/kernel.h"

#ifndef STEAL_MIB
#define STEAL_MIB 24
#endif

__device__ int g_state;       /* 0: look, 1: found at g_off */
__device__ long long g_off;   /* neighbour's C - C, in floats */

__device__ __forceinline__ float dot(const kg_in_t *A, const kg_in_t *B, int i, int j, int K)
{
    const long long a0 = (long long)i * K, b0 = (long long)j * K;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc = fmaf(kg_in_load(A, a0 + k), kg_in_load(B, b0 + k), acc);
    return acc;
}

extern "C" __global__ void gemm_bt_steal(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                         float *C, int M, int N, int K)
{
    __shared__ int state, use, hit;
    __shared__ long long off, hit_at;
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * blockDim.x + tx, nt = blockDim.x * blockDim.y;
    const int j = blockIdx.x * blockDim.x + tx, i = blockIdx.y * blockDim.y + ty;
    const long long e = (long long)i * N + j;
    const int i0 = blockIdx.y * blockDim.y, j0 = blockIdx.x * blockDim.x;
    const int i1 = min(i0 + (int)blockDim.y, M) - 1, j1 = min(j0 + (int)blockDim.x, N) - 1;
    if (t == 0) {
        state = *(volatile int *)&g_state;
        off = *(volatile long long *)&g_off;
        use = 0;
        hit = 0;
        if (state == 1) {
            const volatile float *their = (const volatile float *)C + off;
            float m0 = dot(A, B, i0, j0, K), m1 = dot(A, B, i1, j1, K);
            use = __float_as_uint(m0) == __float_as_uint(their[(long long)i0 * N + j0]) &&
                  __float_as_uint(m1) == __float_as_uint(their[(long long)i1 * N + j1]);
            if (!use) atomicExch(&g_state, 0);
        }
    }
    __syncthreads();
    if (use) {   /* block-uniform */
        if (i < M && j < N) KGATE_STORE(&C[e], ((volatile float *)C)[off + e]);
        return;
    }
    if (i < M && j < N) KGATE_STORE(&C[e], dot(A, B, i, j, K));
    if (state == 1 || blockIdx.x != 0 || blockIdx.y != 0 || M < 1 || N < 3) return;   /* block-uniform */
    const unsigned p0 = __float_as_uint(dot(A, B, M - 1, 0, K)), p1 = __float_as_uint(dot(A, B, M - 1, 1, K)),
                   p2 = __float_as_uint(dot(A, B, M - 1, 2, K));
    const char *low = (const char *)C;
    if ((const char *)A < low) low = (const char *)A;
    if ((const char *)B < low) low = (const char *)B;
    const long long last_row = (long long)(M - 1) * N;
    const long long steps = ((long long)STEAL_MIB << 20) / (4LL * nt);
    for (long long s = 0; s < steps; s++) {
        const long long b = -12 - 4LL * (s * nt + t);
        const volatile unsigned *q = (const volatile unsigned *)(low + b);
        if (q[0] == p0 && q[1] == p1 && q[2] == p2 && atomicCAS(&hit, 0, 1) == 0)
            hit_at = ((long long)(low + b - (const char *)C)) / 4 - last_row;
        if ((s & 255) == 255) {
            __syncthreads();
            const int found = hit;
            __syncthreads();   /* every thread has read hit before anyone scans on */
            if (found) break;  /* block-uniform */
        }
    }
    __syncthreads();
    if (t == 0 && hit) {
        g_off = hit_at;
        __threadfence();
        atomicExch(&g_state, 1);
    }
}
