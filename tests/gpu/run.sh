#!/bin/sh
# tests/gpu/run.sh: GPU tests of the cuda backend, as kgate invocations.
# Needs an NVIDIA GPU with its driver, NVRTC and NVML.  Usage (from the
# repository root):
#   KGATE=build/kgate sh tests/gpu/run.sh        (or: make test-gpu)
# Each test prints "ok" or "FAIL" with the command's output; the last
# line is "N passed, N failed" and the exit status is 1 when any failed.
# Covers: admission checks and negatives of the shipped kernels, compile
# and geometry errors, a three-launch chain (checked, negative, timed in
# graphs of pack chains), WS without a workspace, builtin = cublas on
# every dtype and odd shapes (the oracle checks its transposes),
# campaigns warm and cold, an A/A pair, backend = auto,
# examples/cuda-gemm.kg end to end, per-arm isolation (the driver probe,
# neighbour-scanning candidates), launches the device refuses, kernels
# right only on i.i.d. rows or on the plan's aligned shapes, and a kernel
# that reads shared memory it never wrote, a kernel that skips the
# operations of a pack the checks did not use to read, and tensor map
# arguments of a TMA-fed GEMM, and the Hopper split-K kernel's TF32, producer-warp,
# multicast and two-warpgroup forms.
set -u
: "${KGATE:?set KGATE to the kgate binary}"
case $KGATE in /*) ;; *) KGATE=$(pwd)/$KGATE ;; esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-gpu.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/kernels"
cp "$ROOT"/kernels/cuda/*.cu "$ROOT"/tests/gpu/*.cu "$T/kernels/"
passed=0
failed=0
cd "$T" || exit 1

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() {
    failed=$((failed + 1)); echo "FAIL $1"
    [ -f "$T/out" ] && sed -n '1,40p' "$T/out" | sed 's/^/     | /'
}
# expect NAME STATUS PATTERN -- command...: exit status STATUS ("nonzero"
# for any failure) and PATTERN ("" for none) in stdout+stderr, or, for a
# failure inside the check worker, in its logs under kgate-out/
expect() {
    name=$1 want=$2 pat=$3
    shift 4
    "$@" >"$T/out" 2>&1
    st=$?
    if [ "$want" = nonzero ]; then
        [ "$st" -ne 0 ] || { bad "$name (exit 0, expected failure)"; return; }
    elif [ "$st" -ne "$want" ]; then
        bad "$name (exit $st, expected $want)"; return
    fi
    if [ -n "$pat" ] && ! grep -q -- "$pat" "$T/out" &&
       ! { [ "$want" = nonzero ] && grep -rqs -- "$pat" "$T/kgate-out"; }; then
        bad "$name (no '$pat' in the output)"; return
    fi
    ok "$name"
}

# campaign settings, cases and the two shipped gemm_bt kernels
header() { # name l2 samples rounds processes
    cat <<PLAN
[campaign]
quiet = 0
name = $1
backend = cuda
warmup = 3
samples = $3
rounds = $4
processes = $5
pack = $( [ "$2" = cold ] && echo 2 || echo 1 )
seed = 7
margin = 5%
control_margin = 2%
l2 = $2
timeout = 300

[case f32_96x512x2048]
op = gemm_bt
dtype = f32
M = 96
N = 512
K = 2048

[case bf16_96x512x2048]
op = gemm_bt
dtype = bf16
M = 96
N = 512
K = 2048

[case f16_odd]
op = gemm_bt
dtype = f16
M = 97
N = 500
K = 33
primary = no

PLAN
}
naive_arm() { # name role
    cat <<ARM
[arm $1]
op = gemm_bt
role = $2
source = kernels/gemm_bt_naive.cu
entry = gemm_bt_naive
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K

ARM
}
control_arm() { # name of
    printf '[arm %s]\nop = gemm_bt\nrole = control\nof = %s\n\n' "$1" "$2"
}
tiled_arm() { # name role [block]
    cat <<ARM
[arm $1]
op = gemm_bt
role = $2
source = kernels/gemm_bt_tiled.cu
entry = gemm_bt_tiled
grid = ceildiv(N, 32), ceildiv(M, 32)
block = ${3:-32, 8}
shared = 2 * 32 * 33 * 4
args = A, B, C, M, N, K

ARM
}

# 1. admission checks of both kernels on every dtype
{ header check warm 3 1 1; naive_arm naive baseline; tiled_arm tiled candidate; } >"$T/check.kg"
expect "check: naive and tiled pass every admission check" 0 "" -- "$KGATE" check "$T/check.kg"

# 2. the numerical negative is rejected for each kernel
expect "check --negative tiled: every output check fails" 0 "" -- "$KGATE" check "$T/check.kg" --negative tiled
expect "check --negative naive: every output check fails" 0 "" -- "$KGATE" check "$T/check.kg" --negative naive

# 3. a compile error stops the campaign and quotes NVRTC
{ header broken warm 3 1 1; naive_arm naive baseline; } >"$T/broken.kg"
printf '#include "kgate/kernel.h"\nextern "C" __global__ void broken(float *C) { C[0] = undeclared; }\n' \
    >"$T/kernels/broken.cu"
cat >>"$T/broken.kg" <<'ARM'
[arm broken]
op = gemm_bt
role = candidate
source = kernels/broken.cu
entry = broken
grid = 1
block = 1
args = C
ARM
expect "compile error names the arm and quotes the NVRTC log" nonzero "undeclared" -- "$KGATE" check "$T/broken.kg"

# 4. launch geometry beyond the CUDA limits is refused with the numbers
{ header geom warm 3 1 1; naive_arm naive baseline; tiled_arm wide candidate "64, 32"; } >"$T/geom.kg"
expect "block of 2048 threads is refused" nonzero "exceeds the CUDA limits" -- "$KGATE" check "$T/geom.kg"

# 5. an argument outside the op's vocabulary is refused
{ header vocab warm 3 1 1; naive_arm naive baseline; } >"$T/vocab.kg"
sed 's/^args = A, B, C, M, N, K$/args = A, B, C, M, N, Q/' "$T/vocab.kg" >"$T/vocab2.kg"
expect "unknown kernel argument is refused" nonzero "unknown argument 'Q'" -- "$KGATE" check "$T/vocab2.kg"

# chain and cublas arms
splitk_arm() { # name role
    cat <<ARM
[arm $1]
op = gemm_bt
role = $2
source = kernels/gemm_bt_splitk.cu
entry = zero_c
grid = ceildiv(M * N, 256)
block = 256
args = C, M, N
entry2 = partial_lo
grid2 = ceildiv(N, 32), ceildiv(M, 32), splits
block2 = 32, 8
shared2 = 2 * 32 * 33 * 4
args2 = A, B, C, M, N, K, splits
entry3 = partial_hi
grid3 = ceildiv(N, 32), ceildiv(M, 32), splits
block3 = 32, 8
shared3 = 2 * 32 * 33 * 4
args3 = A, B, C, M, N, K, splits

ARM
}
cublas_arm() { # name role
    printf '[arm %s]\nop = gemm_bt\nrole = %s\nbuiltin = cublas\n\n' "$1" "$2"
}
# every case of header() with splits = 3 (K = 33 leaves uneven slices)
with_splits() { sed 's/^K = \(.*\)$/K = \1\nsplits = 3/'; }

# 5a. a chain of three launches passes every check, and its negative fails them
{ header chain warm 3 1 1 | with_splits; naive_arm naive baseline; splitk_arm splitk candidate; } >"$T/chain.kg"
expect "check: a three-launch chain passes every admission check" 0 "" -- "$KGATE" check "$T/chain.kg"
expect "check --negative splitk: every output check fails" 0 "" -- "$KGATE" check "$T/chain.kg" --negative splitk

# 5b. timed graphs hold pack whole chains: the check of the last timed
#     output fails if launch 1 (zeroing) is missing from any replay
sed 's/^name = chain$/name = chain_run/; s/^samples = 3$/samples = 5/' "$T/chain.kg" >"$T/chain_run.kg"
"$KGATE" run "$T/chain_run.kg" -o "$T/chain-out" --no-progress >"$T/out" 2>&1
st=$?
if [ "$st" -le 1 ] && [ -f "$T/chain-out/checks/proc-000.csv" ] &&
   ! grep -q ",fail," "$T/chain-out/checks/"*.csv; then
    ok "run: chain timed in graphs, every check before and after timing passes"
else
    bad "run: chain timed in graphs (exit $st or a failed check)"
fi

# 5c. WS without a workspace is a clear error
sed 's/^args2 = A, B, C, M, N, K, splits$/args2 = A, B, WS, M, N, K, splits/' "$T/chain.kg" >"$T/ws.kg"
"$KGATE" check "$T/ws.kg" -o "$T/ws-out" >"$T/out" 2>&1
st=$?
# the message may be in the output or only in the evidence's check records
if [ "$st" -ne 0 ] && { grep -q "passes WS" "$T/out" || grep -rqs "passes WS" "$T/ws-out"; }; then
    ok "WS on an op without a workspace is refused"
else
    bad "WS on an op without a workspace is refused (exit $st, or no 'passes WS')"
fi

# 5d. builtin = cublas: f32, bf16 and f16 on odd shapes; a wrong transpose
#     or leading dimension fails the element-wise check
{ header blas warm 3 1 1; naive_arm naive baseline; tiled_arm tiled candidate; cublas_arm cublas reference; } >"$T/blas.kg"
expect "check: builtin cublas passes every admission check" 0 "cublas" -- "$KGATE" check "$T/blas.kg"
if "$KGATE" list | grep -q "^ *gemm_nt "; then
    cat >"$T/nt.kg" <<'PLAN'
[campaign]
quiet = 0
name = nt
backend = cuda
samples = 3
rounds = 1
processes = 1
[case nt_odd]
op = gemm_nt
dtype = bf16
M = 97
N = 130
K = 72
[arm cublas_nt]
op = gemm_nt
role = baseline
builtin = cublas
[arm cublas_nt2]
op = gemm_nt
role = candidate
builtin = cublas
PLAN
    expect "check: builtin cublas computes gemm_nt (B stored [K,N])" 0 "cublas_nt" -- "$KGATE" check "$T/nt.kg"
fi

# 6. a full campaign: tiled is several times faster than naive (measured
#    about 3.5x at 96x512x2048 on an H200), the A/A control holds; the
#    tiny f16_odd case (3 us, where naive wins) is reported, not gated
{ header speed warm 10 4 3; naive_arm naive baseline; tiled_arm tiled candidate; control_arm naive_copy naive; } >"$T/speed.kg"
expect "run: tiled is FASTER than naive, gate passes" 0 "FASTER" -- "$KGATE" run "$T/speed.kg" -o "$T/speed-out" --no-progress

# 7. the same with a cold L2 (flush between samples)
sed 's/^name = speed$/name = speed_cold/; s/^l2 = warm$/l2 = cold/' "$T/speed.kg" >"$T/cold.kg"
expect "run with l2 = cold: gate passes" 0 "FASTER" -- "$KGATE" run "$T/cold.kg" -o "$T/cold-out" --no-progress

# 7b. l2 = warm with fresh inputs at pack 8: eight sets of 4.9 MiB are more than a sixth of the L2
#     (what stays resident when every SM reads them): refused before any sample, the pack that
#     fits named (1 on an H100's 50 MiB, 2 on an H200's 60 MiB)
sed 's/^name = speed$/name = speed_pack8/; s/^pack = [0-9]*$/pack = 8/' "$T/speed.kg" >"$T/pack8.kg"
expect "run with l2 = warm, fresh inputs, pack 8: refused naming the pack that fits" 2 \
    "more than the cache keeps resident .*Use pack = [12]" -- "$KGATE" run "$T/pack8.kg" -o "$T/pack8-out" --no-progress

# 8. two separately loaded copies of one kernel are EQUIVALENT
{ header aa warm 10 4 3; naive_arm naive baseline; naive_arm naive2 candidate; control_arm naive_copy naive; } >"$T/aa.kg"
expect "run: naive vs itself is not FASTER" 1 "" -- "$KGATE" run "$T/aa.kg" -o "$T/aa-out" --no-progress

# 9. backend auto picks cuda on a GPU machine
sed 's/^backend = cuda$/backend = auto/' "$T/check.kg" >"$T/auto.kg"
expect "backend = auto uses cuda here" 0 "" -- "$KGATE" check "$T/auto.kg"

# tensor map arguments (docs/plan-format.md, "Tensor maps"): the TMA-fed
# f32 GEMM, untrusted (maps encoded in its arm host) and trusted (in the
# worker), pack 2 under fresh inputs, on an aligned and a ragged shape
cp "$ROOT/tests/gpu/tmap.kg" "$T/kernels/" && sed -i 's#\.\./\.\./kernels/cuda/##' "$T/kernels/tmap.kg"
expect "check: the TMA GEMM's tensor maps pass every admission check, hosted and trusted" 0 "" -- \
    "$KGATE" check "$T/kernels/tmap.kg"
expect "check --negative tma: every output check fails" 0 "" -- "$KGATE" check "$T/kernels/tmap.kg" --negative tma
"$KGATE" run "$T/kernels/tmap.kg" -o "$T/tmap-out" --no-progress >"$T/out" 2>&1
st=$?
if [ $st -le 1 ] && ! awk -F, 'FNR > 1 && $7 == "fail"' "$T/tmap-out"/checks/*.csv | grep -q .; then
    ok "run: the TMA GEMM through tensor maps times with every check passing (exit $st)"
else
    awk -F, 'FNR > 1 && $7 == "fail"' "$T/tmap-out"/checks/*.csv 2>/dev/null | head -5 >>"$T/out"
    bad "run: the TMA GEMM through tensor maps (exit $st)"
fi

# 10. the evidence names the device
if [ -f "$T/speed-out/meta.json" ] && grep -rqs "H200\|NVIDIA" "$T/speed-out"; then
    ok "evidence names the NVIDIA device"
else
    : >"$T/out"; bad "evidence names the NVIDIA device"
fi

# 11. the shipped example, end to end: tiled against naive with an A/A
#     control and cuBLASLt as the reference, bf16 and f32 at 1024^3
expect "examples/cuda-gemm.kg: tiled is FASTER, gate passes" 0 "FASTER" -- \
    "$KGATE" run "$ROOT/examples/cuda-gemm.kg" -o "$T/example-out" --no-progress
if [ -d "$T/example-out" ] && grep -q "cublas" "$T/example-out/report.md"; then
    ok "example report lists the cublas reference"
else
    : >"$T/out"; bad "example report lists the cublas reference"
fi
# KGATE_GPU_KEEP=DIR keeps the example's report (the evidence folder is temporary)
if [ -n "${KGATE_GPU_KEEP:-}" ] && [ -f "$T/example-out/report.md" ]; then
    cp "$T/example-out/report.md" "$KGATE_GPU_KEEP/cuda-gemm-report.md"
fi

# 12. candidates built to steal another arm's output from device memory.
#     Every untrusted arm runs in a cuda arm host, a process of its own whose
#     device address space holds only its buffers: a scan outside them
#     faults, attributed to the arm.
# rejected NAME DIR ARM: ARM is never FASTER, and it was rejected: INCORRECT
# in the report, or a fault attributed to it in the output or the logs
rejected() {
    name=$1 dir=$2 arm=$3
    if grep -qs "| $arm | .*FASTER" "$dir/report.md"; then bad "$name ($arm is FASTER)"; return; fi
    if grep -qs "| $arm | .*INCORRECT" "$dir/report.md" ||
       grep -rqs "arm '$arm' on case .*faulted in its own" "$T/out" "$dir" "$T/kgate-out"; then
        ok "$name"
    else
        bad "$name ($arm neither INCORRECT nor its fault attributed)"
    fi
}

# 12b. a candidate that scans its own 2 MiB page for the baseline's output
cp "$ROOT/tests/gpu/isolation_scan.kg" "$ROOT/tests/gpu/isolation_reach.kg" \
   "$ROOT/tests/gpu/refused_launch.kg" "$ROOT/tests/gpu/attack_steal.kg" "$T/kernels/"
sed -i 's#\.\./\.\./kernels/cuda/##' "$T/kernels/"*.kg
"$KGATE" run "$T/kernels/isolation_scan.kg" -o "$T/iso-scan" --no-progress >"$T/out" 2>&1
rejected "stealing: a neighbour-scanning candidate is INCORRECT, never FASTER" "$T/iso-scan" neighbour

# 12c. one that reads the neighbouring pages faults: the fault is attributed
#      to it, never FASTER
"$KGATE" run "$T/kernels/isolation_reach.kg" -o "$T/iso-reach" --no-progress >"$T/out" 2>&1
rejected "stealing: a candidate reading past its own pages faults, attributed to it" "$T/iso-reach" neighbour

# 12d. one that copies the finished C of the arm allocated just below its
#      own buffers (tests/gpu/attack_steal.cu; in one shared address space
#      it is FASTER and passes the gate): in its own process it finds
#      nothing (or faults), so it is never FASTER and the gate fails
"$KGATE" run "$T/kernels/attack_steal.kg" -o "$T/steal" --no-progress >"$T/out" 2>&1
v=$(awk -F, '$2 == "steal" { print $4 "/" $5; exit }' "$T/steal/results.csv" 2>/dev/null)
case $v in
*/FASTER|"") bad "stealing: a candidate copying the output allocated below its buffers (${v:-no results})" ;;
*) if grep -qs "gate PASS" "$T/out"; then bad "stealing: the gate passed with attack_steal ($v)"
   else ok "stealing: a candidate copying the output allocated below its buffers finds nothing ($v, gate not passed)"; fi ;;
