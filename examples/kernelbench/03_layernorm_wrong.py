"""Wrong on purpose (a kgate example): the variance is divided by cols - 1 (the unbiased estimate) where LayerNorm divides by cols."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layernorm_source = r"""
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

// One block of 256 threads per row: the mean, the variance about it, then (x - mean) * rstd * w + b.
__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ b, float* __restrict__ y, int rows, int cols) {
    __shared__ float red[256];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j];
    const float mean = block_sum(s, red) / cols;
    float q = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        const float d = xr[j] - mean;
        q += d * d;
    }
    const float var = block_sum(q, red) / (cols - 1);
    const float rstd = rsqrtf(var + 1e-5f);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
}

torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    auto y = torch::empty_like(x);
    const int rows = x.size(0);
    const int cols = x.size(1);
    layernorm_kernel<<<rows, 256>>>(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                                    y.data_ptr<float>(), rows, cols);
    return y;
}
"""

layernorm_ext_cpp_source = "torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

layernorm_ext = load_inline(
    name="layernorm_ext",
    cpp_sources=layernorm_ext_cpp_source,
    cuda_sources=layernorm_source,
    functions=["layernorm_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        self.ext = layernorm_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.layernorm_cuda(x, self.ln.weight, self.ln.bias)
