"""Wrong on purpose (a kgate example): the running maximum starts at 0, so a row of negative values gets 0."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

max_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// The maximum of v over the block (blockDim.x a power of two, at most 256).
__device__ float block_max(float v, float* red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

// One block of 256 threads per row: per-thread maxima, then a tree in shared memory.
__global__ void max_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    __shared__ float red[256];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (long long)row * cols;
    float m = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    const float best = block_max(m, red);
    if (threadIdx.x == 0) y[row] = best;
}

torch::Tensor max_cuda(torch::Tensor x) {
    auto y = torch::empty({x.size(0)}, x.options());
    const int rows = x.size(0);
    const int cols = x.size(1);
    max_kernel<<<rows, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""

max_ext_cpp_source = "torch::Tensor max_cuda(torch::Tensor x);"

max_ext = load_inline(
    name="max_ext",
    cpp_sources=max_ext_cpp_source,
    cuda_sources=max_source,
    functions=["max_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ext = max_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.max_cuda(x)
