# Precision contracts (docs/admission.md, "Precision contracts").  Two
# cheats passed the f32 bound before contracts (error/bound 0.65 and
# 0.56 on this plan): an f32 gemm_bt on TF32-rounded inputs (K = 1024) and
# an f32 rowsum accumulated in f16 (N = 2048).  Under the f32 contract
# both are INCORRECT; declared (precision = tf32, f16acc, tolerance = ...)
# they are judged under their contract, which every report prints next to
# the verdict, and the gate refuses a contract weaker than the baseline's
# unless the plan says same_precision = no.
. tests/cli_lib.sh
P=tests/contracts
"$KGATE" check $P/precision.kg -o "$T/c" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "check of the precision cheats"
for row in ",g,naive,pre,poison0:C,pass," ",r,rs,pre,poison0:Y,pass," \
           ",g,tf32,pre,poison0:C,fail," ",g,tf32,pre,poison1:C,fail," \
           ",r,f16acc,pre,poison0:Y,fail," ",r,f16acc,pre,poison1:Y,fail,"; do
    grep -q -- "$row" "$T/c/checks/proc-000.csv" || die "expected a check row '$row'"
done

# the tf32 contract admits TF32 by truncation and one operand each way,
# and refuses bfloat16 inputs (every other check of each arm passes)
"$KGATE" check $P/tf32-conversions.kg -o "$T/t" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "check of the TF32 conversions"
for row in ",g,trunc,pre,poison0:C,pass," ",g,mixed,pre,poison0:C,pass," ",g,trunc,pre,heldout" \
           ",g,bf16,pre,poison0:C,fail," ",g,bf16,pre,poison1:C,fail,"; do
    grep -q -- "$row" "$T/t/checks/proc-000.csv" || die "expected a check row '$row'"
done
[ "$(grep -h ",fail," "$T/t"/checks/*.csv | grep -vc ",g,bf16,")" = 0 ] || die "a TF32 conversion failed a check under the tf32 contract"

"$KGATE" run --report $P/precision-declared.kg -o "$T/d" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "run with declared contracts"
expect_grep "gate FAIL: case g, arm tf32: contract tf32 is weaker than f32 of baseline naive" "$T/err"
for row in "^g,naive,baseline,ok,BASELINE,f32," "^g,tf32,candidate,ok,[A-Z]*,tf32," \
           "^r,f16acc,candidate,incorrect,INCORRECT,f16acc," "^r,tol,candidate,ok,[A-Z]*,tol 0.004," \
           "^r,loose,candidate,incorrect,INCORRECT,tol 1," "^r64,f16acc,candidate,ok,[A-Z]*,f16acc,"; do
    # a failing check of an arm expected ok is shown in full, for the record
    ca=$(echo "$row" | cut -d, -f1-2 | tr -d '^')
    grep -q -- "$row" "$T/d/results.csv" || grep -h ",fail," "$T/d"/checks/*.csv | grep ",$ca," >&2
    expect_grep "$row" "$T/d/results.csv"
done
expect_grep "| g | tf32 | candidate | .*(contract tf32) |$" "$T/d/report.md"
expect_grep "contract f16acc is too weak for this case: an all-zero output Y would pass" "$T/d/report.md"
expect_grep "contract tol 1 is too weak for this case" "$T/d/report.md"
expect_grep '"contract": "tf32"' "$T/d/results.json"
expect_grep '"contract": "tol 0.004"' "$T/d/results.json"
# the canonical plan keeps the keys; verify replays the outputs under them
expect_grep "^precision = tf32$" "$T/d/plan.kg"
expect_grep "^tolerance = 0.004$" "$T/d/plan.kg"
"$KGATE" verify "$T/d" >"$T/vout" 2>"$T/verr" || { cat "$T/verr" >&2; die "verify of the contracts run failed"; }
expect_report_identical "$T/d"

"$KGATE" run --report $P/precision-accepted.kg -o "$T/a" >"$T/out" 2>"$T/err"; st=$?
expect_no_grep "weaker" "$T/err"
expect_grep "^g,tf32,candidate,ok,[A-Z]*,tf32," "$T/a/results.csv"
expect_grep "^same_precision = no$" "$T/a/plan.kg"

# a contract sound at the plan's case but too weak at a held-out shape
# (rows of one element, where a copy of X is the sum): the check there
# cannot tell a shortcut and must not fail the honest arms, but still
# compares with the contract's bounds (`short` is wrong only there)
"$KGATE" check $P/heldout-weak.kg -o "$T/h" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "check of a contract too weak at a held-out shape"
for row in ",w,f16acc,pre,heldout\[M=4 N=1\]:Y,pass," ",w,tol,pre,heldout\[M=4 N=1\]:Y,pass," \
           ",w,short,pre,heldout\[M=4 N=1\]:Y,fail," ",w,short,pre,poison0:Y,pass,"; do
    grep -q -- "$row" "$T/h/checks/proc-000.csv" || die "expected a check row '$row'"
done
expect_grep "within the contract's bounds; contract f16acc is too weak for this case: a copy of input X as output Y would pass at this derived shape" "$T/h/checks/proc-000.csv"
[ "$(grep ",fail," "$T/h/checks/proc-000.csv" | grep -vc ",w,short,")" = 0 ] || die "an honest arm failed a check of heldout-weak.kg"

# bad declarations are refused with file:line
bad() { # name text-of-arm-keys expected-message
    printf '[campaign]\nbackend = cpu\n[case x]\nop = %s\ndtype = f32\nM = 4\nN = 4\nK = 4\n[arm a]\nop = %s\nrole = baseline\nsource = none.c\n%b\n' \
        "$1" "$1" "$2" >"$T/bad.kg"
    "$KGATE" check "$T/bad.kg" >"$T/bout" 2>"$T/berr"; st=$?
    expect_status 2 $st "plan with $2"
    expect_grep "$3" "$T/berr"
}
bad gemm_bt "precision = tf32\ntolerance = 1e-4" "bad.kg:14: both precision and tolerance"
bad gemm_bt "precision = fp8" "dtype, tf32, f16acc or bf16acc"
bad gemm_bt "tolerance = 2" "a number in \[0, 1\]"
bad softmax "precision = f16acc" "op softmax has no reduced precision contract"

# a plan without the keys keeps its canonical form (no new lines)
"$KGATE" freeze examples/quickstart.kg -o "$T/qs.frozen" >/dev/null 2>&1 || die "freeze failed"
expect_no_grep "precision" "$T/qs.frozen"
expect_no_grep "tolerance" "$T/qs.frozen"
exit 0
