#!/bin/sh
# A timed sample's escape check against a busy host, on the stand-in
# driver of tests/unit/fake_libcuda.c (no GPU).  A sample whose host
# bracket (after a device-wide synchronisation) far exceeds its events is
# work that escaped the events, unless the bracket was the host's: the
# driver's wait gives the CPU away when its contexts outnumber the CPUs,
# and on a busy host the thread then waits for a CPU.  Here every wait
# yields (FAKE_CUDA_SYNC_YIELDS) on a CPU that a busy loop shares with the
# whole campaign, so every bracket is a scheduler slice long (0.75 ms or
# more, against the stand-in's 10 us events and the check's 200 us of
# slack): the time the thread waited for a CPU (schedstat's run delay) is
# not counted, and no sample escapes.  An honest baseline was INCORRECT
# here before (post:timing:escape).  Work that does outlast the events
# (the stand-in's wait spinning 1 ms of its thread's own CPU time,
# FAKE_CUDA_SYNC_SPIN_US) still escapes in every sample, and both arms
# fail the check: what is left out is only the time spent waiting.
# Skipped without NVRTC, the stand-in driver, taskset or the kernel's
# schedstat.
. tests/cli_lib.sh
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_escape_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_escape_fake: no NVRTC, skipped" >&2; exit 0; }
command -v taskset >/dev/null 2>&1 || { echo "cuda_escape_fake: no taskset, skipped" >&2; exit 0; }
[ -r /proc/thread-self/schedstat ] || { echo "cuda_escape_fake: no schedstat, skipped" >&2; exit 0; }
fake_cuda_copy
arm() { # name role trusted
    printf '[arm %s]\nop = gemm_bt\nrole = %s\ntrusted = %s\nsource = %s\nentry = gemm_bt_naive\n' "$1" "$2" "$3" \
        "$(pwd)/kernels/cuda/gemm_bt_naive.cu"
    printf 'grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n'
}
{
    printf '[campaign]\nname = escape_fake\nbackend = cuda\nquiet = 0\nwarmup = 1\nsamples = 3\nrounds = 2\n'
    printf 'processes = 1\ntimeout = 120\n[case c]\nop = gemm_bt\ndtype = f32\nM = 24\nN = 24\nK = 8\n'
    arm base baseline yes
    arm hosted candidate no
} >"$T/plan.kg"
# one CPU of those this test may use, shared with a busy loop
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
# (the stand-in's settings in its .env file reach the arm hosts too, whose environment is kgate's)
echo FAKE_CUDA_SYNC_YIELDS=2 >"$FAKE.env"
KGATE_LIBCUDA="$FAKE" KGATE_LIBNVML="$FAKE" KGATE_INCLUDE="$(pwd)/include" taskset -c "$cpu" \
    "$KGATE" run "$T/plan.kg" -o "$T/ev" --no-progress >"$T/run.out" 2>&1
st=$?
kill $hog 2>/dev/null
[ $st -le 1 ] || { cat "$T/run.out" >&2; die "exit $st"; }
# each arm's escape check ran in both processes and passed, with no escaped sample
n=$(awk -F, '$6 == "post:timing:escape" || $6 == "timing:escape"' "$T"/ev/checks/proc-*.csv | wc -l)
[ "$n" -ge 4 ] || { head -3 "$T"/ev/checks/proc-000.csv >&2; die "$n escape checks, expected one per arm and process (4)"; }
bad=$(awk -F, '($6 == "post:timing:escape" || $6 == "timing:escape") && $7 != "pass"' "$T"/ev/checks/proc-*.csv)
[ -z "$bad" ] || { echo "$bad" >&2; die "an escape check failed on a busy host"; }
grep -q 'escaped' "$T"/ev/checks/proc-*.csv && { grep escaped "$T"/ev/checks/proc-*.csv | head -3 >&2; die "a sample counted as escaped"; }
KGATE_LIBCUDA="$FAKE" KGATE_LIBNVML="$FAKE" "$KGATE" verify "$T/ev" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; die "verify"; }
# work outside the events: every arm's check fails, in every process
echo FAKE_CUDA_SYNC_SPIN_US=1000 >"$FAKE.env"
KGATE_LIBCUDA="$FAKE" KGATE_LIBNVML="$FAKE" KGATE_INCLUDE="$(pwd)/include" \
    "$KGATE" run "$T/plan.kg" -o "$T/esc" --no-progress >"$T/esc.out" 2>&1
st=$?
[ $st -le 3 ] || { cat "$T/esc.out" >&2; die "escaping work: exit $st"; }
f=$(awk -F, '($6 == "post:timing:escape" || $6 == "timing:escape") && $7 == "fail"' "$T"/esc/checks/proc-*.csv | wc -l)
[ "$f" -ge 4 ] || { grep escape "$T"/esc/checks/proc-*.csv >&2; die "escaping work: $f failed escape checks, expected 4"; }
exit 0
