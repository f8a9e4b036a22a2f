# Identical arms: not FASTER, control valid, gate fails (exit 1).
. tests/cli_lib.sh
"$KGATE" run --report tests/plans/fake-aa.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "fake-aa run"
expect_no_grep "| small | cand | candidate |.*| FASTER |" "$T/out"
expect_grep "| small | ctrl | control |.*| valid" "$T/out"
expect_no_grep "INVALID" "$T/out"
cmp -s "$T/ev/results.csv" tests/golden/fake-aa.results.csv || { diff "$T/ev/results.csv" tests/golden/fake-aa.results.csv >&2; die "results.csv differs from the golden file"; }
expect_report_golden "$T/ev" tests/golden/fake-aa.report.md
expect_report_identical "$T/ev"
