#!/bin/sh
# tools/device/scale16_run.sh OUT: on the H200 in one device call (bin/kgate-portable from
# .carry/bins.tgz):
#   compare   examples/cuda-conv1d.kg run twice, then kgate compare A B (and --json)
#   devices   examples/cuda-conv1d.kg with --devices 0 (one shard on the one GPU, merged), verified
#   python    tools/device/python_triton.sh (the Python package, its Triton helper on the device)
#   test      tests/gpu/run.sh (make test-gpu's script)
# Writes OUT/scale16.tgz only (python_triton.sh's results in s/python, its evidence folders left out).
set -u
OUT=${1:?usage: scale16_run.sh OUT}
ROOT=$(pwd)
R=$OUT/s
mkdir -p "$R"
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
{ ldd "$K"; nvidia-smi; date -u; "$K" --version; } >"$R/env.txt" 2>&1
cd examples
for x in A B; do
    timeout 200 "$K" run cuda-conv1d.kg -o /tmp/cc$x -q >/dev/null 2>"$R/run$x.err"; echo "exit $?" >>"$R/run$x.err"
    cp /tmp/cc$x/report.md "$R/run$x-report.md" 2>/dev/null
done
"$K" compare /tmp/ccA /tmp/ccB >"$R/compare.md" 2>"$R/compare.err"; echo "exit $?" >>"$R/compare.err"
"$K" compare /tmp/ccA /tmp/ccB --json >"$R/compare.json" 2>>"$R/compare.err"
timeout 200 "$K" run cuda-conv1d.kg -o /tmp/ccD --devices 0 -q >/dev/null 2>"$R/devices.err"; echo "exit $?" >>"$R/devices.err"
cp /tmp/ccD/report.md "$R/devices-report.md" 2>/dev/null
cp /tmp/ccD/meta.json "$R/devices-meta.json" 2>/dev/null
ls /tmp/ccD /tmp/ccD/shards >"$R/devices-ls.txt" 2>&1
"$K" verify /tmp/ccD >"$R/devices-verify.txt" 2>&1; echo "exit $?" >>"$R/devices-verify.txt"
cd "$ROOT"
KGATE=$K timeout 240 sh tools/device/python_triton.sh "$OUT" >"$R/python_triton.out" 2>&1; echo "exit $?" >>"$R/python_triton.out"
KGATE=$K timeout 300 sh tests/gpu/run.sh >"$R/test-gpu.txt" 2>&1; echo "exit $?" >>"$R/test-gpu.txt"
# python_triton.sh's results, without its evidence folders, into the one archive
mkdir -p "$R/python"
for f in "$OUT"/r/*; do [ -f "$f" ] && cp "$f" "$R/python/"; done
rm -rf "$OUT/r" "$OUT/work" "$OUT/python_triton.tgz"
tar czf "$OUT/scale16.tgz" -C "$OUT" s
rm -rf "$R"
