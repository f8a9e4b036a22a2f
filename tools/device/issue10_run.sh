#!/bin/sh
# tools/device/issue10_run.sh OUT: the H200 checks of untrusted-arm isolation in one call.
# Needs .carry/bins.tgz (bin/kgate-portable of this tree, bin/kgate-base-portable of the tree
# before per-arm contexts, bin/isolation-probe; built and stripped here).  Runs
# tools/device/cudaiso_device.sh (probe, make test-gpu's script, floor and A/A with and without
# per-arm contexts, the scan attack with each binary), then examples/cuda-gemm.kg end to end
# with verify.  Writes OUT/cudaiso.tgz and OUT/extra.tgz.
set -u
OUT=${1:?usage: issue10_run.sh OUT}
tar xzf .carry/bins.tgz
sh tools/device/cudaiso_device.sh "$OUT"
R=$OUT/extra
mkdir -p "$R"
bin/kgate-portable --version >"$R/version.txt" 2>&1
bin/kgate-portable run examples/cuda-gemm.kg -o /tmp/evg --no-progress >"$R/gemm-report.md" 2>"$R/gemm.err"
echo "exit $?" >>"$R/gemm.err"
bin/kgate-portable verify /tmp/evg >"$R/gemm-verify.txt" 2>&1
echo "exit $?" >>"$R/gemm-verify.txt"
tar -C "$OUT" -czf "$OUT/extra.tgz" extra && rm -rf "$R"
