# Kernel contracts (docs/plan-format.md, "Kernel contracts"): the kgate:
# lines of a kernel source's leading comment give an arm the keys it does
# not set itself; the plan's own keys win; the canonical plan (and so its
# hash) holds the merged values and changes with the contract; malformed
# lines are refused naming the kernel file and line; a case outside the
# arm's requires is INADMISSIBLE before any load or launch (cpu backend,
# and the cuda backend against the stand-in driver where NVRTC is there);
# `kgate new plan` prints a plan that kgate check accepts and kgate run
# takes to a verdict.
. tests/cli_lib.sh
ROOT=$(pwd)
mkdir -p "$T/p/k"
# a gemm_bt kernel whose contract requires M % 32 == 0
{ printf '/* cand.c: the naive gemm_bt under a contract.\n * kgate: ops = gemm_bt\n * kgate: requires = M %% 32 == 0\n */\n'
  cat kernels/cpu/gemm_bt_naive.c; } >"$T/p/k/cand.c"
plan() { # extra lines of [arm cand]
    cat <<PLAN
[campaign]
name = contracts
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = 1
max_steal = 0
timeout = 120
[case m64]
op = gemm_bt
dtype = f32
M = 64
N = 48
K = 40
[case m40]
op = gemm_bt
dtype = f32
M = 40
N = 48
K = 40
[arm base]
op = gemm_bt
role = baseline
source = $ROOT/kernels/cpu/gemm_bt_naive.c
[arm cand]
op = gemm_bt
role = candidate
source = k/cand.c
$1
PLAN
}
hash_of() { "$KGATE" freeze "$1" -o "$1.frozen" 2>"$T/freeze.err" | awk '{print $1}'; }

# the contract's requires is the arm's when the plan gives none
plan "" >"$T/p/a.kg"
ha=$(hash_of "$T/p/a.kg")
[ -n "$ha" ] || { cat "$T/freeze.err" >&2; die "freeze of a plan relying on a contract"; }
sed -n '/^\[arm cand\]/,/^$/p' "$T/p/a.kg.frozen" >"$T/cand.txt"
expect_grep "^requires = M % 32 == 0$" "$T/cand.txt"
# a plan that writes the same value itself runs the same thing: the same hash
plan "requires = M % 32 == 0" >"$T/p/same.kg"
[ "$(hash_of "$T/p/same.kg")" = "$ha" ] || die "the merged plan and the explicit one hash differently"
# the plan's own value wins
plan "requires = M % 8 == 0" >"$T/p/own.kg"
ho=$(hash_of "$T/p/own.kg")
expect_grep "^requires = M % 8 == 0$" "$T/p/own.kg.frozen"
expect_no_grep "^requires = M % 32 == 0$" "$T/p/own.kg.frozen"
[ "$ho" != "$ha" ] || die "a plan's own requires did not change the hash"
# a changed contract changes the canonical plan and its hash
cp "$T/p/k/cand.c" "$T/cand.keep"
sed -i 's/kgate: requires = M % 32 == 0/kgate: requires = M % 16 == 0/' "$T/p/k/cand.c"
hc=$(hash_of "$T/p/a.kg")
expect_grep "^requires = M % 16 == 0$" "$T/p/a.kg.frozen"
[ "$hc" != "$ha" ] || die "a changed contract kept the plan's hash"
cp "$T/cand.keep" "$T/p/k/cand.c"

# a case outside the contract's requires: INADMISSIBLE before any load or
# launch; the arm runs on the case it supports
"$KGATE" check "$T/p/a.kg" -o "$T/c" >"$T/c.out" 2>"$T/c.err"; st=$?
expect_status 1 $st "check with a case outside the contract's requires"
expect_grep "note: arm 'cand' is INADMISSIBLE on case 'm40': its requires M % 32 == 0 (8 against 0) does not hold" "$T/c.err"
expect_grep "| m40 | cand | pre | admissible | INADMISSIBLE |.*INADMISSIBLE: the arm requires M % 32 == 0 (8 against 0); not loaded, not run" "$T/c.out"
# beside it only the weak-case check and the bound audit of the case's inputs, which run no kernel
n=$(grep "^| m40 | cand | " "$T/c.out" | grep -vc " | pre | \(admissible\|weak\|bound:[^ ]*\) | ")
[ "$n" -eq 0 ] || die "cand has $n check rows of runs on m40, expected none (never loaded)"
expect_grep "^| m64 | cand | pre | poison0:C | pass |" "$T/c.out"
expect_grep "^| m40 | base | pre | poison0:C | pass |" "$T/c.out"
expect_no_grep "m40,cand,pre,layout" "$T/c/checks/proc-000.csv"
# the campaign: cand INADMISSIBLE on m40, timed on m64; verify replays it
"$KGATE" run --report "$T/p/a.kg" -o "$T/r" --no-progress >"$T/r.out" 2>"$T/r.err"; st=$?
[ $st -le 1 ] || { cat "$T/r.err" >&2; die "campaign with a contract: exit $st"; }
expect_grep "| m40 | cand | candidate | .* | INADMISSIBLE |" "$T/r/report.md"
"$KGATE" verify "$T/r" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "verify of the contract campaign"; }
# the kernel file, contract and all, is in the evidence
grep -rq "kgate: requires = M % 32 == 0" "$T/r/sources" || die "the contract's source is not in the evidence"

