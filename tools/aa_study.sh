#!/bin/sh
# tools/aa_study.sh: the A/A calibration study on the fake backend.
#   sh tools/aa_study.sh [N] [MARGIN]    (defaults: 200 seeds, margin 0%)
# Runs N campaigns in which the candidate is the baseline in disguise (same
# scripted time, its own noise) with an A/A control, each with its own seed,
# and counts the verdicts.  The false-FASTER rate must stay at or below the
# plan's alpha (statistics-anchors.md §3.6: observed FPR <= alpha +
# 2 sqrt(alpha (1 - alpha) / N)).  Prints one line per verdict and a summary.
set -eu
N=${1:-200}
MARGIN=${2:-0%}
KGATE=${KGATE:-./bin/kgate}
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-aa.XXXXXX")
trap 'rm -rf "$T"' EXIT
src=$(pwd)/kernels/cpu/rowsum_naive.c
faster=0; slower=0; equiv=0; inconcl=0; invalid=0; orderflag=0
i=1
while [ "$i" -le "$N" ]; do
    cat > "$T/aa.kg" <<PLAN
[campaign]
name = aa-$i
backend = fake
warmup = 1
samples = 5
rounds = 4
processes = 3
seed = $i
alpha = 0.05
margin = $MARGIN
equivalence = 1%
control_margin = 1%
[case small]
op = rowsum
dtype = f32
M = 4
N = 16
[arm base]
op = rowsum
role = baseline
source = $src
fake_ns = 1000
fake_noise = 0.01
[arm cand]
op = rowsum
role = candidate
source = $src
fake_ns = 1000
fake_noise = 0.01
[arm ctrl]
op = rowsum
role = control
of = base
fake_ns = 1000
fake_noise = 0.01
PLAN
    st=0
    "$KGATE" run "$T/aa.kg" -o "$T/ev$i" >/dev/null 2>&1 || st=$?
    [ "$st" -eq 3 ] && invalid=$((invalid + 1))
    v=$(awk -F, '$2 == "cand" { print $5 }' "$T/ev$i/results.csv")
    o=$(awk -F, '$2 == "cand" { print $22 }' "$T/ev$i/results.csv")
    case "$v" in
        FASTER) faster=$((faster + 1)) ;;
        SLOWER) slower=$((slower + 1)) ;;
        EQUIVALENT) equiv=$((equiv + 1)) ;;
        *) inconcl=$((inconcl + 1)) ;;
    esac
    [ "$o" = 1 ] && orderflag=$((orderflag + 1))
    rm -rf "$T/ev$i"
    i=$((i + 1))
done
echo "A/A study: $N campaigns, alpha 0.05 one-sided, margin $MARGIN, 3 processes per direction"
echo "FASTER $faster  SLOWER $slower  EQUIVALENT $equiv  INCONCLUSIVE $inconcl  invalid (control) $invalid  order-flagged $orderflag"
awk -v f="$faster" -v n="$N" 'BEGIN {
    a = 0.05; lim = a + 2 * sqrt(a * (1 - a) / n);
    printf "false-FASTER rate %.3f (bound alpha + 2 SE = %.3f): %s\n", f / n, lim, (f / n <= lim) ? "within" : "EXCEEDED" }'
