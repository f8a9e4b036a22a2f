# `kgate import kernelbench` (docs/kernelbench.md): the ten problems of examples/kernelbench/ with
# their honest and wrong candidates, imported; the refused constructs (tests/kernelbench/refuse_*.py),
# each refused with its file, line and construct; the written reference modules checked against the
# problems' Models (tests/kernelbench/check_ref.py); a Triton candidate's compile script (with
# stand-ins for Triton); every candidate's device code compiled by NVRTC, loaded and launched
# through kgate against the stand-in CUDA driver (whose launches run nothing: that the kernels are
# right is not checked here); and, where this kgate accepts an [op] with `reference = python:`
# (docs/ops.md), the written plans parsed (kgate freeze) and the cpu variant of two problems
# checked (the reference and the torch baseline).  The candidates' CUDA arms cannot run here (no
# GPU): tools/device/kernelbench_run.sh checks and times them on one.  Needs
# /usr/bin/python3 with torch (Debian's python3-torch: sh tools/install-deps.sh).
# kgate-test: no-sanitize (the importer is Python; kgate import's C side is a fork and exec, and the argument expressions are test_cuda_cpu's under the sanitizers; it passes under them, at about a minute and a half)
# kgate-test: first (75 imports of about a second each, torch imported in each; about a minute)
. tests/cli_lib.sh
PY=/usr/bin/python3
"$PY" -c 'import torch' >"$T/torch.txt" 2>&1 || { cat "$T/torch.txt" >&2; die "$PY cannot import torch (sh tools/install-deps.sh installs python3-torch)"; }
export KGATE_PYTHON=$PY
EX=examples/kernelbench
TK=tests/kernelbench
mkdir -p "$T/out" "$T/cpu" "$T/refuse" "$T/tri"

# ---- the ten problems, each with both candidates (two imports at a time)
problems=$(ls $EX/[0-9][0-9]_*.py | grep -v -e '_honest\.py$' -e '_wrong\.py$' -e '_triton\.py$')
[ "$(echo "$problems" | wc -l)" = 10 ] || die "expected ten problems in $EX"
import_one() { # problem kind
    s=$(basename "$1" .py)
    "$KGATE" import kernelbench "$1" --candidate "$EX/${s}_$2.py" -o "$T/out/${s}_$2.kg" >"$T/out/${s}_$2.out" 2>&1
    echo $? >"$T/out/${s}_$2.rc"
}
for p in $problems; do
    import_one "$p" honest &
    import_one "$p" wrong
    wait
done
for p in $problems; do
    s=$(basename "$p" .py)
    for k in honest wrong; do
        plan="$T/out/${s}_$k.kg"
        [ "$(cat "$T/out/${s}_$k.rc")" = 0 ] || { cat "$T/out/${s}_$k.out" >&2; die "import of $s with its $k candidate"; }
        expect_grep "^\[op kb_$s\]" "$plan"
        expect_grep "^reference = python:${s}_${k}_ref.py:kgate_reference" "$plan"
        expect_grep "^tensors = torch" "$plan"
        expect_grep "^call = python:${s}_${k}_ref.py:kgate_baseline" "$plan"
        expect_grep "^of = torch" "$plan"
        expect_grep "^\[arm candidate\]" "$plan"
        expect_grep "^backend = cuda" "$plan"
        cu="$T/out/${s}_${k}_candidate.cu"
        expect_grep 'extern "C" __global__' "$cu"
        expect_grep "^#line [0-9]* \"${s}_$k.py\"" "$cu"
        expect_no_grep 'torch::' "$cu"
        expect_no_grep 'data_ptr' "$cu"
        expect_grep "op kb_$s" "$T/out/${s}_$k.out"
    done
