#!/bin/sh
# tests/run.sh: runs kgate's CPU test suite: every unit test binary given
# as an argument, then every tests/cli/*.sh script (each a scenario that
# drives the kgate binary in $KGATE).  Ends with "N passed, N failed".
set -u
: "${KGATE:?set KGATE to the kgate binary}"
export KGATE
pass=0
fail=0
failed_names=""
logdir=${TMPDIR:-/tmp}/kgate-tests.$$
mkdir -p "$logdir"
run_one() {
    name=$1; shift
    if "$@" >"$logdir/$name.log" 2>&1; then
        pass=$((pass + 1)); echo "PASS $name"
    else
        fail=$((fail + 1)); failed_names="$failed_names $name"; echo "FAIL $name (log follows)"
        sed 's/^/    /' "$logdir/$name.log" | tail -n 40
    fi
}
for t in "$@"; do
    run_one "$(basename "$t")" "$t"
done
for s in tests/cli/*.sh; do
    [ -f "$s" ] || continue
    run_one "$(basename "$s" .sh)" sh "$s"
done
rm -rf "$logdir"
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
