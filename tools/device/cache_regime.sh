#!/bin/sh
# tools/device/cache_regime.sh OUT: the cache regime on a GPU (docs/cuda-backend.md, "The cache
# regime"): the best mma arm of examples/replication/splitk_bf16.kg (mma_pipe, PITCH=36 PIPE=1,
# in its cuda arm host) and cuBLAS (in the worker) at both of its shapes, pack PACK (3), under the four
# pairs of l2 (warm, cold) and inputs (fresh, resident), one campaign each, run in the order
# warm-fresh, warm-resident, cold-fresh, cold-resident.  Target: fresh within +-3% of resident
# under each l2, for both arms and both shapes (before kgate read the inputs into the L2 in the
# timing process, warm-fresh was +46% / +56% for the mma arm and +6% / +8% for cuBLAS).
# With bin/kgate-base-portable beside it (a binary of the tree before this change, staged by
# tools/device/stage.sh), the warm pairs run with it too (basewarm-fresh, basewarm-resident: the
# gap as the issue measured it, on the same plan), after the four.
# Writes into OUT:
#   env.txt              the device, the driver, kgate's version
#   PAIR.md, PAIR/       each campaign's report and evidence folder (PAIR = l2-inputs)
#   PAIR.log             its stderr, with the wall time
#   cache-rows.txt       the cache:l2 and inputs:fresh rows of process 0 of each campaign
#   table.md             the median ns per operation of every arm, case and pair, and
#                        fresh against resident under each l2 (pass: within +-3%)
# Usage, from the repository root on the device (the binary as bin/kgate-portable, from
# .carry/bins.tgz where there is one, else $KGATE, else bin/kgate):
#   here:   make portable && strip bin/kgate-portable
#           (optional: bin/kgate-base-portable, `make portable` of the tree before, stripped)
#           mkdir -p .carry && tar czf .carry/bins.tgz bin/kgate-portable [bin/kgate-base-portable]
#   device: sh tools/device/cache_regime.sh $OUT          (carry: .carry)
# PACK=N (default 2, the largest whose fresh sets fit a sixth of an H100's L2 at M = 256: kgate
# refuses a larger one under l2 = warm) times N operations per sample; PAIRS= names the pairs to run
# (default all four).  With KGATE= a binary from before the refusal, larger packs run too: how the
# gap grows with the sets' footprint.
# Each campaign runs under `timeout` (at most 100 s, and within 230 s for all of them together,
# CACHE_REGIME_BUDGET; a campaign that would start later is skipped and named in skipped.txt):
# about 2-3 minutes of device time in all (4 campaigns; 6 with the base binary).
set -u
OUT=${1:?usage: cache_regime.sh OUT}
mkdir -p "$OUT"
ROOT=$(pwd)
[ -f .carry/bins.tgz ] && [ ! -x bin/kgate-portable ] && tar xzf .carry/bins.tgz
K=${KGATE:-$ROOT/bin/kgate-portable}
[ -x "$K" ] || K=$ROOT/bin/kgate
export KGATE_LOCK_DIR="$(mktemp -d)"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  "$K" --version; date -u; } >"$OUT/env.txt" 2>&1

plan() { # l2 inputs
    cat <<EOF
[campaign]
name = cache_$1_$2
backend = cuda
quiet = 0
warm = 3
warmup = 3
samples = 10
rounds = 3
processes = 2
pack = ${PACK:-2}
seed = 20261205
l2 = $1
inputs = $2
timeout = 90

[case bf16_96x512x2048_s4]
op = gemm_splitk
dtype = bf16
M = 96
N = 512
K = 2048
splits = 4

[case bf16_256x512x2048_s2]
op = gemm_splitk
dtype = bf16
M = 256
N = 512
K = 2048
splits = 2

[arm mma_pipe36]
op = gemm_splitk
role = baseline
source = $ROOT/kernels/cuda/splitk_mma.cu
defines = PITCH=36 PIPE=1

[arm cublas]
op = gemm_splitk
role = candidate
builtin = cublas
EOF
}

START=$(date +%s)
BUDGET=${CACHE_REGIME_BUDGET:-230}   # seconds for all the campaigns together
PAIRS=${PAIRS:-warm-fresh warm-resident cold-fresh cold-resident}
BASE=${CACHE_BASE-$ROOT/bin/kgate-base-portable}   # CACHE_BASE= (empty): no base pairs
[ -x "$BASE" ] && PAIRS="$PAIRS basewarm-fresh basewarm-resident"
for pair in $PAIRS; do
    l2=${pair%-*}
    inputs=${pair#*-}
    bin=$K
    case $l2 in base*) l2=${l2#base}; bin=$BASE ;; esac
    plan "$l2" "$inputs" >"$OUT/$pair.kg"
    t0=$(date +%s)
    left=$(( BUDGET - (t0 - START) ))
    [ "$left" -ge 30 ] || { echo "$pair: skipped, the budget of $BUDGET s is spent" >>"$OUT/skipped.txt"; continue; }
    [ "$left" -le 100 ] || left=100
    timeout "$left" "$bin" run "$OUT/$pair.kg" -o "$OUT/$pair" --no-progress >"$OUT/$pair.md" 2>"$OUT/$pair.log"
    echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$OUT/$pair.log"
    echo "== $pair" >>"$OUT/cache-rows.txt"
    grep -h ",cache:l2,\|,inputs:fresh," "$OUT/$pair"/checks/proc-000.csv >>"$OUT/cache-rows.txt" 2>/dev/null
    # every timed sample's ns per operation: case, arm, ns
    for f in "$OUT/$pair"/raw/proc-*.csv.gz; do
        [ -f "$f" ] && gzip -dc "$f"
    done | awk -F, -v p="$pair" 'NR > 0 && $1 != "process" { print p, $5, $4, $7 }' >>"$OUT/samples.txt"
done

# medians per pair, case and arm; then fresh against resident under each l2
sort -k1,1 -k2,2 -k3,3 -k4,4g "$OUT/samples.txt" 2>/dev/null | awk '
    { k = $1 " " $2 " " $3; v[k, ++n[k]] = $4 }
    END { for (k in n) { m = n[k]; med = m % 2 ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
                         printf "%s %.1f %d\n", k, med, m } }' | sort >"$OUT/medians.txt"
awk '
    { split($1, pr, "-"); key = pr[1] " " $2 " " $3; med[pr[2], key] = $4; cnt[pr[2], key] = $5; keys[key] = 1 }
    END {
        print "| l2 | case | arm | fresh ns/op (samples) | resident ns/op (samples) | fresh vs resident | within +-3% |"
        print "|---|---|---|---|---|---|---|"
        for (k in keys) {
            split(k, f, " ")
            fr = med["fresh", k]; re = med["resident", k]
            d = (fr > 0 && re > 0) ? sprintf("%+.2f%%", 100 * (fr / re - 1)) : "n/a"
            ok = (fr > 0 && re > 0) ? ((fr / re - 1 <= 0.03 && fr / re - 1 >= -0.03) ? "yes" : "NO") : "n/a"
            printf "| %s | %s | %s | %.1f (%d) | %.1f (%d) | %s | %s |\n", f[1], f[2], f[3], fr, cnt["fresh", k],
                   re, cnt["resident", k], d, ok
        }
    }' "$OUT/medians.txt" | { read -r h1; read -r h2; echo "$h1"; echo "$h2"; sort; } >"$OUT/table.md"
cat "$OUT/table.md"
tail -n 1 "$OUT"/*.log
