/* refused_launch.cu: kernels whose launch the device refuses, for the
 * refused-launch tests of tests/gpu/run.sh: the arm must be INADMISSIBLE
 * on the case, with the device's limit in the message.
 *   bounded: __launch_bounds__(64), launched with a larger block
 *   wide:    any dynamic shared memory request (the plan asks for more
 *            than the device allows per block) */
#include "kgate/kernel.h"

extern "C" __global__ void __launch_bounds__(64) bounded(const kg_in_t *A, const kg_in_t *B,
                                                         float *C, int M, int N, int K)
{
    (void)A; (void)B; (void)K;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < (long long)M * N) C[i] = 0.0f;
}

extern "C" __global__ void wide(const kg_in_t *A, const kg_in_t *B, float *C, int M, int N, int K)
{
    extern __shared__ float s[];
    (void)A; (void)B; (void)K;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    s[threadIdx.x] = 0.0f;
    if (i < (long long)M * N) C[i] = s[threadIdx.x];
}
