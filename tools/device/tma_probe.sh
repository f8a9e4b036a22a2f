#!/bin/sh
# tools/device/tma_probe.sh OUT: kernels/cuda/gemm_bt_tma.cu without and with its proxy fence under
# kgate check on a Hopper GPU, three times each, trusted and hosted (tests/gpu/tmap.kg's plan): the
# failed output checks per run (docs/measurements/h200-2026-12-05/tma_probe.txt).
#   v0  the kernel without `fence.proxy.async.shared::cta` before each TMA issue (as first written:
#       the block barrier orders the threads' reads of the tiles, not the TMA's writes after them)
#   v1  the kernel as it is
set -u
OUT=${1:?OUT}
ROOT=$(pwd)
mkdir -p "$OUT"
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
export KGATE_INCLUDE=$ROOT/include KGATE_LOCK_DIR=$(mktemp -d)
W=$(mktemp -d)
grep -v 'fence\.proxy\.async\.shared::cta' kernels/cuda/gemm_bt_tma.cu >"$W/v0.cu"
cp kernels/cuda/gemm_bt_tma.cu "$W/v1.cu"
for v in v0 v1; do
    echo "$v: $(grep -c 'fence\.proxy\.async' "$W/$v.cu") proxy fences" >>"$OUT/probe.txt"
    sed -e "s#^source = \.\./\.\./kernels/cuda/gemm_bt_tma\.cu#source = $W/$v.cu#" \
        -e "s#^source = \.\./\.\./kernels/cuda/#source = $ROOT/kernels/cuda/#" tests/gpu/tmap.kg >"$W/$v.kg"
    for i in 1 2 3; do
        timeout 120 "$K" check "$W/$v.kg" -o "$W/$v-$i" >"$W/$v-$i.md" 2>&1
        st=$?
        f=$(grep -c '| FAIL |' "$W/$v-$i.md")
        echo "$v run $i: exit $st, $f failed check rows: $(grep '| FAIL |' "$W/$v-$i.md" | awk -F'|' '{print $3 ":" $6}' | sort | uniq -c | tr '\n' ' ')" >>"$OUT/probe.txt"
    done
done
cp "$W/v0-1.md" "$OUT/v0-1.md" 2>/dev/null
cat "$OUT/probe.txt"
