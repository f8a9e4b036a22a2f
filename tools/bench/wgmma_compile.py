"""Compiles every variant of kernels/cuda/splitk_wgmma.cu (dtype x LOAD x BN x STAGES x RED x MT x WGS:
bf16 and f32 as TF32, splits 4) with NVRTC for sm_90a, as kgate's build would, and reports the ones that fail or spill
(ptxas -v's "bytes spill stores").  No GPU needed: python3 tools/bench/wgmma_compile.py [RED ...]
(from the repository root; NVRTC found as libnvrtc.so; RED: only those reductions).  With RED 3 (or none given), also
the forms that split K their own way (KSPLIT 4 and 8, no KG_VAR_splits: not specialized), WGS 1 and 2; and the forms
whose two warpgroups split the block's columns (WGS 2, WGN 1); and the TMA forms whose column blocks share A's tile by
multicast (LOAD 1, MC 2 and 4) and the producer warp that feeds them (PW 1, with MC 1 too)."""
import ctypes
import itertools
import re
import sys

lib = ctypes.CDLL("libnvrtc.so")
src = open("kernels/cuda/splitk_wgmma.cu").read().encode()
fails = n = 0
reds = [int(a) for a in sys.argv[1:]] or [0, 1, 2, 3]
# WGS = 1 over every combination; WGS = 2 (two warpgroups a block) takes MT 1 and RED 0, 2, 3
variants = [v + (1,) for v in itertools.product([2, 0], [0, 1], [32, 64, 128], [2, 3, 4, 8], reds, [1, 2])]
variants += [v + (2,) for v in itertools.product([2, 0], [0, 1], [32, 64, 128], [2, 3, 4, 8], reds, [1])]
# (dtype, load, BN, STAGES, RED, MT, WGS, KSPLIT): KSPLIT 0 is the case's splits (KG_VAR_splits = 4)
variants = [v + (0,) for v in variants]
if 3 in reds:
    variants += [(dt, 0, bn, st, 3, 1, wgs, ks) for dt, bn, st, wgs, ks in
                 itertools.product([2, 0], [32, 64], [2, 4], [1, 2], [4, 8])]
# WGN = 1: the two warpgroups split the block's columns (BN 64, 128; RED 0, 2, 3; the case's split or KSPLIT 4, 8)
variants = [v + (0,) for v in variants]
variants += [(dt, 0, bn, st, red, 1, 2, ks, 1) for dt, bn, st, red, ks in
             itertools.product([2, 0], [64, 128], [2, 4], [r for r in reds if r != 1], [0, 4, 8]) if not (red == 0 and ks)]
# the producer warp (PW 1, LOAD 1, WGS 1 and 2; RED 0, 2, 3), alone (MC 1) or with the TMA multicast of A's tile
# (MC 2, 4); RED 3 also with KSPLIT 2 and 4
variants = [v + (1, 0) for v in variants]
variants += [(dt, 1, bn, st, red, mt, wgs, ks, 0, mc, 1) for dt, bn, st, red, mt, wgs, ks, mc in
             itertools.product([2, 0], [32, 64, 128], [4, 8], [r for r in reds if r != 1], [1, 2], [1, 2], [0, 2, 4], [1, 2, 4])
             if not (red != 3 and ks) and not (wgs == 2 and mt == 2)]
for dt, load, bn, st, red, mt, wgs, ks, wgn, mc, pw in variants:
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"splitk_wgmma.cu", 0, None, None)
    opts = [b"--gpu-architecture=sm_90a", b"-Iinclude", b"-Ikernels/cuda", b"-DKG_DTYPE=%d" % dt, b"-DLOAD=%d" % load,
            b"-DBN=%d" % bn, b"-DSTAGES=%d" % st, b"-DRED=%d" % red, b"-DMT=%d" % mt, b"-DWGS=%d" % wgs, b"-DWGN=%d" % wgn, b"-DMC=%d" % mc, b"-DPW=%d" % pw,
            b"-DKSPLIT=%d" % ks if ks else b"-DKG_VAR_splits=4", b"-Xptxas=-v"]
    r = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    k = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(k))
    buf = ctypes.create_string_buffer(k.value)
    lib.nvrtcGetProgramLog(prog, buf)
    log = buf.value.decode()
    n += 1
    if r != 0 or any(int(x) > 0 for x in re.findall(r"(\d+) bytes spill stores", log)):
        fails += 1
        print("FAIL KG_DTYPE=%d LOAD=%d BN=%d STAGES=%d RED=%d MT=%d WGS=%d WGN=%d KSPLIT=%d MC=%d PW=%d (nvrtc %d)\n%s"
              % (dt, load, bn, st, red, mt, wgs, wgn, ks, mc, pw, r, log[:1500]))
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
print(n, "compiled,", fails, "failed or spilled")
sys.exit(1 if fails else 0)
