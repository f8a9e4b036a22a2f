#!/bin/sh
# The timing gate and the context's hardware queues, against the stand-in
# driver of tests/unit/fake_libcuda.c (no GPU).  A timed sample holds its
# stream on a flag (cuStreamWaitValue32) until the graph and both events
# are queued, and a second stream releases it (cuStreamWriteValue32).  On
# one hardware queue for every stream (CUDA_DEVICE_MAX_CONNECTIONS=1 in
# the environment) the release waits behind the wait, and the sample
# would never end: the gate tests this when it is made, stays off in such
# a process (said in the worker's log), and the campaign times every
# sample.  A cuda arm host's environment is kgate's own: its contexts
# have two queues (CUDA_DEVICE_MAX_CONNECTIONS=2: they open about three
# times faster than at the driver's default, and more of them fit a
# device), whatever the user's environment says.
# Skipped without NVRTC or without the stand-in driver.
. tests/cli_lib.sh
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_gate_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_gate_fake: no NVRTC, skipped" >&2; exit 0; }
fake_cuda_copy FAKE_CUDA_CONN_LOG="$T/conn.log"
arm() { # name role trusted
    printf '[arm %s]\nop = gemm_bt\nrole = %s\ntrusted = %s\nsource = %s\nentry = gemm_bt_naive\n' "$1" "$2" "$3" \
        "$(pwd)/kernels/cuda/gemm_bt_naive.cu"
    printf 'grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n'
}
{
    printf '[campaign]\nname = gate_fake\nbackend = cuda\nquiet = 0\nwarmup = 1\nsamples = 2\nrounds = 2\n'
    printf 'processes = 2\ntimeout = 120\n[case c]\nop = gemm_bt\ndtype = f32\nM = 24\nN = 24\nK = 8\n'
    arm base baseline yes
    arm hosted candidate no
} >"$T/plan.kg"
run() { # name [VAR=VALUE]
    n=$1
    shift
    : >"$T/conn.log"
    env "$@" KGATE_LIBCUDA="$FAKE" KGATE_INCLUDE="$(pwd)/include" "$KGATE" run "$T/plan.kg" -o "$T/$n" --no-progress \
        >"$T/$n.out" 2>&1; st=$?
    [ $st -le 1 ] || { cat "$T/$n.out" >&2; tail -20 "$T/$n"/logs/proc-000.log >&2; die "$n: exit $st"; }
    for a in base hosted; do
        c=$(gzip -dc "$T/$n"/raw/proc-*.csv.gz | awk -F, -v a=$a '$4 == a' | wc -l)
        [ "$c" = 16 ] || die "$n: arm $a has $c timed samples, expected 16 (2 processes x 2 directions x 2 rounds x 2)"
    done
    KGATE_LIBCUDA="$FAKE" "$KGATE" verify "$T/$n" >"$T/$n.verify" 2>&1 || { cat "$T/$n.verify" >&2; die "$n: verify"; }
    cp "$T/conn.log" "$T/$n.conn"
}
# one queue in kgate's own processes: the gate is off there, and said so; the hosts have two
run one CUDA_DEVICE_MAX_CONNECTIONS=1
expect_grep "the timing gate is off in this process: its side stream's write waited behind the timed stream's wait (one hardware queue for both, as under CUDA_DEVICE_MAX_CONNECTIONS=1)" "$T/one/logs/proc-000.log"
grep -q ' 1$' "$T/one.conn" || { cat "$T/one.conn" >&2; die "one: no process of kgate's own saw CUDA_DEVICE_MAX_CONNECTIONS=1"; }
hosts=$(grep -c ' 2$' "$T/one.conn")
[ "$hosts" -ge 4 ] || { cat "$T/one.conn" >&2; die "one: $hosts arm hosts with CUDA_DEVICE_MAX_CONNECTIONS=2, expected one per process (4)"; }
# the driver's default in kgate's own processes: the gate is on; the hosts still have two
run default
expect_no_grep "timing gate is off" "$T/default/logs/proc-000.log"
grep -q ' -$' "$T/default.conn" || { cat "$T/default.conn" >&2; die "default: no process of kgate's own without the variable"; }
[ "$(grep -c ' 2$' "$T/default.conn")" -ge 4 ] || { cat "$T/default.conn" >&2; die "default: the arm hosts lack CUDA_DEVICE_MAX_CONNECTIONS=2"; }
grep -v -e ' 2$' -e ' -$' "$T/default.conn" && die "default: a process with another value"
exit 0
