# Supervisor death and signals.
#  1. kill -9 of the supervisor while its worker hangs: the worker dies
#     with it (PR_SET_PDEATHSIG), within a second or two.
#  2. SIGTERM to the supervisor: it stops the worker, says how to resume,
#     exits non-zero, and processes.csv lacks the interrupted process;
#     --resume completes the folder, which verifies and equals an
#     uninterrupted campaign.
#  3. A worker that outlives its supervisor (under a wrapper that forks,
#     here timeout(1)) holds the device lock: a campaign waiting for the
#     lock names it ("kill N"); the worker ends itself at the plan's
#     timeout plus a grace, without a supervisor, and the folder resumes.
#  4. SIGTERM while the campaign waits for a quiet host, and while it waits
#     for the device lock: it stops within a second or two, saying so, and
#     the folder resumes.
# kgate-test: waits (an orphaned worker that ends itself at its time-out, a hanging process)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
lock="$T/locks/fake.lock"
worker_pid() { sed -n 's/^worker \([0-9]*\)$/\1/p' "$lock" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
nprocs() { { wc -l <"$1/processes.csv"; } 2>/dev/null || echo 0; }

# 1. kill -9 during a hanging worker (process 2 of fake-hang hangs)
"$KGATE" run --report tests/plans/fake-hang.kg -o "$T/k9" >/dev/null 2>&1 &
sup=$!
i=0
until [ "$(nprocs "$T/k9")" -ge 3 ] && [ -n "$(worker_pid)" ]; do
    i=$((i + 1)); [ $i -lt 200 ] || die "the hanging process never started"; sleep 0.05
done
w=$(worker_pid)
kill -0 "$w" 2>/dev/null || die "worker $w is not running"
kill -9 $sup
wait $sup 2>/dev/null
i=0
until gone "$w"; do
    i=$((i + 1)); [ $i -lt 40 ] || { kill -9 "$w"; die "worker $w outlived its supervisor by 2 s"; }; sleep 0.05
done

# 2. SIGTERM mid-campaign
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ref" >/dev/null 2>&1; st=$?
[ $st -le 1 ] || die "reference campaign: exit $st"
KGATE_FAKE_SLEEP_MS=20 "$KGATE" run --report tests/plans/fake-faster.kg -o "$T/term" >/dev/null 2>"$T/term.err" &
sup=$!
i=0
until [ "$(nprocs "$T/term")" -ge 3 ] && [ -n "$(worker_pid)" ]; do
    i=$((i + 1)); [ $i -lt 300 ] || die "the campaign never reached its third process"; sleep 0.02
done
w=$(worker_pid)
kill -TERM $sup
wait $sup; st=$?
[ $st -ne 0 ] || die "an interrupted campaign must exit non-zero"
# (the signal may find the next worker ready, waiting for its go: the
# message then says so; both name the resume)
expect_grep "interrupted\( while waiting for a quiet host\)\{0,1\}: kgate run tests/plans/fake-faster.kg --resume $T/term continues it" "$T/term.err"
gone "$w" || die "the interrupted worker $w still runs"
n=$(nprocs "$T/term")
[ "$n" -ge 3 ] && [ "$n" -lt 7 ] || die "processes.csv has $n lines after the interruption"
k=$((n - 1))
[ -f "$T/term/raw/proc-$(printf %03d $k).csv.gz" ] && die "the interrupted process left its rows"
[ -f "$T/term/SHA256SUMS" ] && die "an interrupted campaign has no SHA256SUMS"
"$KGATE" run --report --resume "$T/term" tests/plans/fake-faster.kg >/dev/null 2>"$T/resume.err"; st=$?
[ $st -le 1 ] || { cat "$T/resume.err" >&2; die "resume after SIGTERM: exit $st"; }
[ "$(nprocs "$T/term")" = 7 ] || die "the resumed campaign must have 6 processes"
cmp -s "$T/term/results.csv" "$T/ref/results.csv" || die "resumed results differ from an uninterrupted campaign"
"$KGATE" verify "$T/term" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "the resumed folder does not verify"; }

