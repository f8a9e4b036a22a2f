#!/bin/sh
# tools/bench/analysis.sh: what the analysis of a million samples costs.
# Makes a folder of 1,000,000 fake-backend samples once (the plan
# tools/bench/analysis-1m.kg: 8 processes, 5 cases, 4 arms, 50 rounds of
# 125 samples), then times `kgate report DIR` and `kgate verify DIR` on
# it RUNS times each (default 3, after one untimed warm-up of each) and
# prints one line per figure: the CPU seconds (user + system, the
# process and the children it waited for: verify's op server) as median
# [min-max], the wall and the peak resident memory of the median run,
# then the folder's size, its raw/ folder's and its largest file's.
#
#   sh tools/bench/analysis.sh [DIR]        (from the repository root)
#
# DIR: an existing folder to time instead of making one (a folder this
# script made earlier: it stays where the script says).  KGATE names
# the binary (default ./build/kgate); the lock folder is a private one.
set -u
cd "$(dirname "$0")/../.."
KGATE=${KGATE:-./build/kgate}
runs=${RUNS:-3}
[ -x "$KGATE" ] || { echo "analysis: no $KGATE (make first)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null 2>&1 || { echo "analysis: needs /usr/bin/time" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/kgate-analysis.XXXXXX")
KGATE_LOCK_DIR="$work/locks"
export KGATE_LOCK_DIR
mkdir -p "$KGATE_LOCK_DIR"
if [ $# -ge 1 ]; then
    dir=$1
else
    dir="$work/ev"
    t0=$(date +%s.%N)
    "$KGATE" run tools/bench/analysis-1m.kg -o "$dir" --quiet-window 0 >"$work/run.out" 2>"$work/run.err"
    st=$?
    t1=$(date +%s.%N)
    [ -f "$dir/report.md" ] || { cat "$work/run.err" >&2; echo "analysis: the campaign made no report (exit $st)" >&2; exit 2; }
    echo "analysis: campaign $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s wall, exit $st, folder $dir"
fi
rows=$(for f in "$dir"/raw/proc-*.csv*; do case $f in *.gz) gzip -dc "$f" ;; *) cat "$f" ;; esac; done | grep -vc '^process,')

# one timed command: its CPU (user + sys), wall and peak RSS, one line each run
timed() {
    name=$1
    shift
    "$@" >/dev/null 2>&1                       # the warm-up: the page cache, not the figure
    i=0
    : >"$work/$name.times"
    while [ "$i" -lt "$runs" ]; do
        /usr/bin/time -f "%U %S %e %M" -o "$work/$name.t" "$@" >"$work/$name.out" 2>"$work/$name.err"
        st=$?
        [ "$name" = verify ] && [ "$st" -ne 0 ] && { cat "$work/$name.err" >&2; echo "analysis: verify exit $st" >&2; }
        tail -1 "$work/$name.t" | awk '{ printf "%.3f %.2f %d\n", $1 + $2, $3, $4 }' >>"$work/$name.times"
        i=$((i + 1))
    done
    sort -n "$work/$name.times" | awk -v n="$name" -v r="$runs" '
        { cpu[NR] = $1; wall[NR] = $2; rss[NR] = $3 }
        END { m = int((NR + 1) / 2)
              printf "analysis: %s: %.2f s CPU [%.2f-%.2f] (%d runs), %.2f s wall, %.0f MiB peak\n",
                     n, cpu[m], cpu[1], cpu[NR], r, wall[m], rss[m] / 1024 }'
}
timed report "$KGATE" report "$dir"
timed verify "$KGATE" verify "$dir"
bytes() { du -sb "$1" | cut -f1; }
echo "analysis: folder $(bytes "$dir") bytes ($(awk -v b="$(bytes "$dir")" 'BEGIN { printf "%.1f", b / 1e6 }') MB), raw/ $(bytes "$dir/raw") bytes"
big=$(find "$dir" -type f -printf '%s %P\n' | sort -n | tail -1)
echo "analysis: largest file ${big#* } (${big%% *} bytes)"
echo "analysis: samples $rows (the raw rows of every process)"
exit 0
