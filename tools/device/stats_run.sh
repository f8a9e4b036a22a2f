#!/bin/sh
# tools/device/stats_run.sh OUT: the H200 runs of the statistics repairs in one device call.
# Needs .carry/bins.tgz with bin/kgate-portable of this tree (make portable, stripped).  Runs:
#   aa-N.md         examples/cuda-aa.kg at its defaults (margin 0.5%), three times: the copy must
#                   not be FASTER (at margin 0 it was, +0.19% [+0.15%, +0.23%], before the repairs)
#   aa0.md          the same plan at margin = 0 (min_reduction 0.25%, the control margin), once:
#                   what the load-order square and the placement pads do to the offset itself
#   gemm-*          examples/cuda-gemm.kg end to end, then kgate verify
# Writes OUT/stats.tgz (reports, results, the layout checks of the first A/A run).
set -u
OUT=${1:?usage: stats_run.sh OUT}
ROOT=$(pwd)
R=$OUT/r
mkdir -p "$R"
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
{ ldd "$K"; nvidia-smi; date -u; } >"$R/env.txt" 2>&1
"$K" --version >"$R/version.txt" 2>&1
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
P=/tmp/ks
mkdir -p "$P"
cp kernels/cuda/*.cu "$P/"
sed 's#\.\./kernels/cuda/##' examples/cuda-aa.kg >"$P/aa.kg"
sed 's/^control_margin = 0.25%$/control_margin = 0.25%\nmargin = 0/; s/^rule = interval$/rule = interval\nmin_reduction = 0.25%/' "$P/aa.kg" >"$P/aa0.kg"
for i in 1 2 3; do
    t0=$(now)
    (cd "$P" && timeout 150 "$K" run aa.kg -o "/tmp/aa-$i" --no-progress >"$R/aa-$i.md" 2>"$R/aa-$i.err")
    echo "exit $? wall $(since "$t0") s" >>"$R/aa-$i.err"
    cp "/tmp/aa-$i/results.csv" "$R/aa-$i.results.csv" 2>/dev/null
done
grep -h ",layout," /tmp/aa-1/checks/*.csv >"$R/aa-1.layout.csv" 2>/dev/null
t0=$(now)
(cd "$P" && timeout 150 "$K" run aa0.kg -o /tmp/aa0 --no-progress >"$R/aa0.md" 2>"$R/aa0.err")
echo "exit $? wall $(since "$t0") s" >>"$R/aa0.err"
cp /tmp/aa0/results.csv "$R/aa0.results.csv" 2>/dev/null
timeout 150 "$K" run examples/cuda-gemm.kg -o /tmp/evg --no-progress >"$R/gemm-report.md" 2>"$R/gemm.err"
echo "exit $?" >>"$R/gemm.err"
timeout 60 "$K" verify /tmp/evg >"$R/gemm-verify.txt" 2>&1
echo "exit $?" >>"$R/gemm-verify.txt"
tar -C "$OUT" -czf "$OUT/stats.tgz" r && rm -rf "$R"
