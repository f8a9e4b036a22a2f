/* all_nan.c: planted defect: writes NaN everywhere (passes a NaN-blind comparison). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    float *C = a->out[0];
    for (int64_t e = 0; e < a->M * a->N; e++) C[e] = NAN;
}
