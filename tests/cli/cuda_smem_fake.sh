#!/bin/sh
# Shared memory a kernel reads without writing it, on the cuda backend
# against the stand-in driver of tests/unit/fake_libcuda.c (no GPU), whose
# "SMs" keep their shared memory between kernels as a GPU does.  The
# candidate gemm_bt_smem is gemm_bt_naive plus a float it reads from its
# SM's shared memory without writing it: 0 on a device nothing else ran
# on, so without kgate's poison it passes every check (on the H200 such a
# kernel was admitted and judged FASTER).  kgate's poison kernel fills the
# shared memory of every SM before every checked execution (a NaN pattern,
# then a finite one), in the arm's cuda arm host and, for a trusted arm,
# in the worker: both are INCORRECT, the honest arms are not, and the
# resources record that the shared memory was poisoned.
# Skipped without NVRTC or without the stand-in driver.
. tests/cli_lib.sh
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_smem_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_smem_fake: no NVRTC, skipped" >&2; exit 0; }
arm() { # name role trusted entry
    printf '[arm %s]\nop = gemm_bt\nrole = %s\ntrusted = %s\nsource = %s\nentry = %s\n' "$1" "$2" "$3" \
        "$(pwd)/kernels/cuda/gemm_bt_naive.cu" "$4"
    printf 'grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n'
}
{
    printf '[campaign]\nname = smem_fake\nbackend = cuda\nquiet = 0\nwarmup = 1\nsamples = 3\nrounds = 2\n'
    printf 'processes = 4\ntimeout = 120\n[case c]\nop = gemm_bt\ndtype = f32\nM = 40\nN = 40\nK = 5\n'
    arm base baseline yes gemm_bt_naive
    arm honest candidate no gemm_bt_naive
    arm rbw candidate no gemm_bt_smem
    arm rbw_trusted candidate yes gemm_bt_smem
} >"$T/p.kg"
KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run --report "$T/p.kg" -o "$T/out" --no-progress \
    >"$T/log" 2>&1; st=$?
[ $st -le 3 ] || { cat "$T/log" >&2; die "campaign against the stand-in driver: exit $st"; }
# the read-before-write kernels fail their checked executions, hosted or not
for a in rbw rbw_trusted; do
    grep "| c | $a | candidate |" "$T/out/report.md" | grep -q "| INCORRECT |" ||
        { grep "| c |" "$T/out/report.md" >&2; die "arm $a (reads shared memory it never wrote) is not INCORRECT"; }
    awk -F, -v a=$a 'FNR > 1 && $4 == a && $7 == "fail" && $6 ~ /^poison/' "$T/out"/checks/*.csv >"$T/f.$a"
    [ -s "$T/f.$a" ] || die "arm $a failed no poison check"
done
# under the NaN pattern (poison0) and under the finite one (poison1)
expect_grep "rbw | pre:poison0:C | FAIL | .*NaN" "$T/log"
expect_grep "rbw | pre:poison1:C | FAIL | .*got 1.30577099e+36" "$T/log"
# the honest arms pass every check
awk -F, 'FNR > 1 && ($4 == "base" || $4 == "honest") && $7 == "fail"' "$T/out"/checks/*.csv >"$T/honest.fail"
[ ! -s "$T/honest.fail" ] || { cat "$T/honest.fail" >&2; die "an honest arm failed a check"; }
expect_grep "| c | honest | candidate |" "$T/out/report.md"
# the resource records say that the shared memory was poisoned, hosted and trusted
expect_grep "smem poisoned on 4/4 SMs" "$T/out/telemetry/resources-000.csv"
n=$(grep -c "smem poisoned on 4/4 SMs" "$T/out/telemetry/resources-000.csv")
[ "$n" -ge 4 ] || die "only $n resource records say the shared memory was poisoned"
exit 0
