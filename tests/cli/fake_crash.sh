# A crashing worker is recorded with its reason, and the crash is the
# arm's: the supervisor, told by the worker which arm it was running,
# records a failed "fault" check of that arm in the process's checks.  The
# process stays excluded, the campaign completes, and the candidate is
# INCORRECT (never FASTER), so the gate fails.
. tests/cli_lib.sh
"$KGATE" run --report tests/plans/fake-crash.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "fake-crash: the gate"
grep -Eq "^1,rev,(crashed|exit [0-9]+),0," "$T/ev/processes.csv" || die "process 1 must be recorded as crashed"
# under ASan the sanitizer reports the SIGSEGV and exits 1 instead
grep -Eq "signal 11|ABORTING|SEGV|exited with status" "$T/ev/processes.csv" || die "the crash reason must be recorded"
expect_grep "while running arm cand, case small, round 1/4" "$T/ev/processes.csv"
expect_grep '^1,rev,small,cand,pre,fault,fail,,,,,"worker .* while running arm cand, case small, round 1/4"' \
    "$T/ev/checks/proc-001.csv"
expect_grep "5 accepted, 1 excluded" "$T/out"
[ -f "$T/ev/raw/proc-001.csv.gz" ] && die "a crashed process must leave no raw file"
[ -f "$T/ev/raw/proc-005.csv.gz" ] || die "processes after the crash must run"
expect_grep "^small,cand,candidate,incorrect,INCORRECT," "$T/ev/results.csv"
expect_no_grep "FASTER" "$T/ev/results.csv"
expect_grep "## Gate: FAIL" "$T/ev/report.md"
expect_grep "| 1 | small | cand | pre:fault | FAIL | worker .* while running arm cand, case small, round 1/4 |" \
    "$T/ev/report.md"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "the folder does not verify"; }
expect_report_identical "$T/ev"
