/* gemm_fp8.cu: the gemm_fp8 op of examples/ops/gemm_fp8.c on the GPU.
 * A, B OCP FP8 e4m3 [M, K] and [N, K] (K-major); sa, sb float32 scalars;
 * D bfloat16 [M, N] = sa sb A B^T; amax float32 [M] = max_n |D| before
 * its rounding.  One block of 256 threads per row of D, float32
 * accumulation on the CUDA cores (exact e4m3 products), the row's
 * maximum reduced in shared memory.
 *   gemm_fp8_row   decodes A and B element by element
 *   gemm_fp8_smem  decodes the row of A once into shared memory; with
 *                  specialize = yes in the plan, K is the compile-time
 *                  constant KG_VAR_K (a static array, an unrolled loop),
 *                  else the dynamic shared memory the plan gives
 *
 * kgate: ops = gemm_fp8
 * kgate: grid = M; block = 256
 * kgate: args = A, B, sa, sb, D, amax, M, N, K
 * kgate: [gemm_fp8_smem] shared = 4 * K
 */
#include "kgate/kernel.h"

__device__ __forceinline__ void store_row_max(float mx, float *amax, int m)
{
    __shared__ float red[256];
    red[threadIdx.x] = mx;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) KGATE_STORE(&amax[m], red[0]);
}

extern "C" __global__ void gemm_fp8_row(const unsigned char *__restrict__ A, const unsigned char *__restrict__ B,
                                        const float *__restrict__ sa, const float *__restrict__ sb,
                                        unsigned short *__restrict__ D, float *__restrict__ amax, int M, int N, int K)
{
    const int m = blockIdx.x;
    if (m >= M) return;
    const float s = sa[0] * sb[0];
    const unsigned char *a = A + (long long)m * K;
    float mx = 0.0f;
    for (int n = threadIdx.x; n < N; n += blockDim.x) {
        const unsigned char *b = B + (long long)n * K;
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += kg_e4m3_to_f32(a[k]) * kg_e4m3_to_f32(b[k]);
        const float d = s * acc;
        KGATE_STORE(&D[(long long)m * N + n], kg_f32_to_bf16_bits(d));
        mx = fmaxf(mx, fabsf(d));
    }
    store_row_max(mx, amax, m);
}

extern "C" __global__ void gemm_fp8_smem(const unsigned char *__restrict__ A, const unsigned char *__restrict__ B,
                                         const float *__restrict__ sa, const float *__restrict__ sb,
                                         unsigned short *__restrict__ D, float *__restrict__ amax, int M, int N, int K)
{
#ifdef KG_VAR_K
    __shared__ float arow[KG_VAR_K];
    const int KK = KG_VAR_K;
#else
    extern __shared__ float arow[];
    const int KK = K;
#endif
    const int m = blockIdx.x;
    if (m >= M) return;
    const float s = sa[0] * sb[0];
    for (int k = threadIdx.x; k < KK; k += blockDim.x) arow[k] = kg_e4m3_to_f32(A[(long long)m * KK + k]);
    __syncthreads();
    float mx = 0.0f;
    for (int n = threadIdx.x; n < N; n += blockDim.x) {
        const unsigned char *b = B + (long long)n * KK;
        float acc = 0.0f;
#pragma unroll 8
        for (int k = 0; k < KK; k++) acc += arow[k] * kg_e4m3_to_f32(b[k]);
        const float d = s * acc;
        KGATE_STORE(&D[(long long)m * N + n], kg_f32_to_bf16_bits(d));
        mx = fmaxf(mx, fabsf(d));
    }
    store_row_max(mx, amax, m);
}
