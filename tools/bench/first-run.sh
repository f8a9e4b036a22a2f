#!/bin/sh
# tools/bench/first-run.sh: the README's first command, as a newcomer runs
# it, timed twice: once while busy loops keep every core busy (two on a
# 2-core machine; LOAD sets how many), and once without them.  Each run is
# a fresh clone of this repository's HEAD (or of REPO), then
#   sh tools/install-deps.sh && make && ./bin/kgate run examples/quickstart.kg
# with an empty compile cache of its own (a newcomer has none).  The load
# starts before the clone and stops after the verdict.  Prints, per run,
# the whole time (install-deps, make, campaign) and the campaign's own,
# the exit status and the short answer's gate line, and the 1-minute load
# average before and after (other users of the host count too).
#
#   sh tools/bench/first-run.sh [REPO]        (from the repository root)
#
# The clones and their logs stay in the folder it prints.  The lock is
# kgate's default (the user's own lock folder), as in the README.
set -u
cd "$(dirname "$0")/../.."
repo=${1:-$PWD}
load=${LOAD:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
out=$(mktemp -d "${TMPDIR:-/tmp}/kgate-first-run.XXXXXX")
pids=""
stop() {
    # the busy loops this script started, by their process IDs
    [ -n "$pids" ] && kill $pids 2>/dev/null
    wait 2>/dev/null
    pids=""
}
trap 'stop; exit 130' INT TERM
now() { date +%s.%N; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# one run: LABEL LOOPS
one() {
    label=$1 loops=$2
    dir="$out/$label"
    la0=$(loadavg)
    i=0
    while [ "$i" -lt "$loops" ]; do
        sh -c 'while :; do :; done' &
        pids="$pids $!"
        i=$((i + 1))
    done
    t0=$(now)
    git clone -q "$repo" "$dir/kgate" || { stop; echo "first-run: cannot clone $repo" >&2; exit 2; }
    cd "$dir/kgate"
    t1=$(now)
    sh tools/install-deps.sh >"$dir/install-deps.log" 2>&1 || echo "first-run: install-deps.sh failed ($dir/install-deps.log)"
    t2=$(now)
    make >"$dir/make.log" 2>&1 || { stop; echo "first-run: make failed ($dir/make.log)" >&2; exit 2; }
    t3=$(now)
    KGATE_CACHE_DIR="$dir/cache" ./bin/kgate run examples/quickstart.kg >"$dir/stdout" 2>"$dir/stderr"
    st=$?
    t4=$(now)
    cd - >/dev/null
    stop
    la1=$(loadavg)
    echo "first-run: $label ($loops busy loops): whole $(secs "$t0" "$t4") s (clone $(secs "$t0" "$t1") s," \
         "install-deps $(secs "$t1" "$t2") s, make $(secs "$t2" "$t3") s), campaign $(secs "$t3" "$t4") s; exit $st;" \
         "load average $la0 before, $la1 after"
    echo "first-run: $label: $(head -n 1 "$dir/stdout")"
    echo "first-run: $label: stdout $(wc -l <"$dir/stdout") lines, stderr $(wc -l <"$dir/stderr") lines"
}

echo "first-run: $(nproc 2>/dev/null || echo '?') cores; clones and logs in $out"
one loaded "$load"
one idle 0
