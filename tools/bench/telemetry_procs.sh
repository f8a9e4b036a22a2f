#!/bin/sh
# tools/bench/telemetry_procs.sh [KGATE] [N]: what the device's process list costs a timed sample
# in the cuda worker, on the stand-in driver (make test-bin: build/tests/libcuda_fake.so; no GPU).
# After every timed sample the worker reads NVML's list of compute processes and counts the
# foreign ones by walking each process's ancestry through /proc.  Here the stand-in's list
# (FAKE_NVML_PIDS_FILE) names N (default 132, a screen's two workers' arm hosts) live processes
# of this namespace that are not the worker's, then none; a campaign of 1600 timed samples of
# two trusted arms runs under each, three times, and the script prints the median wall of each
# and the difference per timed sample.  (The processes are foreign: the workers are
# contaminated and not repeated, repeats = 0; only the time is read.)
K=${1:-build/kgate}
N=${2:-132}
FAKE=$(pwd)/build/tests/libcuda_fake.so
[ -x "$K" ] && [ -f "$FAKE" ] || { echo "telemetry_procs.sh: needs $K and $FAKE (make test-bin)" >&2; exit 2; }
T=$(mktemp -d)
trap 'kill $(cat "$T/pids" 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
for i in $(seq "$N"); do sleep 600 & echo $!; done >"$T/pids"
: >"$T/none"
src=$(pwd)/kernels/cuda/gemm_bt_naive.cu
{
    printf '[campaign]\nname = telemetry_procs\nbackend = cuda\nquiet = 0\nrepeats = 0\nwarmup = 1\n'
    printf 'samples = 100\nrounds = 4\nprocesses = 1\ntimeout = 120\n[case c]\nop = gemm_bt\ndtype = f32\nM = 16\nN = 16\nK = 8\n'
    for a in base cand; do
        printf '[arm %s]\nop = gemm_bt\nrole = %s\ntrusted = yes\nsource = %s\nentry = gemm_bt_naive\n' "$a" \
            "$([ $a = base ] && echo baseline || echo candidate)" "$src"
        printf 'grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n'
    done
} >"$T/plan.kg"
run() { # list -> seconds
    t0=$(date +%s.%N)
    FAKE_NVML_PIDS_FILE="$1" KGATE_LIBCUDA="$FAKE" KGATE_LIBNVML="$FAKE" KGATE_INCLUDE="$(pwd)/include" \
        KGATE_LOCK_DIR="$T" "$K" run "$T/plan.kg" -o "$T/ev.$$.$(date +%s%N)" --no-progress >/dev/null 2>&1
    echo "$(date +%s.%N) - $t0" | bc
}
med() { sort -n | sed -n 2p; }
with=$(for r in 1 2 3; do run "$T/pids"; done | med)
without=$(for r in 1 2 3; do run "$T/none"; done | med)
printf 'telemetry_procs: %s, %d processes listed: %.2f s; none listed: %.2f s; %.0f us a timed sample (1600)\n' \
    "$K" "$N" "$with" "$without" "$(echo "($with - $without) * 1000000 / 1600" | bc -l)"
