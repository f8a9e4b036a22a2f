/* noop.cu: the empty CUDA kernel, for the noop op: one launch of it in a
 * CUDA graph is the timing floor (docs/cuda-backend.md).
 *
 * Kernel contract (docs/plan-format.md, "Kernel contracts"): an arm with
 * this source takes each of these keys that it does not set itself.
 * kgate: ops = noop
 * kgate: entry = noop
 * kgate: grid = 1; block = 1; args = none
 */
#include "kgate/kernel.h"

extern "C" __global__ void noop() {}
