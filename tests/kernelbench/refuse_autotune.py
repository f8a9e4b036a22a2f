"""Refused by kgate import (tests/cli/kernelbench.sh): a Triton kernel under an autotuner."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n)
    tl.store(y_ptr + i, 0.5 * x * (1 + tl.math.tanh(0.7978845608 * (x + 0.044715 * x * x * x))), mask=i < n)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        gelu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel())
        return y
