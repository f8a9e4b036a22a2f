# The statistical plan rules and the gate's control message (issue 30, item 6),
# on the fake backend:
#   - looks that leave one process per direction per look (the statistics
#     review's D-S1: processes 4, looks 4, a candidate 4% faster against
#     g = 1%, stopped for futility at look 1 in 20 of 20 campaigns) are a
#     plan error that names the line and the smallest processes that work;
#   - processes that do not complete the load-order square (three arms,
#     processes = 2: the baseline took the first load slot twice as often as
#     the candidate, a +0.06% bias) are a plan error naming the fix, and so
#     are looks whose processes do not complete it;
#   - left out, processes complete every look's square;
#   - a gate that fails because the A/A control's interval reaches past g
#     names `kgate size` and the processes it would take, and `kgate size`
#     on the same evidence prints the same number for the control.
. tests/cli_lib.sh
src=$(pwd)/kernels/cpu/rowsum_naive.c
plan() { # candidate's fake_ns, processes ("" to leave it out), looks
    cat <<PLAN
[campaign]
quiet = 0
name = rules
backend = fake
warmup = 1
samples = 5
rounds = 4
PLAN
    [ -n "$2" ] && echo "processes = $2"
    cat <<PLAN
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
ctrl() { printf '[arm ctrl]\nop = rowsum\nrole = control\nof = base\n%s' "${1:-}"; }

# D-S1: one process per direction per look
plan 960 4 4 >"$T/s1.kg"
"$KGATE" run "$T/s1.kg" -o "$T/s1" >"$T/s1.out" 2>"$T/s1.err"; st=$?
cat "$T/s1.err" >&2
expect_status 2 $st "processes 4, looks 4 (one process per direction per look)"
expect_grep "s1.kg:9:" "$T/s1.err"
expect_grep "processes = 8" "$T/s1.err"
[ -d "$T/s1" ] && die "a refused plan wrote an evidence folder"
# the smallest processes it names work: a 4% faster candidate passes
plan 960 8 4 >"$T/s1b.kg"
"$KGATE" run "$T/s1b.kg" -o "$T/s1b" >"$T/s1b.out" 2>"$T/s1b.err"; st=$?
expect_status 0 $st "processes 8, looks 4, a 4% faster candidate"
expect_grep "passed at look" "$T/s1b.err"

# three arms, processes = 2: the load-order square of 3 is not complete
{ plan 1000 2 1; ctrl; } >"$T/sq.kg"
"$KGATE" run "$T/sq.kg" -o "$T/sq" >"$T/sq.out" 2>"$T/sq.err"; st=$?
cat "$T/sq.err" >&2
expect_status 2 $st "three arms, processes = 2"
expect_grep "sq.kg:8:" "$T/sq.err"
expect_grep "processes = 3" "$T/sq.err"
[ -d "$T/sq" ] && die "a refused plan wrote an evidence folder"

# three arms, 6 processes, 3 looks: each look adds 2, not the square of 3
{ plan 1000 6 3; ctrl; } >"$T/lk.kg"
"$KGATE" check "$T/lk.kg" -o "$T/lk" >"$T/lk.out" 2>"$T/lk.err"; st=$?
cat "$T/lk.err" >&2
expect_status 2 $st "three arms, processes 6, looks 3"
expect_grep "processes = 9" "$T/lk.err"

# processes left out with looks: every look completes the square (3 arms, 2 looks: 6)
{ plan 1000 "" 2; ctrl; } >"$T/def.kg"
"$KGATE" freeze "$T/def.kg" -o "$T/def.frozen" >"$T/def.out" 2>"$T/def.err"; st=$?
expect_status 0 $st "looks without processes"
expect_grep "^processes = 6$" "$T/def.frozen"

# the control reaches past g: a candidate 10% faster, a control with 5% noise
# (its interval is wide, not off centre: valid, but wider than g = 1%)
{ plan 900 3 1; ctrl "fake_noise = 0.05
fake_proc_sd = 0.03
"; } >"$T/reach.kg"
"$KGATE" run "$T/reach.kg" -o "$T/reach" >"$T/reach.out" 2>"$T/reach.err"; st=$?
grep "gate" "$T/reach.err" >&2
expect_status 1 $st "a control whose interval reaches past g"
expect_grep "reaches past g = 1.00%: noise, not a difference" "$T/reach.err"
expect_grep "kgate size" "$T/reach.err"
n=$(sed -n 's/.*says processes = \([0-9][0-9]*\) per direction.*/\1/p' "$T/reach.err" | head -n 1)
[ -n "$n" ] || die "the gate message names no processes"
[ "$n" -gt 3 ] || die "the gate message names processes = $n, no more than the campaign's 3"
"$KGATE" size "$T/reach.kg" "$T/reach" >"$T/size.out" 2>"$T/size.err"; st=$?
cat "$T/size.err" >&2
cat "$T/size.out" >&2
expect_status 0 $st "kgate size of the campaign"
expect_grep "control ctrl.*processes = $n per direction" "$T/size.out"
echo "stats_rules: ok"
