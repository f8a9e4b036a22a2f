#!/bin/sh
# tools/device/tma_probe.sh OUT: kernels/cuda/gemm_bt_tma.cu and variants of it under kgate check
# on the H200, three times each, trusted and hosted: the failed output checks per run.
#   v0  the kernel as it is
#   v1  a proxy fence (fence.proxy.async.shared::cta) before each TMA issue, after the block's
#       reads of the tiles it overwrites
set -u
OUT=${1:?OUT}
ROOT=$(pwd)
mkdir -p "$OUT"
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
export KGATE_INCLUDE=$ROOT/include KGATE_LOCK_DIR=$(mktemp -d)
W=$(mktemp -d)
cp kernels/cuda/gemm_bt_tma.cu "$W/v0.cu"
sed 's|^        if (leader) {$|        if (leader) {\n            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");|' kernels/cuda/gemm_bt_tma.cu >"$W/v1.cu"
grep -c "fence.proxy.async" "$W/v1.cu" >>"$OUT/probe.txt"
for v in v0 v1; do
    cat >"$W/$v.kg" <<PLAN
[campaign]
name = tma_$v
backend = cuda
quiet = 0
warmup = 2
samples = 5
rounds = 2
processes = 3
pack = 2
[case f32]
op = gemm_bt
dtype = f32
M = 96
N = 512
K = 2048
[arm naive]
op = gemm_bt
role = baseline
source = $ROOT/kernels/cuda/gemm_bt_naive.cu
[arm tma]
op = gemm_bt
source = $W/$v.cu
[arm tma_t]
op = gemm_bt
trusted = yes
source = $W/$v.cu
[gate]
PLAN
    for i in 1 2 3; do
        timeout 120 "$K" check "$W/$v.kg" -o "$W/$v-$i" >"$W/$v-$i.md" 2>&1
        st=$?
        f=$(grep -c '| FAIL |' "$W/$v-$i.md")
        echo "$v run $i: exit $st, $f failed check rows: $(grep '| FAIL |' "$W/$v-$i.md" | awk -F'|' '{print $3 ":" $6}' | sort | uniq -c | tr '\n' ' ')" >>"$OUT/probe.txt"
    done
done
cp "$W/v0-1.md" "$OUT/v0-1.md" 2>/dev/null
cat "$OUT/probe.txt"
