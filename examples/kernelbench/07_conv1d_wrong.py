"""Wrong on purpose (a kgate example): an off-by-one in the output bound (t < L - K), so the last output position of every row is never written."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv1d_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// One thread per output y[b, o, t] = bias[o] + sum_c sum_k W[o, c, k] x[b, c, t + k] (stride 1, no padding).
__global__ void conv1d_kernel(const float* __restrict__ x, const float* __restrict__ W,
                              const float* __restrict__ bias, float* __restrict__ y,
                              int B, int Cin, int Cout, int L, int K) {
    const int lout = L - K + 1;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int o = blockIdx.y, b = blockIdx.z;
    if (t >= L - K || o >= Cout || b >= B) return;
    float acc = bias[o];
    for (int c = 0; c < Cin; c++) {
        const float* xr = x + ((long long)b * Cin + c) * L + t;
        const float* wr = W + ((long long)o * Cin + c) * K;
        for (int k = 0; k < K; k++) acc += wr[k] * xr[k];
    }
    y[((long long)b * Cout + o) * lout + t] = acc;
}

torch::Tensor conv1d_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    const int B = x.size(0);
    const int Cin = x.size(1);
    const int L = x.size(2);
    const int Cout = weight.size(0);
    const int K = weight.size(2);
    const int lout = L - K + 1;
    auto y = torch::empty({B, Cout, lout}, x.options());
    dim3 grid((lout + 255) / 256, Cout, B);
    conv1d_kernel<<<grid, 256>>>(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                                 y.data_ptr<float>(), B, Cin, Cout, L, K);
    return y;
}
"""

conv1d_ext_cpp_source = "torch::Tensor conv1d_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

conv1d_ext = load_inline(
    name="conv1d_ext",
    cpp_sources=conv1d_ext_cpp_source,
    cuda_sources=conv1d_source,
    functions=["conv1d_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)
        self.ext = conv1d_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.conv1d_cuda(x, self.conv.weight, self.conv.bias)
