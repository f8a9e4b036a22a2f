#!/bin/sh
# tools/device/structure_run.sh OUT: the GPU checks after the structural
# moves: make test-gpu with the carried portable binary, examples/cuda-gemm.kg
# end to end with verify, the four compute-sanitizer tools on
# tests/gpu/sanitize.kg, and `kgate list`.  Writes OUT/*.txt and the
# cuda-gemm report, resources and telemetry head.
set -u
OUT=$1
mkdir -p "$OUT"
K=bin/kgate-portable
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; ldd "$K"; "$K" --version; } > "$OUT/env.txt" 2>&1
"$K" list > "$OUT/list.txt" 2>&1
# the GPU test suite; -o: the carried binary is not rebuilt
( time make -o "$K" test-gpu KGATE="$K" ) > "$OUT/test-gpu.txt" 2>&1
echo "exit $?" >> "$OUT/test-gpu.txt"
rm -rf /tmp/ev-gemm
( time "$K" run examples/cuda-gemm.kg -o /tmp/ev-gemm --no-progress ) > "$OUT/gemm-report.md" 2> "$OUT/gemm.err"
echo "exit $?" >> "$OUT/gemm.err"
"$K" verify /tmp/ev-gemm > "$OUT/gemm-verify.txt" 2>&1; echo "exit $?" >> "$OUT/gemm-verify.txt"
cp /tmp/ev-gemm/telemetry/resources-000.csv "$OUT/gemm-resources-000.csv" 2>/dev/null
head -5 /tmp/ev-gemm/telemetry/proc-000.csv > "$OUT/gemm-telemetry-head.csv" 2>/dev/null
"$K" check tests/gpu/sanitize.kg --sanitize memcheck,racecheck,synccheck,initcheck -o /tmp/ev-san > "$OUT/sanitize.txt" 2>&1
echo "exit $?" >> "$OUT/sanitize.txt"
