#!/usr/bin/python3
# pyop_bound.py: the derivation of the library bound of ops declared in
# Python (docs/ops.md, "Ops in Python"; src/ops/pyops.c,
# kg_pyops_library_bound).  The bound of output element i is
#
#     k * max(e_i, median of e over i's row) + F * u32 * sqrt(n) * max |ref| over the row + 2 u_out |ref_i|
#
# where e_i is the larger of |lib_i - ref_i| and |libp_i - ref_i|: lib the
# reference function evaluated in the case's dtype (numpy, float32 for
# bf16), stored in the output's dtype; libp the same on inputs moved by one
# unit of float32's roundoff up or down, evaluated in float32 when the
# inputs are 16-bit and in float64 when they are float32, not rounded (its
# sensitivity: what a kernel whose float32 intermediates round differently
# errs by); ref the float64
# reference; u32 = 2^-24; n the reduction length (the op's flops over twice
# its output elements, else its longest input row); u_out the output
# dtype's unit roundoff; a row the output's last dimension (1-D: blocks of
# 256), its scale at least 1/16 of the output's largest |ref|.
#
# For each op (elementwise, softmax, layernorm, matmul, conv1d, row sum),
# dtype (f32, f16, bf16) and seed, it measures max_i err_i / bound_i of
# honest alternative implementations (other summation orders, pairwise vs
# sequential, fused multiply-add, float32 accumulation, blocked sums) and
# of wrong ones (a term dropped, an off-by-one window, bf16 accumulation, a
# transposed operand, a missing eps), and prints the worst of each: an
# honest one must stay <= 1 on every seed, a wrong one must exceed 1 on
# every seed.  Run: /usr/bin/python3 tools/bench/pyop_bound.py [SEEDS] [K] [F]
import sys

import numpy as np

SEEDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
K = float(sys.argv[2]) if len(sys.argv) > 2 else 16.0
F = float(sys.argv[3]) if len(sys.argv) > 3 else 8.0
PERTURB = len(sys.argv) <= 4 or sys.argv[4] != "noperturb"
U = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def rnd(x, dt):
    """x (float64) rounded to dtype dt, as float64."""
    x = np.asarray(x, dtype=np.float64)
    if dt == "f32":
        return x.astype(np.float32).astype(np.float64)
    if dt == "f16":
        return x.astype(np.float16).astype(np.float64)
    f = x.astype(np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


PERTURBING = False


def lib_acc():
    """The type the library evaluation accumulates in: float32; the perturbed evaluation of an f32
    case computes in float64 (below)."""
    return np.float64 if PERTURBING == "f32" else np.float32


def lib_dtype(dt):
    """The type the library evaluation computes in: the case's dtype (float32 for bf16, which numpy
    lacks).  The perturbed evaluation (pyops_helper.py) computes in float32 when every input is a
    16-bit type (the moved inputs are exact there, where the 16-bit type would round the move
    away), else in float64 (float32 would quantise the move to whole units of the inputs, and the
    row's mean lands on some of them: the sensitivity vanishes at half a row)."""
    if PERTURBING:
        return np.float64 if PERTURBING == "f32" else np.float32
    return np.float16 if dt == "f16" else np.float32


def perturbed(x, dt):
    """x with every element moved by one unit of float32's roundoff up or
    down (pyops_helper.py's "perturbed" evaluation: the rounding of a
    kernel's float32 intermediates; the inputs themselves are exact)."""
    u = 2.0 ** -23
    s = np.random.default_rng(20261204).integers(0, 2, size=x.shape) * 2 - 1
    return x * (1 + u * s)


def bound(ref, lib, libp, cols, dt, nred):
    ref = ref.reshape(-1)
    e_all = np.abs(lib.reshape(-1) - ref)
    if PERTURB:
        e_all = np.maximum(e_all, np.abs(libp.reshape(-1) - ref))
    row = cols if cols > 0 else 256
    b = np.empty_like(ref)
    least = np.max(np.abs(ref)) / 16
    for r0 in range(0, ref.size, row):
        e = e_all[r0:r0 + row]
        med = np.median(e)
        scale = max(np.max(np.abs(ref[r0:r0 + row])), least)
        b[r0:r0 + row] = (K * np.maximum(e, med) + F * 2.0 ** -24 * np.sqrt(nred) * scale +
                          2 * U[dt] * np.abs(ref[r0:r0 + row]))
    return b


def seq_sum(terms, acc_dt):
    """Sequential sum over the last axis, rounding to acc_dt after each add."""
    acc = np.zeros(terms.shape[:-1])
    for k in range(terms.shape[-1]):
        acc = rnd(acc + terms[..., k], acc_dt)
    return acc


def blocked_sum(terms, block=32):
    n = terms.shape[-1]
    parts = [seq_sum(terms[..., i:i + block], "f32") for i in range(0, n, block)]
    return seq_sum(np.stack(parts, axis=-1), "f32")


def pairwise_sum(terms):
    t = terms
    while t.shape[-1] > 1:
        if t.shape[-1] % 2:
            t = np.concatenate([t, np.zeros(t.shape[:-1] + (1,))], axis=-1)
        t = rnd(t[..., 0::2] + t[..., 1::2], "f32")
    return t[..., 0]


def gen(rng, shape, dt, scale=1.0):
    x = rng.uniform(-1, 1, size=shape) * scale
    if len(shape) > 1 and shape[0] > 2:
        x[0] = 0
        x[-1] *= 4
        x[1] = x[1, 0]          # a constant row
        x[2, ::3] = 0           # a sparse one
    return rnd(x, dt)


# ---- the ops: reference (float64), library (in the dtype), honest, wrong ----

def op_saxpy(rng, dt):
    x, y = gen(rng, (4096,), dt), gen(rng, (4096,), dt)
    a = 0.75
    ref = a * x + y
    lib = lambda x, y: (lib_dtype(dt)(a) * x.astype(lib_dtype(dt)) + y.astype(lib_dtype(dt))).astype(np.float64)
    honest = {"separate": rnd(rnd(a * x, "f32") + y, "f32"), "fma": rnd(a * x + y, "f32")}
    wrong = {"alpha dropped at one element in 64": np.where(np.arange(4096) % 64 == 5, y, ref)}
    return ref, (lib, [x, y]), 0, honest, wrong


def op_rowsum(rng, dt):
    x = gen(rng, (64, 1024), dt)
    ref = x.sum(axis=1)
    lib = lambda x: x.astype(lib_dtype(dt)).sum(axis=1, dtype=lib_acc()).astype(np.float64)
    honest = {"sequential f32": seq_sum(x, "f32"), "pairwise f32": pairwise_sum(x),
              "blocked f32": blocked_sum(x), "reversed f32": seq_sum(x[:, ::-1], "f32")}
    wrong = {"last term dropped": x[:, :-1].sum(axis=1), "bf16 accumulation": seq_sum(x, "bf16")}
    return ref, (lib, [x]), 0, honest, wrong


def op_softmax(rng, dt):
    x = gen(rng, (64, 512), dt, 4.0)
    def sm(v, acc):
        m = v.max(axis=1, keepdims=True)
        e = np.exp(v - m)
        if acc:
            e = rnd(e, acc)
            s = seq_sum(e, acc)[:, None]
            return rnd(e / s, acc)
        return e / e.sum(axis=1, keepdims=True)
    ref = sm(x, None)
    def lib(x):
        v = x.astype(lib_dtype(dt))
        e = np.exp(v - v.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    e32 = rnd(np.exp(x - m), "f32")
    honest = {"sequential f32": sm(x, "f32"), "pairwise f32 sum": rnd(e32 / pairwise_sum(e32)[:, None], "f32"),
              "reciprocal": rnd(e32 * rnd(1.0 / seq_sum(e32, "f32"), "f32")[:, None], "f32")}
    wrong = {"last term of the sum dropped": e32 / e32[:, :-1].sum(axis=1, keepdims=True),
             "bf16 accumulation": sm(x, "bf16")}
    return ref, (lib, [x]), 512, honest, wrong


def ln_cuda_welford(x, eps, threads=128, vec=4):
    """torch's CUDA layernorm statistics as its vectorized kernel computes them: each of `threads`
    threads runs Welford's online update over its elements (mean += delta * (1/count)), then the
    threads' states are combined in a tree by mean = (nA/n) meanA + (nB/n) meanB with 1/n taken
    once (so nA/n + nB/n need not be 1: a constant row's mean moves by a few float32 units, which
    1/sqrt(eps) multiplies)."""
    rows, n = x.shape
    idx = np.arange(n)
    owner = (idx // vec) % threads
    mean = np.zeros((rows, threads)); m2 = np.zeros((rows, threads)); cnt = np.zeros(threads)
    for k in range(n):
        t = owner[k]
        cnt[t] += 1
        d = rnd(x[:, k] - mean[:, t], "f32")
        mean[:, t] = rnd(mean[:, t] + rnd(d * rnd(1.0 / cnt[t], "f32"), "f32"), "f32")
        m2[:, t] = rnd(m2[:, t] + rnd(d * rnd(x[:, k] - mean[:, t], "f32"), "f32"), "f32")
    while mean.shape[1] > 1:
        h = mean.shape[1] // 2
        ma, mb, qa, qb, ca, cb = mean[:, :h], mean[:, h:], m2[:, :h], m2[:, h:], cnt[:h], cnt[h:]
        c = ca + cb
        coef = rnd(1.0 / np.where(c > 0, c, 1), "f32")
        na, nb = rnd(ca * coef, "f32"), rnd(cb * coef, "f32")
        d = rnd(mb - ma, "f32")
        mean = np.where(c > 0, rnd(rnd(na * ma, "f32") + rnd(nb * mb, "f32"), "f32"), 0)
        m2 = np.where(c > 0, rnd(qa + qb + rnd(rnd(rnd(d * d, "f32") * ca, "f32") * nb, "f32"), "f32"), 0)
        cnt = c
    mu, var = mean, rnd(m2 / n, "f32")
    rstd = rnd(1.0 / np.sqrt(rnd(var + eps, "f32")), "f32")
    return rnd(rnd(x - mu, "f32") * rstd, "f32")


def ln_pairwise(x, eps):
    n = x.shape[1]
    mu = rnd(pairwise_sum(x) / n, "f32")[:, None]
    d = rnd(x - mu, "f32")
    var = rnd(pairwise_sum(rnd(d * d, "f32")) / n, "f32")[:, None]
    return rnd(d * rnd(1.0 / np.sqrt(var + eps), "f32"), "f32")


def op_layernorm(rng, dt):
    """torch.nn.functional.layer_norm(x, (768,), w, b, 1e-5): the output is norm(x) * w + b, so a
    constant row's exact output is b."""
    x = gen(rng, (64, 768), dt)
    x[5] = rnd(3.0 + 0.01 * rng.uniform(-1, 1, 768), dt)   # near-constant row
    x[6] = rnd(np.full(768, 1.5 + rng.uniform()), dt)      # constant rows: the exact output is b
    x[7] = rnd(np.full(768, -6.0 - 2 * rng.uniform()), dt)
    w = rnd(rng.uniform(-2, 2, 768), dt)
    b = rnd(rng.uniform(-1, 1, 768) * 0.05, dt)
    eps = 1e-5
    def ln(v, acc, mode="two"):
        n = v.shape[1]
        if acc is None:
            mu = v.mean(axis=1, keepdims=True)
            var = ((v - mu) ** 2).mean(axis=1, keepdims=True)
            return (v - mu) / np.sqrt(var + eps) * w + b
        mu = rnd(seq_sum(v, acc) / n, acc)[:, None]
        if mode == "welford":
            mean = np.zeros(v.shape[0]); m2 = np.zeros(v.shape[0])
            for k in range(n):
                d = rnd(v[:, k] - mean, acc)
                mean = rnd(mean + rnd(d / (k + 1), acc), acc)
                m2 = rnd(m2 + rnd(d * rnd(v[:, k] - mean, acc), acc), acc)
            mu = mean[:, None]
            var = rnd(m2 / n, acc)[:, None]
        else:
            d = rnd(v - mu, acc)
            var = rnd(seq_sum(rnd(d * d, acc), acc) / n, acc)[:, None]
        return affine(rnd(rnd(v - mu, acc) * rnd(1.0 / np.sqrt(var + eps), acc), acc), w, b, acc)
    ref = ln(x, None)
    def lib(x, w, b):
        t = lib_dtype(dt)
        v = x.astype(t)
        mu = v.mean(axis=1, keepdims=True, dtype=lib_acc())
        var = ((v - mu) ** 2).mean(axis=1, keepdims=True, dtype=lib_acc())
        y = (v - mu) / np.sqrt(var + lib_acc()(eps))
        return (y * w.astype(t) + b.astype(t)).astype(np.float64)
    honest = {"(limit) sequential welford f32": ln(x, "f32", "welford"),
              "two-pass pairwise f32": affine(ln_pairwise(x, eps), w, b, "f32"),
              "torch CUDA welford f32": affine(ln_cuda_welford(x, eps), w, b, "f32")}
    # known limits, printed apart: a sequential float32 mean of a
    # constant row is off by up to n u where numpy's pairwise one is exact,
    # and layernorm multiplies that by 1/sqrt(eps); a sequential Welford mean
    # drifts by about sqrt(n) u on a near-constant row (bf16: 1.31 of the
    # bound at one seed of 100), where the tree of torch's CUDA kernel or a
    # pairwise sum stays within a few units
    honest["(limit) two-pass sequential f32"] = ln(x, "f32")
    mu = x.mean(axis=1, keepdims=True)
    off = ref.copy()
    off[6] += 0.25 * np.max(np.abs(ref))                    # wrong only where the row is constant
    nob = ref.copy()
    nob[6:8] -= b                                           # a constant-row path that forgets b
    wrong = {"unbiased variance": (x - mu) / np.sqrt(x.var(axis=1, ddof=1, keepdims=True) + eps) * w + b,
             "bf16 accumulation": ln(x, "bf16"), "constant row off by 1/4 of the scale": off,
             "constant rows without b": nob}
    return ref, (lib, [x, w, b]), 768, honest, wrong


def affine(y, w, b, acc):
    return rnd(rnd(y * w, acc) + b, acc)


def op_matmul(rng, dt):
    a, b = gen(rng, (128, 128), dt), gen(rng, (128, 128), dt)
    ref = a @ b.T
    lib = lambda a, b: (a.astype(lib_dtype(dt)).astype(lib_acc()) @ b.astype(lib_dtype(dt)).astype(lib_acc()).T).astype(np.float64)
    t = a[:, None, :] * b[None, :, :]
    honest = {"sequential f32": seq_sum(rnd(t, "f32"), "f32"), "fma f32": seq_sum(t, "f32"),
              "pairwise f32": pairwise_sum(rnd(t, "f32")), "blocked f32": blocked_sum(rnd(t, "f32"))}
    wrong = {"last k dropped": a[:, :-1] @ b[:, :-1].T, "transposed operand": a @ b,
             "bf16 accumulation": seq_sum(rnd(t, "f32"), "bf16")}
    return ref, (lib, [a, b]), 128, honest, wrong


def op_conv1d(rng, dt):
    x, w = gen(rng, (16, 1024), dt), gen(rng, (9,), dt)
    n = 1024 - 9 + 1
    win = np.stack([x[:, i:i + n] for i in range(9)], axis=-1)
    ref = (win * w).sum(axis=-1)
    lib = lambda x, w: sum((x[:, i:i + n].astype(lib_dtype(dt)).astype(lib_acc()) * lib_acc()(w[i]) for i in range(9)),
                           np.zeros((16, n), lib_acc())).astype(np.float64)
    honest = {"sequential f32": seq_sum(rnd(win * w, "f32"), "f32"),
              "reversed f32": seq_sum(rnd(win * w, "f32")[..., ::-1], "f32"),
              "fma f32": seq_sum(win * w, "f32")}
    wrong = {"window off by one": np.concatenate([(win[:, 1:] * w).sum(-1), ref[:, -1:]], axis=1),
             "filter reversed": (win * w[::-1]).sum(-1)}
    return ref, (lib, [x, w]), n, honest, wrong


OPS = [("elementwise saxpy", op_saxpy), ("row sum", op_rowsum), ("softmax", op_softmax),
       ("layernorm", op_layernorm), ("matmul", op_matmul), ("conv1d", op_conv1d)]


def ratio(v, ref, b, dt):
    """max_i |v_i - ref_i| / b_i (0/0 counts 0, x/0 infinite)."""
    e = np.abs(rnd(v, dt).reshape(-1) - ref.reshape(-1))
    r = np.where(e == 0, 0.0, np.divide(e, b, out=np.full_like(e, np.inf), where=b > 0))
    return float(np.max(r))


NRED = {"elementwise saxpy": 1, "row sum": 1024, "softmax": 512, "layernorm": 768, "matmul": 128, "conv1d": 9}


def main():
    bad = 0
    print("k = %g, floor = %g u32 sqrt(n), %d seeds" % (K, F, SEEDS))
    for name, fn in OPS:
        for dt in ("f32", "f16", "bf16"):
            hon, wro = {}, {}
            for seed in range(SEEDS):
                rng = np.random.default_rng(1000 * seed + 7)
                ref, (libfn, ins), cols, honest, wrong = fn(rng, dt)
                lib = rnd(libfn(*ins), dt)
                global PERTURBING
                PERTURBING = dt
                libp = libfn(*[perturbed(x, dt) for x in ins])
                PERTURBING = False
                b = bound(ref, lib, libp, cols, dt, NRED[name])
                for k, v in honest.items():
                    r = ratio(v, ref, b, dt)
                    hon[k] = max(hon.get(k, 0), r)
                for k, v in wrong.items():
                    r = ratio(v, ref, b, dt)
                    wro[k] = min(wro.get(k, np.inf), r)
            for k, r in sorted(hon.items()):
                ok = r <= 1
                bad += not ok and not k.startswith("(limit)")
                print("%-18s %-4s honest %-28s worst err/bound %8.3f %s" % (name, dt, k, r, "ok" if ok else "FAILS"))
            for k, r in sorted(wro.items()):
                ok = r > 1
                print("%-18s %-4s wrong  %-28s least err/bound %8.3g %s" % (name, dt, k, r,
                                                                               "caught" if ok else "PASSES"))
    print("honest failures: %d" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