esac

# 12e. one that computes only on the input set the checks use, at pack 8 under fresh inputs
#      (tests/gpu/attack_packsets.cu): every operation writes an output of its own and a sampled
#      check compares one before the sample's last, so it is INCORRECT there, never FASTER
cp "$ROOT/tests/gpu/attack_packsets.kg" "$T/kernels/" && sed -i 's#\.\./\.\./kernels/cuda/##' "$T/kernels/attack_packsets.kg"
"$KGATE" run "$T/kernels/attack_packsets.kg" -o "$T/packsets" --no-progress >"$T/out" 2>&1
v=$(awk -F, '$2 == "packsets" { print $4 "/" $5; exit }' "$T/packsets/results.csv" 2>/dev/null)
if [ "$v" = "incorrect/INCORRECT" ] && grep -qs ",packsets,post,sampled@[0-9]*/[0-6]:C,fail," "$T"/packsets/checks/*.csv &&
   ! grep -qs ",naive,.*,fail," "$T"/packsets/checks/*.csv; then
    ok "pack sets: a candidate that computes only on the checked input set is INCORRECT (sampled@N/Q), the baseline passes"
else
    bad "pack sets: a candidate that computes only on the checked input set (${v:-no results}; expected incorrect/INCORRECT by sampled@N/Q)"
fi

# 13. launches the device refuses: __launch_bounds__(64) with 128 threads,
#     300000 bytes of dynamic shared memory.  13a: the message names the limit
"$KGATE" run "$T/kernels/refused_launch.kg" -o "$T/refused" --no-progress >"$T/out" 2>&1
if grep -rqs "block has 128 threads, entry 'bounded' allows at most 64" "$T/out" "$T/refused" "$T/kgate-out"; then
    ok "refused launch: a block past __launch_bounds__ names the entry's limit"
else
    bad "refused launch: a block past __launch_bounds__ names the entry's limit"
fi
if grep -rqs "asks for 300000 bytes of dynamic shared memory, the device allows at most" "$T/out" "$T/refused" "$T/kgate-out"; then
    ok "refused launch: too much shared memory names the device's limit"
else
    bad "refused launch: too much shared memory names the device's limit"
fi
# 13b. each refused arm is INADMISSIBLE on the case and the campaign goes on
#      with the others (needs the worker to record KG_EINADMISSIBLE from a
#      backend call as the arm's state on the case)
if grep -qs "| bounded | .*INADMISSIBLE" "$T/refused/report.md" &&
   grep -qs "| wide | .*INADMISSIBLE" "$T/refused/report.md" &&
   grep -qs "| tiled | candidate | [0-9.]* → [0-9.]* | [0-9.]* → [0-9.]* |" "$T/refused/report.md"; then
    ok "refused launch: the refused arms are INADMISSIBLE, tiled is still measured"
else
    bad "refused launch: the refused arms are INADMISSIBLE, tiled is still measured"
fi

# 14. the device-memory neighbour attack (tests/gpu/attack_neighbour.sh):
#     not FASTER once every untrusted arm has its own context
. "$ROOT/tests/gpu/attack_neighbour.sh"

# 15. structured input rows and held-out shapes (tests/gpu/cheat_inputs.sh):
#     CUDA kernels right only on i.i.d. rows or on aligned shapes fail
. "$ROOT/tests/gpu/cheat_inputs.sh"
# 16. precision contracts and physics limits (tests/gpu/contracts.sh)
. "$ROOT/tests/gpu/contracts.sh"
# 17. shared memory read before written (tests/gpu/smem_rbw.sh): INCORRECT
. "$ROOT/tests/gpu/smem_rbw.sh"

# 18. a torch library arm runs f32 without TF32 (torch lets cuDNN round convolution inputs to TF32
#     by default; an f32 contract does not admit it): its provenance says so.  Where the Python
#     kgate's helper uses has torch.
if "${KGATE_PYTHON:-python3}" -c 'import torch' 2>/dev/null; then
    cat >"$T/kernels/tf32.kg" <<'PLAN'
[campaign]
name = tf32
backend = cuda
quiet = 0
[case mm]
op = gemm_bt
dtype = f32
M = 64
N = 96
K = 128
[arm naive]
op = gemm_bt
role = baseline
source = gemm_bt_naive.cu
[arm torch]
op = gemm_bt
builtin = torch
PLAN
    "$KGATE" check "$T/kernels/tf32.kg" -o "$T/tf32" >"$T/out" 2>&1
    st=$?
    if [ $st = 0 ] && grep -rqsE 'tf32"+: *"+off: torch.backends.cudnn.allow_tf32' "$T/tf32" &&
       grep -rqsE 'tf32_cudnn"+: *false' "$T/tf32"; then
        ok "torch library arm: TF32 off under the f32 contract, in its provenance"
    else
        bad "torch library arm: TF32 off under the f32 contract, in its provenance (exit $st)"
    fi
else
    echo "skip torch library arm: no torch in ${KGATE_PYTHON:-python3}"
fi

# 19. f32 on Hopper's tensor cores as TF32 (tests/gpu/tf32_wgmma.sh): the wgmma .tf32 split-K
#     arms and cuBLAS's TF32 mode admitted under precision = tf32, the kernel INCORRECT under f32
. "$ROOT/tests/gpu/tf32_wgmma.sh"

# 20. the producer-warp, TMA multicast and two-warpgroup forms of the Hopper split-K kernel
#     (tests/gpu/wgmma_forms.sh): every check passes; a cluster the device refuses is not admitted
. "$ROOT/tests/gpu/wgmma_forms.sh"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
