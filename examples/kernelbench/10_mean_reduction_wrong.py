"""Wrong on purpose (a kgate example): the sum is divided by a hard-coded 4096, the problem's dim1, so it is right only at that width."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mean_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// The sum of v over the block (blockDim.x a power of two, at most 256).
__device__ float block_sum(float v, float* red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

// One block of 256 threads per row: float32 partial sums, a tree in shared memory, one division.
__global__ void mean_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    __shared__ float red[256];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (long long)row * cols;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j];
    const float total = block_sum(s, red);
    if (threadIdx.x == 0) y[row] = total / 4096.0f;
}

torch::Tensor mean_cuda(torch::Tensor x) {
    auto y = torch::empty({x.size(0)}, x.options());
    const int rows = x.size(0);
    const int cols = x.size(1);
    mean_kernel<<<rows, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""

mean_ext_cpp_source = "torch::Tensor mean_cuda(torch::Tensor x);"

mean_ext = load_inline(
    name="mean_ext",
    cpp_sources=mean_ext_cpp_source,
    cuda_sources=mean_source,
    functions=["mean_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ext = mean_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.mean_cuda(x)
