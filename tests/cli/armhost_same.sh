# An arm gives the same admission checks, values included, whether it runs
# in the worker (trusted = yes) or in its sandboxed arm host (the default),
# and the untrusted run records the host's protections in its resources.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
root=$(pwd)
for t in yes no; do
    cat > "$T/p-$t.kg" <<PLAN
[campaign]
backend = cpu
quiet = 0
samples = 3
rounds = 2
processes = 1
[case f32]
op = gemm_bt
dtype = f32
M = 24
N = 20
K = 36
[case bf16]
op = gemm_bt
dtype = bf16
M = 17
N = 9
K = 40
[arm naive]
op = gemm_bt
role = baseline
source = $root/kernels/cpu/gemm_bt_naive.c
trusted = $t
[arm blocked]
op = gemm_bt
role = candidate
source = $root/kernels/cpu/gemm_bt_blocked.c
trusted = $t
PLAN
    "$KGATE" check "$T/p-$t.kg" -o "$T/c-$t" >"$T/out-$t" 2>"$T/err-$t"; st=$?
    expect_status 0 $st "check with trusted = $t"
    grep '^| ' "$T/out-$t" > "$T/rows-$t"
done
cmp -s "$T/rows-yes" "$T/rows-no" || { diff "$T/rows-yes" "$T/rows-no" >&2; die "trusted and untrusted checks differ"; }
expect_grep "poison0:C | pass" "$T/rows-no"
# a short timed campaign: the arm host's protections reach the report
"$KGATE" run "$T/p-no.kg" -o "$T/ev" >"$T/run.out" 2>"$T/run.err"; st=$?
[ $st -le 1 ] || { cat "$T/run.err" >&2; die "run: exit $st"; }
expect_grep "## Resources" "$T/ev/report.md"
expect_grep "| f32 | blocked | 1 | – |.*| cpu | .*seccomp" "$T/ev/report.md"
expect_grep "| f32 | blocked | [0-9]* | .* | 0 |" "$T/ev/report.md"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "folder does not verify"; }
expect_report_identical "$T/ev"
exit 0
