# A hanging worker is killed at the plan's timeout and recorded.
# kgate-test: waits (a hanging worker killed at its time-out)
. tests/cli_lib.sh
"$KGATE" run --report tests/plans/fake-hang.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 3 ] || die "fake-hang: exit status $st"
expect_grep "^2,fwd,timeout,0," "$T/ev/processes.csv"
expect_grep "5 accepted, 1 excluded" "$T/out"
