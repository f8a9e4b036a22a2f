#!/usr/bin/env python3
"""wgmma_model.py: a CPU model of kernels/cuda/splitk_wgmma.cu's index formulas,
checked against the PTX ISA's rules for wgmma.mma_async (no GPU needed).

  python3 tools/wgmma_model.py        (exit 0 when every check holds)

For every BN (32, 64, 128), MT (1, 2) and STAGES (2..8) it checks:
  1. staging: kg_wg_load's cp.async destinations (chunk c of row r at
     r*128 + ((c ^ (r & 7)) << 4)) fill each stage's A and B regions exactly
     once, 16-byte aligned;
  2. descriptor: the bits kg_desc builds decode (ISA "Matrix Descriptor
     Format": start >> 4 in 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, base
     offset in 49-51, swizzle mode in 62-63, 1 = 128B) to a start address, SBO
     and mode; the address the tensor core reads for element (row, k) of one
     k16 step of a K-major operand is then the ISA's canonical 128B-swizzle
     layout, ((8,m),(T,2k)):((8T,SBO),(1,T)) with T = 8 16-bit elements per
     16 bytes, the 16-byte chunk index (address bits 4-6) XORed with address
     bits 7-9 (the pattern anchored at 1024-byte boundaries: base offset 0);
     that address must hold the element (row, kk*16 + k) that kg_wg_load put
     there, for every row of the m64 (A, each u) or nBN (B) operand, every k
     and every k16 step kk of the slice;
  3. accumulator: the epilogue's (row, col) of acc[4j + 2h + e] for thread
     tid equals CUTLASS's CLayout_64xN (the ISA's m64nNk16 f32 D fragment:
     ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) onto m + 64 n), and covers the
     64 x BN tile once;
  4. pipeline: the cp.async group accounting (wait_group STAGES-2) has slice
     kt's group complete at iteration kt, and the stage refilled at iteration
     kt is neither kt's nor one a wgmma still reads;
  5. RED=1: block r of S sums rows [r*WG_BM/S, (r+1)*WG_BM/S): a partition of
     the tile for S = 1..8; the f32 tile fits in what the kernel requires.
It also shows what the descriptor check catches: the same reads with the
swizzle taken relative to the start address instead of absolute (wrong for
kk > 0), and with SBO 128 or 512.
"""
import sys

FAIL = []


def check(cond, what):
    if not cond:
        FAIL.append(what)
    return cond


def kg_desc(saddr):  # splitk_wgmma.cu's kg_desc, bit for bit
    return ((saddr & 0x3FFFF) >> 4) | (1 << 16) | ((1024 >> 4) << 32) | (1 << 62)


def decode(desc):
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    base_off = (desc >> 49) & 7
    mode = (desc >> 62) & 3
    return start, lbo, sbo, base_off, mode


def swz128(a, anchor=0):
    """128B swizzle of byte address a: 16-byte chunk (bits 4-6) ^= bits 7-9,
    of the address relative to anchor (0: absolute, as the ISA's base-offset
    rule implies)."""
    o = a - anchor
    return anchor + (o ^ (((o >> 7) & 7) << 4))


