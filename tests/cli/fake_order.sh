# An order effect (the arm listed first in a process runs 4% slower):
# the order check flags the candidate and the gate fails.
. tests/cli_lib.sh
"$KGATE" run tests/plans/fake-order.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "fake-order run"
expect_grep "| small | cand |.*| YES |" "$T/out"
expect_grep "order" "$T/err"
