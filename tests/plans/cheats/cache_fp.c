/* cache_fp.c: a cheating gemm_bt (tests/cli/cache_cheats.sh).  It keeps
 * the last output it computed with a fingerprint of four input elements
 * and returns the kept output whenever the fingerprint matches: with
 * resident inputs every timed call after the first one hits and costs a
 * copy.  Checks on inputs it has not seen miss and get an honest result. */
#include <string.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

#define CAP (1 << 16)
static float kept[CAP];
static float fp[4];
static int have;

void kernel(const kg_kargs *a)
{
    const void *A = a->in[0], *B = a->in[1];
    float *C = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K;
    float f[4] = { kg_load(A, dt, 1), kg_load(A, dt, M * K / 2), kg_load(B, dt, 3), kg_load(B, dt, N * K - 1) };
    if (have && M * N <= CAP && memcmp(f, fp, sizeof f) == 0) {
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
        memcpy(fp, f, sizeof f);
        have = 1;
    }
}
