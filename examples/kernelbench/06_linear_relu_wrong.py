"""Wrong on purpose (a kgate example): the bias is added after the ReLU, relu(xW^T) + b, not relu(xW^T + b)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

linear_relu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// One thread per output: relu(sum_k x[b, k] W[o, k] + bias[o]), float32 accumulation.
__global__ void linear_relu_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                   const float* __restrict__ bias, float* __restrict__ y,
                                   int batch, int in_f, int out_f) {
    const int o = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (b >= batch || o >= out_f) return;
    const float* xr = x + (long long)b * in_f;
    const float* wr = W + (long long)o * in_f;
    float acc = 0.0f;
    for (int k = 0; k < in_f; k++) acc += xr[k] * wr[k];
    y[(long long)b * out_f + o] = fmaxf(acc, 0.0f) + bias[o];
}

torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    const int batch = x.size(0);
    const int in_f = x.size(1);
    const int out_f = weight.size(0);
    auto y = torch::empty({batch, out_f}, x.options());
    dim3 block(16, 16);
    dim3 grid((out_f + 15) / 16, (batch + 15) / 16);
    linear_relu_kernel<<<grid, block>>>(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                                        y.data_ptr<float>(), batch, in_f, out_f);
    return y;
}
"""

linear_relu_ext_cpp_source = "torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

linear_relu_ext = load_inline(
    name="linear_relu_ext",
    cpp_sources=linear_relu_ext_cpp_source,
    cuda_sources=linear_relu_source,
    functions=["linear_relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ext = linear_relu_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.linear_relu_cuda(x, self.linear.weight, self.linear.bias)
