/* subsample.c: planted defect: rowsum over every 4th element, scaled by 4 (a statistical shortcut). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) {
        float s = 0.0f;
        for (int64_t j = 0; j < a->N; j += 4) s += kg_load(a->in[0], a->dtype, i * a->N + j);
        KGATE_STORE(&Y[i], 4.0f * s);
    }
}
