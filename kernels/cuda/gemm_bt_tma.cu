/* gemm_bt_tma.cu: C = A * B^T in float32, its tiles fed by the TMA.
 *
 * The smallest complete use of tensor map arguments (docs/plan-format.md,
 * "Tensor maps"): kgate encodes a CUtensorMap of A (M x K) and of B (N x K)
 * for each input set, with 16 x 16 boxes, and passes each as a
 * __grid_constant__ parameter.  A block of 16 x 16 threads computes a
 * 16 x 16 tile of C: per step of 16 along K, one thread arms the block's
 * mbarrier with the bytes to expect and issues two bulk tensor copies
 * (cp.async.bulk.tensor.2d) into shared memory; every thread waits on the
 * barrier's phase, accumulates, and the block syncs before the next copy
 * reuses the tiles, which the issuing thread first fences for the async
 * proxy (the TMA's writes are not ordered after the threads' generic reads
 * by the barrier alone).  Elements past M, N or K arrive as zeros (the map's
 * out-of-range fill), so every shape works whose row pitch, K x 4 bytes,
 * is a multiple of 16: the contract requires K % 4 == 0 (without it kgate
 * makes such a case inadmissible for the arm when it encodes the map).
 *
 * Needs sm_90 (Hopper) or later.  f32 only: A, B and C are float.
 *
 * kgate: ops = gemm_bt
 * kgate: entry = gemm_bt_tma
 * kgate: grid = ceildiv(N, 16), ceildiv(M, 16)
 * kgate: block = 16, 16
 * kgate: args = A:tmap:16x16, B:tmap:16x16, C, M, N, K
 * kgate: requires = K % 4 == 0
 */
#include "kgate/kernel.h"

/* a CUtensorMap: 128 opaque bytes, 64-byte aligned */
struct __align__(64) kg_tmap {
    unsigned long long w[16];
};

static __device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

extern "C" __global__ void gemm_bt_tma(const __grid_constant__ kg_tmap mapA, const __grid_constant__ kg_tmap mapB,
                                       float *__restrict__ C, int M, int N, int K)
{
    __shared__ __align__(128) float As[16][16];
    __shared__ __align__(128) float Bs[16][16];
    __shared__ __align__(8) unsigned long long bar;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
    const unsigned b = smem_addr(&bar);
    const bool leader = tx == 0 && ty == 0;
    if (leader) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    float acc = 0.0f;
    unsigned phase = 0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        if (leader) {
            /* the block's reads of the tiles (generic proxy, ordered by the
             * barrier at the end of the last step) before the TMA (async
             * proxy) overwrites them: without this fence a copy can land
             * under a read (3 of 3 kgate check runs on the H200 found wrong
             * elements; with it 0 of 3, tools/device/tma_probe.sh) */
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(2u * 16u * 16u * 4u)
                         : "memory");
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(&As[0][0])),
                         "l"((unsigned long long)&mapA), "r"(k0), "r"(row0), "r"(b)
                         : "memory");
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(&Bs[0][0])),
                         "l"((unsigned long long)&mapB), "r"(k0), "r"(col0), "r"(b)
                         : "memory");
        }
        unsigned done = 0;
        while (!done)
            asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                         " selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(b), "r"(phase) : "memory");
        phase ^= 1u;
#pragma unroll
        for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[tx][k];
        __syncthreads();
    }
    const int i = row0 + ty, j = col0 + tx;
    if (i < M && j < N) KGATE_STORE(&C[(long long)i * N + j], acc);   /* zero in the numerical negative */
}
