# A crashing worker is recorded with its reason; the campaign completes.
. tests/cli_lib.sh
"$KGATE" run tests/plans/fake-crash.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || die "fake-crash: exit status $st"
grep -Eq "^1,rev,(crashed|exit [0-9]+),0," "$T/ev/processes.csv" || die "process 1 must be recorded as crashed"
# under ASan the sanitizer reports the SIGSEGV and exits 1 instead
grep -Eq "signal 11|ABORTING|SEGV" "$T/ev/processes.csv" || die "the crash reason must be recorded"
expect_grep "5 accepted, 1 excluded" "$T/out"
[ -f "$T/ev/raw/proc-001.csv" ] && die "a crashed process must leave no raw file"
[ -f "$T/ev/raw/proc-005.csv" ] || die "processes after the crash must run"
expect_report_identical "$T/ev"
