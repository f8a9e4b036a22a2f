/* cache_hash.c: a cheating gemm_bt (tests/cli/cache_cheats.sh).  It keeps
 * the last output it computed with a hash of every input byte (FNV-1a,
 * O(MK + NK) against the product's O(MNK)) and returns the kept output
 * when the hash matches: exact for any inputs it has seen, so every check
 * passes, and with resident inputs every timed call after the first hits. */
#include <stdint.h>
#include <string.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

#define CAP (1 << 16)
static float kept[CAP];
static uint64_t kept_hash;
static int have;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

void kernel(const kg_kargs *a)
{
    const void *A = a->in[0], *B = a->in[1];
    float *C = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K;
    size_t es = dt == KG_KDT_F32 ? 4 : 2;
    uint64_t h = fnv(fnv(0xcbf29ce484222325ull, A, (size_t)(M * K) * es), B, (size_t)(N * K) * es);
    if (have && M * N <= CAP && h == kept_hash) {
        memcpy(C, kept, (size_t)(M * N) * sizeof(float));
        return;
    }
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++) acc += kg_load(A, dt, i * K + k) * kg_load(B, dt, j * K + k);
            KGATE_STORE(&C[i * N + j], acc);
        }
    if (M * N <= CAP) {
        memcpy(kept, C, (size_t)(M * N) * sizeof(float));
        kept_hash = h;
        have = 1;
    }
}
