/* smem_rbw.cu: gemm_bt_naive plus a float its thread reads from shared
 * memory it never wrote (a read-before-write a model-written kernel makes).
 * On a device where nothing else ran the read gives 0 and the kernel is
 * right; after other kernels it reads their leftovers.  On the H200 such
 * a kernel was admitted and judged FASTER before kgate poisoned the shared
 * memory of every SM ahead of each checked execution; now it must fail
 * (tests/gpu/smem_rbw.sh). */
#include "kgate/kernel.h"

extern "C" __global__ void gemm_bt_smem_rbw(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                            float *__restrict__ C, int M, int N, int K)
{
    __shared__ float junk[256];
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const long long a0 = (long long)i * K, b0 = (long long)j * K;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += kg_in_load(A, a0 + k) * kg_in_load(B, b0 + k);
    /* never written: volatile, so that the compiler keeps the read */
    volatile float *v = junk;
    C[(long long)i * N + j] = acc + v[threadIdx.y * blockDim.x + threadIdx.x];
}
