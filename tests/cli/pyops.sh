# Ops declared in Python (docs/ops.md, "Ops in Python"): [op NAME] with
# reference = python:FILE:FUNCTION, its reference run by kgate's Python
# helper on kgate's generated inputs.  A numpy-declared saxpy with C cpu
# candidates: the honest ones admitted and timed, a wrong one INCORRECT,
# every check of a C op run (poison, held-out shapes, the bound audit), the
# bound next to the verdicts, the reference in the evidence and verify of
# the folder ok; bound = tolerance; the plan's errors (file:line and the
# fix); a reference that raises, returns the wrong shape, NaN or float32,
# never returns (a quarter of the timeout, at least 5 s); a
# missing function; a reference edited after the campaign; a torch-declared
# op where /usr/bin/python3 has torch.
# kgate-test: first (Python helpers; 23 to 29 s)
. tests/cli_lib.sh
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "pyops: skipped (/usr/bin/python3 has no numpy)"; exit 0; }
R=$(pwd)
cat >"$T/ref.py" <<'EOF'
import numpy as np


def saxpy(X, Y0, alpha):
    return alpha * X + Y0


def raises(X, Y0, alpha):
    raise ValueError("the reference refuses")


def shape(X, Y0, alpha):
    return (alpha * X + Y0)[:-1]


def nan(X, Y0, alpha):
    y = alpha * X + Y0
    y[3] = np.nan
    return y


def f32(X, Y0, alpha):
    return (alpha * X + Y0).astype(np.float32)


def hangs(X, Y0, alpha):
    while True:
        pass
EOF
plan() { # file function [bound lines] [arms: plain fma wrong]
    f=$1; fn=$2; bound=$3; shift 3
    cat >"$f" <<EOF
[campaign]
name = pyops
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = $#
seed = 7
timeout = 60

[op saxpy]
reference = python:ref.py:$fn
vars = n alpha:real
inputs = X[n] Y0[n]
outputs = Y[n]
requires = n >= 2
flops = 2*n
bytes = 12*n
$bound

[case s]
op = saxpy
dtype = f32
n = 1000
alpha = 0.75
EOF
    for a in "$@"; do
        role=candidate; [ "$a" = plain ] && role=baseline
        entry=saxpy; [ "$a" = plain ] || entry=saxpy_$a
        printf '\n[arm %s]\nop = saxpy\nrole = %s\nsource = %s/kernels/cpu/saxpy.c\nentry = %s\n' "$a" "$role" "$R" "$entry" >>"$f"
    done
}

# ---- 1. the honest kernels admitted and timed, the wrong one INCORRECT
plan "$T/saxpy.kg" saxpy "" plain fma wrong
"$KGATE" run "$T/saxpy.kg" -o "$T/ev" --no-progress --quiet-window 0 >"$T/run.out" 2>"$T/run.err"; st=$?
[ $st -le 1 ] || { cat "$T/run.err" >&2; die "the saxpy campaign: exit $st"; }
expect_grep "s  *wrong  *INCORRECT" "$T/run.out"
grep -q "s  *fma  *\(FASTER\|SLOWER\|INCONCLUSIVE\|EQUIVALENT\)" "$T/run.out" || { cat "$T/run.out" >&2; die "the honest fma kernel was not timed"; }
expect_grep "checked against: case s, op saxpy: library bound (k=16, floor=8 u32 sqrt(n))" "$T/run.out"
expect_grep "checked against: library bound" "$T/ev/report.md"
expect_grep '"contract": "library bound' "$T/ev/ops.json"
[ -f "$T/ev/sources/op-saxpy.py" ] || die "sources/op-saxpy.py is not in the folder"
cmp -s "$T/ev/sources/op-saxpy.py" "$T/ref.py" || die "the folder's copy is not the reference file"
expect_grep "^reference = python:ref.py:saxpy$" "$T/ev/plan.kg"
expect_grep "^sha256 = $(sha256sum "$T/ref.py" | cut -c1-64)$" "$T/ev/plan.kg"
expect_grep '"ops_helper"' "$T/ev/environment.json"
# every check of a C op ran on it: poison, held-out shapes, the bound audit
C="$T/ev/checks/proc-000.csv"
for chk in "poison0:Y" "poison1:Y" "heldout\[n=" "bound:Y" "weak" "fresh"; do
    grep -q "fma,[^,]*,$chk\|fma,.*$chk" "$C" || { head -n 30 "$C" >&2; die "no '$chk' check of the honest arm"; }
