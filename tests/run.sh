#!/bin/sh
# tests/run.sh: runs kgate's CPU test suite: every unit test binary given
# as an argument, and every tests/cli/*.sh script (each a scenario that
# drives the kgate binary in $KGATE).  Ends with "N passed, N failed",
# and shows the log of every failed test.
#
# Tests run in parallel, KGATE_TEST_JOBS at a time (default: one per
# core).  Each has its own temporary folder (TMPDIR) and its own lock
# folder (KGATE_LOCK_DIR; tests/cli_lib.sh sets one per script too), so
# none waits on another's device lock or on another user's campaign.  The
# scenarios share one compile cache for the run (KGATE_TEST_CACHE), and
# take the cpu backend's peaks from tests/fixtures/peaks-cpu.json
# (tests/cli_lib.sh; physics.sh measures them).
# A script tags itself with a line "# kgate-test: TAG (why)":
#   alone         runs after the others, with nothing else of the suite
#                 running (it measures or asserts on the host's own load);
#   first         starts before the untagged scripts (the long ones, so
#                 that the parallel phase ends evenly);
#   waits         spends its time waiting (quiet windows, timeouts, other
#                 daemons), not computing: it runs beside the others, in a
#                 pool of its own (KGATE_TEST_WAITERS at a time, default 2),
#                 so that it holds none of the one-per-core places;
#   no-sanitize   left out of the sanitizer pass (BUILD=build-san, make
#                 sanitize), which is there for memory and undefined
#                 behaviour in kgate's C: the pass runs every unit test and
#                 every scenario that drives parsers, evidence, untrusted
#                 code and failure paths, and leaves out the scenarios
#                 whose only subject is timing, waiting or a rate over many
#                 seeds (each says why on its tag line); make test runs
#                 everything.
# KGATE_TESTS="name ..." runs only the named tests (unit or cli names).
set -u
: "${KGATE:?set KGATE to the kgate binary}"
export KGATE
case ${BUILD:-build} in *san*) sanitizer=1 ;; *) sanitizer=0 ;; esac
jobs=${KGATE_TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
waiters=${KGATE_TEST_WAITERS:-2}
logdir=$(mktemp -d "${TMPDIR:-/tmp}/kgate-tests.XXXXXX")
# others may pass through it: hygiene.sh runs kgate as another user in its folder
chmod 0711 "$logdir"
trap 'rm -rf "$logdir"' EXIT
trap 'exit 130' INT TERM

tagged() { # script tag
    grep -q "^# kgate-test: $2\\b" "$1"
}
wanted() { # name
    [ -z "${KGATE_TESTS:-}" ] && return 0
    case " $KGATE_TESTS " in *" $1 "*) return 0 ;; esac
    return 1
}

# The job lists: "name command..." lines.
: >"$logdir/first"; : >"$logdir/rest"; : >"$logdir/alone"; : >"$logdir/waits"; : >"$logdir/skipped"
for t in "$@"; do
    n=$(basename "$t")
    wanted "$n" && echo "$n $t" >>"$logdir/rest"
done
for s in tests/cli/*.sh; do
    [ -f "$s" ] || continue
    n=$(basename "$s" .sh)
    wanted "$n" || continue
    if [ "$sanitizer" = 1 ] && tagged "$s" no-sanitize; then
        echo "$n" >>"$logdir/skipped"
    elif tagged "$s" alone; then
        echo "$n sh $s" >>"$logdir/alone"
    elif tagged "$s" waits; then
        echo "$n sh $s" >>"$logdir/waits"
    elif tagged "$s" first; then
        echo "$n sh $s" >>"$logdir/first"
    else
        echo "$n sh $s" >>"$logdir/rest"
    fi
done

# Runs one job (name command...): its own TMPDIR and lock folder, its log,
# its status and seconds in $logdir.
# One compile cache for the whole run (tests/cli_lib.sh): an arm that many
# scenarios compile is compiled once.
export KGATE_TEST_CACHE="$logdir/cache"
cat >"$logdir/one.sh" <<'EOF'
d=$1; n=$2; shift 2
mkdir -p "$d/tmp/$n/locks"
start=$(date +%s.%N)
TMPDIR="$d/tmp/$n" KGATE_LOCK_DIR="$d/tmp/$n/locks" "$@" >"$d/$n.log" 2>&1 </dev/null; st=$?
s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
rm -rf "$d/tmp/$n"
echo "$st $s" >"$d/$n.status"
if [ "$st" -eq 0 ]; then echo "PASS $n (${s} s)"; else echo "FAIL $n (${s} s, exit $st)"; fi
EOF
run_list() { # list jobs
    [ -s "$1" ] || return 0
    # xargs runs "sh one.sh LOGDIR NAME COMMAND..." per line, $2 at a time
    sed "s#^#$logdir #" "$1" | xargs -P "$2" -L 1 sh "$logdir/one.sh"
}
start=$(date +%s)
cat "$logdir/first" "$logdir/rest" >"$logdir/parallel"
run_list "$logdir/waits" "$waiters" &
waiting=$!
run_list "$logdir/parallel" "$jobs"
wait $waiting
run_list "$logdir/alone" 1

pass=0
fail=0
failed_names=""
for n in $(cat "$logdir/parallel" "$logdir/waits" "$logdir/alone" | cut -d' ' -f1); do
    if [ -f "$logdir/$n.status" ] && [ "$(cut -d' ' -f1 "$logdir/$n.status")" = 0 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); failed_names="$failed_names $n"
    fi
done
for n in $failed_names; do
    echo "---- $n (last 60 lines of its log)"
    [ -f "$logdir/$n.log" ] && tail -n 60 "$logdir/$n.log" | sed 's/^/    /'
done
if [ -s "$logdir/skipped" ]; then
    echo "not in the sanitizer pass (tagged no-sanitize):" $(cat "$logdir/skipped")
fi
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$pass passed, $fail failed ($(($(date +%s) - start)) s, $jobs at a time, and $waiters of the waiting ones beside them)"
[ "$fail" -eq 0 ]
