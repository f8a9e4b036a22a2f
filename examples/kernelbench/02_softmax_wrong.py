"""Wrong on purpose (a kgate example): the row's sum is taken from the first warp's 32 partial sums only, so every output is too large."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = r"""
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

// One block of 256 threads per row: the row's maximum, the sum of exp(x - max), then the outputs.
__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    __shared__ float red[256];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    float m = -3.402823466e38f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = block_max(m, red);
    float sum = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(xr[j] - m);
    // a warp-level reduction; the block's sum is taken from the first warp
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffff, sum, off);
    if (threadIdx.x == 0) red[0] = sum;
    __syncthreads();
    const float inv = 1.0f / red[0];
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = expf(xr[j] - m) * inv;
}

torch::Tensor softmax_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int rows = x.size(0);
    const int cols = x.size(1);
    softmax_kernel<<<rows, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""

softmax_ext_cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x);"

softmax_ext = load_inline(
    name="softmax_ext",
    cpp_sources=softmax_ext_cpp_source,
    cuda_sources=softmax_source,
    functions=["softmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = softmax_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.softmax_cuda(x)
