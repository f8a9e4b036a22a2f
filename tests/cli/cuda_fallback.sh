# Without a CUDA driver: the GPU example stops with a one-line message that
# says no driver was found and how to fall back (exit 2), and backend = auto
# falls back to the cpu backend with a notice and runs the campaign there.
# Skipped on a machine that has libcuda (the GPU tests cover it there).
. tests/cli_lib.sh
if ! "$KGATE" list 2>/dev/null | grep -q "no CUDA driver here"; then
    echo "cuda_fallback: a CUDA driver is installed here, nothing to check" >&2
    exit 0
fi

# 1. backend = cuda: exit 2 and the sentence a user can act on
"$KGATE" run --report examples/cuda-gemm.kg -o "$T/gpu" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "cuda example without a driver"
grep -q "unknown or unavailable backend 'cuda'" "$T/err" &&
    die "this kgate was linked without the cuda backend (a weak reference does not pull cuda.o out of libkgate.a)"
expect_grep "no CUDA driver found: libcuda.so.1" "$T/err"
expect_grep "use backend = cpu" "$T/err"
# the same for `check`, and the --backend override is what the message suggests
"$KGATE" check examples/cuda-gemm.kg >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "cuda example check without a driver"
expect_grep "no CUDA driver found" "$T/err"

# 2. backend = auto on a plan of C arms: a notice, then a real cpu campaign
mkdir -p "$T/p"
cat >"$T/p/auto.kg" <<PLAN
[campaign]
quiet = 0
name = auto_fallback
backend = auto
warmup = 1
samples = 2
rounds = 2
processes = 1
margin = 5%
control_margin = 50%
timeout = 60
[case r]
op = rowsum
dtype = f32
M = 16
N = 64
[arm naive]
op = rowsum
role = baseline
source = $PWD/kernels/cpu/rowsum_naive.c
[arm unrolled]
op = rowsum
source = $PWD/kernels/cpu/rowsum_unrolled.c
[gate]
min_reduction = 1%
PLAN
"$KGATE" run --report "$T/p/auto.kg" -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "auto run: exit status $st"; }
expect_grep "backend auto: falling back to cpu (no CUDA driver found" "$T/err"
expect_grep '"backend": *"cpu"' "$T/ev/meta.json"
expect_grep "2 accepted, 0 excluded" "$T/out"
