#!/bin/sh
# The GPU checks of issue 29 (the house): make test-gpu's script on the
# carried binary, then a CUDA campaign with a plan-declared op and its
# kgate verify, whose saved outputs replay through the op server.
# Usage, from the repository root on the device: sh tools/device/house_run.sh OUT
set -u
OUT=${1:?OUT folder}
mkdir -p "$OUT"
tar xzf .carry/bins.tgz
export KGATE="$PWD/bin/kgate-portable"
export KGATE_LOCK_DIR=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; ldd "$KGATE"; "$KGATE" --version; } >"$OUT/env.txt" 2>&1
t0=$(date +%s)
timeout 480 sh tests/gpu/run.sh >"$OUT/test-gpu.txt" 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$OUT/test-gpu.txt"
t0=$(date +%s)
timeout 150 "$KGATE" run examples/cuda-conv1d.kg -o /tmp/ev-conv1d --no-progress >"$OUT/conv1d-run.txt" 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$OUT/conv1d-run.txt"
timeout 120 "$KGATE" verify /tmp/ev-conv1d >"$OUT/conv1d-verify.txt" 2>&1
echo "exit $?" >>"$OUT/conv1d-verify.txt"
cp /tmp/ev-conv1d/report.md "$OUT/conv1d-report.md" 2>/dev/null
tail -n 3 "$OUT/test-gpu.txt" "$OUT/conv1d-run.txt" "$OUT/conv1d-verify.txt"
