#!/bin/sh
# tools/bench/flake-check.sh: the flake check.  Runs the whole CPU test
# suite (tests/run.sh, what `make test` runs) N times in a row while two
# busy loops load both cores of a 2-core machine (one per core on a larger
# one: LOAD sets how many), then stops the load and prints each run's
# summary and the total.  Exits 0 only when every run passed.
#
#   sh tools/bench/flake-check.sh [N]        (N: runs, default 5; from the repository root)
#
# BUILD (default build) names the build folder, whose kgate and unit tests
# it runs; it builds them first (make test-bin).  Each run's log is kept
# in the folder it prints.
set -u
cd "$(dirname "$0")/../.."
runs=${1:-5}
BUILD=${BUILD:-build}
load=${LOAD:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
make -s -j"$load" BUILD="$BUILD" test-bin >/dev/null || { echo "flake-check: the build failed" >&2; exit 2; }
out=$(mktemp -d "${TMPDIR:-/tmp}/kgate-flake.XXXXXX")
pids=""
stop() {
    # the busy loops this script started, by their process IDs
    [ -n "$pids" ] && kill $pids 2>/dev/null
    wait 2>/dev/null
    pids=""
}
trap 'stop; exit 130' INT TERM
i=0
while [ "$i" -lt "$load" ]; do
    sh -c 'while :; do :; done' &
    pids="$pids $!"
    i=$((i + 1))
done
echo "flake-check: $load busy loops (pids$pids), $runs runs of the suite; logs in $out"
units=$(ls "$BUILD"/tests/test_* 2>/dev/null | grep -v '\.d$')
fails=0
i=1
start=$(date +%s)
while [ "$i" -le "$runs" ]; do
    s=$(date +%s)
    KGATE=$(pwd)/$BUILD/kgate BUILD=$BUILD sh tests/run.sh $units >"$out/run-$i.log" 2>&1; st=$?
    summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/run-$i.log" | tail -n 1)
    failed=$(grep -E '^failed:' "$out/run-$i.log" | tail -n 1)
    echo "run $i: ${summary:-no summary (exit $st)} in $(($(date +%s) - s)) s${failed:+; $failed}"
    [ "$st" = 0 ] || fails=$((fails + 1))
    i=$((i + 1))
done
stop
trap - INT TERM
echo "flake-check: $runs runs under $load busy loops in $(($(date +%s) - start)) s: $((runs - fails)) passed, $fails failed"
[ "$fails" = 0 ]
