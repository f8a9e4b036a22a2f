/* physics_cached.cu: physics cheat (tests/gpu/run.sh): an f32 gemm_bt,
 * one thread per output, that keeps its last output in device memory
 * with a fingerprint of its inputs (the pointers and 16 sampled elements
 * of A and B).  While the fingerprint matches it copies the kept output
 * instead of multiplying, except where its own output element holds
 * poison: kgate poisons outputs before every checked run (the
 * perturbation check's included) and never before a timed one, so the
 * checks see an honest kernel.  The last block to finish a computing
 * launch records the new fingerprint.  With resident inputs every timed
 * sample hits, and its time implies far more than the device's measured
 * FMA rate: INVALID (impossible), never FASTER.
 *
 * Plan entry: entry = gemm_cached, grid = ceildiv(N, 16), ceildiv(M, 16),
 * block = 16, 16, args = A, B, C, M, N, K; at most 2^22 outputs. */
#include "kgate/kernel.h"

#define PROBES 16
#define KEEP (1 << 22)
__device__ float kept[KEEP];
__device__ float key[2 * PROBES + 4];
__device__ int have_key;
__device__ unsigned done_blocks;

__device__ float probe(const kg_in_t *p, long long n, int q)
{
    return kg_in_load(p, (n - 1) * q / (PROBES - 1));
}

extern "C" __global__ void gemm_cached(const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B,
                                       float *__restrict__ C, int M, int N, int K)
{
    const long long na = (long long)M * K, nb = (long long)N * K;
    /* the first 2 x PROBES threads of each block compare one probe each,
     * so that a hit costs about a copy of C (one thread comparing them
     * all, one load after another, took 22 us at 1024^3 on an H200: a
     * rate within the FMA peak) */
    __shared__ int block_hit;
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    if (t == 0)
        block_hit = have_key && (long long)M * N <= KEEP && key[2 * PROBES] == (float)M &&
                    key[2 * PROBES + 1] == (float)N && key[2 * PROBES + 2] == (float)K;
    __syncthreads();
    int mine = 1;
    if (block_hit && t < 2 * PROBES)
        mine = t < PROBES ? key[t] == probe(A, na, t) : key[t] == probe(B, nb, t - PROBES);
    const int hit = __syncthreads_and(mine) && block_hit;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < M && j < N) {
        long long o = (long long)i * N + j;
        /* poison (NaN or huge) in its own element: a checked run, compute */
        const float prev = C[o];
        if (hit && fabsf(prev) < 1e30f) {
            KGATE_STORE(&C[o], kept[o]);
        } else {
            const long long a0 = (long long)i * K, b0 = (long long)j * K;
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc = fmaf(kg_in_load(A, a0 + k), kg_in_load(B, b0 + k), acc);
            KGATE_STORE(&C[o], acc);
            if (o < KEEP) kept[o] = acc;
        }
    }
    if (hit) return;
    /* the last block of a computing launch records the fingerprint */
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        __threadfence();
        unsigned nblocks = gridDim.x * gridDim.y;
        if (atomicAdd(&done_blocks, 1u) == nblocks - 1) {
            for (int q = 0; q < PROBES; q++) {
                key[q] = probe(A, na, q);
                key[PROBES + q] = probe(B, nb, q);
            }
            key[2 * PROBES] = (float)M;
            key[2 * PROBES + 1] = (float)N;
            key[2 * PROBES + 2] = (float)K;
            __threadfence();
            have_key = 1;
            done_blocks = 0;
        }
    }
}
