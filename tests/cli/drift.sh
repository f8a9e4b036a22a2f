# The control's drift test (analysis.c, check_order_control): a control
# whose contrast moves from the first to the last round by more than
# max(t SE, 0.25%) makes the campaign INVALID, t the two-sided quantile of
# level 1% shared by the controls tested (Bonferroni) at n - 1 df.
#  1. a control that drifts 1% per round: INVALID, "control drifted";
#  2. 30 seeds of a four-case A/A campaign with no drift (3 processes per
#     direction): at most 2 INVALID for drift (expected 0.3; a fixed 3 SE
#     flags about 13% of them, printed for comparison).
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
sed -e "s#\.\./\.\./kernels/#$PWD/kernels/#" -e 's/^control_margin = 1%/control_margin = 5%/' \
    -e 's/^min_reduction = 1%/min_reduction = 5%/' tests/plans/fake-aa.kg >"$T/aa.kg"
grep -q '^min_reduction = 5%' "$T/aa.kg" || printf '[gate]\nrule = interval\nmin_reduction = 5%%\n' >>"$T/aa.kg"
# ---- 1. a drifting control
sed 's/^of = base$/of = base\nfake_drift = 0.01/' "$T/aa.kg" >"$T/drift.kg"
"$KGATE" run "$T/drift.kg" -o "$T/d" >"$T/d.out" 2>"$T/d.err"; st=$?
expect_status 3 $st "a drifting control"
expect_grep "the campaign is INVALID: control drifted: case small, arm ctrl" "$T/d.err"
expect_grep "The campaign is INVALID (control drifted: case small, arm ctrl" "$T/d/report.md"
expect_grep ": DRIFTED |" "$T/d/report.md"
# ---- 2. no drift, four controlled cases, 30 seeds
python3 - "$T/aa.kg" "$T/aa4.kg" <<'PY'
import sys
s = open(sys.argv[1]).read()
case = s[s.index('[case small]'):s.index('[arm base]')]
more = ''.join(case.replace('[case small]', '[case c%d]' % i).replace('N = 16', 'N = %d' % (16 + i)) for i in range(1, 4))
open(sys.argv[2], 'w').write(s.replace('[arm base]', more + '[arm base]'))
PY
new=0 old=0
for seed in $(seq 1 30); do
    sed "s/^seed = 7/seed = $seed/" "$T/aa4.kg" >"$T/s.kg"
    "$KGATE" run "$T/s.kg" -o "$T/s$seed" >/dev/null 2>"$T/s.err"; st=$?
    [ $st -le 3 ] || { cat "$T/s.err" >&2; die "seed $seed: exit $st"; }
    grep -q "control drifted" "$T/s.err" && new=$((new + 1))
    f=$(grep -ho "contrast drift [-+0-9.]*% (SE [0-9.]*%" "$T/s$seed/report.md" |
        awk '{ gsub(/[%(+]/, ""); d = $3 < 0 ? -$3 : $3; if (d > 3 * $5 && d > 0.25) f = 1 } END { print f + 0 }')
    old=$((old + f))
done
echo "A/A, 4 controlled cases, 30 seeds: $new INVALID for drift (a fixed 3 SE would flag $old)" >&2
[ $new -le 2 ] || die "$new of 30 A/A campaigns INVALID for drift: the test alarms more than its 1% level"
exit 0