done
grep "wrong" "$C" | grep -q "poison0:Y,fail" || die "the wrong kernel did not fail the poisoned check"
grep "fma" "$C" | grep "heldout" | grep -q ",fail," && die "the honest kernel failed a held-out shape"
grep "bound:Y" "$C" | grep -q ",pass," || die "the bound audit did not pass on the library bound"
echo "ok   numpy op: honest admitted and timed, wrong INCORRECT, poison, held-out and bound audit run"

# ---- 1b. a Python that does not start under a worker: the ops helper a worker starts before its
# first case (kg_pyops_prestart) falls back to /usr/bin/python3 at the first reference, as a helper
# started there did; the campaign's checks and verdicts are those of run 1
printf '#!/bin/sh\ntr "\\0" " " </proc/$PPID/cmdline | grep -q " worker " && { echo "no start here" >&2; exit 3; }\nexec /usr/bin/python3 "$@"\n' >"$T/py-noworker"
chmod +x "$T/py-noworker"
KGATE_PYTHON="$T/py-noworker" "$KGATE" run "$T/saxpy.kg" -o "$T/ev-nw" --no-progress --quiet-window 0 >"$T/nw.out" 2>"$T/nw.err"; st=$?
[ $st -le 1 ] || { cat "$T/nw.err" >&2; die "a Python that does not start under a worker: exit $st"; }
expect_grep "s  *wrong  *INCORRECT" "$T/nw.out"
grep -q "s  *fma  *\(FASTER\|SLOWER\|INCONCLUSIVE\|EQUIVALENT\)" "$T/nw.out" || { cat "$T/nw.out" >&2; die "fallback: the honest fma kernel was not timed"; }
echo "ok   the ops helper begun before the first case falls back to /usr/bin/python3"

# ---- 1c. a shard whose cases use no op declared in Python starts no ops helper in its workers
# (a case of rowsum beside saxpy's; --shard I/2 deals one case to each shard); the wrapper counts
# the helpers started under a worker, per shard
plan "$T/mixed.kg" saxpy "" plain fma
printf '\n[case r]\nop = rowsum\ndtype = f32\nM = 8\nN = 256\n\n[arm rs]\nop = rowsum\nrole = baseline\nsource = %s/tests/plans/defects/honest_rowsum.c\n' "$R" >>"$T/mixed.kg"
printf '#!/bin/sh\ntr "\\0" " " </proc/$PPID/cmdline | grep -q " worker " && echo start >>"$KG_PYCOUNT"\nexec /usr/bin/python3 "$@"\n' >"$T/py-count"
chmod +x "$T/py-count"
for i in 0 1; do
    KG_PYCOUNT="$T/count-$i" KGATE_PYTHON="$T/py-count" "$KGATE" run "$T/mixed.kg" --shard $i/2 -o "$T/ev-sh$i" \
        --no-progress --quiet-window 0 >"$T/sh$i.out" 2>"$T/sh$i.err"; st=$?
    [ $st -le 1 ] || { cat "$T/sh$i.err" >&2; die "shard $i/2 of a plan with a Python op and rowsum: exit $st"; }
    n=$(cat "$T/count-$i" 2>/dev/null | wc -l)
    if grep -q "^s," "$T/ev-sh$i/results.csv"; then
        [ "$n" -ge 1 ] || die "shard $i/2 runs the saxpy case but started no ops helper under a worker"
    else
        grep -q "^r," "$T/ev-sh$i/results.csv" || die "shard $i/2 ran neither case"
        [ "$n" = 0 ] || die "shard $i/2 runs only rowsum but started $n ops helpers under its workers"
    fi
done
echo "ok   a shard whose cases use no Python op starts no ops helper"
"$KGATE" verify "$T/ev" >"$T/v.out" 2>"$T/v.err"; st=$?
[ $st = 0 ] || { cat "$T/v.out" "$T/v.err" >&2; die "verify of the folder: exit $st"; }
expect_grep ": verified$" "$T/v.out"
grep -q " 0 saved outputs replayed" "$T/v.out" && die "verify replayed no saved output"
echo "ok   verify: the reference replayed by the op server"
# kgate report runs no op code: the reports, contract included, from the folder's data
expect_report_identical "$T/ev"
echo "ok   kgate report rebuilds the reports byte for byte"

