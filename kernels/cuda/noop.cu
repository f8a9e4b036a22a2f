/* noop.cu: the empty CUDA kernel, for the noop op: one launch of it in a
 * CUDA graph is the timing floor (docs/cuda-backend.md).
 *   source = kernels/cuda/noop.cu   entry = noop
 *   grid = 1   block = 1   args = none */
#include "kgate/kernel.h"

extern "C" __global__ void noop() {}
