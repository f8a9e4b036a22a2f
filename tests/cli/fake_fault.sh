# An arm whose own code fails in one process (the backend returns KG_EARM;
# scripted here with fake_fault = 1) gets a failed "fault" check in that
# process and is INCORRECT, with the reason in the report; the process
# goes on with the other arms and is accepted, and their verdicts and
# numbers are those of the same plan without the fault.
. tests/cli_lib.sh
grep -v '^fake_fault' tests/plans/fake-fault.kg >"$T/nofault.kg"
sed -i 's|\.\./\.\./kernels|'"$PWD"'/kernels|' "$T/nofault.kg"
"$KGATE" run --report "$T/nofault.kg" -o "$T/ref" >"$T/ref.out" 2>"$T/ref.err"; st=$?
[ $st -le 1 ] || { cat "$T/ref.err" >&2; die "run without the fault: exit $st"; }
"$KGATE" run --report tests/plans/fake-fault.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "a faulty candidate fails the gate"
expect_grep "^1,rev,ok,1," "$T/ev/processes.csv"
expect_grep "8 accepted, 0 excluded" "$T/out"
expect_grep '^1,rev,small,cand,pre,fault,fail,,,,,"arm cand: its host process died (scripted: fake_fault = 1)"' \
    "$T/ev/checks/proc-001.csv"
expect_grep "| small | cand | candidate | .* | INCORRECT |" "$T/ev/report.md"
expect_grep "fault | FAIL | arm cand: its host process died" "$T/ev/report.md"
expect_grep "^small,cand,candidate,incorrect,INCORRECT," "$T/ev/results.csv"
# the other arms: the same rows as without the fault, byte for byte, but
# for the family's adjusted p and bound (columns 29-30): the faulty arm
# leaves the family, which is one candidate smaller
grep -v '^small,cand,' "$T/ev/results.csv" | cut -d, -f1-28,31- >"$T/fault.rows"
grep -v '^small,cand,' "$T/ref/results.csv" | cut -d, -f1-28,31- >"$T/ref.rows"
cmp -s "$T/fault.rows" "$T/ref.rows" || { diff "$T/ref.rows" "$T/fault.rows" >&2; die "the other arms' results changed"; }
expect_grep "^small,cand2,candidate,ok,FASTER," "$T/ev/results.csv"
# the faulty arm's samples of process 1 stop at the fault; the others' are all there
raw_text "$T/ev/raw/proc-001.csv.gz" >"$T/raw1"
[ "$(grep -c ',cand2,small,' "$T/raw1")" = 20 ] || die "cand2 lost samples in process 1"
[ "$(grep -c ',cand,small,' "$T/raw1")" = 0 ] || die "cand has samples after its fault"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "the folder does not verify"; }
expect_report_identical "$T/ev"
exit 0