def tc_addr(desc, row, k, elem=2, anchor_rel=False, sbo_override=None):
    """Byte address wgmma reads for element (row, k), k < 16, of a K-major
    operand under the canonical 128B-swizzle layout."""
    start, lbo, sbo, base_off, mode = decode(desc)
    assert mode == 1 and base_off == 0
    if sbo_override is not None:
        sbo = sbo_override
    T = 16 // elem                      # elements per 16 bytes
    # ((8,m),(T,2)):((8T,SBO),(1,T)) in elements, times elem bytes
    lin = start + ((row % 8) * 8 * T + (k % T) * 1 + (k // T) * T) * elem + (row // 8) * sbo
    return swz128(lin, start if anchor_rel else 0)


def model_stage(BN, MT, sa):
    """What kg_wg_load writes: {byte address: (operand, row, k)} per 2-byte element."""
    WG_BM, WG_NT = 64 * MT, 128
    mem = {}
    sb = sa + WG_BM * 128
    for opnd, rows, base in (("A", WG_BM, sa), ("B", BN, sb)):
        nch = rows * 8 // WG_NT
        for tid in range(WG_NT):
            for i in range(nch):
                idx = tid + i * WG_NT
                r, c = idx >> 3, idx & 7
                dst = base + r * 128 + ((c ^ (r & 7)) << 4)
                check(dst % 16 == 0, f"{opnd} chunk not 16-byte aligned")
                for e in range(8):      # the 8 elements of chunk c: k = 8c + e
                    a = dst + 2 * e
                    check(a not in mem, f"BN={BN} MT={MT}: {opnd} address {a:#x} written twice")
                    mem[a] = (opnd, r, 8 * c + e)
        lo, hi = base, base + rows * 128
        got = sorted(a for a, v in mem.items() if v[0] == opnd)
        check(len(got) == rows * 64 and got[0] == lo and got[-1] == hi - 2,
              f"BN={BN} MT={MT}: {opnd} region not filled exactly")
    return mem


def check_descriptors(BN, MT, sa, mem, **kw):
    """Every (row, k) of every k16 step, A for each u and B: the element read is
    the element the load put there.  Returns the count of mismatches."""
    bad = 0
    sb = sa + 64 * MT * 128
    for kk in range(4):
        for u in range(MT):
            d = kg_desc(sa + u * 8192 + kk * 32)
            for row in range(64):
                for k in range(16):
                    if mem.get(tc_addr(d, row, k, **kw)) != ("A", 64 * u + row, kk * 16 + k):
                        bad += 1
        d = kg_desc(sb + kk * 32)
        for row in range(BN):
            for k in range(16):
                if mem.get(tc_addr(d, row, k, **kw)) != ("B", row, kk * 16 + k):
                    bad += 1
    return bad


def clayout_64xN(tid, v, N):
    """CUTLASS CLayout_64xN: (thread, value) -> m + 64 n."""
    t0, t1, t2 = tid % 4, (tid // 4) % 8, tid // 32
    v0, v1, v2 = v % 2, (v // 2) % 2, v // 4
    idx = t0 * 128 + t1 * 1 + t2 * 16 + v0 * 64 + v1 * 8 + v2 * 512
    return idx % 64, idx // 64


def kernel_epilogue(tid, BN):
    """The kernel's (row, col) for acc[4j + 2h + e] (RED=0 store, same in 1, 2)."""
    warp, lane = tid >> 5, tid & 31
    g, t = lane >> 2, lane & 3
    r0 = 16 * warp + g
    out = {}
    for j in range(BN // 8):
        for h in range(2):
            for e in range(2):
                out[4 * j + 2 * h + e] = (r0 + 8 * h, 8 * j + 2 * t + e)
    return out


def main():
    n_desc = n_acc = n_skip = 0
    for MT in (1, 2):
        for BN in (32, 64, 128):
            WG_BM = 64 * MT
            stage_bytes = (WG_BM + BN) * 128
            for STAGES in range(2, 9):
                ring = STAGES * stage_bytes
                need = max(ring, WG_BM * (BN + 4) * 4) + 1024
                if need > 227 * 1024:     # above sm_90's per-block opt-in: never launched
                    n_skip += 1
                    continue
                # the dynamic window starts anywhere 16-byte aligned; base is
                # rounded up to 1024 inside the need
                for dyn in (0, 16, 1008, 1024):
                    base = (dyn + 1023) & ~1023
                    check(base - dyn + ring <= need, "ring past the dynamic shared memory")
                    check(base + ring <= 0x40000, "address past the descriptor's 18 bits")
                    for st in range(STAGES):
                        sa = base + st * stage_bytes
                        check(sa % 1024 == 0 and (sa + WG_BM * 128) % 1024 == 0,
                              f"stage {st} not 1024-aligned")
                        if STAGES in (2, 8) or st == 0:  # full element check (slow part)
                            mem = model_stage(BN, MT, sa)
                            bad = check_descriptors(BN, MT, sa, mem)
                            check(bad == 0, f"BN={BN} MT={MT} stage {st}: {bad} elements read wrong")
                            n_desc += 1
                # RED=1: the row partition and the tile
                for S in range(1, 9):
                    rows = []
                    for r in range(S):
                        rows += list(range(r * WG_BM // S, (r + 1) * WG_BM // S))
                    check(rows == list(range(WG_BM)), f"RED=1 S={S}: rows not a partition")
                check((BN + 4) % 4 == 0, "tile pitch not a float4 multiple")
                check(WG_BM * (BN + 4) * 4 <= need - 1024, "tile larger than the requirement")
                # pipeline: cp.async groups and ring stages
                for nk in range(1, 3 * STAGES + 2):
                    committed = []            # group g holds slice g (or nothing)
                    for st in range(STAGES - 1):
                        committed.append(st if st < nk else None)
                    done = set()
                    for kt in range(nk):
                        # wait_group STAGES-2: all but the newest STAGES-2 groups complete
                        for g in range(len(committed) - (STAGES - 2)):
                            done.add(g)
                        check(kt in done and committed[kt] == kt,
                              f"STAGES={STAGES} nk={nk}: slice {kt} not landed at its iteration")
                        nt = kt + STAGES - 1
                        if nt < nk:
                            # the stage refilled: not kt's (read now); kt-1's wgmma waited
                            check(nt % STAGES != kt % STAGES, "refill of the stage being read")
                            check(nt % STAGES == (kt - 1) % STAGES, "refill of a stage other than kt-1's")
                        committed.append(nt if nt < nk else None)
            # accumulator fragment
            for_n = {}
            for tid in range(128):
                ep = kernel_epilogue(tid, BN)
                for v in range(BN // 2):
                    ok = check(ep[v] == clayout_64xN(tid, v, BN),
                               f"BN={BN}: tid {tid} acc[{v}] at {ep[v]}, ISA {clayout_64xN(tid, v, BN)}")
                    check(ep[v] not in for_n, f"BN={BN}: {ep[v]} held twice")
                    for_n[ep[v]] = (tid, v)
                    n_acc += ok
            check(len(for_n) == 64 * BN, f"BN={BN}: accumulator does not cover 64 x BN")

    # what the descriptor check would catch (sanity of the model itself)
    base = 1024
    mem = model_stage(64, 1, base)
    rel = check_descriptors(64, 1, base, mem, anchor_rel=True)
    s128 = check_descriptors(64, 1, base, mem, sbo_override=128)
    s512 = check_descriptors(64, 1, base, mem, sbo_override=512)
    check(rel > 0 and s128 > 0 and s512 > 0, "the model does not tell wrong layouts apart")

    print(f"descriptor/staging: {n_desc} (BN, MT, STAGES, stage) placements, every element of "
          f"every k16 step read where kg_wg_load put it")
    print(f"accumulator: {n_acc} (thread, register) pairs equal CLayout_64xN, 64 x BN covered once")
    print(f"({n_skip} (BN, MT, STAGES) skipped: more than 227 KiB of shared memory, not launchable)")
    print("pipeline: slice kt landed at iteration kt; refill only of kt-1's stage (STAGES 2..8)")
    print("RED=1: row partition for S = 1..8; tile within the requirement")
    print(f"controls (BN=64 MT=1, elements read wrong of {4 * (64 + 64) * 16}): swizzle relative to the "
          f"start address {rel}, SBO 128 {s128}, SBO 512 {s512}")
    if FAIL:
        for f in FAIL[:40]:
            print("FAIL:", f)
        print(f"{len(FAIL)} failures")
        return 1
    print("all checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