# no baseline that can run a case: refused at load
{ printf '/* kgate: requires = M %% 32 == 0 */\n'; cat kernels/cpu/gemm_bt_naive.c; } >"$T/p/k/base.c"
plan "" | sed "s#^source = $ROOT/kernels/cpu/gemm_bt_naive.c#source = k/base.c#" >"$T/p/nobase.kg"
"$KGATE" check "$T/p/nobase.kg" -o "$T/nb" >"$T/nb.out" 2>"$T/nb.err"; st=$?
expect_status 2 $st "a case no baseline can run"
expect_grep "nobase.kg:[0-9]*: no baseline arm of the case meets its requires" "$T/nb.err"

# malformed contracts: refused with the kernel file and its line
bad() { # contract line, expected message
    { printf '/* a kernel\n * kgate: ops = gemm_bt\n * %s\n */\n' "$1"; cat kernels/cpu/gemm_bt_naive.c; } >"$T/p/k/cand.c"
    "$KGATE" check "$T/p/a.kg" -o "$T/bad.$$" >"$T/bad.out" 2>"$T/bad.err"; st=$?
    expect_status 2 $st "contract line '$1'"
    expect_grep "k/cand.c:3: $2" "$T/bad.err"
    expect_grep "the kernel contract of \[arm cand\]" "$T/bad.err"
}
bad "kgate: bogus = 1" "unknown key in a kernel contract: 'kgate: bogus = 1'"
bad "kgate: requires = M % 32" "bad requires in a kernel contract"
bad "kgate: requires" "expected 'kgate: KEY = VALUE' in a kernel contract"
bad "kgate: entry = not an identifier" "bad name"
bad "kgate: [x y] grid = 1" "bad \[ENTRY\] in a kernel contract"
bad "kgate: [splitk] entry = other" "'entry' inside an \[ENTRY\] contract line"
bad "kgate: block = 1; block = 2" "key given twice in a kernel contract"
bad "kgate: grid =" "empty value in a kernel contract"
# an op the contract does not list
{ printf '/* kgate: ops = rowsum, softmax */\n'; cat kernels/cpu/gemm_bt_naive.c; } >"$T/p/k/cand.c"
"$KGATE" check "$T/p/a.kg" -o "$T/ops" >"$T/ops.out" 2>"$T/ops.err"; st=$?
expect_status 2 $st "an arm whose op its contract does not list"
expect_grep "k/cand.c:1: the kernel contract does not list the arm's op" "$T/ops.err"
cp "$T/cand.keep" "$T/p/k/cand.c"

# several entries; the launch geometry comes as a whole (parsed only: fake)
cat >"$T/p/k/two.cu" <<'CU'
// two.cu: two kernels, one contract
// kgate: entry = one
// kgate: grid = ceildiv(M, 32); block = 32
// kgate: args = A, B, C, M, N, K
// kgate: [two] grid = ceildiv(M, 64)
// kgate: [two] args = A, B, C, M, N
extern "C" __global__ void one() {}
CU
cat >"$T/p/multi.kg" <<'PLAN'
[campaign]
backend = fake
[case c]
op = gemm_bt
dtype = f32
M = 64
N = 64
K = 64
[arm first]
op = gemm_bt
role = baseline
source = k/two.cu
[arm second]
op = gemm_bt
source = k/two.cu
entry = two
[arm own]
op = gemm_bt
source = k/two.cu
grid = 7
PLAN
hash_of "$T/p/multi.kg" >/dev/null || { cat "$T/freeze.err" >&2; die "freeze of the two-entry plan"; }
F="$T/p/multi.kg.frozen"
sed -n '/^\[arm first\]/,/^$/p' "$F" >"$T/first"
sed -n '/^\[arm second\]/,/^$/p' "$F" >"$T/second"
sed -n '/^\[arm own\]/,/^$/p' "$F" >"$T/own"
expect_grep "^entry = one$" "$T/first"
expect_grep "^grid = ceildiv(M, 32)$" "$T/first"
expect_grep "^block = 32$" "$T/first"
expect_grep "^args = A, B, C, M, N, K$" "$T/first"
expect_grep "^entry = two$" "$T/second"
expect_grep "^grid = ceildiv(M, 64)$" "$T/second"
expect_grep "^block = 32$" "$T/second"
expect_grep "^args = A, B, C, M, N$" "$T/second"
# own sets grid: it takes no geometry (no block), but entry and args
expect_grep "^grid = 7$" "$T/own"
expect_no_grep "^block = " "$T/own"
expect_grep "^entry = one$" "$T/own"
expect_grep "^args = A, B, C, M, N, K$" "$T/own"