# ---- 2. the reference edited after the campaign: the folder's copy
cp -r "$T/ev" "$T/ev-edited"
chmod -R u+w "$T/ev-edited"
echo "# edited" >>"$T/ev-edited/sources/op-saxpy.py"
"$KGATE" verify "$T/ev-edited" >"$T/ve.out" 2>"$T/ve.err"; st=$?
[ $st = 1 ] || { cat "$T/ve.out" "$T/ve.err" >&2; die "an edited reference copy: verify exit $st"; }
expect_grep "NOT verified" "$T/ve.err"
echo "ok   an edited reference in the folder: NOT verified"

# ---- 3. bound = tolerance: its contract next to the verdicts
plan "$T/tol.kg" saxpy "bound = tolerance
rtol = 1e-3
atol = 1e-5" plain wrong
"$KGATE" check "$T/tol.kg" -o "$T/ev-tol" >"$T/tol.out" 2>"$T/tol.err"; st=$?
[ $st = 1 ] || { cat "$T/tol.out" "$T/tol.err" >&2; die "bound = tolerance: check exit $st (the wrong arm fails)"; }
expect_grep '"contract": "rtol 0.001, atol 1e-05"' "$T/ev-tol/ops.json"
grep "plain" "$T/tol.out" | grep -q "poison0:Y | pass" || die "bound = tolerance: the honest kernel failed"
grep "wrong" "$T/tol.out" | grep -q "poison0:Y | FAIL" || die "bound = tolerance: the wrong kernel passed"
echo "ok   bound = tolerance: rtol 0.001, atol 1e-05"

# ---- 4. references that fail: each a clear error naming the op and the reference
bad() { # function what-the-error-says
    plan "$T/bad-$1.kg" "$1" "" plain
    # a reference call's limit is a quarter of the timeout, at least 5 s
    sed -i 's/^timeout = 60$/timeout = 20/' "$T/bad-$1.kg"
    "$KGATE" check "$T/bad-$1.kg" -o "$T/ev-$1" >"$T/bad-$1.out" 2>"$T/bad-$1.err"; st=$?
    [ $st -ge 2 ] || { cat "$T/bad-$1.err" >&2; die "reference $1: check exit $st"; }
    grep -q "op 'saxpy': reference ref.py:$1 on case 's': $2" "$T/bad-$1.err" ||
        { cat "$T/bad-$1.err" >&2; die "reference $1: the error does not say '$2'"; }
    echo "ok   reference $1: $2"
}
bad raises "ValueError: the reference refuses (ref.py:9)"
bad shape "RuntimeError: output Y has shape \[999\], the op declares \[1000\]"
bad nan "returned NaN at element 3 of output Y from finite inputs"
bad f32 "RuntimeError: output Y is float32"
bad hangs "kgate's Python helper ended in the call: did not answer within 5 s (killed)"
plan "$T/nofn.kg" nofunction "" plain
"$KGATE" check "$T/nofn.kg" -o "$T/ev-nofn" >"$T/nofn.out" 2>"$T/nofn.err"; st=$?
[ $st = 2 ] || { cat "$T/nofn.err" >&2; die "a missing function: check exit $st"; }
expect_grep "nofn.kg:12: \[op saxpy\]: its reference does not load: RuntimeError: ref.py defines no function nofunction" "$T/nofn.err"
[ -e "$T/ev-nofn" ] && die "a missing function: a folder was made"
echo "ok   a missing function: stopped before any worker"

# ---- 5. the plan's errors: file:line and the fix
perr() { # sed-expression what-the-error-says
    sed "$1" "$T/saxpy.kg" >"$T/perr.kg"
    "$KGATE" check "$T/perr.kg" -o "$T/ev-perr" >"$T/perr.out" 2>"$T/perr.err"; st=$?
    [ $st = 2 ] || { cat "$T/perr.err" >&2; die "plan error ($2): exit $st"; }
    grep -q -- "$2" "$T/perr.err" || { cat "$T/perr.err" >&2; die "plan error: not '$2'"; }
    [ -e "$T/ev-perr" ] && die "plan error ($2): a folder was made"
    echo "ok   plan error: $(head -n 1 "$T/perr.err" | cut -c1-160)"
}
perr 's|^reference = .*|&\nsource = ops/x.c|' "perr.kg:14: both source and reference"
perr 's|^inputs = .*|inputs = X[m]|' "perr.kg:15: bad dimension: .*'m' in 'm' is not a variable of the op"
perr 's|^outputs = .*|outputs = Y[n]:i8|' "perr.kg:16: bad output dtype"
perr 's|^bytes = .*|&\nrtol = 1e-3|' "perr.kg:20: tolerance without bound = tolerance"
perr 's|ref.py:saxpy|nothere.py:saxpy|' "perr.kg:13: op reference file not found"
perr 's|^inputs = .*|inputs = X[n|' "perr.kg:15: bad tensors: .*no ']' closes the dimensions"
perr 's|^tensors.*||; s|^vars = .*|&\ntensors = jax|' "perr.kg:15: bad tensors"

