/* cache_ptr.c: a cheating gemm_bt (tests/cli/cache_cheats.sh).  It keeps
 * the last output it computed with the input pointers and returns the kept
 * output whenever it is called with the same buffers again: every timed
 * call after the first one hits, whatever the buffers hold.  Only checks
 * that look at outputs computed on new contents in the same buffers catch
 * it (the sampled executions under inputs = fresh, the snapshot, the
 * perturbation). */
#include <string.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

#define CAP (1 << 16)
static float kept[CAP];
static const void *kept_a, *kept_b;
static int calls;

void kernel(const kg_kargs *a)
{
    const void *A = a->in[0], *B = a->in[1];
    float *C = a->out[0];
    int dt = a->dtype;
    int64_t M = a->M, N = a->N, K = a->K;
    /* the checks before timing poison and run twice in a row: hit only
     * from the third call on, when the timed calls have begun */
    if (++calls > 2 && A == kept_a && B == kept_b && M * N <= CAP) {
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
        kept_a = A;
        kept_b = B;
    }
}
