# A launch the device refuses is the case's, not the campaign's (docs/cuda-backend.md, "A launch
# the device refuses"): against the stand-in driver of tests/unit/fake_libcuda.c, told to refuse
# every launch of more than 128 threads a block with the result a thread block cluster the device
# cannot run gets (CUDA_ERROR_INVALID_CLUSTER_SIZE, what a __cluster_dims__ past 8 blocks gets on
# an H100), and, in a second campaign, with the result of too many threads
# (CUDA_ERROR_INVALID_VALUE):
#   - `kgate check` and `kgate run` complete; the 16 x 16 arms, in their arm host and in the
#     worker (trusted), are INADMISSIBLE on the case with the driver's reason and what a cluster
#     must satisfy; the 8 x 8 baseline and candidate pass every check and are timed;
#   - the folder verifies.
# Before kgate took the cluster refusal for a refusal, the check process ended at the first
# refused capture ("its cuda arm host failed capturing the timed graph", exit 3) and no arm's
# checks were kept.  Skipped without NVRTC or without the stand-in driver.
. tests/cli_lib.sh
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_refuse_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_refuse_fake: no NVRTC, skipped" >&2; exit 0; }
fake_cuda_copy "FAKE_CUDA_REFUSE_FILE=$T/refuse"
NAIVE=$(pwd)/kernels/cuda/gemm_bt_naive.cu
cat >"$T/p.kg" <<PLAN
[campaign]
name = refuse_fake
backend = cuda
quiet = 0
warmup = 1
samples = 2
rounds = 2
processes = 1
timeout = 120
[case s]
op = gemm_bt
dtype = f32
M = 40
N = 24
K = 64
[arm base]
op = gemm_bt
role = baseline
trusted = yes
source = $NAIVE
grid = ceildiv(N, 8), ceildiv(M, 8)
block = 8, 8
[arm small]
op = gemm_bt
source = $NAIVE
grid = ceildiv(N, 8), ceildiv(M, 8)
block = 8, 8
[arm wide]
op = gemm_bt
source = $NAIVE
[arm wide_t]
op = gemm_bt
trusted = yes
source = $NAIVE
PLAN
results() { # folder arm: state,verdict
    awk -F, -v a="$2" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
        $h["case"] == "s" && $h["arm"] == a { print $h["state"] "," $h["verdict"] }' "$1/results.csv"
}
for code in 912 1; do
    echo "128 $code" >"$T/refuse"
    why="CUDA_ERROR_INVALID_CLUSTER_SIZE"
    [ $code = 1 ] && why="CUDA_ERROR_INVALID_VALUE"
    rm -rf "$T/c$code" "$T/r$code"
    KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" check "$T/p.kg" -o "$T/c$code" >"$T/c$code.log" 2>&1; st=$?
    [ $st -le 1 ] || { cat "$T/c$code.log" >&2; die "check with launches refused ($why): exit $st"; }
    expect_no_grep "did not complete" "$T/c$code.log"
    ck=$(ls "$T/c$code"/checks/*.csv)
    for a in wide wide_t; do
        grep -q "^[^,]*,[^,]*,s,$a,.*,admissible,fail,.*the device refused launch 1 ('gemm_bt_naive'): $why" $ck ||
            { grep ",$a," $ck | head -5 >&2; die "check: $a's refused launch ($why) is not a failed admissible row"; }
    done
    [ $code = 912 ] && { grep -q "wide,.*hold at most 8 of them" $ck || die "check: the cluster's refusal does not say what a cluster must satisfy"; }
    bad=$(failed_checks "$T/c$code" | grep -v -e ',wide,' -e ',wide_t,')
    [ -z "$bad" ] || { echo "$bad" | head >&2; die "check ($why): the 8 x 8 arms failed checks"; }
    KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run --report "$T/p.kg" -o "$T/r$code" --no-progress \
        >"$T/r$code.log" 2>&1; st=$?
    [ $st -le 1 ] || { cat "$T/r$code.log" >&2; die "run with launches refused ($why): exit $st"; }
    for a in wide wide_t; do
        [ "$(results "$T/r$code" $a | cut -d, -f1)" = inadmissible ] ||
            { cat "$T/r$code/results.csv" >&2; die "run ($why): $a is not inadmissible"; }
    done
    case $(results "$T/r$code" small) in ok,*) ;; *) cat "$T/r$code/results.csv" >&2; die "run ($why): small is not ok" ;; esac
    "$KGATE" verify "$T/r$code" >"$T/v$code.log" 2>&1 || { cat "$T/v$code.log" >&2; die "verify of the run ($why)"; }
done
echo "ok   a refused cluster or block is INADMISSIBLE on its case, in the arm host and in the worker; the campaign goes on"
echo "cuda_refuse_fake: ok"
