# Planted defects that pass the pre-timing checks fail after timing in
# `kgate run`: a pointer-keyed output cache, a kernel honest only on its
# first calls and one that computes only when it sees the poison.  The last
# round runs on new inputs, so the snapshot of its output catches all three.
. tests/cli_lib.sh
"$KGATE" check tests/plans/defects/run.kg -o "$T/c" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "the run defects pass the pre-timing checks"
"$KGATE" run --report tests/plans/defects/run.kg -o "$T/r" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "run of the defects"
expect_grep "gate FAIL" "$T/err"
for a in pointer_cache honest_first_calls detect_poison; do
    grep -q "| 0 | g | $a | post:snapshot:C | FAIL |.*elements over bound" "$T/r/report.md" || die "$a: snapshot did not fail"
    grep -q ",g,$a,post,snapshot:C,fail," "$T/r/checks/proc-000.csv" || die "$a: no failed snapshot row"
done
grep -q ",g,pointer_cache,post,fresh:C,fail," "$T/r/checks/proc-000.csv" || die "pointer_cache: fresh check passed"
grep -q ",g,naive,post,snapshot:C,pass," "$T/r/checks/proc-000.csv" || die "the honest arm's snapshot failed"
grep -q ",g,naive,post,fresh:C,pass," "$T/r/checks/proc-000.csv" || die "the honest arm's fresh check failed"
expect_report_identical "$T/r"
exit 0
