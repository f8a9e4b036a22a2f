# Device lock: while one campaign runs, a second one with --lock-timeout
# gives up with exit 2 and names the holder; a third without a timeout
# says it waits, then runs once the first has ended.
# kgate-test: waits (a campaign waiting for the device lock)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
export KGATE_FAKE_SLEEP_MS=5
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/a" >"$T/a.out" 2>"$T/a.err" &
a=$!
# wait until the first campaign holds the lock (its pid is the first line of the file)
i=0
until [ "$(head -n 1 "$T/locks/fake.lock" 2>/dev/null)" = "$a" ]; do
    i=$((i + 1)); [ $i -lt 100 ] || die "the first campaign never took the lock"; sleep 0.05
done
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/b" --lock-timeout 0.3 >"$T/b.out" 2>"$T/b.err"; st=$?
expect_status 2 $st "second campaign with --lock-timeout"
expect_grep "device fake is in use by another campaign (pid $a" "$T/b.err"
expect_grep "gave up after --lock-timeout" "$T/b.err"
[ -f "$T/b/processes.csv" ] && die "the refused campaign must not run a process"
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/c" >"$T/c.out" 2>"$T/c.err"; stc=$?
wait $a; sta=$?
[ $sta -le 1 ] || die "first campaign: exit $sta"
[ $stc -le 1 ] || { cat "$T/c.err" >&2; die "waiting campaign: exit $stc"; }
expect_grep "in use by another campaign" "$T/c.err"
expect_grep "device fake is free: starting" "$T/c.err"
# the waiting campaign's first process started after the first campaign's last one ended
[ "$T/c/processes.csv" -nt "$T/a/processes.csv" ] || die "the campaigns overlapped"
"$KGATE" verify "$T/a" >/dev/null 2>&1 || die "first folder does not verify"
"$KGATE" verify "$T/c" >/dev/null 2>&1 || die "third folder does not verify"
exit 0