done
# the launches, read from the host wrappers as expressions of the sizes
o=$T/out
expect_grep '^grid = ((batch_size\*dim)+256-1)/256$' $o/01_gelu_honest.kg
expect_grep '^grid = (batch_size\*dim)/256$' $o/01_gelu_wrong.kg
expect_grep '^args = x, out, batch_size\*dim$' $o/01_gelu_honest.kg
expect_grep '^args = x, out, batch_size, dim$' $o/02_softmax_honest.kg
expect_grep '^inputs = x\[batch_size,4096\] ln_weight\[4096\] ln_bias\[4096\]$' $o/03_layernorm_honest.kg
expect_grep '^args = x, ln_weight, ln_bias, out, batch_size, 4096$' $o/03_layernorm_honest.kg
expect_grep '^grid = batch_size/2$' $o/04_rmsnorm_wrong.kg
expect_grep '^vars = K M N$' $o/05_matmul_honest.kg
expect_grep '^grid = (N+16-1)/16, (M+16-1)/16$' $o/05_matmul_honest.kg
expect_grep '^block = 16, 16$' $o/05_matmul_honest.kg
expect_grep '^args = A, B, out, M, K, N$' $o/05_matmul_honest.kg
expect_grep '^; fixed by the Module.s init .*in_features = 1024, out_features = 512' $o/06_linear_relu_honest.kg
expect_grep '^outputs = out\[batch_size,64,length-2\]$' $o/07_conv1d_honest.kg
expect_grep '^requires = length-2 >= 1$' $o/07_conv1d_honest.kg
expect_no_grep '^requires' $o/02_softmax_honest.kg
expect_grep '^grid = ((length-3+1)+255)/256, 64, batch_size$' $o/07_conv1d_honest.kg
expect_grep '^outputs = out\[batch_size,1\]$' $o/08_sum_reduction_honest.kg
expect_grep '^outputs = out\[batch_size\]$' $o/09_max_reduction_honest.kg
expect_grep '__hadd' $o/08_sum_reduction_wrong_candidate.cu

# ---- refusals: each names the candidate's file, the line of the construct, and why
refuse() { # fixture pattern-of-the-line message
    f=$TK/refuse_$1.py
    line=$(grep -n -m1 -- "$2" "$f" | cut -d: -f1)
    [ -n "$line" ] || die "no line '$2' in $f"
    "$KGATE" import kernelbench $EX/01_gelu.py --candidate "$f" -o "$T/refuse/$1.kg" >"$T/refuse/$1.out" 2>&1
    expect_status 2 $? "import of $f"
    expect_grep "^kgate import: $f:$line: .*$3" "$T/refuse/$1.out"
    [ ! -e "$T/refuse/$1.kg" ] || die "$f: a refused import wrote a plan"
}
refuse stream 'cudaStreamCreate\|cudaStream_t side' 'launches on a stream of its own'
refuse sync cudaDeviceSynchronize 'synchronises'
refuse timer 'cudaEvent_t' 'touches a timer'
refuse hostlogic 'if (n % 4' 'host control flow'
refuse datadep 'item<int>' 'reads device data on the host'
refuse geometry cudaDeviceProp "reads the device's properties"
refuse kmalloc 'malloc(' 'allocates in device code'
refuse torchfwd 'torch.clamp' 'mixes torch calls into forward'
refuse pystream 'torch.cuda.stream' 'launches on a stream of its own'
refuse fstring 'rf"""' 'an f-string'
refuse param 'self.scale' 'has no parameter named scale'
refuse autotune 'triton.autotune' 'an autotuner picks its configuration by timing on the host'
refuse temp 'auto partial' 'a temporary tensor between launches'
expect_grep 'docs/security.md' "$T/refuse/stream.out"
# a host fill of the output (KernelBench's own example does it) is dropped with a note naming its line
zl=$(grep -n -m1 'auto y = torch::zeros_like' $TK/note_zeros.py | cut -d: -f1)
"$KGATE" import kernelbench $EX/01_gelu.py --candidate $TK/note_zeros.py -o "$T/refuse/zeros.kg" >"$T/refuse/zeros.out" 2>&1 ||
    { cat "$T/refuse/zeros.out" >&2; die "import of a candidate whose host zero-fills the output"; }
