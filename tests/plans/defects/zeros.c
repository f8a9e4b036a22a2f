/* zeros.c: planted defect: returns zeros without computing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    float *C = a->out[0];
    for (int64_t e = 0; e < a->M * a->N; e++) C[e] = 0.0f;
}