# the cuda backend against the stand-in driver: the launch outside the
# contract's requires is never made
FAKE=$ROOT/${BUILD:-build}/tests/libcuda_fake.so
if [ -f "$FAKE" ] && { ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ]; }; then
    # kernels/cuda/gemm_bt_naive.cu's own contract (entry, grid, block, args), with a requires
    sed 's#^ \* kgate: ops = gemm_bt$#&\n * kgate: requires = M % 32 == 0#' kernels/cuda/gemm_bt_naive.cu >"$T/p/k/cand.cu"
    grep -q "kgate: requires = M % 32 == 0" "$T/p/k/cand.cu" || die "no requires added to the cuda kernel's contract"
    sed -e 's/^backend = cpu/backend = cuda/' -e "s#^source = $ROOT/kernels/cpu/gemm_bt_naive.c#source = $ROOT/kernels/cuda/gemm_bt_naive.cu#" \
        -e 's#^source = k/cand.c#source = k/cand.cu#' "$T/p/a.kg" >"$T/p/cu.kg"
    KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$ROOT/include "$KGATE" check "$T/p/cu.kg" -o "$T/cu" >"$T/cu.out" 2>"$T/cu.err"; st=$?
    [ $st -eq 1 ] || cat "$T/cu.err" "$T/cu.out" >&2
    expect_status 1 $st "cuda check with a case outside the contract's requires"
    expect_grep "| m40 | cand | pre | admissible | INADMISSIBLE |.*the arm requires M % 32 == 0 (8 against 0); not loaded, not run" "$T/cu.out"
    n=$(grep "^| m40 | cand | " "$T/cu.out" | grep -vc " | pre | \(admissible\|weak\|bound:[^ ]*\) | ")
    [ "$n" -eq 0 ] || die "cuda: cand has $n check rows of runs on m40, expected none"
    expect_grep "^| m64 | cand | pre | poison0:C | pass |" "$T/cu.out"
else
    echo "kernel_contracts: no stand-in driver or NVRTC, the cuda part skipped" >&2
fi

# kgate new plan: accepted by kgate check as printed, run to a verdict
"$KGATE" new plan >"$T/first.kg" 2>"$T/new.err" || { cat "$T/new.err" >&2; die "kgate new plan"; }
cp "$T/first.kg" ./.kgate-new-plan-test.kg
trap 'rm -rf "$T" ./.kgate-new-plan-test.kg' EXIT
"$KGATE" check ./.kgate-new-plan-test.kg -o "$T/nc" >"$T/nc.out" 2>"$T/nc.err"; st=$?
expect_status 0 $st "kgate check of the kgate new plan template"
sed 's/^quiet = 2 /quiet = 0 /' ./.kgate-new-plan-test.kg >"$T/fast.kg.tmp" && mv "$T/fast.kg.tmp" ./.kgate-new-plan-test.kg
"$KGATE" run --report ./.kgate-new-plan-test.kg -o "$T/nr" --no-progress >"$T/nr.out" 2>"$T/nr.err"; st=$?
[ $st -le 1 ] || { cat "$T/nr.err" >&2; die "kgate run of the template: exit $st"; }
expect_grep "| first | candidate | candidate | .* | \(FASTER\|EQUIVALENT\|INCONCLUSIVE\|SLOWER\|NOT FASTER\)" "$T/nr/report.md"
for o in rowsum softmax; do
    "$KGATE" new plan --op $o >./.kgate-new-plan-test.kg || die "kgate new plan --op $o"
    "$KGATE" freeze ./.kgate-new-plan-test.kg -o "$T/f.$o" >/dev/null 2>"$T/f.err" || { cat "$T/f.err" >&2; die "template --op $o"; }
done
"$KGATE" new plan --backend cuda >./.kgate-new-plan-test.kg || die "kgate new plan --backend cuda"
"$KGATE" freeze ./.kgate-new-plan-test.kg -o "$T/f.cuda" >/dev/null 2>"$T/f.err" || { cat "$T/f.err" >&2; die "cuda template"; }
expect_grep "^entry = gemm_bt_tiled$" "$T/f.cuda"
"$KGATE" new plan --op nope >/dev/null 2>"$T/e"; st=$?
expect_status 2 $st "kgate new plan --op nope"
expect_grep "no template for op 'nope'" "$T/e"
exit 0