# 3. an orphan holds the lock.  The plan's timeout is 4 s here (the orphan
#    ends itself at about 7 s, its alarm at timeout + 2 + 0.1 timeout + 1),
#    so that a slow start (the sanitizers, a loaded host) still reaches the
#    resume, which follows the supervisor's kill at once, while the orphan
#    lives
sed 's/^timeout = 2$/timeout = 4/' tests/plans/fake-hang.kg >"$T/hang8.kg"
KGATE_WORKER_WRAPPER="timeout 120" "$KGATE" run --report "$T/hang8.kg" -o "$T/orph" >/dev/null 2>&1 &
sup=$!
# wait for the hanging process's own worker (its command line says --proc 2):
# the lock file names the previous worker until the supervisor starts it
is_hang_worker() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- '--proc 2 '; }
i=0
until w=$(worker_pid) && [ -n "$w" ] && is_hang_worker "$w"; do
    i=$((i + 1)); [ $i -lt 400 ] || die "the hanging process never started (wrapped)"; sleep 0.05
done
sleep 0.5
kill -9 $sup
wait $sup 2>/dev/null
kill -0 "$w" 2>/dev/null || die "the wrapped worker $w did not outlive its supervisor (the test needs it to)"
"$KGATE" run --report --resume "$T/orph" "$T/hang8.kg" --lock-timeout 0.3 >/dev/null 2>"$T/orph.err"; st=$?
expect_status 2 $st "resume while an orphan holds the lock"
expect_grep "an orphaned kgate worker (pid $w) still holds the device lock: kill $w" "$T/orph.err"
# no supervisor: the worker ends itself at timeout (8 s) + grace
i=0
until [ -z "$(ps -o pid= --ppid "$w" 2>/dev/null)" ]; do
    i=$((i + 1)); [ $i -lt 400 ] || { kill "$w"; die "the orphaned worker did not end itself"; }; sleep 0.05
done
i=0
until gone "$w"; do
    i=$((i + 1)); [ $i -lt 100 ] || { kill "$w"; die "the wrapper $w did not end"; }; sleep 0.05
done
"$KGATE" run --report --resume "$T/orph" "$T/hang8.kg" >/dev/null 2>"$T/orph2.err"; st=$?
[ $st -le 3 ] || { cat "$T/orph2.err" >&2; die "resume after the orphan ended: exit $st"; }
expect_grep "^2,fwd,timeout,0," "$T/orph/processes.csv"
"$KGATE" verify "$T/orph" >/dev/null 2>"$T/v2.err" || { cat "$T/v2.err" >&2; die "the orphan's folder does not verify"; }
# 4a. SIGTERM during a 30 s quiet window (the fake backend waits only when
#     --quiet-window asks): the stop does not wait for the window to end
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/qw" --quiet-window 30 >/dev/null 2>"$T/qw.err" &
sup=$!
sleep 1
kill -TERM $sup
i=0
while ! gone $sup; do
    i=$((i + 1)); [ $i -lt 60 ] || { kill -9 $sup; die "SIGTERM during the quiet window took more than 3 s"; }; sleep 0.05
done
wait $sup; st=$?
[ "$st" -ne 0 ] || die "an interrupted campaign exited 0"
expect_grep "interrupted while waiting for a quiet host: kgate run tests/plans/fake-faster.kg --resume $T/qw continues it" "$T/qw.err"
"$KGATE" run --report --resume "$T/qw" tests/plans/fake-faster.kg >/dev/null 2>"$T/qw2.err" || { cat "$T/qw2.err" >&2; die "resume after the quiet-window stop"; }
"$KGATE" verify "$T/qw" >/dev/null 2>&1 || die "the folder resumed after the quiet-window stop does not verify"
# 4b. SIGTERM while waiting for the device lock, held here by flock(1)
if command -v flock >/dev/null 2>&1; then
    mkdir -p "$T/locks"
    flock "$lock" sleep 30 &
    holder=$!
    i=0
    until [ -n "$(ps -o pid= --ppid $holder 2>/dev/null)" ]; do
        i=$((i + 1)); [ $i -lt 200 ] || die "flock never took the lock"; sleep 0.02
    done
    "$KGATE" run --report tests/plans/fake-faster.kg -o "$T/lw" >/dev/null 2>"$T/lw.err" &
    sup=$!
    sleep 1
    kill -TERM $sup
    i=0
    while ! gone $sup; do
        i=$((i + 1)); [ $i -lt 60 ] || { kill -9 $sup $holder; die "SIGTERM while waiting for the lock took more than 3 s"; }; sleep 0.05
    done
    # the lock's holder and its sleep (which holds the lock too)
    kill $(ps -o pid= --ppid $holder 2>/dev/null) $holder 2>/dev/null
    wait $sup; st=$?
    [ "$st" -ne 0 ] || die "a campaign interrupted while waiting for the lock exited 0"
    expect_grep "interrupted while waiting for device fake" "$T/lw.err"
fi
exit 0

