# Planted defects through `kgate check`: every defect arm fails, each with
# the check that names it; the honest arms pass.
. tests/cli_lib.sh
"$KGATE" check tests/plans/defects/check.kg -o "$T/c" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "check of planted defects"
row() { # arm check -> the first table row of that arm and check
    grep "^| [a-z]* | $1 | pre | $2 | " "$T/out" | head -n 1
}
expect_fail() { # arm check detail-pattern
    r=$(row "$1" "$2")
    [ -n "$r" ] || die "$1: no row for check $2"
    echo "$r" | grep -q "| FAIL |" || die "$1: check $2 did not fail: $r"
    echo "$r" | grep -q -- "$3" || die "$1: check $2 does not say '$3': $r"
}
expect_fail off_by_one_tile poison0:C "never written"
expect_fail skip_last_row poison0:C "row 32, col 0"
expect_fail write_past_end poison0:guard:C "a write past the end"
expect_fail modify_input poison0:input:A "input A was modified"
expect_fail zeros poison0:C "got 0, want"
expect_fail low_precision poison0:C "elements over bound"
expect_fail one_nan poison0:C "NaN at element"
expect_fail uninit_accumulate poison0:C "NaN at element"
expect_fail all_nan poison1:C "NaN at element 0"
expect_fail hardcoded_shape poison0:C "elements over bound"
expect_fail reversed_order parity:C "first difference from naive at element"
expect_fail subsample poison0:Y "elements over bound"
expect_fail splitk_uninit_ws poison0:C "NaN at element"
# the honest arms pass everything
for a in naive rs sk_naive; do
    grep "^| [a-z]* | $a | " "$T/out" | grep -q "| FAIL |" && die "honest arm $a failed a check"
done
expect_grep "| g | reversed_order | pre | poison0:C | pass |" "$T/out"
expect_grep "| g | naive | pre | weak | pass |" "$T/out"
# the report's Admission section lists the failures
expect_grep "## Admission" "$T/c/report.md"
expect_grep "| g | write_past_end | pre:poison0:guard:C | FAIL |" "$T/c/report.md"
exit 0
