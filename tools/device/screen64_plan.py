#!/usr/bin/env python3
"""tools/device/screen64_plan.py: writes examples/screen-64.kg on stdout.

64 variants of the rowsum kernel kernels/cuda/reduce_sum.cu on a 4096 x 2048 f32 case (32 MB
read: about 10 us on an H200), for `kgate screen` in screening mode:
  - 60 correct geometries: RED_T threads per group (8 to 256), RED_P rows per group (1, 2, 4) and
    RED_L elements per load (1, 2, 4) in blocks of 256 threads, and six in blocks of 128; the
    scalar-load (RED_L = 1) and small-group variants are the slower ones;
  - 4 deliberately wrong: the grid of half the blocks the geometry needs, so half the rows are
    never written (fast, and INCORRECT: the poisoned outputs stay).
The baseline is the kernel's documented geometry (RED_T=256 RED_P=1 RED_L=4, one row per block),
with an A/A control.  Usage: python3 tools/device/screen64_plan.py > examples/screen-64.kg
"""

HEAD = """# screen-64: 64 variants of a ~10 us CUDA kernel screened by `kgate screen` (screening mode):
# tools/device/screen64.sh OUT runs it on the H200 with `time` (goal: at most 3 minutes of wall).
# Written by tools/device/screen64_plan.py (its docstring says what the variants are); 4 of them are
# deliberately wrong (half the grid) and must come out INCORRECT, never ranked.
#
# screen = yes: an exploration plan, whose 3 processes per direction need not complete the
# load-order square of 66 arms (the confirmation plan kgate screen writes completes it).
[campaign]
screen = yes
quiet = 1
name = screen-64
backend = cuda
warmup = 2
samples = 10
rounds = 3
processes = 3
margin = 2%
equivalence = 1%
control_margin = 2%
timeout = 600

[case f32_4096x2048]
op = rowsum
dtype = f32
M = 4096
N = 2048

[arm base]
op = rowsum
role = baseline
source = ../kernels/cuda/reduce_sum.cu
defines = RED_T=256 RED_P=1 RED_L=4
grid = ceildiv(M, 1)
block = 256
shared = 0

[arm base_copy]
op = rowsum
role = control
of = base
"""


def arm(name, t, p, l, block, rows):
    return (f"\n[arm {name}]\nop = rowsum\nsource = ../kernels/cuda/reduce_sum.cu\n"
            f"defines = RED_T={t} RED_P={p} RED_L={l}\ngrid = ceildiv(M, {rows})\nblock = {block}\nshared = 0\n")


def main():
    out = [HEAD]
    n = 0
    for t in (8, 16, 32, 64, 128, 256):
        for p in (1, 2, 4):
            for l in (1, 2, 4):
                out.append(arm(f"t{t}p{p}l{l}", t, p, l, 256, p * 256 // t))
                n += 1
    for p in (1, 2):
        for l in (1, 2, 4):
            out.append(arm(f"t128p{p}l{l}b128", 128, p, l, 128, p * 128 // 128))
            n += 1
    # wrong: half the blocks the geometry needs (rows = twice the rows a block covers)
    for t, p, l in ((32, 1, 4), (256, 1, 4), (64, 2, 2), (16, 4, 4)):
        out.append(arm(f"wrong_t{t}p{p}l{l}", t, p, l, 256, 2 * p * 256 // t))
        n += 1
    assert n == 64, n
    print("".join(out), end="")


main()
