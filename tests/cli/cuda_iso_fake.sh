# A campaign on the cuda backend against the stand-in driver of
# tests/unit/fake_libcuda.c (no GPU): a trusted baseline in the worker, an
# untrusted candidate and its control each in a cuda arm host of its own
# (a process that maps the worker's buffers by IPC handle), with rotated
# inputs and packed samples.  Every check before and after timing must
# pass through the worker's whole sequence of calls, and the resource
# records name the arm hosts.  Fresh inputs come from kgate's generator
# kernel, and a generator whose bits differ from the host's is not used.
# Skipped without NVRTC or without the stand-in driver.
. tests/cli_lib.sh
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_iso_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_iso_fake: no NVRTC, skipped" >&2; exit 0; }
cat >"$T/p.kg" <<PLAN
[campaign]
name = iso_fake
backend = cuda
quiet = 0
warmup = 2
samples = 5
rounds = 2
processes = 1
pack = 2
rotate = 2
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
[arm ctl]
op = gemm_bt
role = control
of = base
PLAN
KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run --report "$T/p.kg" -o "$T/out" --no-progress \
    >"$T/log" 2>&1; st=$?
# one process per direction: the gate cannot pass, the campaign completes
expect_status 1 $st "campaign against the stand-in driver"
expect_grep "check records; 0 failed" "$T/out/report.md"
expect_no_grep ",fail," "$T/out/checks/proc-000.csv"
expect_no_grep ",fail," "$T/out/checks/proc-001.csv"
expect_grep "| c | cand | candidate |" "$T/out/report.md"
# the untrusted arms ran in cuda arm hosts, the trusted baseline in the worker
expect_grep "cuda arm host" "$T/out/telemetry/resources-000.csv"
expect_grep "trusted (in the worker)" "$T/out/telemetry/resources-000.csv"
# each operation of a sample wrote an output of its own (bound poisoned), and a sampled check
# compared the first operation's (sampled@N/0), in the worker's graph and in the arm hosts'
for a in base cand ctl; do
    grep -h ",$a,post,sampled@[0-9]*/0:C,pass," "$T"/out/checks/proc-*.csv >/dev/null ||
        die "arm $a: no sampled check of a sample's first operation"
done
# fresh inputs came from kgate's generator kernel (cuda_fill.c), its bits
# checked against the host's first
expect_grep "generating them in place with the cuda backend's generator" "$T/out/checks/proc-000.csv"
# a generator that disagrees with the host's by one bit is not used: the
# worker generates on the host, says why, and no honest arm fails
KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include FAKE_CUDA_FILL_FLIP=1 "$KGATE" run --report "$T/p.kg" -o "$T/flip" \
    --no-progress >"$T/log" 2>&1; st=$?
expect_status 1 $st "campaign with a generator kernel that flips a bit"
expect_grep "check records; 0 failed" "$T/flip/report.md"
expect_grep "generating them on the host and uploading them (the backend's generator differs from the host's in input 0 at byte 0)" \
    "$T/flip/checks/proc-000.csv"
