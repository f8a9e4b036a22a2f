"""Imported by tests/cli/kernelbench.sh: two launches with no host logic between them (a chain),
the second with dynamic shared memory."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// Two passes: the inner term u = x + 0.044715 x^3 into y, then y = 0.5 x (1 + tanh(sqrt(2/pi) u)).
__global__ void gelu_inner(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v + 0.044715f * v * v * v;
    }
}

__global__ void gelu_outer(const float* __restrict__ x, float* __restrict__ y, int n) {
    extern __shared__ float stage[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x] = i < n ? y[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978845608028654f * stage[threadIdx.x]));
}

torch::Tensor gelu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    gelu_inner<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    gelu_outer<<<blocks, threads, threads * sizeof(float)>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

gelu_cpp_source = "torch::Tensor gelu_cuda(torch::Tensor x);"

gelu = load_inline(
    name="gelu",
    cpp_sources=gelu_cpp_source,
    cuda_sources=gelu_source,
    functions=["gelu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.gelu = gelu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gelu.gelu_cuda(x)
