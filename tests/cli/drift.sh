# The control's drift test (analysis.c, check_order_control): a control
# whose contrast moves from the first to the last round by more than
# max(t SE, 0.25%) makes the campaign INVALID, t the two-sided quantile of
# level 1% shared by the controls tested (Bonferroni) at n - 1 df.
#  1. a control that drifts 1% per round: INVALID, "control drifted".
# The test's level (a four-case A/A campaign with no drift is INVALID for
# drift in about 1% of seeds; a fixed 3 SE flags about 12%) is a rate over
# seeds: tests/unit/test_stats_study.c checks it over 2,000 of them.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
sed -e "s#\.\./\.\./kernels/#$PWD/kernels/#" -e 's/^control_margin = 1%/control_margin = 5%/' \
    -e 's/^min_reduction = 1%/min_reduction = 5%/' tests/plans/fake-aa.kg >"$T/aa.kg"
grep -q '^min_reduction = 5%' "$T/aa.kg" || printf '[gate]\nrule = interval\nmin_reduction = 5%%\n' >>"$T/aa.kg"
# ---- 1. a drifting control
sed 's/^of = base$/of = base\nfake_drift = 0.01/' "$T/aa.kg" >"$T/drift.kg"
"$KGATE" run --report "$T/drift.kg" -o "$T/d" >"$T/d.out" 2>"$T/d.err"; st=$?
expect_status 3 $st "a drifting control"
expect_grep "the campaign is INVALID: control drifted: case small, arm ctrl" "$T/d.err"
expect_grep "The campaign is INVALID (control drifted: case small, arm ctrl" "$T/d/report.md"
expect_grep ": DRIFTED |" "$T/d/report.md"
exit 0
