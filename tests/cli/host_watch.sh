# The host watch, end to end (quiet.c, supervisor.c):
#  1. a forbidden process started before the window and kept running:
#     every slot attempt finds no quiet host, the slot is given up after
#     its repeats, and the campaign ends INVALID ("the device never became
#     quiet", exit 3) with what ran kept and a folder that verifies;
#  2. one that leaves within the wait lets the campaign finish valid;
#  3. a foreign process on the device (the fake backend's process list) is
#     told by identity: not kgate's, whether it came before the window or
#     not; one whose ID is not of this PID namespace is counted, and the
#     evidence says so;
#  4. the window is continuous: quiet = 4 and six processes on a quiet
#     host wait about one window in all, not six (the recorded waits);
#  5. a forbidden process that comes after the first process and never
#     leaves makes the campaign INVALID with the first process's data kept
#     (fake backend: the order is certain);
#  6. on the cpu backend, with max_foreign_cpu declared (by default the
#     host's other work is recorded, not judged: first_run.sh), a busy
#     loop that is not kgate's contaminates the process it overlaps
#     (foreign CPU), and never leaving makes the campaign INVALID (the
#     forbidden list names no real program: the loop, not another test's
#     compiler, is what it sees);
#  7. report.md's "Host watch" section lists every row of watch.csv and
#     the duty cycle, and kgate report regenerates it byte for byte.
# The fake backend's windows are timers (it watches no host CPU) and every
# forbidden list names this test's own processes, so only section 6
# depends on the host's load, and it says where the load was already
# there.
# kgate-test: waits (quiet windows of up to 4 s and their time-outs)
# kgate-test: no-sanitize (the host watch's windows, waits and time bounds, timing only; integrity_quiet.sh, signals.sh and cuda_watch_fake.sh drive the watch's code under the sanitizers)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
export KGATE_FAKE_SLEEP_MS=5

plan_with() { # FILE LINES...: tests/plans/fake-faster.kg with campaign lines added
    f=$1; shift
    sed "s#\.\./\.\./kernels/#$PWD/kernels/#" tests/plans/fake-faster.kg >"$f.tmp"
    { sed -n '1,2p' "$f.tmp"; for l in "$@"; do echo "$l"; done; sed -n '3,$p' "$f.tmp"; } >"$f"
    rm -f "$f.tmp"
}
# the column of processes.csv named $1 (the reason is quoted and may hold
# commas: counted from the end)
col() { awk -F, -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = NF - i } NR > 1 { print $(NF - k) }' "$2"; }

# ---- 1. a forbidden process that never leaves
# the forbidden process: a copy of sleep under a name of this run alone (another
# run of the suite on the host has its own)
HOG=kghog$$
cp "$(command -v sleep)" "$T/$HOG" || die "cannot copy sleep"
"$T/$HOG" 60 &
hog=$!
plan_with "$T/p1.kg" "quiet_timeout = 1.5" "repeats = 2"
"$KGATE" run --report "$T/p1.kg" -o "$T/ev1" --quiet-window 0.3 --forbid $HOG >"$T/out1" 2>"$T/err1"; st=$?
kill $hog 2>/dev/null; wait $hog 2>/dev/null
expect_status 3 $st "a forbidden process that never leaves (INVALID)"
expect_grep "the device never became quiet" "$T/err1"
expect_grep "campaign INVALID" "$T/err1"
# slot 0 tried 1 + repeats times, each recorded as contaminated, not started
[ "$(grep -c ',contaminated,0,' "$T/ev1/processes.csv")" = 3 ] || { cat "$T/ev1/processes.csv" >&2; die "expected 3 contaminated attempts"; }
expect_grep "not started: the host never became quiet within 2 s of the worker being ready to time (forbidden process $HOG (pid $hog)" "$T/ev1/processes.csv"
expect_grep ",never-quiet," "$T/ev1/watch.csv"
expect_grep "The campaign is INVALID (the device never became quiet: slot 0" "$T/ev1/report.md"
"$KGATE" verify "$T/ev1" >/dev/null 2>"$T/v1.err" || { cat "$T/v1.err" >&2; die "folder 1 does not verify"; }
expect_report_identical "$T/ev1"
# --resume on a quiet host runs what the host held back, and the verdict stands
"$KGATE" run --report --resume "$T/ev1" "$T/p1.kg" --quiet-window 0.3 --forbid $HOG >"$T/out1r" 2>"$T/err1r"; st=$?
[ $st -le 1 ] || { cat "$T/err1r" >&2; die "resume on a quiet host: exit $st"; }
# the never-quiet row of the first run stays in the log; the resumed run's verdict is
# judged on the processes it completed (INVALID only while a slot is given up)
[ "$(grep -c ',ok,1,' "$T/ev1/processes.csv")" = 6 ] || die "the resumed campaign must complete its six slots"

