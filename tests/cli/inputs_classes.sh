# Structured input classes: kernels right on i.i.d. rows and wrong on one
# class of rows (zero ends with a nonzero interior, a constant row, a row
# of negative values only) fail the checks before timing, naming the
# class of the row; the honest baselines pass every check.  Before the
# classes, `kgate check` admitted all four (64 checks, 0 failed).
. tests/cli_lib.sh
"$KGATE" check tests/plans/inputs/classes.kg -o "$T/c" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "check of the class cheats"
row() { # case arm check -> that row of the table
    grep "^| $1 | $2 | pre | $3 | " "$T/out" | head -n 1
}
expect_fail() { # case arm check detail-pattern
    r=$(row "$1" "$2" "$3")
    [ -n "$r" ] || die "$2: no row for check $3"
    echo "$r" | grep -q "| FAIL |" || die "$2: check $3 did not fail: $r"
    echo "$r" | grep -q -- "$4" || die "$2: check $3 does not say '$4': $r"
}
for chk in poison0 poison1; do
    expect_fail r zero_ends_rowsum $chk:Y "\[X row [0-9]*: \(zero-ends\|sparse\|zero-runs\)\]: got 0, want"
    expect_fail s zero_ends_softmax $chk:Y "\[X row [0-9]*: \(zero-ends\|sparse\|zero-runs\)\]"
    expect_fail l const_layernorm $chk:Y "\[X row [0-9]*: constant\]: got 0, want"
    expect_fail m max_from_zero $chk:Y "\[X row [0-9]*: \(negative\|constant\|wide\|sparse\|zero-runs\|zero-ends\)\]: got 0, want -"
done
for a in rowsum_naive softmax_naive layernorm_naive rowmax_naive; do
    n=$(grep -c "^| [a-z]* | $a | " "$T/out")
    [ "$n" -gt 0 ] || die "no rows for the honest arm $a"
    grep "^| [a-z]* | $a | " "$T/out" | grep -q "| FAIL |" && die "honest arm $a failed a check"
done
expect_grep "^[0-9]* checks, 8 failed" "$T/out"
exit 0
