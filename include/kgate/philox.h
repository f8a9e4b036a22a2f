/* kgate/philox.h: the counter-based generator behind every kgate input.
 *
 * Philox4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11).  Header-only and free of libc so that the
 * same file compiles as C11 on the host and as CUDA C on the device and
 * yields the same bits for the same (key, counter). */
#ifndef KGATE_PHILOX_H
#define KGATE_PHILOX_H

#include <stdint.h>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KG_PHILOX_FN static __host__ __device__ inline
#else
#define KG_PHILOX_FN static inline
#endif

#define KG_PHILOX_M0 0xD2511F53u
#define KG_PHILOX_M1 0xCD9E8D57u
#define KG_PHILOX_W0 0x9E3779B9u
#define KG_PHILOX_W1 0xBB67AE85u

KG_PHILOX_FN void kg_philox_round(uint32_t c[4], const uint32_t k[2])
{
    uint64_t p0 = (uint64_t)KG_PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)KG_PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c[1] ^ k[0];
    uint32_t n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
}

/* out = Philox4x32-10(counter, key). */
KG_PHILOX_FN void kg_philox4x32(const uint32_t ctr[4], const uint32_t key[2],
                                uint32_t out[4])
{
    uint32_t c[4] = { ctr[0], ctr[1], ctr[2], ctr[3] };
    uint32_t k[2] = { key[0], key[1] };
    for (int i = 0; i < 10; i++) {
        kg_philox_round(c, k);
        k[0] += KG_PHILOX_W0;
        k[1] += KG_PHILOX_W1;
    }
    out[0] = c[0]; out[1] = c[1]; out[2] = c[2]; out[3] = c[3];
}

/* One uniform value in [-1, 1) for element index i of stream (seed,
 * stream): 24 random bits, so the value is exact in float32. */
KG_PHILOX_FN float kg_philox_uniform(uint64_t seed, uint32_t stream, uint64_t i)
{
    uint32_t ctr[4] = { (uint32_t)(i >> 2), (uint32_t)(i >> 34), stream, 0x6b676174u };
    uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
    uint32_t r[4];
    kg_philox4x32(ctr, key, r);
    uint32_t bits = r[i & 3u] >> 8;                 /* 24 bits */
    return (float)((int32_t)bits - (1 << 23)) * (1.0f / (float)(1 << 23));
}

#endif
