#!/bin/sh
# tools/device/checks_run.sh OUT [PART]: the H200 checks of the admission checks (fresh inputs,
# structured rows, held-out shapes, precision contracts, physics limits) in one device call.
# Needs .carry/bins.tgz with bin/kgate-portable of this tree, built and stripped here.
# PART (default "all") picks what runs:
#   test      tests/gpu/run.sh (make test-gpu's script) -> test-gpu.txt
#   contracts tests/gpu/contracts.sh alone, with run.sh's helpers -> contracts.txt
#   cublas    tests/gpu/peaks_cublas.kg (cuBLAS bf16 and f32 at 2048^3 next to kgate's kernels):
#             cuBLAS must stay under the physics limit (3x the measured mma.sync rate)
#   inputs    examples/cuda-gemm.kg as shipped, inputs = fresh and inputs = resident alternated
#             (F R F R); wall time of each campaign, its report and its inputs:fresh cost rows
#   packbase  tests/gpu/pack_cache.kg with bin/kgate-base-portable (a tree whose pack's operations
#             shared their inputs under inputs = fresh) and with this tree's binary
#   several parts: joined with '+', e.g. inputs+cublas+packbase
# Writes OUT/checks.tgz.
set -u
OUT=${1:?usage: checks_run.sh OUT [test|cublas|inputs|all]}
PART=${2:-all}
ROOT=$(pwd)
R=$OUT/r
mkdir -p "$R"
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
{ ldd "$K"; nvidia-smi; date -u; } >"$R/env.txt" 2>&1
"$K" --version >"$R/version.txt" 2>&1
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
has() { [ "$PART" = all ] || case "+$PART+" in *"+$1+"*) true ;; *) false ;; esac; }

if has test; then
    t0=$(now)
    KGATE=$K timeout 420 sh tests/gpu/run.sh >"$R/test-gpu.txt" 2>&1
    echo "exit $? wall $(since "$t0") s" >>"$R/test-gpu.txt"
fi

if has contracts; then
    T=$(mktemp -d /tmp/kgate-gpu.XXXXXX)
    mkdir -p "$T/kernels"
    cp kernels/cuda/*.cu tests/gpu/*.cu "$T/kernels/"
    (passed=0 failed=0
     ok() { passed=$((passed + 1)); echo "ok   $1"; }
     bad() { failed=$((failed + 1)); echo "FAIL $1"; sed -n '1,40p' "$T/out" | sed 's/^/     | /'; }
     KGATE=$K
     cd "$T" && . "$ROOT/tests/gpu/contracts.sh"
     echo "$passed passed, $failed failed") >"$R/contracts.txt" 2>&1
    cp "$T/contracts/report.md" "$R/contracts-report.md" 2>/dev/null
    cp "$T/contracts/results.csv" "$R/contracts-results.csv" 2>/dev/null
    cp "$T/contracts/peaks.json" "$R/contracts-peaks.json" 2>/dev/null
fi

if has cublas; then
    P=/tmp/kc
    mkdir -p "$P"
    cp kernels/cuda/*.cu "$P/"
    sed 's#\.\./\.\./kernels/cuda/##' tests/gpu/peaks_cublas.kg >"$P/peaks_cublas.kg"
    (cd "$P" && timeout 200 "$K" run peaks_cublas.kg -o /tmp/pc --no-progress >"$R/cublas-report.md" 2>"$R/cublas.err"
     echo "exit $?" >>"$R/cublas.err")
    cp /tmp/pc/results.csv "$R/cublas-results.csv" 2>/dev/null
    cp /tmp/pc/peaks.json "$R/cublas-peaks.json" 2>/dev/null
fi

if has inputs; then
    P=/tmp/ki
    mkdir -p "$P"
    cp kernels/cuda/*.cu "$P/"
    sed 's#\.\./kernels/cuda/##' examples/cuda-gemm.kg >"$P/fresh.kg"
    sed 's/^pack = 1$/pack = 1\ninputs = resident/' "$P/fresh.kg" >"$P/resident.kg"
    for i in 1 2; do
        for v in fresh resident; do
            t0=$(now)
            (cd "$P" && timeout 150 "$K" run "$v.kg" -o "/tmp/in-$v-$i" --no-progress >"$R/gemm-$v-$i.md" 2>"$R/gemm-$v-$i.err")
            echo "exit $? wall $(since "$t0") s" >>"$R/gemm-$v-$i.err"
            grep -h "inputs:fresh" /tmp/in-$v-$i/checks/*.csv 2>/dev/null >"$R/gemm-$v-$i.fresh-cost.csv"
        done
    done
    timeout 60 "$K" verify /tmp/in-fresh-1 >"$R/gemm-verify.txt" 2>&1
    echo "exit $?" >>"$R/gemm-verify.txt"
fi
if has packbase; then
    P=/tmp/kb
    mkdir -p "$P"
    cp kernels/cuda/*.cu tests/gpu/physics_cached.cu "$P/"
    sed 's#\.\./\.\./kernels/cuda/##' tests/gpu/pack_cache.kg >"$P/pack_cache.kg"
    for v in base this; do
        bin=$K; [ $v = base ] && bin=$ROOT/bin/kgate-base-portable
        (cd "$P" && timeout 150 "$bin" run pack_cache.kg -o "/tmp/pc-$v" --no-progress >"$R/pack-$v-report.md" 2>"$R/pack-$v.err"
         echo "exit $?" >>"$R/pack-$v.err")
        cp "/tmp/pc-$v/results.csv" "$R/pack-$v-results.csv" 2>/dev/null
        grep -h "inputs:fresh" /tmp/pc-$v/checks/*.csv >"$R/pack-$v.fresh-cost.csv" 2>/dev/null
    done
fi
tar -C "$OUT" -czf "$OUT/checks.tgz" r && rm -rf "$R"
