#!/bin/sh
# tools/device/cudahost_run.sh OUT: the H200 checks of cuda arm hosts in one device call.
# Needs .carry/bins.tgz with bin/kgate-portable (this tree) and bin/kgate-base-portable (the tree
# before cuda arm hosts, where untrusted arms ran in the worker's context), both built and
# stripped here.  Runs, writing OUT/cudahost.tgz:
#   steal-{base,host}.*   tests/gpu/attack_steal.kg with each binary: the attack must work in a
#                         shared address space (base) and be INCORRECT, never FASTER, with hosts
#   test-gpu.txt          tests/gpu/run.sh (make test-gpu's script) with this tree's binary
#   floor-{hosted,trusted}-N.md  examples/cuda-floor.kg (quiet 1 s) with the arms in arm hosts, and
#                         the same plan with the baseline trusted = yes (in the worker), alternated
#   aa-{hosted,mixed}.md  examples/cuda-aa.kg (quiet 1 s) with every arm hosted, and with the
#                         baseline trusted (in the worker) against the same kernel hosted
#   gemm-*                examples/cuda-gemm.kg end to end, then kgate verify
set -u
OUT=${1:?usage: cudahost_run.sh OUT}
ROOT=$(pwd)
R=$OUT/r
mkdir -p "$R"
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
B=$ROOT/bin/kgate-base-portable
{ ldd "$K"; nvidia-smi; date -u; } >"$R/env.txt" 2>&1
"$K" --version >"$R/version.txt" 2>&1
"$B" --version >>"$R/version.txt" 2>&1

# the stealing candidate, with each binary
S=/tmp/ks
mkdir -p "$S"
cp kernels/cuda/*.cu tests/gpu/attack_steal.cu tests/gpu/attack_steal.kg "$S/"
sed -i 's#\.\./\.\./kernels/cuda/##' "$S/attack_steal.kg"
# STEAL_BASE=0 skips the base binary (its result is already recorded)
for v in base host; do
    [ $v = base ] && [ "${STEAL_BASE:-1}" = 0 ] && continue
    bin=$K; [ $v = base ] && bin=$B
    (cd "$S" && timeout 200 "$bin" run attack_steal.kg -o "/tmp/steal-$v" --no-progress >"$R/steal-$v.txt" 2>&1
     echo "exit $?" >>"$R/steal-$v.txt")
    cp "/tmp/steal-$v/report.md" "$R/steal-$v.md" 2>/dev/null
    cp "/tmp/steal-$v/results.csv" "$R/steal-$v.results.csv" 2>/dev/null
    grep -rh "faulted\|INCORRECT\|host" "/tmp/steal-$v/logs" 2>/dev/null | head -20 >"$R/steal-$v.log-excerpt.txt"
done

# make test-gpu's script
KGATE=$K timeout 330 sh tests/gpu/run.sh >"$R/test-gpu.txt" 2>&1
echo "exit $?" >>"$R/test-gpu.txt"

# the cost of a process per arm: the floor and an A/A pair, hosted and in the worker
P=/tmp/kp
mkdir -p "$P"
sed 's/^quiet = 5 .*/quiet = 1/' examples/cuda-floor.kg >"$P/floor-hosted.kg"
sed 's/^role = baseline$/role = baseline\ntrusted = yes/' "$P/floor-hosted.kg" >"$P/floor-trusted.kg"
sed 's/^quiet = 5 .*/quiet = 1/' examples/cuda-aa.kg >"$P/aa-hosted.kg"
sed 's/^role = baseline$/role = baseline\ntrusted = yes/' "$P/aa-hosted.kg" >"$P/aa-mixed.kg"
cp kernels/cuda/*.cu "$P/" 2>/dev/null
sed -i 's#\.\./kernels/cuda/##' "$P"/*.kg
# FLOOR_BASE=1 adds the base binary's floor (every arm in the worker, before arm hosts)
for i in 1 2 3; do
    for v in hosted trusted base; do
        bin=$K; plan=floor-$v.kg
        if [ $v = base ]; then
            [ "${FLOOR_BASE:-0}" = 1 ] || continue
            bin=$B; plan=floor-hosted.kg
        fi
        (cd "$P" && timeout 120 "$bin" run "$plan" -o "/tmp/floor-$v-$i" --no-progress >"$R/floor-$v-$i.md" 2>"$R/floor-$v-$i.err")
    done
done
for v in hosted mixed; do
    (cd "$P" && timeout 150 "$K" run "aa-$v.kg" -o "/tmp/aa-$v" --no-progress >"$R/aa-$v.md" 2>"$R/aa-$v.err")
done

# end to end, with verify
timeout 150 "$K" run examples/cuda-gemm.kg -o /tmp/evg --no-progress >"$R/gemm-report.md" 2>"$R/gemm.err"
echo "exit $?" >>"$R/gemm.err"
timeout 60 "$K" verify /tmp/evg >"$R/gemm-verify.txt" 2>&1
echo "exit $?" >>"$R/gemm-verify.txt"
cp /tmp/evg/telemetry/resources-000.csv "$R/gemm-resources-000.csv" 2>/dev/null
tar -C "$OUT" -czf "$OUT/cudahost.tgz" r && rm -rf "$R"
