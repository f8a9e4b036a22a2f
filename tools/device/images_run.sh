#!/bin/sh
# tools/device/images_run.sh OUT: precompiled CUDA arms (image =, docs/images.md) on a GPU machine,
# in one device call, with nothing fetched from outside.  Builds, into OUT/work:
#   reduce_sum_f32.cubin   kernels/cuda/reduce_sum.cu by nvcc -cubin -arch=sm_XY(a)   (required)
#   triton_rowsum.cubin    kernels/triton/rowsum.py (Triton, where python3 imports it), with the
#                          [arm triton] section it writes from the compiled kernel's metadata
#   cute_gemm_bt.cubin     kernels/cuda/images/cute_gemm_bt.cu by nvcc with CUTLASS's CuTe headers
#                          (CUTLASS_DIR, .carry/cutlass.tgz, or the nvidia-cutlass Python package),
#                          where found
# then writes OUT/work/images.kg (examples/cuda-images.kg, the Triton arm, and a gemm_bt case with
# the CuTe arm against kernels/cuda/gemm_bt_naive.cu) and runs kgate check, kgate run and kgate
# verify on it.  Each image must be admitted (no failed check) and timed against its baseline;
# every report line of an image says its negative is not applicable.  Writes OUT/images.tgz and
# prints a summary (OUT/r/summary.txt).
#
# kgate: $KGATE, else bin/kgate-portable (from .carry/bins.tgz when there), else build/kgate.
# nvcc: on PATH, else /usr/local/cuda/bin.  Exit 0 when every built image was admitted and timed.
set -u
OUT=${1:?usage: images_run.sh OUT}
ROOT=$(pwd)
R=$OUT/r
W=$OUT/work
mkdir -p "$R" "$W"
[ -f .carry/bins.tgz ] && [ ! -x bin/kgate-portable ] && tar xzf .carry/bins.tgz
K=${KGATE:-}
[ -n "$K" ] || { [ -x "$ROOT/bin/kgate-portable" ] && K=$ROOT/bin/kgate-portable; }
[ -n "$K" ] || K=$ROOT/build/kgate
[ -x "$K" ] || { echo "images_run: no kgate binary (set KGATE, or build it)" >&2; exit 2; }
command -v nvcc >/dev/null 2>&1 || PATH=$PATH:/usr/local/cuda/bin
export KGATE_INCLUDE=${KGATE_INCLUDE:-$ROOT/include}
{ "$K" --version; nvidia-smi; nvcc --version; python3 -c 'import triton; print("triton", triton.__version__)';
  date -u; } >"$R/env.txt" 2>&1
say() { echo "$*" | tee -a "$R/summary.txt"; }
: >"$R/summary.txt"

# the device's compute capability: 9.0 -> 90 -> sm_90a (the arch-specific target of Hopper)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
[ -n "$cc" ] || cc=90
arch=sm_$cc
case $cc in 90|100|103|120) arch=sm_${cc}a ;; esac
say "device compute capability $cc: images built for $arch"

# 1. nvcc: the rowsum of kernels/cuda/reduce_sum.cu, 256 threads per row, f32 inputs
if nvcc -cubin -arch=$arch -std=c++17 -O3 -Iinclude -DKG_DTYPE=0 -DRED_T=256 -DRED_P=1 -DRED_L=4 \
        kernels/cuda/reduce_sum.cu -o "$W/reduce_sum_f32.cubin" >"$R/nvcc.txt" 2>&1; then
    say "nvcc cubin: built ($(wc -c <"$W/reduce_sum_f32.cubin") bytes)"
else
    say "nvcc cubin: NOT BUILT (see nvcc.txt)"; tar czf "$OUT/images.tgz" -C "$OUT" r; exit 1
fi

# 2. Triton: the compiled kernel's cubin, and the [arm triton] section from its metadata
extra=$W/extra-arms.kg
: >"$extra"
if python3 kernels/triton/rowsum.py "$W" --arch "$cc" >"$R/triton.txt" 2>&1; then
    cat "$W/triton_rowsum.arm" >>"$extra"
    say "triton cubin: built; $(grep '^# Triton' "$W/triton_rowsum.arm" | sed 's/^# //')"
