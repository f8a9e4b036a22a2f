# A worker that dies or hangs in the middle of its rounds is still
# attributed to the arm, case and round it was timing: the timed samples'
# NOW states go to the worker's NOW page, not to the rows pipe as frames
# (src/run/nowpage.h), and the supervisor reads the page.  The last NOW
# frame such a worker sent is its "ready" (no arm): without the page no
# arm would be blamed (tests/unit/test_nowpage.c shows the frames' state).
# KGATE_FAKE_CRASH_AT=15: the candidate's 15th timed call, the third of
# round 3 (6 a round: 1 warm-up and 5 samples), its samples interleaved
# with the other arms'.
# kgate-test: waits (a hanging worker killed at its time-out)
. tests/cli_lib.sh
KGATE_FAKE_CRASH_AT=15 "$KGATE" run --report tests/plans/fake-crash.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "a crash in round 3: the gate"
grep -Eq "^1,rev,(crashed|exit [0-9]+),0," "$T/ev/processes.csv" || die "process 1 must be recorded as crashed"
expect_grep "while running arm cand, case small, round 3/4" "$T/ev/processes.csv"
expect_grep '^1,rev,small,cand,pre,fault,fail,,,,,"worker .* while running arm cand, case small, round 3/4"' \
    "$T/ev/checks/proc-001.csv"
[ "$(grep -c ',fault,' "$T/ev/checks/proc-001.csv")" = 1 ] || die "one fault check, of the arm that was timed"
expect_grep "^small,cand,candidate,incorrect,INCORRECT," "$T/ev/results.csv"
expect_grep "\"KGATE_FAKE_CRASH_AT\"" "$T/ev/environment.json"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "the folder does not verify"; }
# a hang at the same call: killed at the plan's time-out (2 s), and blamed
# on the same arm and round.  While it hangs: the worker has the page
# mapped and no descriptor of it, nor has the supervisor (no process the
# worker starts can inherit it); the worker's /proc/PID/fd is readable by
# root only (it is not dumpable), so that part is checked where it can be
KGATE_FAKE_CRASH_AT=15 "$KGATE" run --report tests/plans/fake-hang.kg -o "$T/hang" >"$T/hout" 2>"$T/herr" &
sup=$!
is_hang_worker() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- '--proc 2 '; }
i=0 w=
until [ -n "$w" ] && [ -f "$T/hang/logs/proc-002.log" ] && grep -q "backend fake opened" "$T/hang/logs/proc-002.log"; do
    for p in $(ps -o pid= --ppid $sup 2>/dev/null); do is_hang_worker "$p" && w=$p; done
    i=$((i + 1)); [ $i -lt 600 ] || { kill $sup; die "the hanging worker never started"; }; sleep 0.05
done
fds() { for f in /proc/"$1"/fd/*; do readlink "$f"; done 2>/dev/null; }
fds $sup | grep -q "kgate-now-page" && die "the supervisor kept a descriptor of the worker's NOW page"
grep -q "kgate-now-page" /proc/$sup/maps || die "the supervisor has no NOW page mapped"
if [ -r "/proc/$w/fd" ]; then
    fds "$w" | grep -q "kgate-now-page" && die "the worker kept the NOW page's descriptor"
    grep -q "kgate-now-page" "/proc/$w/maps" || die "the worker has no NOW page mapped"
fi
wait $sup; st=$?
[ $st -le 3 ] || { cat "$T/herr" >&2; die "fake-hang at call 15: exit status $st"; }
expect_grep "^2,fwd,timeout,0,.*passed the timeout of 2 s while running arm cand, case small, round 3/4" \
    "$T/hang/processes.csv"
expect_grep '^2,fwd,small,cand,pre,fault,fail,,,,,"worker passed the timeout of 2 s while running arm cand, case small, round 3/4"' \
    "$T/hang/checks/proc-002.csv"
# the variable's checks
KGATE_FAKE_CRASH_AT=0 "$KGATE" run tests/plans/fake-crash.kg -o "$T/bad" >"$T/bout" 2>"$T/berr"; st=$?
expect_status 2 $st "KGATE_FAKE_CRASH_AT=0"
expect_grep "KGATE_FAKE_CRASH_AT must be" "$T/berr"
exit 0
