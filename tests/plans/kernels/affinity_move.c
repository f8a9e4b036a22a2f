/* rowsum whose first call moves its host to another CPU than the one it
 * was given (sched_setaffinity), as a candidate would that wants a CPU of
 * its own, away from the worker and the baseline's host. */
#define _GNU_SOURCE
#include <sched.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    static int moved;
    if (!moved) {
        moved = 1;
        cpu_set_t s;
        CPU_ZERO(&s);
        for (int c = 0; c < 64; c++) CPU_SET(c, &s);
        sched_setaffinity(0, sizeof s, &s);
    }
    const void *X = a->in[0];
    float *Y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < a->N; j++) acc += kg_load(X, a->dtype, i * a->N + j);
        KGATE_STORE(&Y[i], acc);
    }
}
