"""tools/device/tf32_probe.py: how the GPU's TF32 matrix products round their f32 inputs.

docs/measurements/cpu-2026-12-05-tf32-truncation/ found that kgate's tf32 contract admits TF32 by
rounding to nearest (cvt.rna) and rejects TF32 by truncation on rows of one sign. This probe
compares torch's f32 matmul with TF32 allowed (cuBLAS) against two float64 models of the same
product, inputs rounded to nearest or truncated to TF32, on rows of one sign (where the two models
differ by a bias that grows with K) and on mixed signs. Prints, per shape and sign, the mean
signed difference and the mean absolute difference of the GPU result to each model: the model
whose differences are near the f32 accumulation's noise is what the hardware does.

Usage (a GPU with torch): python3 tools/device/tf32_probe.py
"""
import sys

import numpy as np
import torch


def tf32(x, mode):
    """x (float32 array) with its 13 low mantissa bits rounded to nearest (ties away) or dropped."""
    u = x.view(np.uint32).copy()
    finite = (u & 0x7F800000) != 0x7F800000
    if mode == "rna":
        u[finite] += np.uint32(0x1000)
    u[finite] &= np.uint32(0xFFFFE000)
    return u.view(np.float32)


def main():
    if not torch.cuda.is_available():
        print("tf32_probe: no CUDA device")
        return 2
    dev = torch.device("cuda")
    print("device", torch.cuda.get_device_name(0), "torch", torch.__version__)
    rng = np.random.default_rng(20261205)
    for (m, n, k) in [(48, 48, 1024), (96, 128, 2048), (32, 64, 4096)]:
        for sign in ("negative", "mixed"):
            a = rng.uniform(0.5, 2.0, size=(m, k)).astype(np.float32)
            b = rng.uniform(0.5, 2.0, size=(n, k)).astype(np.float32)
            if sign == "negative":
                a, b = -a, -b
            else:
                a *= rng.choice([-1.0, 1.0], size=a.shape).astype(np.float32)
                b *= rng.choice([-1.0, 1.0], size=b.shape).astype(np.float32)
            row = []
            for allow in (True, False):
                torch.backends.cuda.matmul.allow_tf32 = allow
                c = (torch.from_numpy(a).to(dev) @ torch.from_numpy(b).to(dev).T).cpu().numpy().astype(np.float64)
                for mode in ("rna", "trunc", "f32"):
                    aa = a if mode == "f32" else tf32(a, mode)
                    bb = b if mode == "f32" else tf32(b, mode)
                    ref = aa.astype(np.float64) @ bb.astype(np.float64).T
                    d = c - ref
                    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)).T
                    row.append("allow_tf32=%s vs %-5s: mean %+.2e  mean|.| %.2e (of sum|t|)" %
                               (allow, mode, np.mean(d / scale), np.mean(np.abs(d) / scale)))
            print("%dx%dx%d %s" % (m, n, k, sign))
            for r in row:
                print("   ", r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