else
    say "triton cubin: not built (no Triton here, or it failed: see triton.txt); its arm is left out"
fi

# 3. CUTLASS/CuTe: a gemm_bt with CuTe tensors, against the naive source kernel
cut=${CUTLASS_DIR:-}
# CUTLASS's headers carried as .carry/cutlass.tgz (an include/ folder), for a machine without them
if [ -z "$cut" ] && [ -f .carry/cutlass.tgz ]; then
    mkdir -p /tmp/kgate-cutlass && tar xzf .carry/cutlass.tgz -C /tmp/kgate-cutlass && cut=/tmp/kgate-cutlass
fi
if [ -z "$cut" ]; then
    cut=$(python3 -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source"))' 2>/dev/null)
fi
if [ -n "$cut" ] && [ -f "$cut/include/cute/tensor.hpp" ] &&
   nvcc -cubin -arch=$arch -std=c++17 -O3 --expt-relaxed-constexpr -I"$cut/include" \
        kernels/cuda/images/cute_gemm_bt.cu -o "$W/cute_gemm_bt.cubin" >"$R/cute.txt" 2>&1; then
    say "cute cubin: built with $cut"
    cat >>"$extra" <<PLAN

[case f32_2048]
op = gemm_bt
dtype = f32
M = 2048
N = 2048
K = 2048

[arm gemm_naive]
op = gemm_bt
role = baseline
source = $ROOT/kernels/cuda/gemm_bt_naive.cu
entry = gemm_bt_naive
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K

[arm cute]
op = gemm_bt
role = candidate
image = cute_gemm_bt.cubin
entry = cute_gemm_bt
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K
PLAN
else
    say "cute cubin: not built (no CUTLASS headers: set CUTLASS_DIR, or see cute.txt); its arms are left out"
fi

# the plan: the example's sections before [gate], the extra arms, then [gate]; images beside it
sed -e 's#\.\./build/images/##' -e "s#\.\./kernels/#$ROOT/kernels/#" examples/cuda-images.kg |
    awk -v extra="$extra" '/^\[gate\]/ { while ((getline l < extra) > 0) print l; print "" } { print }' \
    >"$W/images.kg"
cp "$W/images.kg" "$R/images.kg"

status=0
"$K" check "$W/images.kg" -o "$W/check" >"$R/check.txt" 2>&1; st=$?
say "kgate check: exit $st; $(grep -E '^[0-9]+ checks, ' "$R/check.txt")"
[ $st -eq 0 ] || status=1
"$K" run "$W/images.kg" -o "$W/run" --no-progress >"$R/run.txt" 2>&1; st=$?
say "kgate run: exit $st (0 gate PASS, 1 gate FAIL: a verdict either way)"
[ $st -le 1 ] || status=1
cp "$W/run/report.md" "$W/run/results.csv" "$R/" 2>/dev/null
"$K" verify "$W/run" >"$R/verify.txt" 2>&1; st=$?
say "kgate verify: exit $st"
[ $st -eq 0 ] || status=1
for a in nvcc_cubin triton cute; do
    row=$(grep -E "^\| [^|]+ \| $a \| candidate \|" "$R/report.md" 2>/dev/null | head -n 1)
    [ -n "$row" ] || continue
    say "arm $a: $(echo "$row" | awk -F'|' '{ print $(NF - 2) " | verdict" $(NF - 1) }')"
    grep -q "Arm \`$a\` (candidate): negative: not applicable (precompiled image" "$R/report.md" ||
        { say "arm $a: the report does not say its negative is not applicable"; status=1; }
    fails=$(awk -F, -v a="$a" 'FNR > 1 && $4 == a && $7 == "fail"' "$W/run"/checks/proc-*.csv 2>/dev/null | wc -l)
    say "arm $a: $fails failed check rows in the run"
    [ "$fails" -eq 0 ] || status=1
done
say "Result line: $(grep '^Result:' "$R/report.md" 2>/dev/null)"
tar czf "$OUT/images.tgz" -C "$OUT" r
exit $status
