/* attack_packsets.cu: a gemm_bt candidate that works only on the input set
 * the checks use (tests/gpu/attack_packsets.kg, tests/gpu/run.sh), the
 * device form of tests/attacks/a13_pack_sets.c.
 *
 * Under inputs = fresh with pack = 8, operations 0..6 of a timed sample
 * read input sets of their own and the last reads the arm's bound set,
 * the one every check before timing uses.  The first launch of the module
 * (a check) records its A in a module global; a later launch on another A
 * returns at once.  Before each operation wrote an output of its own, the
 * last operation's output was all a check read, and a sample cost one
 * gemm for eight: FASTER.  Now a sampled check compares an operation
 * before the last, whose output this kernel never wrote: INCORRECT.
 *
 * Plan entry (as gemm_bt_naive):
 *   entry = gemm_bt_packsets   grid = ceildiv(N, 16), ceildiv(M, 16)
 *   block = 16, 16             args = A, B, C, M, N, K */
__device__ const float *g_checked;

extern "C" __global__ void gemm_bt_packsets(const float *A, const float *B, float *C, int M, int N, int K)
{
    const float *seen = g_checked;
    if (seen == 0) {
        g_checked = A;   /* every thread of the first launch writes the same value */
        seen = A;
    }
    if (seen != A) return;
    int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += A[(long long)m * K + k] * B[(long long)n * K + k];
    C[(long long)m * N + n] = acc;
}
