#!/usr/bin/env python3
"""tools/device/hopper_subset.py PLAN OUT ARM-OR-PREFIX...: writes OUT (beside PLAN, whose sources are
relative to its folder) with PLAN's [campaign], cases, gate and baseline/control/reference arms, and
only the candidate arms named (a name ending in * is a prefix).  For a short device run of a few arms
of a large plan: python3 tools/device/hopper_subset.py examples/replication/splitk_hopper.kg
examples/replication/_sub.kg 'wg_k*' wg_clu_atom_w2_n32"""
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    plan, out, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
    parts = open(plan).read().split("\n[")
    keep = [parts[0]]
    for p in parts[1:]:
        head = p.split("]")[0]
        kind, _, name = head.partition(" ")
        if kind != "arm":
            keep.append(p)
            continue
        role = next((l.split("=", 1)[1].strip() for l in p.splitlines() if l.replace(" ", "").startswith("role=")), "candidate")
        hit = any(name.startswith(w[:-1]) if w.endswith("*") else name == w for w in wanted)
        if role != "candidate" or hit:
            keep.append(p)
    open(out, "w").write("\n[".join(keep))


if __name__ == "__main__":
    main()
