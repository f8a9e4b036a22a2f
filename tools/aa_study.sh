#!/bin/sh
# tools/aa_study.sh: the A/A and power study of kgate's decision, on the
# fake backend's noise models.
#   sh tools/aa_study.sh [N] [MARGIN] [MODEL] [SCENARIO]
#   (defaults: 200 seeds, margin 0%, MODEL=fake, SCENARIO=aa; MODEL,
#   SCENARIO, PROTOCOL and SEED0 may also come from the environment)
# Runs N complete campaigns (seeds SEED0 .. SEED0 + N - 1, SEED0 = 1) of a
# scenario under a noise model, each through the whole tool (worker
# processes, raw CSV, analysis from the evidence folder), and counts the
# candidate's verdicts.
#
# MODEL (the fake keys every arm gets; see docs/aa-study.md for what each
# stands for):
#   fake         fake_noise 1%, arm x process SD fake_noise / 4 (kgate's default)
#   iid          fake_noise 1%, no arm x process effect
#   h200q        quiet 0.5 ms H200 kernel: sample 0.37%, process 0.07%,
#                round 0.075%, 1% outliers of mean +5%
#   h200q_heavy  h200q with process 0.21%, t3 samples, 3% outliers of +30%
#   h200s        5.7 us launch-bound kernel: sample 2.3%, process 0.26%,
#                2% outliers of mean +100%
#   gemm_il      power-capped GEMM: sample 0.8%, process 0.02%, round 0.24%,
#                0.5% outliers of +10%
# SCENARIO (arms listed in this order in the plan):
#   aa       base, cand, ctrl: identical arms
#   offset   base, cand, ctrl: cand 0.055% faster (fake_offset = -0.00055)
#   slot     base, cand, ctrl: every arm 0.3% slower when loaded first in
#            its process (fake_slot = 0.003)
#   twobase  base, base2, cand, ctrl: two equal baselines, identical arms
#   gain     base, cand, ctrl: cand truly 1% faster (fake_ns 990 against
#            1000): the FASTER rate is the power
# PROTOCOL: aa (3 processes per direction, 4 rounds x 5 samples, 1 warmup;
# the default), default (kgate's defaults: the load-order square, 5 x 10, 3 warmup) or p3
# (3, 5 x 10, 3 warmup).
#
# Prints the verdict counts, the false-FASTER rate (the power for gain)
# with its Wilson 95% interval, the false-SLOWER and order-flag rates, and
# the mean of the candidate's estimated reduction.  Under identical arms
# the false-FASTER rate must stay at or below the plan's alpha
# (statistics-anchors.md §3.6: observed FPR <= alpha + 2 sqrt(alpha
# (1 - alpha) / N)).
set -eu
N=${1:-200}
MARGIN=${2:-0%}
MODEL=${3:-${MODEL:-fake}}
SCENARIO=${4:-${SCENARIO:-aa}}
PROTOCOL=${PROTOCOL:-aa}
SEED0=${SEED0:-1}
KGATE=${KGATE:-./bin/kgate}
case $MODEL in
    fake) keys='fake_noise = 0.01' ;;
    iid) keys='fake_noise = 0.01;fake_proc_sd = 0' ;;
    h200q) keys='fake_noise = 0.0037;fake_proc_sd = 0.0007;fake_round_sd = 0.00075;fake_outliers = 0.01;fake_outlier_scale = 0.05' ;;
    h200q_heavy) keys='fake_noise = 0.0037;fake_proc_sd = 0.0021;fake_round_sd = 0.00075;fake_tails = t3;fake_outliers = 0.03;fake_outlier_scale = 0.3' ;;
    h200s) keys='fake_noise = 0.023;fake_proc_sd = 0.0026;fake_outliers = 0.02;fake_outlier_scale = 1' ;;
    gemm_il) keys='fake_noise = 0.008;fake_proc_sd = 0.0002;fake_round_sd = 0.0024;fake_outliers = 0.005;fake_outlier_scale = 0.1' ;;
    *) echo "aa_study.sh: unknown MODEL '$MODEL' (fake, iid, h200q, h200q_heavy, h200s, gemm_il)" >&2; exit 2 ;;
esac
case $PROTOCOL in
    aa) proto='warmup = 1;samples = 5;rounds = 4;processes = 3'; pdesc='3 processes per direction, 4 rounds x 5 samples' ;;
    default) proto='warmup = 3;samples = 10;rounds = 5'; pdesc='the default processes (the load-order square), 5 rounds x 10 samples' ;;
    p3) proto='warmup = 3;samples = 10;rounds = 5;processes = 3'; pdesc='3 processes per direction, 5 rounds x 10 samples' ;;
    *) echo "aa_study.sh: unknown PROTOCOL '$PROTOCOL' (aa, default, p3)" >&2; exit 2 ;;
esac
base2=0; cand_ns=1000; cand_keys=''; all_keys=''; what='false-FASTER rate'
case $SCENARIO in
    aa) ;;
    offset) cand_keys='fake_offset = -0.00055' ;;
    slot) all_keys='fake_slot = 0.003' ;;
    twobase) base2=1 ;;
    gain) cand_ns=990; what='power (FASTER rate)' ;;
    *) echo "aa_study.sh: unknown SCENARIO '$SCENARIO' (aa, offset, slot, twobase, gain)" >&2; exit 2 ;;
