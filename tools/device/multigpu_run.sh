#!/bin/sh
# tools/device/multigpu_run.sh OUT [PLAN ...]: a sharded campaign on every GPU of one host, in one
# device call on a machine with two or more GPUs (kind nvidia-h200-x2 or larger), with
# bin/kgate-portable from .carry/bins.tgz (make portable here, strip, tar czf .carry/bins.tgz bin/).
# The plans default to examples/cuda-gemm.kg and examples/replication/rowsum.kg.  For each plan:
#   sharded  kgate run PLAN --devices 0,1,...  (every GPU nvidia-smi lists), verified; per shard its
#            meta.json (device identity, index, shard), processes.csv and the telemetry files' names
#   one      kgate run PLAN --devices 0 (the same plan on one GPU of the machine), verified
#   compare  kgate compare ONE SHARDED (verdicts and intervals of the two), both wall times
# Then, for the first plan only:
#   foreign  the sharded run again while a foreign compute loop (python3 with PyTorch, else a
#            CuPy loop) runs on the last GPU: processes.csv of every shard says which were
#            contaminated; only the last GPU's shard should be
# Writes OUT/multigpu.tgz (reports, results, processes, meta, verify outputs, times; no raw
# outputs).  Each campaign is bounded by a timeout so that the call stays under 10 minutes.
set -u
OUT=${1:?usage: multigpu_run.sh OUT [PLAN ...]}
shift
ROOT=$(pwd)
R=$OUT/m
mkdir -p "$R"
T0=$(date +%s)
[ -f .carry/bins.tgz ] && tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
[ -x "$K" ] || K=$ROOT/build/kgate
NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
{ ldd "$K"; nvidia-smi -L; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv;
  date -u; "$K" --version; echo "gpus: $NG"; } >"$R/env.txt" 2>&1
if [ "$NG" -lt 2 ]; then
    echo "only $NG GPU(s): this run needs two or more" >>"$R/env.txt"
    tar czf "$OUT/multigpu.tgz" -C "$OUT" m
    exit 0
fi
DEVS=$(seq -s, 0 $((NG - 1)))
LAST=$((NG - 1))
[ $# -gt 0 ] || set -- examples/cuda-gemm.kg examples/replication/rowsum.kg
stamp() { echo "$1 at $(( $(date +%s) - T0 )) s" >>"$R/times.txt"; }
# NAME FOLDER DEVICES PLAN: one campaign, its wall time and what comes back
camp() {
    s=$(date +%s.%N)
    (cd "$(dirname "$4")" && timeout 150 "$K" run "$(basename "$4")" -o "$2" --devices "$3" -q) >"$R/$1.out" 2>"$R/$1.err"
    echo "exit $?" >>"$R/$1.err"
    e=$(date +%s.%N)
    echo "$1 wall $(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.1f", b - a }') s" >>"$R/walls.txt"
    for f in report.md results.csv meta.json; do cp "$2/$f" "$R/$1-$f" 2>/dev/null; done
    "$K" verify "$2" >"$R/$1-verify.txt" 2>&1; echo "exit $?" >>"$R/$1-verify.txt"
    for sh in "$2"/shards/*; do
        [ -d "$sh" ] || continue
        i=$(basename "$sh")
        cp "$sh/meta.json" "$R/$1-shard$i-meta.json" 2>/dev/null
        cp "$sh/processes.csv" "$R/$1-shard$i-processes.csv" 2>/dev/null
        ls "$sh/telemetry" >"$R/$1-shard$i-telemetry.txt" 2>&1
        grep -h "lock\|device" "$sh"/logs/*.log 2>/dev/null | head -20 >"$R/$1-shard$i-lock.txt"
    done
    stamp "$1"
}
n=0
for p in "$@"; do
    n=$((n + 1))
    name=$(basename "$p" .kg)
    camp "$name-sharded" "/tmp/mg-$name-sharded" "$DEVS" "$ROOT/$p"
    camp "$name-one" "/tmp/mg-$name-one" 0 "$ROOT/$p"
    "$K" compare "/tmp/mg-$name-one" "/tmp/mg-$name-sharded" --allow-device >"$R/$name-compare.md" 2>&1
    echo "exit $?" >>"$R/$name-compare.md"
done
# a foreign compute process on the last GPU during the sharded run of the first plan
first=$1
name=$(basename "$first" .kg)
cat >"$R/foreign.py" <<'PY'
import sys, time
end = time.time() + float(sys.argv[1])
try:
    import torch
    x = torch.randn(8192, 8192, device="cuda")
    while time.time() < end:
        y = x @ x
        torch.cuda.synchronize()
    print("torch loop done")
except ImportError:
    import cupy
    x = cupy.random.rand(8192, 8192, dtype=cupy.float32)
    while time.time() < end:
        y = x @ x
        cupy.cuda.Device().synchronize()
    print("cupy loop done")
PY
LEFT=$(( 560 - ($(date +%s) - T0) ))
if [ "$LEFT" -gt 120 ]; then
    CUDA_VISIBLE_DEVICES=$LAST python3 "$R/foreign.py" $((LEFT - 30)) >"$R/foreign-loop.txt" 2>&1 &
    FP=$!
    sleep 5
    nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name --format=csv >"$R/foreign-apps.txt" 2>&1
    camp "$name-foreign" "/tmp/mg-$name-foreign" "$DEVS" "$ROOT/$first"
    kill "$FP" 2>/dev/null; wait "$FP" 2>/dev/null
    for f in "$R/$name-foreign-shard"*-processes.csv; do
        [ -f "$f" ] || continue
        echo "$(basename "$f"): $(grep -c 'contaminated' "$f") contaminated row(s) of $(($(wc -l <"$f") - 1))" >>"$R/foreign-summary.txt"
    done
else
    echo "foreign: not run, $LEFT s left" >"$R/foreign-summary.txt"
fi
stamp total
tar czf "$OUT/multigpu.tgz" -C "$OUT" m
rm -rf "$R"
