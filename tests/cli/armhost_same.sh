# An arm gives the same admission checks, values included, whether it runs
# in the worker (trusted = yes) or in its sandboxed arm host (the default),
# and the untrusted run records the host's protections in its resources.
# Both kinds are arms of one campaign: two campaigns never share inputs
# (each draws its own input salt).
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
root=$(pwd)
cases='[case f32]
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
K = 40'
arms() { # suffix trusted
    printf '[arm naive%s]\nop = gemm_bt\nrole = %s\nsource = %s/kernels/cpu/gemm_bt_naive.c\ntrusted = %s\n' \
        "$1" "$3" "$root" "$2"
    printf '[arm blocked%s]\nop = gemm_bt\nrole = candidate\nsource = %s/kernels/cpu/gemm_bt_blocked.c\ntrusted = %s\n' \
        "$1" "$root" "$2"
}
head='[campaign]
backend = cpu
quiet = 0
samples = 3
rounds = 2
processes = 1'
{ echo "$head"; echo "$cases"; arms _yes yes baseline; arms _no no candidate; } > "$T/p-both.kg"
{ echo "$head"; echo "$cases"; arms "" no baseline; } > "$T/p-no.kg"
"$KGATE" check "$T/p-both.kg" -o "$T/c-both" >"$T/out-both" 2>"$T/err-both"; st=$?
expect_status 0 $st "check with trusted and untrusted arms"
for t in yes no; do
    # (the layout rows, each arm's own load slot and placement pad, differ by design)
    grep "^| [a-z0-9]* | [a-z]*_$t | " "$T/out-both" | grep -v " | layout | " |
        sed "s/^\(| [a-z0-9]* | [a-z]*\)_$t /\1 /" > "$T/rows-$t"
done
[ -s "$T/rows-yes" ] || die "no check rows of the trusted arms"
cmp -s "$T/rows-yes" "$T/rows-no" || { diff "$T/rows-yes" "$T/rows-no" >&2; die "trusted and untrusted checks differ"; }
expect_grep "poison0:C | pass" "$T/rows-no"
# a short timed campaign: the arm host's protections reach the report
"$KGATE" run --report "$T/p-no.kg" -o "$T/ev" >"$T/run.out" 2>"$T/run.err"; st=$?
[ $st -le 1 ] || { cat "$T/run.err" >&2; die "run: exit $st"; }
expect_grep "## Resources" "$T/ev/report.md"
expect_grep "| f32 | blocked | 1 | – |.*| cpu | .*seccomp" "$T/ev/report.md"
expect_grep "| f32 | blocked | [0-9]* | .* | 0 |" "$T/ev/report.md"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "folder does not verify"; }
expect_report_identical "$T/ev"
exit 0
