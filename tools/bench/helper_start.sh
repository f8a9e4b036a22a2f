#!/bin/sh
# tools/bench/helper_start.sh OUT BACKEND KGATE...: what starting Python helpers costs a campaign.
# A plan with an op declared in Python (torch tensors: its float64 reference runs in kgate's ops
# helper) and three torch library arms (a baseline, its A/A control, a candidate), 3 processes per
# direction of 2 rounds, on BACKEND (cpu or cuda), run once by each kgate binary given. Prints one
# line per binary: the campaign's wall, the supervisor's "arm builds and device peaks" and the
# median per process of its seconds and of its worker set-up (processes.csv setup_s: loads and the
# helpers' start). Each worker starts four Python processes that import torch (three arms'
# helpers and the ops helper); before 2026-12-05 they started one after another, now side by side.
# Needs a Python with torch: KGATE_PYTHON, else /usr/bin/python3.  HELPER_START_CHECK=1 runs
# `kgate check` of the plan instead (every arm loaded and checked once per process: a smoke test of
# the helpers' start) and exits with the last binary's status.
# Example (this repository's build against an older one):
#   sh tools/bench/helper_start.sh /tmp/hs cpu /tmp/old/build/kgate build/kgate
set -u
OUT=${1:?usage: helper_start.sh OUT BACKEND KGATE...}
BACKEND=${2:?backend: cpu or cuda}
shift 2
[ $# -gt 0 ] || { echo "helper_start.sh: name at least one kgate binary" >&2; exit 2; }
PY=${KGATE_PYTHON:-/usr/bin/python3}
"$PY" -c 'import torch' 2>/dev/null || { echo "helper_start.sh: $PY cannot import torch (set KGATE_PYTHON)" >&2; exit 2; }
mkdir -p "$OUT"
cat >"$OUT/ref.py" <<'EOF'
def saxpy(X, Y0, alpha):
    return alpha * X + Y0
EOF
cat >"$OUT/calls.py" <<'EOF'
def saxpy(X, Y0, alpha):
    return alpha * X + Y0


def saxpy_fused(X, Y0, alpha):
    return Y0.add(X, alpha=alpha)
EOF
cat >"$OUT/helpers.kg" <<EOF
[campaign]
name = helper-start
backend = $BACKEND
warmup = 1
samples = 5
rounds = 2
processes = 3
seed = 11
timeout = 120

[op saxpy]
reference = python:ref.py:saxpy
tensors = torch
vars = n alpha:real
inputs = X[n] Y0[n]
outputs = Y[n]
flops = 2*n
bytes = 12*n

[case s]
op = saxpy
dtype = f32
n = 1048576
alpha = 0.75

[arm torch]
op = saxpy
role = baseline
builtin = torch
call = python:calls.py:saxpy

[arm torch_copy]
op = saxpy
role = control
of = torch

[arm fused]
op = saxpy
role = candidate
builtin = torch
call = python:calls.py:saxpy_fused
EOF
if [ "${HELPER_START_CHECK:-0}" = 1 ]; then
    st=0
    for k in "$@"; do
        KGATE_PYTHON="$PY" KGATE_LOCK_DIR="$OUT/locks" "$k" check "$OUT/helpers.kg" -o "$OUT/check-$(basename "$k")" \
            >"$OUT/check.out" 2>"$OUT/check.err"
        st=$?
        echo "$k: kgate check exit $st: $(grep -E '^[0-9]+ checks' "$OUT/check.out")"
        [ $st = 0 ] || tail -n 5 "$OUT/check.err"
    done
    exit $st
fi
printf '%-40s %8s %8s %10s %10s\n' binary wall_s build_s process_s setup_s
i=0
for k in "$@"; do
    i=$((i + 1))
    d=$OUT/ev-$i
    rm -rf "$d"
    t0=$(date +%s.%N)
    KGATE_PYTHON="$PY" KGATE_LOCK_DIR="$OUT/locks" "$k" run "$OUT/helpers.kg" -o "$d" --quiet-window 0 \
        >"$OUT/run-$i.out" 2>"$OUT/run-$i.err"
    t1=$(date +%s.%N)
    [ -f "$d/processes.csv" ] || { echo "$k: no processes.csv (see $OUT/run-$i.err)"; continue; }
    build=$(grep 'arm builds and device peaks' "$d/report.md" | awk -F'|' '{ gsub(/ /, "", $3); print $3 }')
    # processes.csv: seconds (5th column) and setup_s (11th), medians over the processes
    med() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    ps=$(tail -n +2 "$d/processes.csv" | cut -d, -f5 | med)
    su=$(tail -n +2 "$d/processes.csv" | cut -d, -f11 | med)
    printf '%-40s %8.1f %8s %10s %10s\n' "$k" "$(echo "$t1 - $t0" | bc)" "$build" "$ps" "$su"
done
