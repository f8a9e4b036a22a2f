#!/bin/sh
# tools/bench/scenario_steps.sh NAME [san] [N]: runs tests/cli/NAME.sh alone (build/kgate, or
# build-san/kgate with san) under `sh -x` with a timestamp on every step, and prints its exit
# status, its wall time and its N (default 20) slowest steps: where a scenario spends its time.
set -u
n=${1:?usage: tools/bench/scenario_steps.sh NAME [san] [N]}
b=build
[ "${2:-}" = san ] && b=build-san
top=${3:-20}
[ -f "tests/cli/$n.sh" ] || { echo "run from the repository root; no tests/cli/$n.sh" >&2; exit 2; }
[ -x "$b/kgate" ] || { echo "no $b/kgate: make test-bin (BUILD=build-san SANITIZE=address,undefined for san)" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
s=$(date +%s.%N)
BUILD=$b KGATE=$(pwd)/$b/kgate PS4='+ $(date +%s.%N) ' sh -x "tests/cli/$n.sh" >"$log" 2>&1
st=$?
e=$(date +%s.%N)
awk -v s="$s" -v e="$e" -v n="$n" -v b="$b" -v st="$st" 'BEGIN { printf "%s (%s): exit %d, %.1f s\n", n, b, st, e - s }'
grep '^+ [0-9]' "$log" | awk '{ t = $2; if (p != "") printf "%.2f %s\n", t - p, prev; p = t; prev = substr($0, 1, 220) }' |
    sort -rn | head -n "$top"
