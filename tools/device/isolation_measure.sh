#!/bin/sh
# tools/device/isolation_measure.sh OUT: the cost of per-arm CUDA contexts on a GPU node.
# Needs bin/kgate-portable (this tree), bin/kgate-base-portable (the tree before per-arm
# contexts, built the same way) and bin/isolation-probe.  Writes under OUT:
#   probe.txt                 the driver facts and the cost of one push/pop pair
#   floor-{base,iso}-N.md     examples/cuda-floor.kg, alternated three times (quiet 1 s)
#   aa-{base,iso}.md          examples/cuda-aa.kg once each (quiet 1 s)
#   attack-{base,iso}.md      tests/gpu/isolation_scan.kg with each binary
#   summary.txt               the medians of each floor and A/A report
set -u
OUT=${1:?usage: isolation_measure.sh OUT}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ISO=$ROOT/bin/kgate-portable
BASE=$ROOT/bin/kgate-base-portable
W=$(mktemp -d)
mkdir -p "$OUT" "$W/examples" "$W/tests/gpu" "$W/kernels"
cp -r "$ROOT/kernels/cuda" "$W/kernels/"
cp "$ROOT/tests/gpu/"*.cu "$ROOT/tests/gpu/"*.kg "$W/tests/gpu/"
for p in cuda-floor cuda-aa; do
    sed 's/^quiet = 5 /quiet = 1 /' "$ROOT/examples/$p.kg" >"$W/examples/$p.kg"
done
"$ROOT/bin/isolation-probe" >"$OUT/probe.txt" 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv \
    >"$OUT/gpu-state.txt" 2>&1
run() { # binary plan report
    "$1" run "$2" -o "$W/ev" --no-progress >"$W/log" 2>&1
    echo "exit $?" >>"$W/log"
    cp "$W/ev/report.md" "$3" 2>/dev/null || cp "$W/log" "$3"
    tail -3 "$W/log" >>"$OUT/logs.txt"
    rm -rf "$W/ev"
}
for i in 1 2 3; do
    run "$BASE" "$W/examples/cuda-floor.kg" "$OUT/floor-base-$i.md"
    run "$ISO" "$W/examples/cuda-floor.kg" "$OUT/floor-iso-$i.md"
done
run "$BASE" "$W/examples/cuda-aa.kg" "$OUT/aa-base.md"
run "$ISO" "$W/examples/cuda-aa.kg" "$OUT/aa-iso.md"
run "$BASE" "$W/tests/gpu/isolation_scan.kg" "$OUT/attack-base.md"
run "$ISO" "$W/tests/gpu/isolation_scan.kg" "$OUT/attack-iso.md"
for f in "$OUT"/floor-*.md "$OUT"/aa-*.md "$OUT"/attack-*.md; do
    echo "== $(basename "$f")"
    grep '^| [a-z0-9_]* | [a-z_]* | \(baseline\|candidate\|control\) ' "$f" || tail -5 "$f"
done >"$OUT/summary.txt"
cat "$OUT/probe.txt" "$OUT/summary.txt"
rm -rf "$W"