# ---- 2. a forbidden process that leaves within the wait
"$T/$HOG" 1 &
hog=$!
plan_with "$T/p2.kg" "quiet_timeout = 20" "repeats = 1"
"$KGATE" run --report "$T/p2.kg" -o "$T/ev2" --quiet-window 0.3 --forbid $HOG >"$T/out2" 2>"$T/err2"; st=$?
wait $hog 2>/dev/null
[ $st -le 1 ] || { cat "$T/err2" >&2; die "a forbidden process that leaves: exit $st"; }
expect_grep "waiting for a quiet host: forbidden process $HOG" "$T/err2"
expect_no_grep "contaminated" "$T/ev2/processes.csv"
w0=$(col wait_s "$T/ev2/processes.csv" | head -n 1)
awk -v w="$w0" 'BEGIN { exit !(w >= 0.9) }' || die "the first process waited $w0 s, not until the forbidden process left"

# ---- 3. foreign device processes by identity (the fake backend's list)
"$T/$HOG" 60 &
dev=$!
echo "$dev" >"$T/pids"
plan_with "$T/p3.kg" "quiet_timeout = 1" "repeats = 0"
KGATE_FAKE_DEVICE_PIDS="$T/pids" "$KGATE" run --report "$T/p3.kg" -o "$T/ev3" --quiet-window 0.2 >"$T/out3" 2>"$T/err3"; st=$?
kill $dev 2>/dev/null; wait $dev 2>/dev/null
expect_status 3 $st "a foreign device process present before the window"
expect_grep "foreign compute process(es) on the device (not kgate's: pid $dev)" "$T/ev3/processes.csv"
expect_grep "device processes were told by process ID" "$T/ev3/watch.csv"
# a process ID of another PID namespace: counted, and the log says so
echo 4194000 >"$T/pids"
KGATE_FAKE_DEVICE_PIDS="$T/pids" "$KGATE" run --report "$T/p3.kg" -o "$T/ev3b" --quiet-window 0.2 >"$T/out3b" 2>"$T/err3b"; st=$?
[ $st -le 1 ] || { cat "$T/err3b" >&2; die "counted device processes: exit $st"; }
expect_grep "device processes were told by count" "$T/ev3b/watch.csv"
expect_grep "by count (NVML's process IDs are another PID namespace's" "$T/ev3b/report.md"
# ... and processes appearing during a campaign, more than the count allows
# (the baseline when the window ended, plus one for the worker): contaminated
plan_with "$T/p3c.kg" "quiet_timeout = 30" "repeats = 3"
: >"$T/pids"
KGATE_FAKE_SLEEP_MS=15 KGATE_FAKE_DEVICE_PIDS="$T/pids" "$KGATE" run --report "$T/p3c.kg" -o "$T/ev3c" --quiet-window 0.2 \
    >"$T/out3c" 2>"$T/err3c" &
k=$!
i=0
until [ -f "$T/ev3c/processes.csv" ]; do i=$((i + 1)); [ $i -lt 400 ] || die "no process finished (3c)"; sleep 0.05; done
sleep 0.3
printf '4194001\n4194002\n' >"$T/pids"
sleep 1
: >"$T/pids"
wait $k; st=$?
[ $st -le 1 ] || { cat "$T/err3c" >&2; die "a device process that comes and goes: exit $st"; }
expect_grep ",contaminated,0,.*compute processes, kgate expects" "$T/ev3c/processes.csv"
[ "$(grep -c ',ok,1,' "$T/ev3c/processes.csv")" = 6 ] || die "every slot must complete once the process left (3c)"

