#!/bin/sh
# stats_contamination_fake.sh: the contamination study's end-to-end check
# through `kgate run` on the fake backend.  With samples = 1 a round's
# median is its one sample, so the fake backend's per-sample outliers
# (fake_outliers: probability per sample, fake_outlier_scale: the mean of
# the exponential log factor) are round-level contamination of either arm,
# scripted deterministically from the seed.  Two arms, 6 processes per
# direction, 30 rounds (docs/python.md's example as observed), the loaded
# CPU noise of tools/bench/stats_contamination.c's `obs` design.
#
#   tools/bench/stats_contamination_fake.sh KGATE OUTDIR SEEDS TRUTH_NS OUTLIERS SCALE
# e.g. tools/bench/stats_contamination_fake.sh build/kgate /tmp/o 200 1000 0.02 2
# (TRUTH_NS: the candidate's fake_ns against the baseline's 1000: 900 is a
# true 10% reduction).  Prints one line per seed: seed, verdict, reduction,
# lower, upper (results.csv's), then the counts; keeps each campaign's
# samples table (kgate report --samples) as OUTDIR/samples-SEED.csv for
# tools/bench/stats_contamination_rows.py.
set -eu
KGATE=$1 OUT=$2 SEEDS=$3 CNS=$4 OUTL=$5 SCALE=$6
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export KGATE_LOCK_DIR="${KGATE_LOCK_DIR:-$(mktemp -d)}"
mkdir -p "$OUT"
i=1
while [ "$i" -le "$SEEDS" ]; do
    P="$OUT/plan-$i.kg"
    cat > "$P" <<PLAN
[campaign]
quiet = 0
name = contam
backend = fake
warmup = 1
samples = 1
rounds = 30
processes = 6
seed = $i
margin = 0.5%
equivalence = 1%
timeout = 30

[case small]
op = rowsum
dtype = f32
M = 4
N = 16

[arm base]
op = rowsum
role = baseline
source = $ROOT/kernels/cpu/rowsum_naive.c
fake_ns = 1000
fake_noise = 0.05
fake_round_sd = 0.02
fake_proc_sd = 0.01
fake_outliers = $OUTL
fake_outlier_scale = $SCALE

[arm cand]
op = rowsum
role = candidate
source = $ROOT/kernels/cpu/rowsum_unrolled.c
fake_ns = $CNS
fake_noise = 0.05
fake_round_sd = 0.02
fake_proc_sd = 0.01
fake_outliers = $OUTL
fake_outlier_scale = $SCALE

[gate]
require_control = no
PLAN
    "$KGATE" run "$P" -o "$OUT/ev-$i" >"$OUT/log-$i" 2>&1 || true
    awk -F, -v s="$i" 'NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k; next }
        $c["arm"] == "cand" { print s, $c["verdict"], $c["reduction"], $c["reduction_lower"], $c["reduction_upper"] }' \
        "$OUT/ev-$i/results.csv"
    "$KGATE" report "$OUT/ev-$i" --samples "$OUT/samples-$i.csv" >/dev/null 2>&1 || true
    rm -rf "$OUT/ev-$i/raw"
    i=$((i + 1))
done | tee "$OUT/verdicts.txt"
awk '{ n[$2]++ } END { for (v in n) printf "%s %d\n", v, n[v] }' "$OUT/verdicts.txt" | sort
