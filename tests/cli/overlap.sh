# The next worker starts beside the current one's last checks, never
# beside its timing: each worker's log says (on the system's monotonic
# clock) when its timing began and ended and when it sent its records.
# With overlap (the default) worker p+1 starts before worker p has sent
# its records, yet begins timing only after; watch.csv and the report
# count the time beside once; `overlap = no` runs them one after another.
. tests/cli_lib.sh
mono() { sed -n "s/^time: $2 at monotonic \([0-9.]*\) s$/\1/p" "$1" | head -n 1; }

run_plan() {   # $1 folder, $2 overlap value ("" for the default)
    sed "s/^timeout = 30$/timeout = 30${2:+\\
overlap = $2}/" tests/plans/fake-faster.kg >"$T/p-$1.kg"
    # the plan's kernels are named relative to its folder
    sed -i "s|\.\./\.\./kernels|$(pwd)/kernels|" "$T/p-$1.kg"
    "$KGATE" run --report "$T/p-$1.kg" -o "$T/$1" --no-progress >"$T/$1.out" 2>"$T/$1.err"; st=$?
    expect_status 0 $st "campaign $1"
    "$KGATE" verify "$T/$1" >"$T/$1.verify" 2>&1 || { cat "$T/$1.verify" >&2; die "folder $1 does not verify"; }
}

# ---- 1. the default: beside, never while timing
KGATE_FAKE_SLEEP_MS=4
export KGATE_FAKE_SLEEP_MS
run_plan on ""
unset KGATE_FAKE_SLEEP_MS
n=$(($(wc -l <"$T/on/processes.csv") - 1))
[ "$n" = 6 ] || die "expected 6 processes, got $n"
[ "$(ls "$T/on/logs" | wc -l)" = 6 ] || die "expected one log per process"
beside=0
p=0
while [ $p -lt $((n - 1)) ]; do
    a=$(printf '%s/on/logs/proc-%03d.log' "$T" $p)
    b=$(printf '%s/on/logs/proc-%03d.log' "$T" $((p + 1)))
    end=$(mono "$a" "timing ended"); sent=$(mono "$a" "records sent"); began=$(mono "$b" "timing began")
    [ -n "$end" ] && [ -n "$sent" ] && [ -n "$began" ] || { cat "$a" "$b" >&2; die "process $p or $((p + 1)): no time lines"; }
    # the next one times only after this one has sent its records and ended
    awk -v s="$sent" -v b="$began" 'BEGIN { exit !(b > s) }' ||
        die "process $((p + 1)) began timing at $began, before process $p sent its records at $sent"
    grep -q "^[^,]*,[0-9.]*,$((p + 1)),overlap," "$T/on/watch.csv" && beside=$((beside + 1))
    p=$((p + 1))
done
[ $beside -ge 1 ] || { cat "$T/on/watch.csv" >&2; die "no worker started beside the one before it"; }
expect_grep "worker(s) started beside the one before them" "$T/on/report.md"
# every second of wall time counted once: the table's seconds add up to at
# most the wall time, give or take the rounding of the durations they come
# from (processes.csv's five per process, watch.csv's build, end and five
# per overlap, each to a millisecond: half a millisecond each at most; the
# campaign takes seconds, KGATE_FAKE_SLEEP_MS, so that this is about 1%)
wall=$(awk -F, '$4 == "end" { print $2 }' "$T/on/watch.csv")
terms=$(( 5 * n + 5 * beside + 2 ))
awk -F'|' -v wall="$wall" -v terms="$terms" '/^\| (timed phases|checks before|worker set-up|process start|quiet waits|arm builds|supervisor between)/ {
    gsub(/ /, "", $3); s += $3 } END { if (wall == "" || s > wall + 0.0005 * terms + 0.0005) {
    print "the table adds up to " s " s of " wall " s of wall time"; exit 1 }
    print "duty table: " s " s of " wall " s of wall time" }' "$T/on/report.md" ||
    die "the duty table counts some time twice"
# the same verdict as one after another (the fake backend's times are scripted)
expect_grep "| small | cand | candidate |.*| FASTER |" "$T/on.out"

# ---- 2. overlap = no: one after another, nothing beside
run_plan off no
grep -q ",overlap," "$T/off/watch.csv" && die "overlap = no, yet a worker started beside another"
expect_grep "overlap = no" "$T/off/plan.kg"
grep -q "^overlap" "$T/on/plan.kg" && die "the default overlap entered the canonical plan (its hash would change)"
cmp -s "$T/on/results.csv" "$T/off/results.csv" || die "the verdicts differ with and without overlap"

# ---- 3. records are written as soon as they are whole, while the worker
# closes; a worker that then dies (here: at its backend's close, every
# process) is not recorded as complete: its files are removed, and no arm
# is blamed for what came after its work
KGATE_FAKE_CRASH_CLOSE=1 "$KGATE" run --report "$T/p-on.kg" -o "$T/crash" --no-progress >"$T/crash.out" 2>"$T/crash.err"; st=$?
expect_status 3 $st "workers that crash as they close"
# (under the sanitizers a SIGSEGV ends the worker with an exit status instead)
[ "$(grep -Ec ',(crashed|exit [0-9]+),0,' "$T/crash/processes.csv")" = 6 ] ||
    { cat "$T/crash/processes.csv" >&2; die "expected 6 crashed processes"; }
[ "$(grep -c 'after it had sent its records' "$T/crash/processes.csv")" = 6 ] || die "a crash after the records is not said so"
[ -z "$(ls "$T/crash/raw" 2>/dev/null | grep "^proc-")" ] || die "raw files of crashed processes were kept"
grep -q ',fault,' "$T/crash"/checks/*.csv 2>/dev/null && die "an arm was blamed for a crash after its work"
"$KGATE" verify "$T/crash" >"$T/crash.verify" 2>&1 || { cat "$T/crash.verify" >&2; die "the crashed campaign's folder does not verify"; }
