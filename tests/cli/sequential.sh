# A group-sequential design on the fake backend (looks = 4, 8 processes
# per direction, O'Brien-Fleming boundaries on the z scale):
#   - a candidate 10% faster than its baseline against a 1% gate stops at
#     look 1 for efficacy: 4 processes run instead of 16, the gate passes,
#     the report says so, and `kgate verify` recomputes the same decision
#     from the evidence;
#   - an identical candidate never passes: it stops for futility at an
#     early look or fails at the last one;
#   - looks that do not divide processes, or whose processes do not
#     complete the load-order square, are a plan error.
. tests/cli_lib.sh
src=$(pwd)/kernels/cpu/rowsum_naive.c
plan() { # candidate's fake_ns, processes, looks
    cat <<PLAN
[campaign]
quiet = 0
name = seq
backend = fake
warmup = 1
samples = 5
rounds = 4
processes = $2
looks = $3
seed = 5
margin = 1%
control_margin = 1%
[case small]
op = rowsum
dtype = f32
M = 4
N = 16
[arm base]
op = rowsum
role = baseline
source = $src
[arm cand]
op = rowsum
source = $src
fake_ns = $1
[gate]
min_reduction = 1%
PLAN
}
plan 900 8 4 >"$T/fast.kg"
"$KGATE" run --report "$T/fast.kg" -o "$T/fast" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "a 10% faster candidate, 4 looks"
n=$(($(wc -l <"$T/fast/processes.csv") - 1))
[ "$n" -eq 4 ] || die "the design ran $n processes, expected 4 (one look of 2 per direction)"
expect_grep "passed at look 1 of 4 (efficacy" "$T/err"
expect_grep "Decided at look 1 (efficacy) with 2 of 8 processes per direction" "$T/fast/report.md"
"$KGATE" verify "$T/fast" >"$T/v" 2>&1 || { cat "$T/v"; die "verify of a stopped sequential campaign"; }
# the decision is final: --resume of a decided campaign runs no further process
"$KGATE" run --report --resume "$T/fast" "$T/fast.kg" >"$T/outr" 2>"$T/errr"; st=$?
expect_status 0 $st "resuming a decided sequential campaign"
n=$(($(wc -l <"$T/fast/processes.csv") - 1))
[ "$n" -eq 4 ] || die "resuming a decided sequential campaign ran more processes ($n in all)"
expect_grep "already decided" "$T/errr"
plan 1000 8 4 >"$T/aa.kg"
"$KGATE" run --report "$T/aa.kg" -o "$T/aa" >"$T/out2" 2>"$T/err2"; st=$?
expect_status 1 $st "an identical candidate, 4 looks"
expect_grep "Decided at look [1-4] (\(futility\|final\))" "$T/aa/report.md"
plan 1000 8 3 >"$T/bad.kg"
"$KGATE" run --report "$T/bad.kg" -o "$T/bad" >"$T/out3" 2>"$T/err3"; st=$?
expect_status 2 $st "looks that do not divide processes"
expect_grep "looks must divide processes" "$T/err3"
# three arms, 2 processes per direction per look: each look misses the square of 3 (a plan error)
{ plan 900 6 3; printf '[arm c2]\nop = rowsum\nsource = %s\n' "$src"; } >"$T/sq.kg"
"$KGATE" check "$T/sq.kg" -o "$T/sq" >"$T/out4" 2>"$T/err4"; st=$?
expect_status 2 $st "looks whose processes do not complete the load-order square"
expect_grep "looks do not complete the load-order square.*use processes = 9" "$T/err4"
echo "sequential: ok"
