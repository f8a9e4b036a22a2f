# tests/gpu/cheat_inputs.sh: the structured-row and held-out cheats on the
# cuda backend (tests/gpu/cheat_inputs.cu, .kg).  Sourced by
# tests/gpu/run.sh (it uses $KGATE, $ROOT, $T, ok and bad).
# Expected: rowsum_zero_ends fails a check naming a zero-ended class row,
# rowmax_from_zero fails one naming a class row (negative rows), ktail
# fails a held-out shape with K not a multiple of 16 and is INCORRECT,
# k16 (requires = K % 16 == 0) is admitted with its odd-K shapes skipped,
# naive, the row baselines and cuBLAS pass every check.
cp "$ROOT/tests/gpu/cheat_inputs.kg" "$T/cheat_inputs.kg"
"$KGATE" check "$T/cheat_inputs.kg" -o "$T/cheat-inputs-check" >"$T/out" 2>&1
st=$?
ci_fail() { grep "^| $1 | $2 | pre | $3 | FAIL |" "$T/out" | head -n 1; }
r1=$(ci_fail r rowsum_zero_ends 'poison0:Y')
r2=$(ci_fail m rowmax_from_zero 'poison0:Y')
r3=$(ci_fail g ktail 'heldout\[M=[0-9]* N=[0-9]* K=[0-9]*\]:C')
honest_bad=$(grep -E "^\| [a-z]+ \| (rowsum_rows|rowmax_rows|naive|k16|cublas) \| .*\| FAIL \|" "$T/out" | head -n 3)
if [ "$st" -eq 1 ] && echo "$r1" | grep -q "\[X row [0-9]*: \(zero-ends\|sparse\|zero-runs\)\]" &&
   echo "$r2" | grep -q "\[X row [0-9]*: [a-z-]*\]: got 0, want -" && [ -n "$r3" ] &&
   ! echo "$r3" | grep -q "K=512\]" && [ -z "$honest_bad" ] &&
   grep -q "| g | k16 | pre | heldout\[.*\] | pass |.*skipped: the arm requires K % 16 == 0" "$T/out"; then
    ok "cheat inputs: zero-ended rowsum, rowmax from 0 and the K-tail gemm fail; honest arms and k16 (requires) pass"
else
    bad "cheat inputs (exit $st): zero-ends '$r1' rowmax '$r2' ktail '$r3' honest failures '$honest_bad'"
fi
