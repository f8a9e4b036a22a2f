"""A Triton layernorm against torch's, through kgate.compare (tools/device/py31_run.sh runs it on
the H200; the Triton softmax is docs/python.md's tutorial, run as written)."""
import torch, triton, triton.language as tl, kgate

def layernorm(x, w, b):                          # the reference, and the baseline
    return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5)

@triton.jit
def layernorm_kernel(X, W, B, Y, M, N, BLOCK: tl.constexpr):   # one program per row of X (M rows of N)
    row, cols = tl.program_id(0).to(tl.int64), tl.arange(0, BLOCK)
    x = tl.load(X + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
    d = tl.where(cols < N, x - tl.sum(x, axis=0) / N, 0.0)
    y = d * tl.rsqrt(tl.sum(d * d, axis=0) / N + 1e-5)
    y = y * tl.load(W + cols, mask=cols < N).to(tl.float32) + tl.load(B + cols, mask=cols < N).to(tl.float32)
    tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty), mask=cols < N)

if __name__ == "__main__":
    print(kgate.compare(layernorm, {"triton": kgate.Triton(layernorm_kernel, grid="M", BLOCK=1024)},
                        inputs={"x": ("M", "N", "f16"), "w": ("N", "f16"), "b": ("N", "f16")},
                        sizes={"M": 4096, "N": 1000}, processes=3, out="layernorm-run"))
