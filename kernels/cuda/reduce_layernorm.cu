/* reduce_layernorm.cu: row layer normalisation (the layernorm op),
 *   Y[i,j] = (X[i,j] - mu_i) / sqrt(var_i + eps) * gamma[j] + beta[j],
 * mu_i the row mean, var_i the biased variance (divided by N).
 *
 * X[M,N], gamma[N], beta[N] in the case dtype; eps float; Y[M,N] float32.
 * Geometry T/P/L and its rules are in reduce_common.cu.  Three reads of
 * each row (the second and third from cache at these sizes): the mean,
 * then the centred sum of squares (two-pass: no cancellation), then the
 * output.  1 / sqrtf (correctly rounded sqrt and division), not rsqrtf.
 *
 * Preconditions (checked; a violation traps): blockDim.x a multiple of 32
 *   and of T, at most 1024; one-dimensional grid and block.  Any M, N.
 * Grid: ceildiv(M, P * blockDim.x / T).  Shared: 0 dynamic.
 *
 * Plan entry (a 128-thread group per row, 8-element loads):
 *   source = kernels/cuda/reduce_layernorm.cu   entry = reduce_layernorm
 *   defines = RED_T=128 RED_P=1 RED_L=8
 *   grid = ceildiv(M, 1)   block = 128   shared = 0
 *   args = X, gamma, beta, Y, M, N, eps
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * The geometry follows the defines, so the plan gives grid, block and
 * shared (the plan entry above).
 * kgate: ops = layernorm
 * kgate: entry = reduce_layernorm
 * kgate: args = X, gamma, beta, Y, M, N, eps
 */
#include "reduce_common.cu"

extern "C" __global__ void
reduce_layernorm(const kg_in_t *__restrict__ X, const kg_in_t *__restrict__ gamma,
                 const kg_in_t *__restrict__ beta, float *__restrict__ Y, int M, int N, float eps)
{
    kg_reduce_check();
    const int g = kg_group(), lt = kg_lane();
    float mean[RED_P], ss[RED_P];
#pragma unroll
    for (int p = 0; p < RED_P; p++) {
        mean[p] = 0.0f;
        const int row = g * RED_P + p;
        if (row < M)
            kg_row_for(X + (long long)row * N, N, lt, [&](int, float v) { mean[p] += v; });
    }
    kg_group_reduce(mean, kg_op_sum());
#pragma unroll
    for (int p = 0; p < RED_P; p++) {
        mean[p] /= (float)N;
        ss[p] = 0.0f;
        const int row = g * RED_P + p;
        const float mu = mean[p];
        if (row < M)
            kg_row_for(X + (long long)row * N, N, lt, [&](int, float v) {
                const float d = v - mu;
                ss[p] = fmaf(d, d, ss[p]);
            });
    }
    kg_group_reduce(ss, kg_op_sum());
#pragma unroll
    for (int p = 0; p < RED_P; p++) {
        const int row = g * RED_P + p;
        if (row >= M) continue;
        const float mu = mean[p], r = 1.0f / sqrtf(ss[p] / (float)N + eps);
        kg_row_map(X + (long long)row * N, Y + (long long)row * N, N, lt, [&](int j, float v) {
            return fmaf((v - mu) * r, kg_param(gamma, j), kg_param(beta, j));
        });
    }
}
