/* reduce_sum.cu: row sums, Y[i] = sum_j X[i,j] (the rowsum op).
 *
 * X[M,N] in the case dtype, Y[M] float32.  Geometry T/P/L and its rules
 * are in reduce_common.cu: a group of T threads sums P rows at once, each
 * thread loading L elements per vector load.  Each thread keeps one
 * float32 partial per row; the group combines them (shuffles, then shared
 * memory for T > 32); lane 0 of the group stores.
 *
 * Preconditions (checked; a violation traps): blockDim.x a multiple of 32
 *   and of T, at most 1024; one-dimensional grid and block.  Any M, N
 *   (vector loads when N % L == 0, scalar loads otherwise).
 * Grid: ceildiv(M, P * blockDim.x / T).  Shared: 0 dynamic (static
 *   32 * P * 4 bytes when T > 32).
 *
 * Plan entry (RED_T=256 RED_P=1 RED_L=8, 256 threads: one row per block):
 *   source = kernels/cuda/reduce_sum.cu   entry = reduce_sum
 *   defines = RED_T=256 RED_P=1 RED_L=8
 *   grid = ceildiv(M, 1)   block = 256   shared = 0
 *   args = X, Y, M, N
 * (RED_T=32 RED_P=2 RED_L=4 with block = 128: grid = ceildiv(M, 8).)
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * The geometry follows the defines, so the plan gives grid, block and
 * shared (the plan entry above).
 * kgate: ops = rowsum
 * kgate: entry = reduce_sum
 * kgate: args = X, Y, M, N
 */
#include "reduce_common.cu"

extern "C" __global__ void
reduce_sum(const kg_in_t *__restrict__ X, float *__restrict__ Y, int M, int N)
{
    kg_reduce_check();
    const int g = kg_group(), lt = kg_lane();
    float acc[RED_P];
#pragma unroll
    for (int p = 0; p < RED_P; p++) {
        acc[p] = 0.0f;
        const int row = g * RED_P + p;
        if (row < M)
            kg_row_for(X + (long long)row * N, N, lt, [&](int, float v) { acc[p] += v; });
    }
    kg_group_reduce(acc, kg_op_sum());
    if (lt == 0)
#pragma unroll
        for (int p = 0; p < RED_P; p++) {
            const int row = g * RED_P + p;
            if (row < M) KGATE_STORE(&Y[row], acc[p]);
        }
}
