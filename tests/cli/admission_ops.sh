# Every op's honest CPU kernel passes `kgate check`; the numerical negative
# of each fails every output check, in the table and in the report; a weak
# primary case fails the gate with the shortcut named.
# kgate-test: first (every op's kernels checked, and their negatives)
. tests/cli_lib.sh
"$KGATE" check tests/plans/defects/allops.kg -o "$T/ok" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "check of every op's honest kernel"
expect_grep " 0 failed (0 inadmissible, 0 weak)" "$T/out"
# each negative on its own op: the plan with the arm's case and the arm alone (every arm is the
# baseline of the case of its name; the others' checks are the run above's)
for a in bt nt sk rs rm sm ln rms; do
    sed "s#\.\./\.\./\.\./kernels#$PWD/kernels#" tests/plans/defects/allops.kg |
        plan_keep campaign "case $a" "arm $a" >"$T/neg-$a.kg"
    [ "$(grep -c '^\[' "$T/neg-$a.kg")" = 3 ] || die "the plan of the negative of $a"
    "$KGATE" check "$T/neg-$a.kg" -o "$T/neg-$a" --negative $a >"$T/out" 2>"$T/err"; st=$?
    expect_status 0 $st "negative of $a"
    expect_grep "negative $a: 2 of 2 output checks failed: the checks reject the negative" "$T/out"
    expect_grep "| $a | pre | negative | pass |" "$T/out"
    expect_grep "| $a | negative | rejected (as required) |" "$T/neg-$a/report.md"
done
"$KGATE" run --report tests/plans/defects/weak.kg -o "$T/weak" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "a weak primary case"
expect_grep "gate FAIL: case one" "$T/err"
expect_grep "row mean broadcast as output Y" "$T/weak/report.md"
"$KGATE" check tests/plans/defects/weak.kg -o "$T/weakc" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "check of a weak case"
expect_grep "| one | cand | pre | weak | WEAK |" "$T/out"
expect_grep "weak case one (cannot be primary" "$T/out"
exit 0
