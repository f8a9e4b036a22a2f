#!/bin/sh
# tools/device/gpu_checks.sh OUTDIR: the GPU measurements and checks of
# docs/cuda-backend.md, in one go, on a machine with an NVIDIA GPU and a
# kgate built beforehand (bin/kgate).  Writes everything under OUTDIR:
#   env.txt           ldd of kgate, nvidia-smi
#   floor.txt         the hand-written graph floor before and after kgate's
#   floor-ev/, floor-report.md   kgate's floor campaign (examples/cuda-floor.kg)
#   aa-ev/, aa-report.md         the A/A campaign (examples/cuda-aa.kg)
#   gemm-ev/, gemm-report.md     examples/cuda-gemm.kg end to end
#   sanitize.txt      kgate check --sanitize on tests/gpu/sanitize.kg
#   test-gpu.txt      tests/gpu/run.sh
#   check-*.txt       kgate check of every replication plan
#   torch.txt         tools/torch_reference.py
set -u
R=${1:?usage: gpu_checks.sh OUTDIR}
mkdir -p "$R"
K=$PWD/bin/kgate
step() { echo "== $(date -u +%T) $*" >&2; }
step env
{ ldd "$K"; nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE,POWER,TEMPERATURE; } > "$R/env.txt" 2>&1
step floor
nvcc -O2 -arch=sm_90 -o /tmp/empty_graph tools/floor/empty_graph.cu > "$R/floor.txt" 2>&1
/tmp/empty_graph 5000 >> "$R/floor.txt" 2>&1
"$K" run examples/cuda-floor.kg -o "$R/floor-ev" > "$R/floor-report.md" 2>> "$R/floor.txt"
/tmp/empty_graph 5000 >> "$R/floor.txt" 2>&1
step aa
"$K" run examples/cuda-aa.kg -o "$R/aa-ev" > "$R/aa-report.md" 2> "$R/aa.err"
step gemm
"$K" run examples/cuda-gemm.kg -o "$R/gemm-ev" > "$R/gemm-report.md" 2> "$R/gemm.err"
"$K" verify "$R/gemm-ev" > "$R/gemm-verify.txt" 2>&1
step sanitize
"$K" check tests/gpu/sanitize.kg -o "$R/san" --sanitize memcheck,racecheck,synccheck,initcheck \
    > "$R/sanitize.txt" 2>&1
step test-gpu
KGATE="$K" sh tests/gpu/run.sh > "$R/test-gpu.txt" 2>&1
step replication-checks
for p in examples/replication/*.kg; do
    b=$(basename "$p" .kg)
    "$K" check "$p" -o "$R/check-$b" > "$R/check-$b.txt" 2>&1
    echo "$b: exit $?" >> "$R/checks-summary.txt"
done
step torch
python3 tools/torch_reference.py > "$R/torch.txt" 2>&1
step done
