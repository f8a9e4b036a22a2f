#!/bin/sh
# tools/device/ops_run.sh OUT: the plan-declared ops on the H200 in one device call.
# Needs .carry/bins.tgz with bin/kgate-portable of this tree, built and stripped here.
#   conv1d   examples/cuda-conv1d.kg (the worked example of docs/ops.md), then kgate verify
#   dtypes   examples/cuda-quantized.kg (int8 and FP8 inputs, int32, bf16 and f32 outputs), then verify
#   test     tests/gpu/run.sh (make test-gpu's script)
# Writes OUT/ops.tgz.
set -u
OUT=${1:?usage: ops_run.sh OUT}
ROOT=$(pwd)
R=$OUT/r
mkdir -p "$R"
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
{ ldd "$K"; nvidia-smi; date -u; } >"$R/env.txt" 2>&1
"$K" --version >"$R/version.txt" 2>&1
for p in cuda-conv1d cuda-quantized; do
    [ -f "examples/$p.kg" ] || continue
    (cd examples && timeout 280 "$K" run "$p.kg" -o "/tmp/$p" --no-progress >"$R/$p-report.md" 2>"$R/$p.err"
     echo "exit $?" >>"$R/$p.err"
     "$K" verify "/tmp/$p" >"$R/$p-verify.txt" 2>&1; echo "exit $?" >>"$R/$p-verify.txt")
    cp "/tmp/$p/processes.csv" "$R/$p-processes.csv" 2>/dev/null
    cp "/tmp/$p/results.csv" "$R/$p-results.csv" 2>/dev/null
    grep -h ",inputs:fresh," /tmp/$p/checks/*.csv 2>/dev/null | head -n 4 >"$R/$p-fill.txt"
done
KGATE=$K timeout 400 sh tests/gpu/run.sh >"$R/test-gpu.txt" 2>&1
echo "exit $?" >>"$R/test-gpu.txt"
tar czf "$OUT/ops.tgz" -C "$OUT" r