esac
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-aa.XXXXXX")
trap 'rm -rf "$T"' EXIT
# simulated campaigns need no device lock shared with other runs
KGATE_LOCK_DIR=${KGATE_LOCK_DIR:-$T/locks}
export KGATE_LOCK_DIR
mkdir -p "$KGATE_LOCK_DIR"
src=$(pwd)/kernels/cpu/rowsum_naive.c
lines() { printf '%s\n' "$1" | tr ';' '\n' | grep -v '^$' || true; }
arm() { # name role fake_ns extra-keys
    printf '[arm %s]\nop = rowsum\nrole = %s\n' "$1" "$2"
    if [ "$2" = control ]; then printf 'of = base\n'; else printf 'source = %s\n' "$src"; fi
    printf 'fake_ns = %s\n' "$3"
    lines "$keys"
    lines "$all_keys"
    lines "$4"
}
faster=0; slower=0; equiv=0; inconcl=0; other=0; invalid=0; orderflag=0; pass=0
: >"$T/reductions"
i=$SEED0
last=$((SEED0 + N - 1))
while [ "$i" -le "$last" ]; do
    {
        printf '[campaign]\nname = aa-%s\nbackend = fake\nquiet = 0\nseed = %s\n' "$i" "$i"
        lines "$proto"
        printf 'alpha = 0.05\nmargin = %s\nequivalence = 1%%\ncontrol_margin = 1%%\n' "$MARGIN"
        printf '[case small]\nop = rowsum\ndtype = f32\nM = 4\nN = 16\n'
        arm base baseline 1000 ''
        [ "$base2" = 1 ] && arm base2 baseline 1000 ''
        arm cand candidate "$cand_ns" "$cand_keys"
        arm ctrl control 1000 ''
        # the gate asks at least what the control supports (control_margin)
        printf '[gate]\nmin_reduction = 1%%\n'
    } >"$T/aa.kg"
    st=0
    "$KGATE" run "$T/aa.kg" -o "$T/ev$i" >/dev/null 2>&1 || st=$?
    [ "$st" -eq 0 ] && pass=$((pass + 1))
    [ "$st" -eq 3 ] && invalid=$((invalid + 1))
    # columns by name: results.csv's order may change
    set -- $(awk -F, 'NR == 1 { for (c = 1; c <= NF; c++) col[$c] = c; next }
        $col["arm"] == "cand" { o = $col["order_sensitive"]; r = $col["reduction"];
            print $col["verdict"], (o == "" ? "-" : o), (r == "" ? "-" : r) }' "$T/ev$i/results.csv" 2>/dev/null)
    v=${1:-none}; o=${2:--}; r=${3:--}
    case "$v" in
        FASTER) faster=$((faster + 1)) ;;
        SLOWER) slower=$((slower + 1)) ;;
        EQUIVALENT) equiv=$((equiv + 1)) ;;
        INCONCLUSIVE) inconcl=$((inconcl + 1)) ;;
        *) other=$((other + 1)) ;;
    esac
    [ "$o" = 1 ] && orderflag=$((orderflag + 1))
    [ "$r" != - ] && echo "$r" >>"$T/reductions"
    rm -rf "$T/ev$i"
    i=$((i + 1))
done
echo "A/A study: $N campaigns (seeds $SEED0-$last), model $MODEL, scenario $SCENARIO, protocol $PROTOCOL ($pdesc), alpha 0.05 one-sided, margin $MARGIN"
echo "FASTER $faster  SLOWER $slower  EQUIVALENT $equiv  INCONCLUSIVE $inconcl  other $other  invalid (control) $invalid  order-flagged $orderflag  gate PASS $pass"
awk -v f="$faster" -v s="$slower" -v o="$orderflag" -v n="$N" -v what="$what" -v gain="$([ "$SCENARIO" = gain ] && echo 1 || echo 0)" '
function wilson(k, n,   p, z, d, c, h) {
    z = 1.959964; p = k / n; d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d; h = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return sprintf("%.3f [%.3f, %.3f] (%d/%d)", p, (c - h < 0 ? 0 : c - h), (c + h > 1 ? 1 : c + h), k, n)
}
BEGIN {
    a = 0.05; lim = a + 2 * sqrt(a * (1 - a) / n)
    if (gain) printf "%s %s\n", what, wilson(f, n)
    else printf "%s %s (bound alpha + 2 SE = %.3f): %s\n", what, wilson(f, n), lim, (f / n <= lim) ? "within" : "EXCEEDED"
    printf "false-SLOWER rate %s\n", wilson(s, n)
    printf "order-flag rate %s\n", wilson(o, n)
}'
awk '{ s += $1; q += $1 * $1; n++ } END {
    if (n > 1) printf "candidate reduction: mean %+.3f%%, SD %.3f%% over %d campaigns\n", 100 * s / n, 100 * sqrt((q - s * s / n) / (n - 1)), n
}' "$T/reductions"
