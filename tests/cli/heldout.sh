# Held-out shapes: on a plan whose shapes are aligned (K a multiple of 8,
# N of 16), a gemm_bt that drops the K tail and one that drops the last N
# tile are INCORRECT, each failing a check that names the derived shape;
# an honest kernel declaring `requires = K % 8 == 0, N % 16 == 0` is
# admitted, its unsupported shapes recorded as skipped; the honest
# kernels without preconditions pass every derived shape.  Before the
# held-out shapes, `kgate check` admitted all five (90 checks, 0 failed).
# A plan case that violates an arm's requires makes the arm INADMISSIBLE
# there, before any launch.
. tests/cli_lib.sh
P=tests/plans/heldout/heldout.kg
"$KGATE" check "$P" -o "$T/c" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "check of the held-out cheats"
expect_grep "| g | ktail | pre | heldout\[M=24 N=32 K=63\]:C | FAIL |.*elements over bound" "$T/out"
expect_grep "| g16 | ktail | pre | heldout\[M=8 N=48 K=39\]:C | FAIL |" "$T/out"
expect_grep "| g | lasttile | pre | heldout\[M=24 N=31 K=64\]:C | FAIL |.*never written" "$T/out"
expect_grep "| g16 | lasttile | pre | heldout\[M=8 N=47 K=40\]:C | FAIL |" "$T/out"
# the K tail alone does not trouble the kernels when K stays aligned
expect_grep "| g | ktail | pre | heldout\[M=23 N=32 K=64\]:C | pass |" "$T/out"
expect_grep "| g | unroll8 | pre | heldout\[M=24 N=32 K=63\] | pass |.*skipped: the arm requires K % 8 == 0 (7 against 0)" "$T/out"
expect_grep "| g | unroll8 | pre | heldout\[M=24 N=31 K=64\] | pass |.*skipped: the arm requires N % 16 == 0 (15 against 0)" "$T/out"
expect_grep "| g | unroll8 | pre | heldout\[M=23 N=32 K=64\]:C | pass |" "$T/out"
for a in naive blocked unroll8; do
    grep "^| [a-z0-9]* | $a | " "$T/out" | grep -q "| FAIL |" && die "honest arm $a failed a check"
done
# every plain honest arm ran 6 derived shapes of g (3 variables alone, all
# minus one, all odd, all at half plus one) and 6 of g16
n=$(grep -c "^| g | naive | pre | heldout\[[^]]*\]:C | pass |" "$T/out")
[ "$n" -eq 6 ] || die "naive ran $n held-out shapes of g, expected 6"
n=$(grep -c "^| g16 | blocked | pre | heldout\[[^]]*\]:C | pass |" "$T/out")
[ "$n" -eq 6 ] || die "blocked ran $n held-out shapes of g16, expected 6"
# no derived shape is larger than the case or below 1
grep -o "| g | naive | pre | heldout\[M=[0-9]* N=[0-9]* K=[0-9]*\]:C" "$T/out" | sed 's/.*M=\([0-9]*\) N=\([0-9]*\) K=\([0-9]*\).*/\1 \2 \3/' |
while read -r m n k; do
    [ "$m" -ge 1 ] && [ "$m" -le 24 ] && [ "$n" -ge 1 ] && [ "$n" -le 32 ] && [ "$k" -ge 1 ] && [ "$k" -le 64 ] ||
        die "derived shape M=$m N=$n K=$k outside the case's"
done || exit 1

# the campaign: the cheats are INCORRECT, never FASTER; verify replays it
"$KGATE" run --report "$P" -o "$T/r" >"$T/run.out" 2>"$T/run.err"; st=$?
expect_status 1 $st "campaign with the held-out cheats"
expect_grep "| g | ktail | candidate | .* | INCORRECT |" "$T/r/report.md"
expect_grep "| g | lasttile | candidate | .* | INCORRECT |" "$T/r/report.md"
expect_no_grep "| unroll8 | candidate | .* | INCORRECT |" "$T/r/report.md"
"$KGATE" verify "$T/r" >"$T/verify.out" 2>&1 || { cat "$T/verify.out" >&2; die "verify of the held-out campaign"; }

# a plan case outside an arm's requires: the arm is INADMISSIBLE there,
# recorded before any load or launch (a note when the plan loads)
sed 's/^requires = K % 8 == 0, N % 16 == 0$/requires = K % 16 == 0/' "$P" >"$T/bad.kg"
sed -i "s#\.\./\.\./\.\./#$PWD/#; s#^source = \([a-z0-9_]*\.c\)#source = $PWD/tests/plans/heldout/\1#" "$T/bad.kg"
"$KGATE" check "$T/bad.kg" -o "$T/b" >"$T/bad.out" 2>"$T/bad.err"; st=$?
expect_status 1 $st "a case violating requires"
expect_grep "note: arm 'unroll8' is INADMISSIBLE on case 'g16': its requires K % 16 == 0 (8 against 0) does not hold" "$T/bad.err"
expect_grep "| g16 | unroll8 | pre | admissible | INADMISSIBLE |.*INADMISSIBLE: the arm requires K % 16 == 0 (8 against 0); not loaded, not run" "$T/bad.out"
sed 's/^requires = K % 8 == 0, N % 16 == 0$/requires = K % 8 = 0/' "$T/bad.kg" >"$T/bad2.kg"
sed -i 's/^requires = K % 16 == 0$/requires = K % 8 = 0/' "$T/bad2.kg"
"$KGATE" check "$T/bad2.kg" -o "$T/b2" >"$T/bad2.out" 2>"$T/bad2.err"; st=$?
expect_status 2 $st "a malformed requires"
expect_grep "bad requires: 'requires = K % 8 = 0'" "$T/bad2.err"
exit 0
