# calls_torch.py: torch calls of tests/cli/pycall.sh (builtin = torch, cpu backend).
import torch


def conv1d(X, F):
    # X bf16 [B, L], F f32 [W] -> Y bf16 [B, L - W + 1], accumulated in float32
    y = torch.nn.functional.conv1d(X.float().unsqueeze(1), F.view(1, 1, -1))
    return y.squeeze(1).to(torch.bfloat16)


def rowsum_out(X, *, out):
    torch.sum(X, dim=1, dtype=torch.float32, out=out)


def rowsum_f64(X):
    return X.sum(dim=1, dtype=torch.float64)
