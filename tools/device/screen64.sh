#!/bin/bash
# tools/device/screen64.sh OUT: examples/screen-64.kg (64 variants of a ~10 us rowsum kernel, 4 of them
# deliberately wrong) screened by `kgate screen` on the GPU, under `time`; the goal is at most 3 minutes
# of wall (about 3 s per candidate).  Builds build/kgate when it is not there (or uses $KGATE).  Writes:
#   OUT/screen.md        the ranking (stdout) and OUT/screen.err (stderr), with the `time` figures
#   OUT/report.md        the screen's report (its "## Screening" section: drops, device and wall s)
#   OUT/processes.csv    each process's seconds, set-up, checks and timed phases
#   OUT/screen.watch.csv the host watch's log: its "build" row is the NVRTC builds of the 66 arms
#   OUT/worker-times.txt the workers' "time:" lines (backend open, loads, references, phases)
#   OUT/verify.txt       kgate verify of the screen's folder (re-derives the drops)
#   OUT/full.*           the same plan with --full (every candidate in every process), for the
#                        saving; skipped when SCREEN64_FULL=0
#   OUT/summary.txt      the wall of both, per candidate
# Each run is cut at SCREEN64_LIMIT seconds (290): both fit one device call of 10 minutes.
# SCREEN64_BACKEND=fake runs the same plan on the fake backend (a dry run of this script, no GPU).
set -u
OUT=${1:?usage: screen64.sh OUT}
mkdir -p "$OUT"
ROOT=$(pwd)
K=${KGATE:-$ROOT/build/kgate}
if [ ! -x "$K" ]; then make -j"$(nproc)" >"$OUT/build.log" 2>&1 || { echo "make failed: $OUT/build.log"; exit 2; }; fi
export KGATE_LOCK_DIR=$(mktemp -d)
{ nvidia-smi; date -u; "$K" --version; } >"$OUT/env.txt" 2>&1
P=$(mktemp -d)
cp kernels/cuda/*.cu "$P/"
sed 's#\.\./kernels/cuda/##' examples/screen-64.kg >"$P/screen-64.kg"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
one() { # name extra-flags...
    name=$1
    shift
    t0=$(now)
    ( cd "$P" && time timeout "${SCREEN64_LIMIT:-290}" "$K" screen ${SCREEN64_BACKEND:+--backend "$SCREEN64_BACKEND"} "$@" screen-64.kg -o "$P/ev-$name" --confirm "$P/$name-confirm.kg" \
        >"$OUT/$name.md" 2>"$OUT/$name.err" ) 2>>"$OUT/$name.err"
    st=$?
    w=$(since "$t0")
    echo "exit $st wall $w s" >>"$OUT/$name.err"
    cp "$P/ev-$name/report.md" "$OUT/$name.report.md" 2>/dev/null
    cp "$P/ev-$name/processes.csv" "$OUT/$name.processes.csv" 2>/dev/null
    cp "$P/ev-$name/watch.csv" "$OUT/$name.watch.csv" 2>/dev/null
    grep -h "^time:" "$P/ev-$name"/logs/proc-*.log >"$OUT/$name.worker-times.txt" 2>/dev/null
    timeout 300 "$K" verify "$P/ev-$name" >"$OUT/$name.verify.txt" 2>&1
    echo "exit $?" >>"$OUT/$name.verify.txt"
    echo "$name: exit $st, wall $w s, $(awk -v w="$w" 'BEGIN { printf "%.2f", w / 64 }') s per candidate" \
        >>"$OUT/summary.txt"
}
one screen
mv "$OUT/screen.report.md" "$OUT/report.md" 2>/dev/null
mv "$OUT/screen.processes.csv" "$OUT/processes.csv" 2>/dev/null
mv "$OUT/screen.worker-times.txt" "$OUT/worker-times.txt" 2>/dev/null
mv "$OUT/screen.verify.txt" "$OUT/verify.txt" 2>/dev/null
[ "${SCREEN64_FULL:-1}" = 0 ] || one full --full
cat "$OUT/summary.txt"
