/* zero_ends_rowsum.c (cheat): a rowsum that takes a row whose first and
 * last elements are zero for an all-zero row (padding) and writes 0
 * without reading it.  Right on every row of an i.i.d. generator whose
 * only zero-ended row is all zero; wrong on a row with zero ends and a
 * nonzero interior. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    const void *X = a->in[0];
    float *Y = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N;
    for (int64_t i = 0; i < M; i++) {
        float acc = 0.0f;
        if (!(kg_load(X, dt, i * N) == 0.0f && kg_load(X, dt, i * N + N - 1) == 0.0f))
            for (int64_t j = 0; j < N; j++) acc += kg_load(X, dt, i * N + j);
        KGATE_STORE(&Y[i], acc);
    }
}
