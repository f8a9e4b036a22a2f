import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

rmsnorm_source = r"""
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

// One block of 256 threads per row: x * rsqrt(mean(x^2) + eps) * w.
__global__ void rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                               int rows, int cols) {
    __shared__ float red[256];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    float q = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) q += xr[j] * xr[j];
    const float r = rsqrtf(block_sum(q, red) / cols + 1e-5f);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = xr[j] * r * w[j];
}

torch::Tensor rmsnorm_cuda(torch::Tensor x, torch::Tensor weight) {
    auto y = torch::empty_like(x);
    const int rows = x.size(0);
    const int cols = x.size(1);
    rmsnorm_kernel<<<rows, 256>>>(x.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""

rmsnorm_ext_cpp_source = "torch::Tensor rmsnorm_cuda(torch::Tensor x, torch::Tensor weight);"

rmsnorm_ext = load_inline(
    name="rmsnorm_ext",
    cpp_sources=rmsnorm_ext_cpp_source,
    cuda_sources=rmsnorm_source,
    functions=["rmsnorm_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_features))
        self.ext = rmsnorm_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.rmsnorm_cuda(x, self.weight)
