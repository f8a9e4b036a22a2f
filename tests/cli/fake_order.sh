# A load-slot effect (the arm loaded first in a process runs 4% slower,
# for the baseline and the candidate alike) with three arms and three
# processes per direction: the load order is a Latin square over the
# processes (every arm first once per direction), so the effect enters the
# process variance instead of the estimate.  Before the square, the
# reverse direction only reversed the list: the candidate, listed in the
# middle, never loaded first, and the baseline's penalty biased it.
#   - the candidate is neither FASTER nor SLOWER, its estimate within 1%
#     of zero, not order-sensitive;
#   - the evidence records every arm's load slot per process (layout
#     checks): each arm first once in each direction;
#   - processes = 2 (not a multiple of 3) is a plan error that names
#     processes = 3.
. tests/cli_lib.sh
"$KGATE" run --report tests/plans/fake-order.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "fake-order run"
expect_grep "| small | cand | candidate |.*| INCONCLUSIVE |" "$T/out"
expect_grep "| small | cand | [-+0-9.]* | [-+0-9.]* | [-+0-9.]* | [0-9.]* (t [0-9.]*) | no |" "$T/out"
red=$(awk -F, '$2 == "cand" { print $19 }' "$T/ev/results.csv")
awk -v r="$red" 'BEGIN { exit !(r > -0.01 && r < 0.01) }' || die "the candidate's reduction $red is biased by the slot effect"
for a in base cand ctrl; do
    for d in fwd rev; do
        n=$(grep -h ",$d,small,$a,pre,layout,pass,.*load slot 0 of 3" "$T"/ev/checks/proc-*.csv | wc -l)
        [ "$n" -eq 1 ] || die "arm $a loaded first in $n $d processes, expected 1"
    done
done
sed 's/^processes = 3$/processes = 2/' tests/plans/fake-order.kg >tests/plans/.fake-order-2.kg
"$KGATE" run tests/plans/.fake-order-2.kg -o "$T/ev2" >"$T/out2" 2>"$T/err2"; st=$?
rm -f tests/plans/.fake-order-2.kg
expect_status 2 $st "processes = 2 with three arms"
expect_grep "processes do not complete the load-order square: 'processes = 2' (processes = 2 per direction with 3 arms.*use processes = 3" "$T/err2"
if [ -d "$T/ev2" ]; then die "a refused plan wrote an evidence folder"; fi
