# A crashing worker is recorded with its reason; the campaign completes.
. tests/cli_lib.sh
"$KGATE" run tests/plans/fake-crash.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || die "fake-crash: exit status $st"
expect_grep "^1,rev,crashed,0," "$T/ev/processes.csv"
expect_grep "signal 11" "$T/ev/processes.csv"
expect_grep "5 accepted, 1 excluded" "$T/out"
[ -f "$T/ev/raw/proc-001.csv" ] && die "a crashed process must leave no raw file"
[ -f "$T/ev/raw/proc-005.csv" ] || die "processes after the crash must run"
expect_report_identical "$T/ev"
