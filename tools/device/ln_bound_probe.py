"""tools/device/ln_bound_probe.py: torch's GPU layernorm against the library bound of ops declared in
Python (src/ops/pyops.c, kg_pyops_library_bound; src/ops/pyops_helper.py), on the rows where it is
ill-conditioned: constant and near-constant rows, f16 and bf16 and f32, several row lengths.

For each row it prints the error of torch's CUDA layer_norm against the float64 reference in units of
rstd * |w| * |mean| * 2^-24 (how many float32 units the kernel's mean is off by, as seen through the
1/sqrt(var + eps) the output multiplies it by), and the worst ratio err / bound for the bound as it
was (the perturbed inputs rounded back to the 16-bit storage type, where the move vanishes, and
the result rounded to the output's type) and as it is (evaluated in float32 for 16-bit inputs, in
float64 for float32 ones, not rounded).  Run on a machine with a GPU:
python3 tools/device/ln_bound_probe.py"""
import sys

import numpy as np
import torch

K, F = 16.0, 8.0
U32 = 2.0 ** -24
UOUT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
TD = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def ln(x, w, b):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5)


def store(x, dt):
    return torch.as_tensor(x).to(TD[dt]).double()


def bound(ref, e, n, dt):
    """kg_pyops_library_bound, rows of the last dimension."""
    med = e.median(dim=1, keepdim=True).values
    least = ref.abs().max() / 16
    scale = torch.maximum(ref.abs().max(dim=1, keepdim=True).values, least)
    return K * torch.maximum(e, med) + F * U32 * np.sqrt(n) * scale + 2 * UOUT[dt] * ref.abs()


def perturbed(a, seed):
    s = torch.from_numpy(np.random.default_rng(20261204 + seed).integers(0, 2, size=tuple(a.shape)) * 2 - 1)
    return a * (1 + 2.0 ** -23 * s)


def main():
    worst_old, worst_new = {}, {}
    for dt in ("f16", "bf16", "f32"):
        for n in (768, 1000, 1024, 4096):
            for seed in range(8):
                g = torch.Generator().manual_seed(1000 * seed + n)
                m = 64
                x = torch.empty(m, n, dtype=torch.float64).uniform_(-1, 1, generator=g)
                c = torch.empty(m, dtype=torch.float64).uniform_(-8, 8, generator=g)
                x[: m // 2] = c[: m // 2, None]                       # constant rows
                x[m // 2:] = c[m // 2:, None] + 1e-3 * x[m // 2:]      # near-constant rows
                w = torch.empty(n, dtype=torch.float64).uniform_(-2, 2, generator=g)
                b = torch.empty(n, dtype=torch.float64).uniform_(-0.01, 0.01, generator=g)
                x, w, b = store(x, dt), store(w, dt), store(b, dt)
                ref = ln(x, w, b)
                got = ln(x.to(TD[dt]).cuda(), w.to(TD[dt]).cuda(), b.to(TD[dt]).cuda()).double().cpu()
                lib = store(ln(x.to(TD[dt]), w.to(TD[dt]), b.to(TD[dt])).float(), dt)
                p = [perturbed(x, 0), perturbed(w, 1), perturbed(b, 2)]
                libp_old = store(ln(*[t.to(TD[dt]) for t in p]).float(), dt)
                libp_new = ln(*[t.float() if dt != "f32" else t for t in p]).double()   # not rounded
                e_old = torch.maximum((lib - ref).abs(), (libp_old - ref).abs())
                e_new = torch.maximum((lib - ref).abs(), (libp_new - ref).abs())
                err = (got - ref).abs()
                mu = x.mean(dim=1, keepdim=True)
                var = x.var(dim=1, unbiased=False, keepdim=True)
                unit = (var + 1e-5).rsqrt() * w.abs()[None, :] * mu.abs() * U32
                units = (err / unit).max(dim=1).values
                for half, rows in (("constant", slice(0, m // 2)), ("near-constant", slice(m // 2, m))):
                    key = (dt, n, half)
                    ro = (err[rows] / bound(ref, e_old, n, dt)[rows]).max().item()
                    rn = (err[rows] / bound(ref, e_new, n, dt)[rows]).max().item()
                    worst_old[key] = max(worst_old.get(key, 0), ro)
                    worst_new[key] = max(worst_new.get(key, (0, 0))[0], rn), max(worst_new.get(key, (0, 0))[1],
                                                                                  units[rows].max().item())
    print("%-5s %5s %-14s %12s %12s %14s" % ("dtype", "n", "rows", "err/old", "err/new", "mean off (u32)"))
    bad = 0
    for key in worst_old:
        rn, u = worst_new[key]
        bad += rn > 1
        print("%-5s %5d %-14s %12.3f %12.3f %14.1f" % (key + (worst_old[key], rn, u)))
    print("rows over the bound as it is: %d" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
