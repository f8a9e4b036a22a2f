/* precision_f16acc.cu: precision cheat (tests/gpu/run.sh): an f32 rowsum
 * that accumulates in f16: one block of 256 threads per row, each thread
 * sums every 256th element in f16 (cvt.rn.f16.f32, add.rn.f16), and the
 * threads' partials are combined in f16 through shared memory.  Under the
 * f32 contract it must be INCORRECT (before contracts such a sum passed
 * at error/bound 0.86 on an H200); with `tolerance = 1e-2` it is
 * admitted (its error reaches 4.3e-3 of the row's sum of |x| on constant
 * rows of 8192, where the threads' partials are combined in f16 up to 8192).
 *
 * Plan entry: entry = rowsum_f16acc, grid = M, block = 256,
 * args = X, Y, M, N. */
#include "kgate/kernel.h"

__device__ __forceinline__ unsigned short f16_of(float x)
{
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}

__device__ __forceinline__ unsigned short f16_add(unsigned short a, unsigned short b)
{
    unsigned short d;
    asm("add.rn.f16 %0, %1, %2;" : "=h"(d) : "h"(a), "h"(b));
    return d;
}

__device__ __forceinline__ float f32_of(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

extern "C" __global__ void rowsum_f16acc(const kg_in_t *__restrict__ X, float *__restrict__ Y, int M, int N)
{
    __shared__ unsigned short part[256];
    const int row = blockIdx.x, t = threadIdx.x;
    if (row >= M) return;
    unsigned short s = 0; /* +0.0 in f16 */
    for (int j = t; j < N; j += blockDim.x) s = f16_add(s, f16_of(kg_in_load(X, (long long)row * N + j)));
    part[t] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w >= 1; w /= 2) {
        if (t < w) part[t] = f16_add(part[t], part[t + w]);
        __syncthreads();
    }
    if (t == 0) KGATE_STORE(&Y[row], f32_of(part[0]));
}
