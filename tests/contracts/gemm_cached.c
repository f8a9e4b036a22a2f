/* gemm_cached.c: physics cheat: an f32 gemm_bt that remembers its last
 * output together with a fingerprint of its inputs (the pointers and 16
 * sampled elements of A and B) and, when the fingerprint matches, copies
 * the remembered output instead of multiplying, unless its output buffer
 * holds poison: kgate poisons outputs before every checked run (the
 * perturbation check's included) and never before a timed one, so the
 * checks see an honest kernel; with `inputs = resident` every timed
 * sample runs on the same inputs and hits.  Its
 * timed median then implies far more flops per second than the host
 * can execute: kgate must report it INVALID (impossible), never FASTER. */
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);

#define PROBES 16
static float *saved;
static size_t saved_n;
static float key[2 * PROBES];
static const void *key_a, *key_b;

static void fingerprint(const kg_kargs *a, float *k)
{
    int64_t na = a->M * a->K, nb = a->N * a->K;
    for (int p = 0; p < PROBES; p++) {
        k[p] = kg_load(a->in[0], a->dtype, (na - 1) * p / (PROBES - 1));
        k[PROBES + p] = kg_load(a->in[1], a->dtype, (nb - 1) * p / (PROBES - 1));
    }
}

void kernel(const kg_kargs *a)
{
    float *C = a->out[0];
    int64_t M = a->M, N = a->N, K = a->K;
    size_t n = (size_t)(M * N);
    float k[2 * PROBES];
    fingerprint(a, k);
    /* poison is NaN or huge: a checked run is coming, compute */
    int poisoned = !(fabsf(C[0]) < 1e30f) || !(fabsf(C[n - 1]) < 1e30f);
    if (!poisoned && saved != NULL && saved_n == n && key_a == a->in[0] && key_b == a->in[1] &&
        memcmp(k, key, sizeof k) == 0) {
        memcpy(C, saved, n * sizeof *C);
        return;
    }
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t q = 0; q < K; q++)
                acc += kg_load(a->in[0], a->dtype, i * K + q) * kg_load(a->in[1], a->dtype, j * K + q);
            KGATE_STORE(&C[i * N + j], acc);
        }
    if (saved_n != n) {
        free(saved);
        saved = malloc(n * sizeof *saved);
        saved_n = saved != NULL ? n : 0;
    }
    if (saved != NULL) {
        memcpy(saved, C, n * sizeof *C);
        memcpy(key, k, sizeof k);
        key_a = a->in[0];
        key_b = a->in[1];
    }
}
