/* reduce_rmsnorm.cu: row RMS normalisation (the rmsnorm op),
 *   Y[i,j] = X[i,j] / sqrt(mean_k X[i,k]^2 + eps) * weight[j].
 *
 * X[M,N], weight[N] in the case dtype; eps float; Y[M,N] float32.
 * Geometry T/P/L and its rules are in reduce_common.cu.  Two reads of
 * each row: the sum of squares, then the output.  1 / sqrtf, not rsqrtf.
 *
 * Preconditions (checked; a violation traps): blockDim.x a multiple of 32
 *   and of T, at most 1024; one-dimensional grid and block.  Any M, N.
 * Grid: ceildiv(M, P * blockDim.x / T).  Shared: 0 dynamic.
 *
 * Plan entry (a 256-thread group per row, 8-element loads):
 *   source = kernels/cuda/reduce_rmsnorm.cu   entry = reduce_rmsnorm
 *   defines = RED_T=256 RED_P=1 RED_L=8
 *   grid = ceildiv(M, 1)   block = 256   shared = 0
 *   args = X, weight, Y, M, N, eps
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * The geometry follows the defines, so the plan gives grid, block and
 * shared (the plan entry above).
 * kgate: ops = rmsnorm
 * kgate: entry = reduce_rmsnorm
 * kgate: args = X, weight, Y, M, N, eps
 */
#include "reduce_common.cu"

extern "C" __global__ void
reduce_rmsnorm(const kg_in_t *__restrict__ X, const kg_in_t *__restrict__ weight,
               float *__restrict__ Y, int M, int N, float eps)
{
    kg_reduce_check();
    const int g = kg_group(), lt = kg_lane();
    float ss[RED_P];
#pragma unroll
    for (int p = 0; p < RED_P; p++) {
        ss[p] = 0.0f;
        const int row = g * RED_P + p;
        if (row < M)
            kg_row_for(X + (long long)row * N, N, lt, [&](int, float v) { ss[p] = fmaf(v, v, ss[p]); });
    }
    kg_group_reduce(ss, kg_op_sum());
#pragma unroll
    for (int p = 0; p < RED_P; p++) {
        const int row = g * RED_P + p;
        if (row >= M) continue;
        const float r = 1.0f / sqrtf(ss[p] / (float)N + eps);
        kg_row_map(X + (long long)row * N, Y + (long long)row * N, N, lt,
                   [&](int j, float v) { return v * r * kg_param(weight, j); });
    }
}