# ---- 3d. counted, with kgate's own processes on the device: in a container NVML's list holds
# every process with a context (the worker, its arm hosts, library helpers) under IDs this
# namespace cannot match; kgate counts its own by the device node they hold open
# (KGATE_DEVICE_NODE stands for /dev/nvidiaN). Each worker here has three children holding the
# node (a wrapper starts them; they die with the worker's process group); the list has three
# unmatched IDs: quiet (before: kgate expected one, the worker, and the host never became quiet).
# With a fourth ID in the list, one is foreign.
: >"$T/node"
cat >"$T/hold.sh" <<'EOF2'
for i in 1 2 3; do ( exec 7<"$KGATE_DEVICE_NODE"; exec sleep 300 ) & done
exec "$@"
EOF2
plan_with "$T/p3d.kg" "quiet_timeout = 2" "repeats = 0" "overlap = no"
printf '4194011\n4194012\n4194013\n' >"$T/pids3"
KGATE_WORKER_WRAPPER="sh $T/hold.sh" KGATE_DEVICE_NODE="$T/node" KGATE_FAKE_DEVICE_PIDS="$T/pids3" \
    "$KGATE" run --report "$T/p3d.kg" -o "$T/ev3d" --quiet-window 0.2 >"$T/out3d" 2>"$T/err3d"; st=$?
[ $st -le 1 ] || { cat "$T/err3d" >&2; die "kgate's own three device processes, counted: exit $st"; }
expect_no_grep "contaminated" "$T/ev3d/processes.csv"
expect_grep "device processes were told by count" "$T/ev3d/watch.csv"
printf '4194011\n4194012\n4194013\n4194014\n' >"$T/pids4"
KGATE_WORKER_WRAPPER="sh $T/hold.sh" KGATE_DEVICE_NODE="$T/node" KGATE_FAKE_DEVICE_PIDS="$T/pids4" \
    "$KGATE" run --report "$T/p3d.kg" -o "$T/ev3e" --quiet-window 0.2 >"$T/out3e" 2>"$T/err3e"; st=$?
expect_status 3 $st "a fourth device process beside kgate's three, counted"
expect_grep "4 compute processes, kgate expects 3 (3 of its own hold the device" "$T/ev3e/processes.csv"

# ---- 3f. counted, with kgate's own processes unreadable: a confined arm host is not dumpable, and
# where kgate lacks the capabilities to read such a process's open files (a container's root without
# CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH) its device node cannot be seen; such a descendant counts as
# one of kgate's own (before: "4 compute processes, kgate expects 1", never quiet, on an H200 in a
# container "21 foreign" for a screen's arm hosts). Here the three children run as another user and
# kgate without those capabilities; a fourth ID beside them is still foreign.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
   setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null &&
   setpriv --bounding-set=-sys_ptrace,-dac_read_search,-dac_override true 2>/dev/null; then
    cat >"$T/hold_other.sh" <<'EOF2'
for i in 1 2 3; do ( exec 7<"$KGATE_DEVICE_NODE"; exec setpriv --reuid=65534 --regid=65534 --clear-groups sleep 300 ) & done
exec "$@"
EOF2
    KGATE_WORKER_WRAPPER="sh $T/hold_other.sh" KGATE_DEVICE_NODE="$T/node" KGATE_FAKE_DEVICE_PIDS="$T/pids3" \
        setpriv --bounding-set=-sys_ptrace,-dac_read_search,-dac_override \
        "$KGATE" run --report "$T/p3d.kg" -o "$T/ev3f" --quiet-window 0.2 >"$T/out3f" 2>"$T/err3f"; st=$?
    [ $st -le 1 ] || { cat "$T/err3f" >&2; die "kgate's own device processes, unreadable, counted: exit $st"; }
    expect_no_grep "contaminated" "$T/ev3f/processes.csv"
    KGATE_WORKER_WRAPPER="sh $T/hold_other.sh" KGATE_DEVICE_NODE="$T/node" KGATE_FAKE_DEVICE_PIDS="$T/pids4" \
        setpriv --bounding-set=-sys_ptrace,-dac_read_search,-dac_override \
        "$KGATE" run --report "$T/p3d.kg" -o "$T/ev3g" --quiet-window 0.2 >"$T/out3g" 2>"$T/err3g"; st=$?
    expect_status 3 $st "a fourth device process beside kgate's three, unreadable, counted"
    expect_grep "4 compute processes, kgate expects 3 (3 of its own hold the device, 3 of them counted unseen" "$T/ev3g/processes.csv"
else
    echo "host_watch: 3f skipped: needs root and setpriv (another user, capabilities dropped)" >&2
fi

# ---- 3h. counted, with the overlap: the next worker starts beside the current one, and its device
# processes are kgate's own too (before, the overlap was off wherever processes were counted)
# (each worker's wrapper ends 0.3 s after its worker: on the fake backend a worker ends within a
# millisecond of its last timed phase, often before the next one has started beside it)
cat >"$T/hold_late.sh" <<'EOF2'
for i in 1 2 3; do ( exec 7<"$KGATE_DEVICE_NODE"; exec sleep 300 ) & done
"$@"
st=$?
sleep 0.3
exit $st
EOF2
plan_with "$T/p3h.kg" "quiet_timeout = 2" "repeats = 0"
KGATE_WORKER_WRAPPER="sh $T/hold_late.sh" KGATE_DEVICE_NODE="$T/node" KGATE_FAKE_DEVICE_PIDS="$T/pids3" \
    "$KGATE" run --report "$T/p3h.kg" -o "$T/ev3h" --quiet-window 0.2 >"$T/out3h" 2>"$T/err3h"; st=$?
