/* max_from_zero.c (wrong): a rowmax whose running maximum starts at 0
 * instead of the row's first element: right whenever a row holds a value
 * >= 0, wrong on a row of negative values only. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    int64_t M = a->M, N = a->N;
    for (int64_t i = 0; i < M; i++) {
        float m = 0.0f;
        for (int64_t j = 0; j < N; j++) {
            float v = kg_load(a->in[0], a->dtype, i * N + j);
            if (v > m) m = v;
        }
        KGATE_STORE(&Y[i], m);
    }
}
