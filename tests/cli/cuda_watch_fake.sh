# The cuda backend's side of the host watch, against the stand-in driver
# and NVML of tests/unit/fake_libcuda.c (no GPU):
#  1. the first process warms the device until its SM clock stops rising
#     (a passing clock:warm check with the clocks before and after), the
#     later ones do not;
#  2. a hardware or thermal slowdown read by the worker's telemetry
#     contaminates every process (the environment's, not an arm's): the
#     campaign ends INVALID after its repeats, no arm INCORRECT;
#  3. a power cap alone is a note of the log, and the campaign completes;
#  4. a foreign compute process on the device (NVML's list) is told by
#     identity and contaminates the processes it overlaps;
#  5. more of kgate's own compute processes than a list of 64 holds (a
#     screen of 64 hosted arms) are still kgate's: NVML's list is read
#     whole, not taken for 64 foreign processes;
#  6. a foreign process that comes while the worker times is in the
#     telemetry of the samples after it (the worker keeps the last list's
#     count, and walks a list again when it changes).
# Skipped without NVRTC or without the stand-in driver.  The forbidden list
# names no real program: the host's own processes (a compiler of another
# test) are host_watch.sh's subject, not this test's.
# kgate-test: waits (quiet windows, a 3 s clock warm-up, repeats)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_watch_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_watch_fake: no NVRTC, skipped" >&2; exit 0; }
export KGATE_LIBCUDA="$FAKE" KGATE_LIBNVML="$FAKE" KGATE_INCLUDE="$(pwd)/include"
cat >"$T/p.kg" <<PLAN
[campaign]
name = watch_fake
backend = cuda
quiet = 0.2
quiet_timeout = 2
repeats = 1
forbid = kgate-test-none
warm = 3
warmup = 1
samples = 3
rounds = 2
processes = 1
timeout = 120
[case c]
op = gemm_bt
dtype = f32
M = 9
N = 17
K = 5
[arm base]
op = gemm_bt
role = baseline
trusted = yes
source = $(pwd)/kernels/cuda/gemm_bt_naive.cu
entry = gemm_bt_naive
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K
[arm cand]
op = gemm_bt
role = candidate
source = $(pwd)/kernels/cuda/gemm_bt_naive.cu
entry = gemm_bt_naive
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K
PLAN

# ---- 1. a device that boosts: 1400 MHz rising 20 MHz per reading to 1980
FAKE_NVML_CLOCK_START=1400 FAKE_NVML_CLOCK_STEP=20 FAKE_NVML_CLOCK_MAX=1980 \
    "$KGATE" run --report "$T/p.kg" -o "$T/warm" --no-progress >"$T/log1" 2>&1; st=$?
[ $st = 1 ] || { cat "$T/log1" >&2; die "campaign with a boosting clock: exit $st"; }
expect_grep ",clock:warm,pass,.*SM clock 1400 MHz before, 1980 MHz after .*steady for 0.5 s" "$T/warm/checks/proc-000.csv"
expect_no_grep "clock:warm" "$T/warm/checks/proc-001.csv"
expect_no_grep "contaminated" "$T/warm/processes.csv"
expect_grep "check records; 0 failed" "$T/warm/report.md"

# ---- 2. a thermal slowdown (HW thermal, 0x40) throughout
FAKE_NVML_REASONS=0x40 "$KGATE" run --report "$T/p.kg" -o "$T/hot" --no-progress >"$T/log2" 2>&1; st=$?
expect_status 3 $st "campaign on a device that slows down for heat"
expect_grep "the device slowed its clocks (clock event reasons 0x40: hardware or thermal slowdown)" "$T/hot/processes.csv"
expect_grep "the device never became quiet" "$T/log2"
expect_no_grep "INCORRECT" "$T/hot/results.csv"
expect_no_grep ",incorrect," "$T/hot/results.csv"
"$KGATE" verify "$T/hot" >/dev/null 2>"$T/v2.err" || { cat "$T/v2.err" >&2; die "folder 2 does not verify"; }

# ---- 3. a power cap (0x4) alone: noted, not contaminated
FAKE_NVML_REASONS=0x4 "$KGATE" run --report "$T/p.kg" -o "$T/cap" --no-progress >"$T/log3" 2>&1; st=$?
expect_status 1 $st "campaign on a power-capped device"
expect_no_grep "contaminated" "$T/cap/processes.csv"
expect_grep ",note,.*the device was power-capped (clock event reason 0x4)" "$T/cap/watch.csv"

# ---- 4. a foreign compute process on the device, there before the window
sleep 60 &
foreign=$!
echo "$foreign" >"$T/pids"
FAKE_NVML_PIDS_FILE="$T/pids" "$KGATE" run --report "$T/p.kg" -o "$T/foreign" --no-progress >"$T/log4" 2>&1; st=$?
kill $foreign 2>/dev/null; wait $foreign 2>/dev/null
expect_status 3 $st "campaign with a foreign compute process that never leaves"
expect_grep "not kgate's: pid $foreign" "$T/foreign/processes.csv"
expect_grep "device processes were told by process ID" "$T/foreign/watch.csv"

# ---- 5. 80 compute processes on the device, every one kgate's (the supervisor's pid 80 times:
# the stand-in NVML answers "insufficient size" to a list shorter than its file, as NVML does)
FAKE_NVML_PIDS_FILE="$T/pids80" sh -c 'for i in $(seq 80); do echo $$; done >"$FAKE_NVML_PIDS_FILE"
    exec "$0" run --report "$1" -o "$2" --no-progress' "$KGATE" "$T/p.kg" "$T/many" >"$T/log5" 2>&1; st=$?
expect_status 1 $st "campaign with 80 of kgate's own compute processes on the device"
expect_no_grep "contaminated" "$T/many/processes.csv"
expect_no_grep "foreign" "$T/many/processes.csv"

# ---- 6. a foreign compute process that comes after the worker's fourth reading
sed -e 's/^quiet = .*/quiet = 0/' -e 's/^warm = .*/warm = 0/' -e 's/^repeats = .*/repeats = 0/' "$T/p.kg" >"$T/p6.kg"
sleep 60 &
foreign=$!
echo "$foreign" >"$T/pids6"
FAKE_NVML_PIDS_FROM_CALL=5 FAKE_NVML_PIDS_FILE="$T/pids6" "$KGATE" run "$T/p6.kg" -o "$T/late" --no-progress \
    >"$T/log6" 2>&1; st=$?
kill $foreign 2>/dev/null; wait $foreign 2>/dev/null
[ $st -le 3 ] || { cat "$T/log6" >&2; die "a foreign process that comes while timing: exit $st"; }
# the worker's samples in order: none foreign at first, foreign from the reading that lists it on
seen=$(awk -F, 'NR > 1 { printf "%s", ($11 > 0 ? 1 : 0) }' "$T/late/telemetry/proc-000.csv")
case $seen in
0*1) echo "$seen" | grep -q '10' && die "telemetry: a foreign process counted, then not: $seen" ;;
*) die "telemetry: expected samples without and then with the foreign process, got $seen" ;;
esac
exit 0
