/* specialize_probe.cu: compiles only with the variables of the case
 * test_cuda_cpu.c gives it (specialize = yes): K = 96, M = 4, N = 8,
 * eps 1e-5 and a real alpha = 2.0. */
#include "kgate/kernel.h"
#ifndef KG_VAR_K
#error "KG_VAR_K is not defined"
#endif
#if KG_VAR_K != 96 || KG_VAR_M != 4 || KG_VAR_N != 8
#error "the case's shape is not the defines'"
#endif
static_assert(KG_VAR_alpha == 2.0, "alpha is a double literal");
static_assert(KG_VAR_eps > 0.0 && KG_VAR_eps < 1e-4, "eps");
#ifdef KG_VAR_splits
#error "splits is not set in the case"
#endif
extern "C" __global__ void k(float *y)
{
    __shared__ float buf[KG_VAR_K];
    buf[threadIdx.x] = 1.0f;
    __syncthreads();
    y[threadIdx.x] = buf[(threadIdx.x + 1) % KG_VAR_K];
}
