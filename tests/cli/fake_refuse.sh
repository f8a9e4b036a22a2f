# A launch the device refuses (the backend returns KG_EINADMISSIBLE at
# load or bind; scripted with fake_refuse) is a failed "admissible" check
# of that arm on that case: the arm is INADMISSIBLE there, the worker does
# not end (every process is accepted, the campaign is not INVALID), and
# the arm is judged as usual on the other case.
. tests/cli_lib.sh
"$KGATE" run --report tests/plans/fake-refuse.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "fake-refuse: exit $st"; }
expect_grep "6 accepted, 0 excluded" "$T/out"
[ "$(grep -c ',ok,1,' "$T/ev/processes.csv")" = 6 ] || die "every process must complete"
expect_grep ',big,cand,pre,admissible,fail,,,,,"INADMISSIBLE: the device refuses arm cand' "$T/ev/checks/proc-000.csv"
expect_grep "^big,cand,candidate,inadmissible,INADMISSIBLE," "$T/ev/results.csv"
expect_grep "^small,cand,candidate,ok,FASTER," "$T/ev/results.csv"
raw_text "$T/ev/raw/proc-000.csv.gz" >"$T/raw0"
[ "$(grep -c ',cand,big,' "$T/raw0")" = 0 ] || die "a refused arm has no samples"
[ "$(grep -c ',base,big,' "$T/raw0")" = 20 ] || die "the other arms of the case are timed"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "the folder does not verify"; }
exit 0
