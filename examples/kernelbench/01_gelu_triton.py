"""An honest Triton candidate for 01_gelu.py: GELU (tanh approximation) as x * sigmoid(2u), with
u = sqrt(2/pi) (x + 0.044715 x^3), since 0.5 (1 + tanh(u)) = sigmoid(2u)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tl.store(y_ptr + offs, x * tl.sigmoid(2.0 * u), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
        gelu_kernel[grid](x, y, n, BLOCK_SIZE=BLOCK, num_warps=4)
        return y
