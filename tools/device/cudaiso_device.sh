#!/bin/sh
# tools/device/cudaiso_device.sh OUT: one device call for per-arm isolation (about 6 minutes):
# the driver probe, the GPU tests on this tree's binary, then isolation_measure.sh (floor and
# A/A with and without per-arm contexts, the attack with each binary).  Everything lands in
# OUT/cudaiso.tgz.  Run from the folder tools/device/stage.sh filled.
set -u
OUT=${1:?usage: cudaiso_device.sh OUT}
R=$OUT/cudaiso
mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv >"$R/smi.txt" 2>&1
./bin/isolation-probe >"$R/probe.txt" 2>&1
KGATE=bin/kgate-portable timeout 300 sh tests/gpu/run.sh >"$R/test-gpu.txt" 2>&1
echo "test-gpu exit $?" >>"$R/test-gpu.txt"
timeout 240 sh tools/device/isolation_measure.sh "$R/m" >"$R/measure.txt" 2>&1
cat "$R/probe.txt"
tail -12 "$R/test-gpu.txt"
cat "$R/m/summary.txt" 2>/dev/null
tar -C "$OUT" -czf "$OUT/cudaiso.tgz" cudaiso && rm -rf "$R"
