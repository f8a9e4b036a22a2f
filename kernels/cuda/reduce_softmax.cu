/* reduce_softmax.cu: row softmax, Y[i,j] = exp(X[i,j] - m_i) / S_i with
 * m_i the row max and S_i = sum_j exp(X[i,j] - m_i) (the softmax op).
 *
 * X[M,N] in the case dtype, Y[M,N] float32.  Geometry T/P/L and its rules
 * are in reduce_common.cu.  Two reads of each row: the first keeps a
 * running (max, sum) per thread (the sum rescaled by exp(m_old - m_new)
 * when the max grows); the group takes the max of the maxima, rescales
 * each thread's sum to it and adds them; the second read writes
 * exp(x - m) * (1 / S).  expf (not __expf): the op's bound allows 2 ulp
 * for the exponential.
 *
 * Preconditions (checked; a violation traps): blockDim.x a multiple of 32
 *   and of T, at most 1024; one-dimensional grid and block.  Any M, N;
 *   finite inputs.
 * Grid: ceildiv(M, P * blockDim.x / T).  Shared: 0 dynamic.
 *
 * Plan entry (one warp per row, 8-element loads):
 *   source = kernels/cuda/reduce_softmax.cu   entry = reduce_softmax
 *   defines = RED_T=32 RED_P=1 RED_L=8
 *   grid = ceildiv(M, 4)   block = 128   shared = 0
 *   args = X, Y, M, N
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * The geometry follows the defines, so the plan gives grid, block and
 * shared (the plan entry above).
 * kgate: ops = softmax
 * kgate: entry = reduce_softmax
 * kgate: args = X, Y, M, N
 */
#include "reduce_common.cu"

extern "C" __global__ void
reduce_softmax(const kg_in_t *__restrict__ X, float *__restrict__ Y, int M, int N)
{
    kg_reduce_check();
    const int g = kg_group(), lt = kg_lane();
    float m[RED_P], s[RED_P];
#pragma unroll
    for (int p = 0; p < RED_P; p++) {
        m[p] = KG_NEG_INF;
        s[p] = 0.0f;
        const int row = g * RED_P + p;
        if (row < M)
            kg_row_for(X + (long long)row * N, N, lt, [&](int, float v) {
                if (v > m[p]) {
                    s[p] = s[p] * expf(m[p] - v) + 1.0f;
                    m[p] = v;
                } else {
                    s[p] += expf(v - m[p]);
                }
            });
    }
    float mx[RED_P];
#pragma unroll
    for (int p = 0; p < RED_P; p++) mx[p] = m[p];
    kg_group_reduce(mx, kg_op_max());
#pragma unroll
    for (int p = 0; p < RED_P; p++) s[p] = (m[p] == KG_NEG_INF) ? 0.0f : s[p] * expf(m[p] - mx[p]);
    kg_group_reduce(s, kg_op_sum());
#pragma unroll
    for (int p = 0; p < RED_P; p++) {
        const int row = g * RED_P + p;
        if (row >= M) continue;
        const float mm = mx[p], inv = 1.0f / s[p];
        kg_row_map(X + (long long)row * N, Y + (long long)row * N, N, lt,
                   [&](int, float v) { return expf(v - mm) * inv; });
    }
}