expect_grep "^kgate import: note: $TK/note_zeros.py:$zl: the host's fill of y (torch::zeros_like) is dropped" "$T/refuse/zeros.out"
expect_grep '^\[arm candidate\]' "$T/refuse/zeros.kg"
# usage errors
"$KGATE" import kernelbench >"$T/u1.out" 2>&1; expect_status 2 $? "import without a problem"
"$KGATE" import tvm $EX/01_gelu.py >"$T/u2.out" 2>&1; expect_status 2 $? "import of another format"
expect_grep "the one format kgate imports is KernelBench's" "$T/u2.out"
"$KGATE" import kernelbench $EX/01_gelu.py --set nosuch=3 -o "$T/u3.kg" >"$T/u3.out" 2>&1; expect_status 2 $? "--set of no constant"
expect_grep 'has no module-level integer constant nosuch' "$T/u3.out"
"$KGATE" import kernelbench $EX/08_sum_reduction.py --tolerance 1e-4,1e-6 -o "$T/tol.kg" -q || die "--tolerance"
expect_grep '^bound = tolerance$' "$T/tol.kg"; expect_grep '^rtol = 1e-4$' "$T/tol.kg"; expect_grep '^atol = 1e-6$' "$T/tol.kg"
"$KGATE" import kernelbench $EX/08_sum_reduction.py --tolerance 1e-4 -o "$T/tol2.kg" >"$T/u4.out" 2>&1; expect_status 2 $? "--tolerance without ATOL"

# ---- two launches with nothing between them: a chain (entry2, ...), the second with shared memory
"$KGATE" import kernelbench $EX/01_gelu.py --candidate $TK/chain_gelu.py -o "$o/zz_chain.kg" >"$T/chain.out" 2>&1 ||
    { cat "$T/chain.out" >&2; die "import of a chain of two launches"; }
expect_grep '^entry = gelu_inner$' "$o/zz_chain.kg"
expect_grep '^entry2 = gelu_outer$' "$o/zz_chain.kg"
expect_grep '^grid2 = ((batch_size\*dim)+256-1)/256$' "$o/zz_chain.kg"
expect_grep '^shared2 = 256\*4$' "$o/zz_chain.kg"
expect_grep '^args2 = x, out, batch_size\*dim$' "$o/zz_chain.kg"
expect_no_grep '^shared = ' "$o/zz_chain.kg"

# ---- a Triton candidate: its launch read from forward, and the compile script it gets; the script
# run here with stand-ins for Triton and kgate.triton.compile_arm (tests/kernelbench/standin), since
# the real compile needs Triton and the GPU (tools/device/kernelbench_run.sh runs it there)
"$KGATE" import kernelbench $EX/01_gelu.py --candidate $EX/01_gelu_triton.py -o "$T/tri/gelu.kg" >"$T/tri.out" 2>&1 ||
    { cat "$T/tri.out" >&2; die "import of the Triton candidate"; }
expect_grep 'candidate: a Triton kernel (its arm: python3 gelu_triton.py)' "$T/tri.out"
expect_no_grep '^\[arm candidate\]' "$T/tri/gelu.kg"
expect_grep "^; ---- kgate import: the Triton candidate's arm ----" "$T/tri/gelu.kg"
expect_grep "'grid': 'ceildiv((batch_size\*dim),1024)'" "$T/tri/gelu_triton.py"
expect_grep "'constexprs': {'BLOCK_SIZE': 1024}" "$T/tri/gelu_triton.py"
PYTHONPATH=$(pwd)/$TK/standin "$PY" -B "$T/tri/gelu_triton.py" >"$T/tri2.out" 2>&1 || { cat "$T/tri2.out" >&2; die "the Triton compile script"; }
expect_grep '^\[arm candidate\]$' "$T/tri/gelu.kg"
expect_grep '^image = gelu_candidate.cubin$' "$T/tri/gelu.kg"
expect_grep '^entry = gelu_kernel$' "$T/tri/gelu.kg"
expect_grep '^args = x, out, batch_size\*dim, null, null$' "$T/tri/gelu.kg"
expect_grep '^block = 128$' "$T/tri/gelu.kg"
# (parsed with the others below, where kgate takes python references)
cp "$T/tri/gelu.kg" "$o/zz_gelu_triton.kg"; cp "$T/tri/gelu_ref.py" "$T/tri/gelu_candidate.cubin" "$o/"

