/* cuda_blas.h: the builtin = cublas arm of the cuda backend (cuda_blas.c,
 * cuBLASLt), which cuda.c uses.  Private to src/backend/. */
#ifndef KGATE_CUDA_BLAS_H
#define KGATE_CUDA_BLAS_H

#include "backend/cuda_shared.h"

/* Opens cuBLASLt, creates its handle and allocates the shared workspace,
 * once per backend (the first builtin arm): never inside timing. */
int kg_cuda_blas_ready(cuda_ctx *c, kg_err *err);
/* Describes the case's matmul in k->blas and picks its algorithm. */
int kg_cuda_blas_load(cuda_ctx *c, const kg_arm *arm, const kg_case *cs, kg_kernel *k, kg_err *err);
void kg_cuda_blas_unload(cuda_ctx *c, kg_kernel *k);
/* One matmul on the kgate stream, with the bound operands. */
int kg_cuda_blas_launch(cuda_ctx *c, kg_kernel *k, kg_err *err);

#endif
