#!/usr/bin/env python3
"""rowsum.py: a Triton rowsum (Y[i] = sum_j X[i, j], f32), compiled to a
cubin for kgate's precompiled arms (image =; docs/images.md).

    python3 kernels/triton/rowsum.py OUTDIR [--arch 90] [--num-warps 4] [--block 1024]

writes OUTDIR/triton_rowsum.cubin (Triton's compiled kernel, asm["cubin"])
and OUTDIR/triton_rowsum.arm, the [arm] section that runs it, with what
the compiled kernel's metadata says:

    entry  = metadata.name         (the kernel's symbol in the cubin)
    block  = 32 * metadata.num_warps
    shared = metadata.shared       (dynamic shared memory bytes)
    args   = X, Y, M, N, then one `null` per trailing parameter that Triton
             adds after the kernel's own (its global and profile scratch
             pointers in current versions; counted from the PTX entry)

Needs Triton (3.x) and its bundled ptxas, but no GPU: the target is given.
Refuses a kernel that needs global scratch memory or more than one CTA.
"""
import argparse
import os
import re
import sys

import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(X, Y, M, N, BLOCK: tl.constexpr):
    # one program per row; the row in BLOCK-wide strips, summed in float32
    row = tl.program_id(0)
    base = X + row.to(tl.int64) * N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(base + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(Y + row, tl.sum(acc, axis=0))


def meta(md, name, default=None):
    """A field of the compiled kernel's metadata (a named tuple in Triton 3,
    a dict in older versions)."""
    if isinstance(md, dict):
        return md.get(name, default)
    return getattr(md, name, default)


def compile_rowsum(arch, num_warps, block):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    try:
        # Triton >= 3.2: the signature by name, constexprs named in it and given apart
        src = ASTSource(fn=rowsum_kernel,
                        signature={"X": "*fp32", "Y": "*fp32", "M": "i32", "N": "i32", "BLOCK": "constexpr"},
                        constexprs={"BLOCK": block})
    except TypeError:
        # Triton 3.0 and 3.1: the signature by position, constants by position
        src = ASTSource(fn=rowsum_kernel, signature={0: "*fp32", 1: "*fp32", 2: "i32", 3: "i32"},
                        constants={4: block})
    return triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": num_warps})


def ptx_params(ptx, name):
    """The number of parameters of entry `name` in the PTX text."""
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\(([^)]*)\)", ptx)
    if m is None:
        raise SystemExit("rowsum.py: entry %s not found in the PTX" % name)
    return len(re.findall(r"\.param\b", m.group(1)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--arch", type=int, default=90, help="compute capability as an integer: 90 for sm_90 (H100, H200)")
    ap.add_argument("--num-warps", type=int, default=4)
    ap.add_argument("--block", type=int, default=1024, help="columns per strip (a power of two)")
    o = ap.parse_args()
    k = compile_rowsum(o.arch, o.num_warps, o.block)
    md = k.metadata
    name = meta(md, "name")
    num_warps = meta(md, "num_warps", o.num_warps)
    shared = meta(md, "shared", 0)
    if (meta(md, "global_scratch_size", 0) or 0) > 0:
        sys.exit("rowsum.py: the kernel needs %d bytes of global scratch memory per program, which kgate does not "
                 "provide: simplify it" % meta(md, "global_scratch_size"))
    if (meta(md, "num_ctas", 1) or 1) != 1:
        sys.exit("rowsum.py: num_ctas = %d: kgate launches one CTA per block (use num_ctas = 1)" % meta(md, "num_ctas"))
    cubin = k.asm["cubin"]
    extra = ptx_params(k.asm["ptx"], name) - 4
    if extra < 0:
        sys.exit("rowsum.py: the entry has fewer parameters than X, Y, M, N: Triton specialised one away "
                 "(an integer equal to 1?); use other sizes")
    os.makedirs(o.outdir, exist_ok=True)
    with open(os.path.join(o.outdir, "triton_rowsum.cubin"), "wb") as f:
        f.write(cubin)
    args = ", ".join(["X", "Y", "M", "N"] + ["null"] * extra)
    arm = ("[arm triton]\n"
           "# Triton %s, %s: num_warps %d, shared %d bytes, %d trailing parameter(s) passed as null\n"
           "op = rowsum\n"
           "role = candidate\n"
           "image = triton_rowsum.cubin\n"
           "entry = %s\n"
           "grid = M\n"
           "block = %d\n"
           "shared = %d\n"
           "args = %s\n") % (triton.__version__, "sm_%d" % o.arch, num_warps, shared, extra, name,
                              32 * num_warps, shared, args)
    with open(os.path.join(o.outdir, "triton_rowsum.arm"), "w") as f:
        f.write(arm)
    sys.stdout.write(arm)


if __name__ == "__main__":
    main()
