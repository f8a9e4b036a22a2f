# rotate = N: every arm cycles through N input sets (same values, other
# addresses) between samples; the checks after timing still see the last
# timed output, and the report says which cache mode ran.
. tests/cli_lib.sh
cat > "$T/rot.kg" <<PLAN
[campaign]
quiet = 0
backend = cpu
samples = 4
rounds = 3
processes = 2
rotate = 3
control_margin = 20%
[case g]
op = gemm_bt
dtype = f32
M = 24
N = 40
K = 16
[arm naive]
op = gemm_bt
role = baseline
source = $PWD/kernels/cpu/gemm_bt_naive.c
[arm blocked]
op = gemm_bt
source = $PWD/kernels/cpu/gemm_bt_blocked.c
PLAN
"$KGATE" run --report "$T/rot.kg" -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "rotate run: exit $st"; }
expect_grep "rotate 3 input sets" "$T/out"
expect_grep "4 accepted, 0 excluded" "$T/out"
for f in "$T"/ev/checks/*.csv; do expect_no_grep ",fail," "$f"; done
expect_grep ",post,snapshot:C,pass," "$T/ev/checks/proc-000.csv"
sed 's/^rotate = 3/rotate = 17/' "$T/rot.kg" > "$T/rot17.kg"
"$KGATE" run --report "$T/rot17.kg" -o "$T/ev17" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "rotate = 17"
expect_grep "rot17.kg:7" "$T/err"
expect_grep "\[1, 16\]" "$T/err"