# ---- the written reference modules against the problems' Models (no kgate: the adapter itself)
pairs=
for p in $problems; do pairs="$pairs $o/$(basename "$p" .py)_honest.kg $p"; done
"$PY" -B $TK/check_ref.py $pairs >"$T/ref.out" 2>&1 || { cat "$T/ref.out" >&2; die "the reference modules"; }
[ "$(grep -c 'reference and baseline agree' "$T/ref.out")" = 10 ] || die "check_ref.py: not ten problems"

# ---- every candidate's device code through kgate's own path, on the stand-in CUDA driver
# (build/tests/libcuda_fake.so: no GPU): the candidate arm alone with a stand-in C op of the
# imported op's variables and tensors (tests/kernelbench/standin_op.py); NVRTC compiles the .cu the
# import wrote, a cuda arm host loads it, the arguments (expressions of the sizes included) and the
# geometry are evaluated and the kernel is launched.  The stand-in driver runs no kernel, so the
# outputs stay poisoned: the check must get that far (a poison0 row, exit 1), never to a compile,
# load or argument error (exit 2).  Skipped without the stand-in driver or NVRTC.
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
if [ ! -f "$FAKE" ]; then
    echo "kernelbench.sh: no $FAKE: the candidates' device code is not compiled here" >&2
elif ! { ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] || ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1; }; then
    echo "kernelbench.sh: no NVRTC: the candidates' device code is not compiled here" >&2
else
    mkdir -p "$T/dev"
    dev_one() { # plan
        b=$(basename "$1" .kg)
        "$PY" -B $TK/standin_op.py "$1" "$o/dev_$b.kg" >"$T/dev/$b.gen" 2>&1 || { echo gen >"$T/dev/$b.rc"; return; }
        KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" check "$o/dev_$b.kg" -o "$T/dev/$b.ev" -q \
            >"$T/dev/$b.out" 2>&1
        echo $? >"$T/dev/$b.rc"
    }
    for p in $problems; do
        s=$(basename "$p" .py)
        dev_one "$o/${s}_honest.kg" &
        dev_one "$o/${s}_wrong.kg"
        wait
    done
    dev_one "$o/zz_chain.kg"
    [ "$(cat "$T/dev/zz_chain.rc")" = 1 ] || { cat "$T/dev/zz_chain.out" >&2; die "device code of the chain"; }
    for p in $problems; do
        for k in honest wrong; do
            b=$(basename "$p" .py)_$k
            [ "$(cat "$T/dev/$b.rc")" = 1 ] || { cat "$T/dev/$b.gen" "$T/dev/$b.out" >&2; die "device code of $b: exit $(cat "$T/dev/$b.rc")"; }
            awk -F, '$4 == "candidate" && $6 ~ /^poison0:out/' "$T/dev/$b.ev"/checks/*.csv | grep -q . ||
                die "device code of $b: no poison0 check (the arm did not run)"
        done
    done
    rm -f "$o"/dev_*
fi

# ---- the plans through kgate, where it accepts `reference = python:` in an [op]
"$KGATE" freeze "$o/01_gelu_honest.kg" -o "$T/probe.frozen" >"$T/probe.out" 2>&1
if grep -q "unknown key: 'reference'" "$T/probe.out"; then
    echo "SKIP (kernelbench.sh): this kgate does not take an [op] with reference = python: (docs/ops.md); the" \
         "imported plans are not parsed or checked by kgate here" >&2
    exit 0
fi
for f in "$o"/*.kg; do
    "$KGATE" freeze "$f" -o "$T/frozen.kg" >"$T/freeze.out" 2>&1 || { cat "$T/freeze.out" >&2; die "kgate freeze $f"; }
done
# the cpu variant (the reference and the torch baseline with its control), small shapes, checked
for spec in "02_softmax batch_size=3,dim=300" "07_conv1d batch_size=2,length=67"; do
    set -- $spec
    "$KGATE" import kernelbench $EX/$1.py --cpu --set "$2" -o "$T/cpu/$1.kg" -q || die "cpu import of $1"
    expect_no_grep '^\[arm candidate\]' "$T/cpu/$1.kg"
    "$KGATE" check "$T/cpu/$1.kg" -o "$T/cpu/$1.ev" >"$T/cpu/$1.check" 2>&1 ||
        { cat "$T/cpu/$1.check" >&2; die "kgate check of the cpu variant of $1"; }
done
exit 0