[ $st -le 1 ] || { cat "$T/err3h" >&2; die "counted, with the overlap: exit $st"; }
expect_no_grep "contaminated" "$T/ev3h/processes.csv"
expect_grep "device processes were told by count" "$T/ev3h/watch.csv"
expect_grep ",overlap,\"started beside process" "$T/ev3h/watch.csv"

# ---- 3i. a worker started beside another that fails before timing (on a GPU: more contexts than
# the device gives) turns the overlap off; the failure is recorded as any worker's, and the campaign
# ends with a verdict. The wrapper fails the second worker it starts, the first started beside another.
# The first worker's wrapper ends only once the second has started (at most 20 s): the supervisor
# starts the next worker beside the current one while the current one runs, and a worker on the fake
# backend may end within a millisecond of its last timed phase, before a busy host's supervisor has
# read it; held so, the second start is beside the first however the host schedules them.
cat >"$T/fail2.sh" <<'EOF2'
n=$(cat "$KG_T/starts" 2>/dev/null || echo 0); n=$((n + 1)); echo $n >"$KG_T/starts"
[ $n = 2 ] && { echo "wrapper: no context for this worker" >&2; exit 4; }
[ $n = 1 ] || exec "$@"
"$@"
st=$?
i=0
while [ "$(cat "$KG_T/starts")" = 1 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
exit $st
EOF2
rm -f "$T/starts"
KG_T=$T KGATE_WORKER_WRAPPER="sh $T/fail2.sh" \
    "$KGATE" run --report "$T/p3h.kg" -o "$T/ev3i" --quiet-window 0.2 >"$T/out3i" 2>"$T/err3i"; st=$?
[ $st -le 1 ] || { cat "$T/err3i" >&2; die "a failed worker beside another: exit $st"; }
expect_grep ",overlap-off,\"process 1, started beside process 0, ended before it timed" "$T/ev3i/watch.csv"
# no worker after it starts beside another (process 1 itself may log its time beside process 0)
[ "$(grep -cE '^[^,]*,[^,]*,([2-9]|[1-9][0-9]+),overlap,' "$T/ev3i/watch.csv")" = 0 ] ||
    { cat "$T/ev3i/watch.csv" >&2; die "a worker started beside another after the overlap was turned off"; }
expect_grep '^1,rev,exit 4,0,.*"wrapper: no context for this worker"' "$T/ev3i/processes.csv"
[ "$(grep -c '^[0-9]' "$T/ev3i/processes.csv")" = "$(grep -c '^[0-9]' "$T/ev3h/processes.csv")" ] ||
    die "the campaign did not run every slot after the failed one"

# ---- 4. a continuous window: quiet = 4, six processes (a window counted per
# process would make them wait 24 s)
plan_with "$T/p4.kg"
"$KGATE" run --report "$T/p4.kg" -o "$T/ev4" --quiet-window 4 >"$T/out4" 2>"$T/err4"; st=$?
[ $st -le 1 ] || { cat "$T/err4" >&2; die "quiet = 4: exit $st"; }
total=$(col wait_s "$T/ev4/processes.csv" | awk '{ s += $1 } END { printf "%.3f", s }')
later=$(col wait_s "$T/ev4/processes.csv" | awk 'NR > 1 { s += $1 } END { printf "%.3f", s }')
echo "quiet = 4, six processes: waits $total s in all, $later s after the first" >&2
awk -v t="$total" -v l="$later" 'BEGIN { exit !(t >= 2 && t < 6 && l < 2) }' ||
    die "six processes waited $total s ($later s after the first): the window must be counted once on a quiet host"
# the first window passed while the first worker set up and checked its arms: it waited,
# ready, for the rest of the window only (watch.csv: "ready to time X s after it started")
ready0=$(grep ',0,wait,' "$T/ev4/watch.csv" | sed -n 's/.*ready to time \([0-9.]*\) s after.*/\1/p')
w0=$(col wait_s "$T/ev4/processes.csv" | head -n 1)
build=$(grep ',build,' "$T/ev4/watch.csv" | cut -d, -f2)
echo "quiet = 4: the first worker was ready after $ready0 s and then waited $w0 s (builds $build s)" >&2
awk -v r="$ready0" -v w="$w0" -v b="$build" 'BEGIN { exit !(r > 0 && w + r + b > 3.9 && w + r < 4.5) }' ||
    die "the first worker must set up during the window: ready after '$ready0' s, then waited $w0 s"
expect_grep "Duty cycle: " "$T/ev4/report.md"
expect_grep "| quiet waits (a worker ready to time, waiting) | " "$T/ev4/report.md"
expect_report_identical "$T/ev4"
# every row of watch.csv is a row of the report's table
n=$(($(wc -l <"$T/ev4/watch.csv") - 1))
m=$(sed -n '/^## Host watch/,/^## Speed/p' "$T/ev4/report.md" | grep -c '^| 20[0-9][0-9]-')
[ "$n" = "$m" ] || die "watch.csv has $n rows, the report's table $m"

# ---- 5. a forbidden process that comes after the first process and stays
plan_with "$T/p5f.kg" "quiet_timeout = 1" "repeats = 0"
KGATE_FAKE_SLEEP_MS=15 "$KGATE" run --report "$T/p5f.kg" -o "$T/ev5f" --quiet-window 0.2 --forbid $HOG \
    >"$T/out5f" 2>"$T/err5f" &
k=$!
i=0
until [ -f "$T/ev5f/processes.csv" ]; do i=$((i + 1)); [ $i -lt 400 ] || die "no process finished (5)"; sleep 0.05; done
"$T/$HOG" 60 &
hog=$!
wait $k; st=$?
kill $hog 2>/dev/null; wait $hog 2>/dev/null
expect_status 3 $st "a forbidden process that comes and stays (INVALID)"
expect_grep "^0,fwd,ok,1," "$T/ev5f/processes.csv"
[ -f "$T/ev5f/raw/proc-000.csv.gz" ] || die "the first process's rows must be kept (5)"
expect_grep ",never-quiet," "$T/ev5f/watch.csv"
"$KGATE" verify "$T/ev5f" >/dev/null 2>"$T/v5f.err" || { cat "$T/v5f.err" >&2; die "folder 5 does not verify"; }

# ---- 6. cpu backend: a busy loop that is not kgate's
cat >"$T/p5.kg" <<EOF
[campaign]
name = host-cpu
backend = cpu
quiet = 0.5
quiet_timeout = 2
repeats = 1
forbid = kgate-test-none
max_steal = 0
max_foreign_cpu = 0.5
warmup = 1
samples = 3
rounds = 40
processes = 2
timeout = 60
[case r]
op = rowsum
dtype = f32
M = 64
N = 4096
[arm naive]
op = rowsum
role = baseline
source = $PWD/kernels/cpu/rowsum_naive.c
[arm cand]
op = rowsum
role = candidate
source = $PWD/kernels/cpu/rowsum_unrolled.c
[gate]
min_reduction = 1%
EOF
"$KGATE" run --report "$T/p5.kg" -o "$T/ev5" >"$T/out5" 2>"$T/err5" &
k=$!
i=0
until [ -f "$T/ev5/processes.csv" ]; do i=$((i + 1)); [ $i -lt 1200 ] || die "no process finished (6)"; sleep 0.05; done
# two loops: more than a core for them even while the worker competes
sh -c 'while :; do :; done' &
busy=$!
sh -c 'while :; do :; done' &
busy2=$!
wait $k; st=$?
kill $busy $busy2 2>/dev/null; wait $busy $busy2 2>/dev/null
cat "$T/ev5/processes.csv" >&2
expect_status 3 $st "a busy loop that never ends (cpu)"
expect_grep "processes that are not kgate's used" "$T/ev5/processes.csv"
expect_grep ",never-quiet," "$T/ev5/watch.csv"
# the process before the busy loop is kept (on a host that other work already loads, it is
# contaminated, or never started, too: said, not failed; section 5 tests the keeping)
if grep -q '^0,fwd,ok,1,' "$T/ev5/processes.csv"; then
    [ -f "$T/ev5/raw/proc-000.csv.gz" ] || die "the first process's rows must be kept (6)"
else
    echo "host_watch: the host was busy before the loop started (process 0 not ok): its keeping is not judged" >&2
fi
"$KGATE" verify "$T/ev5" >/dev/null 2>"$T/v5.err" || { cat "$T/v5.err" >&2; die "folder 6 does not verify"; }
exit 0
