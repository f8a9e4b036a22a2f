"""Refused by kgate import (tests/cli/kernelbench.sh): a parameter the Model does not have."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// One thread per element: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}

torch::Tensor gelu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    gelu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
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
        return self.gelu.gelu_cuda(self.scale)