# ---- 6. a 2-D op in bf16 (numpy evaluates the library bound in float32 on the bf16 values):
# a row softmax with the C baseline kernel; its numerical negative is rejected
cat >"$T/sm.py" <<'EOF'
import numpy as np


def softmax(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
EOF
cat >"$T/sm.kg" <<EOF
[campaign]
name = pysoftmax
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = 1
seed = 3
timeout = 60

[op pysoftmax]
reference = python:sm.py:softmax
vars = M N
inputs = X[M, N]
outputs = Y[M, N]:f32

[case b]
op = pysoftmax
dtype = bf16
M = 32
N = 256

[arm naive]
op = pysoftmax
role = baseline
source = $R/kernels/cpu/softmax_naive.c
EOF
"$KGATE" check "$T/sm.kg" -o "$T/ev-sm" >"$T/sm.out" 2>"$T/sm.err"; st=$?
[ $st = 0 ] || { cat "$T/sm.out" "$T/sm.err" >&2; die "the bf16 softmax: check exit $st"; }
expect_grep "heldout\[M=31 N=256\]:Y | pass" "$T/sm.out"
expect_grep "(row [0-9]*, col [0-9]*)" "$T/sm.out"
"$KGATE" check "$T/sm.kg" -o "$T/ev-smn" --negative naive >"$T/smn.out" 2>"$T/smn.err"
expect_grep "the checks reject the negative, as required" "$T/smn.out"
echo "ok   a bf16 row softmax declared in Python: honest passes, its negative is rejected"

# a layernorm in f16 against a float32 numpy call: the bound audit admits no mutation at the
# constant rows (the sensitivity term moves inputs by float32's unit, not float16's, which made the
# bound 25x a correct kernel's error there and the op WEAK-BOUNDED)
cat >"$T/ln.py" <<'EOF'
import numpy as np


def layernorm(X):
    mu = X.mean(axis=1, keepdims=True)
    var = ((X - mu) ** 2).mean(axis=1, keepdims=True)
    return (X - mu) / np.sqrt(var + 1e-5)


def ln32(X):
    x = X.astype(np.float32)
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return ((x - mu) / np.sqrt(var + np.float32(1e-5))).astype(X.dtype)
EOF
sed -e 's/pysoftmax/pyln/' -e 's/sm.py:softmax/ln.py:layernorm/' \
    -e 's/^outputs = Y\[M, N\]:f32/outputs = Y[M, N]/' -e 's/^dtype = bf16/dtype = f16/' \
    -e 's/^\[arm naive\]/[arm np]/' -e 's|^source = .*softmax_naive.c|builtin = numpy\ncall = python:ln.py:ln32|' \
    "$T/sm.kg" >"$T/ln.kg"
"$KGATE" check "$T/ln.kg" -o "$T/ev-ln" >"$T/ln.out" 2>"$T/ln.err"; st=$?
[ $st = 0 ] || { cat "$T/ln.kg" "$T/ln.out" "$T/ln.err" >&2; die "the f16 layernorm: check exit $st"; }
expect_grep "bound:Y | pass .* 320 rejected, 0 admitted" "$T/ln.out"
echo "ok   an f16 layernorm declared in Python: its library bound passes the audit at constant rows"

# torch's layernorm (x, w, b) in f16 as its CUDA kernel computes the statistics: a Welford state
# per thread, combined in a tree by mean = (nA/n) meanA + (nB/n) meanB with 1/n taken once, so a
# constant row's mean is off by a float32 unit or two, which 1/sqrt(eps) multiplies.  The library
# bound's sensitivity term once moved the inputs by a float32 unit and then rounded them back to
# float16, where the move vanished: the bound was its floor at constant rows, and this honest
# baseline was INCORRECT there (torch's own kernel on the H200, docs/measurements/h200-2026-12-05)
cat >"$T/lnw.py" <<'EOF'
import numpy as np


def layernorm(X, W, B):
    mu = X.mean(axis=1, keepdims=True)
    var = ((X - mu) ** 2).mean(axis=1, keepdims=True)
    return (X - mu) / np.sqrt(var + 1e-5) * W + B


def tree(X, W, B, threads=32):
    # a row shorter than 4 * threads leaves some threads' states empty, as on the GPU
    f = np.float32
    x = X.astype(f)
    m, n = x.shape
    mean = np.zeros((m, threads), f)
    m2 = np.zeros((m, threads), f)
    cnt = np.zeros(threads, f)
    for k in range(n):
        t = (k // 4) % threads
        cnt[t] += 1
        d = x[:, k] - mean[:, t]
        mean[:, t] = mean[:, t] + d * (f(1) / cnt[t])
        m2[:, t] = m2[:, t] + d * (x[:, k] - mean[:, t])
    while mean.shape[1] > 1:
        h = mean.shape[1] // 2
        ca, cb = cnt[:h], cnt[h:]
        c = ca + cb
        coef = f(1) / np.maximum(c, f(1))      # a pair of empty states stays empty
        na, nb = ca * coef, cb * coef
        d = mean[:, h:] - mean[:, :h]
        m2 = m2[:, :h] + m2[:, h:] + d * d * ca * nb
        mean = na * mean[:, :h] + nb * mean[:, h:]
        cnt = c
    rstd = f(1) / np.sqrt(m2 / f(n) + f(1e-5))
    y = (x - mean[:, :1]) * rstd[:, :1] * W.astype(f) + B.astype(f)
    return y.astype(X.dtype)
EOF
sed -e 's/ln.py:layernorm/lnw.py:layernorm/' -e 's/^inputs = X\[M, N\]/inputs = X[M, N] W[N] B[N]/' \
    -e 's|^call = python:ln.py:ln32|call = python:lnw.py:tree|' -e 's/^M = 32/M = 64/' "$T/ln.kg" >"$T/lnw.kg"
"$KGATE" check "$T/lnw.kg" -o "$T/ev-lnw" >"$T/lnw.out" 2>"$T/lnw.err"; st=$?
[ $st = 0 ] || { cat "$T/lnw.kg" "$T/lnw.out" "$T/lnw.err" >&2; die "the f16 layernorm with w and b, statistics as torch's CUDA kernel: check exit $st"; }
expect_grep "bound:Y | pass .* rejected, 0 admitted" "$T/lnw.out"
echo "ok   an f16 layernorm with w and b: torch's CUDA statistics pass at constant rows, the audit admits no mutation"

# ---- 7. an op declared with torch tensors, where /usr/bin/python3 has torch
# (left to the plain pass under the sanitizers: kgate's side is the numpy calls' above, and each
# torch import costs seconds)
case ${BUILD:-build} in *san*) torch_here=no ;; *) torch_here=yes ;; esac
if [ $torch_here = yes ] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    cat >"$T/tref.py" <<'EOF'
import torch


def saxpy(X, Y0, alpha):
    assert isinstance(X, torch.Tensor)
    return alpha * X + Y0
EOF
    sed 's|reference = python:ref.py:saxpy|reference = python:tref.py:saxpy\ntensors = torch|' "$T/saxpy.kg" >"$T/torch.kg"
    "$KGATE" check "$T/torch.kg" -o "$T/ev-torch" >"$T/torch.out" 2>"$T/torch.err"; st=$?
    [ $st = 1 ] || { cat "$T/torch.out" "$T/torch.err" >&2; die "the torch op: check exit $st (the wrong arm fails)"; }
    grep "fma" "$T/torch.out" | grep -q "poison0:Y | pass" || die "the torch op: the honest kernel failed"
    grep "wrong" "$T/torch.out" | grep -q "poison0:Y | FAIL" || die "the torch op: the wrong kernel passed"
    expect_grep '"torch"' "$T/ev-torch/environment.json"
    echo "ok   a torch-declared op"
else
    echo "skip a torch-declared op: the sanitizer pass, or /usr/bin/python3 without torch (CI installs python3-torch)"
fi
echo "pyops: ok"
