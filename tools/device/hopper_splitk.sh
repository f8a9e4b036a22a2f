#!/bin/sh
# tools/device/hopper_splitk.sh OUTDIR [ncu [ARM]]: the Hopper split-K arms
# (kernels/cuda/splitk_wgmma.cu, examples/replication/splitk_hopper.kg, or with
# PLAN=examples/replication/splitk_hopper_tma.kg the TMA-fed forms, with
# PLAN=examples/replication/splitk_hopper_f32.kg the f32 form as TF32) on the H200, in one
# device call of at most 8 minutes (every step under timeout, bounded by what is left of
# LIMIT = 450 s), with bin/kgate-portable from .carry/bins.tgz (else build/kgate) and PyTorch
# for the torch arm.  Writes OUTDIR/hopper_splitk.tgz, 8 files at most:
#   env.txt     device, driver, kgate and torch versions; each step's exit code and time
#   check.md    (a) kgate check of the whole plan (every variant on both cases)
#   summary.txt the failed / INADMISSIBLE rows of (a) with their reasons; (b)'s medians:
#               per case each arm's µs (mean of the two directions' medians) and its ratio
#               to cublas, torch and the baseline, the best wgmma arm per case first;
#               (a')'s count
#   run.md      (b) a short campaign: 1 process per direction, 2 rounds of 5 samples,
#               --quiet-window 0, in two halves (the cluster forms wg_clu*, then wg_part*, wg_k* and
#               wg_atom*), each with the baseline, its control, cublas and torch: both
#               reports.  It decides nothing (no interval: the gate fails by design); it
#               ranks the variants for kgate screen and the frozen confirmation
#   results.csv (b)'s results.csv, both halves
#   neg.txt     (a') the numerical negative (KGATE_NEGATIVE=1), one STAGES variant per
#               section: output checks failed per source arm (all of them must fail)
#   screen.kg   the plan for kgate screen: the 6 best variants of (b) by their worse ratio
#               to cublas, the baseline, its control, cublas and torch (10 arms)
#   ncu.txt     (c) with "ncu": ncu (--clock-control none) on the best wgmma arm of the
#               96-row case in (b), or on ARM (e.g. 'wg_clu_n32[STAGES=4]': then (a), (b)
#               and (a') are skipped), and cuBLAS, both cases; the arm runs trusted (in the
#               worker), since an arm host's environment is kgate's own and no profiler
#               reaches it
set -u
OUT=${1:?usage: hopper_splitk.sh OUTDIR [ncu [ARM]]}
NCU=${2:-}
ARM=${3:-}
ROOT=$(pwd)
R=$OUT/hs
mkdir -p "$R"
T0=$(date +%s)
[ -f .carry/bins.tgz ] && tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
[ -x "$K" ] || K=$ROOT/build/kgate
# HS_KGATE: another kgate command (a dry run on the CPU: a wrapper that adds --backend fake)
K=${HS_KGATE:-$K}
export KGATE_LOCK_DIR=$(mktemp -d)
export KGATE_PYTHON=$(command -v python3)
W=$(mktemp -d)
P=$W/plan.kg
# PLAN: the plan of the arms (default examples/replication/splitk_hopper.kg, the cp.async
# ring; examples/replication/splitk_hopper_tma.kg: the same forms fed by the TMA)
PLAN=${PLAN:-examples/replication/splitk_hopper.kg}
sed -e "s#\.\./\.\./kernels#$ROOT/kernels#" "$PLAN" >"$P"
{ ldd "$K" | head -5; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv; date -u; "$K" --version;
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'; } >"$R/env.txt" 2>&1
step() { echo "$1: exit $2, $(( $(date +%s) - T0 )) s since start" >>"$R/env.txt"; }
LIMIT=${LIMIT:-450}
# tl S: S seconds, or what is left of LIMIT less 20 s for the archive, whichever is smaller
tl() { l=$(( LIMIT - 20 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"; }
: >"$R/summary.txt"

if [ -z "$ARM" ]; then
    # (a) admission of every arm and variant on both cases; kgate's own worker limit (the
    # plan's timeout) below the step's, so that a hang is reported by kgate, not cut
    sed -e 's/^timeout = 300/timeout = 120/' "$P" >"$W/check.kg"
    timeout $(tl 135) "$K" check "$W/check.kg" -o "$W/check" >"$R/check.md" 2>"$W/check.err"; st=$?
    cat "$W/check.err" >>"$R/check.md"; step check $st
    { echo "== (a) kgate check: exit $st"; grep -E '^[0-9]+ checks' "$R/check.md"
      echo "failed or inadmissible rows (case | arm | phase | check | result | ... | detail):"
      grep -E '^\| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| (FAIL|INADMISSIBLE|INCORRECT)' "$R/check.md" | head -60
      grep -iE 'INCORRECT|INADMISSIBLE|error|trap|fault|timed out|killed' "$W/check.err" | head -20; } >>"$R/summary.txt"

    # (b) a short campaign: ranks, decides nothing.  In two halves, each with the baseline,
    # its control, cublas and torch: the one-launch cluster forms (wg_clu*), then the
    # two-launch forms (wg_part*, wg_atom*), so that a half cut by the time limit leaves the
    # other's results
    sed -e 's/^rounds = 5/rounds = 2\nprocesses = 1/' -e 's/^samples = 10/samples = 5/' -e 's/^quiet = 2/quiet = 0/' \
        -e 's/^timeout = 300/timeout = 100/' "$P" >"$W/short.kg"
    # half PATTERN OUT: the short plan without the wgmma sections whose name does not match PATTERN
    half() { awk -v pat="$1" '/^\[arm wg_/ { skip = ($0 !~ pat) } /^\[arm / && !/^\[arm wg_/ { skip = 0 } /^\[gate\]/ { skip = 0 }
                               !skip' "$W/short.kg" >"$2"; }
    half '^\[arm wg_clu' "$W/short1.kg"
    half '^\[arm wg_(part|atom|k[0-9])' "$W/short2.kg"
    : >"$R/run.md"; : >"$W/ratios.csv"; : >"$R/results.csv"
    for h in 1 2; do
        timeout $(tl 150) "$K" run "$W/short$h.kg" --quiet-window 0 -o "$W/run$h" -q >/dev/null 2>"$W/run$h.err"; st=$?; step "run half $h" $st
        { echo "# half $h (exit $st)"; cat "$W/run$h/report.md" "$W/run$h.err"; } >>"$R/run.md" 2>/dev/null
        echo "== (b) short campaign, half $h: exit $st (1 process per direction: no interval, the gate fails by design)" >>"$R/summary.txt"
        [ -f "$W/run$h/results.csv" ] || continue
        { [ -s "$R/results.csv" ] && tail -n +2 "$W/run$h/results.csv" || cat "$W/run$h/results.csv"; } >>"$R/results.csv"
        # each arm's µs (mean of the two directions' medians) and its ratios to the same half's
        # cublas, torch and baseline
        awk -F, -v h=$h 'NR > 1 && $7 != "" { t = ($7 + ($8 != "" ? $8 : $7)) / 2 / 1000; us[$1 "," $2] = t; arms[++n] = $1 "," $2
                   if ($2 == "cublas") cb[$1] = t; if ($2 == "torch") th[$1] = t; if ($3 == "baseline") bl[$1] = t }
                 END { for (i = 1; i <= n; i++) { split(arms[i], k, ","); t = us[arms[i]]
                         printf "%s,%s,%s,%.3f,%.3f,%.3f,%.3f\n", h, k[1], k[2], t, (cb[k[1]] > 0 ? t / cb[k[1]] : 0), (th[k[1]] > 0 ? t / th[k[1]] : 0), (bl[k[1]] > 0 ? t / bl[k[1]] : 0) } }' \
            "$W/run$h/results.csv" >>"$W/ratios.csv"
        grep -E 'INCORRECT|INADMISSIBLE' "$W/run$h/results.csv" | cut -d, -f1-5 >>"$R/summary.txt"
    done
    # the best wgmma arm per case by its ratio to cublas, then every row
    awk -F, '$3 ~ /^wg_/ && $5 > 0 && (!($2 in b) || $5 < r[$2]) { b[$2] = $3; r[$2] = $5; u[$2] = $4 }
             END { for (c in b) printf "best wgmma arm %s: %s %.3f us = %.2fx cublas (same half)\n", c, b[c], u[c], r[c] }' "$W/ratios.csv" >>"$R/summary.txt"
    { echo "half,case,arm,us,x_cublas,x_torch,x_baseline"; cat "$W/ratios.csv"; } >>"$R/summary.txt"

    # screen.kg: the plan for kgate screen, from this ranking: the 6 wgmma variants whose worse
    # ratio to cublas over the two cases is lowest, as sections of their own (STAGES fixed),
    # with the baseline, its control, cublas and torch: 10 arms, so processes = 10 per
    # direction completes the load-order square (the whole plan's 37 arms would need 37)
    sel=$(awk -F, '$3 ~ /^wg_/ && $5 > 0 { if (!($3 in w) || $5 > w[$3]) w[$3] = $5 }
                   END { for (a in w) print w[a], a }' "$W/ratios.csv" | sort -n | head -6 | cut -d' ' -f2)
    if [ -n "$sel" ]; then
        awk -v sel="$sel" '
            BEGIN { n = split(sel, v, "\n"); for (i = 1; i <= n; i++) { b = v[i]; sub(/\[.*/, "", b); st = v[i]; gsub(/.*STAGES=|\]/, "", st); want[b] = want[b] " " st } }
            function flush() { if (cur != "" && (cur in want)) { m = split(want[cur], ss, " "); for (j = 1; j <= m; j++) { t = body; sub(/STAGES=\{[^}]*\}/, "STAGES=" ss[j], t); printf "[arm %s[STAGES=%s]]\n%s\n", cur, ss[j], t } } cur = ""; body = "" }
            /^\[arm wg_/ { flush(); cur = $2; sub(/\]$/, "", cur); next }
            /^\[/ { flush(); printf "%s", pend; pend = ""; print; keep = 1; next }
            cur != "" { body = body $0 "\n"; next }
            /^$/ { pend = pend "\n"; next }
            { printf "%s", pend; pend = ""; print }
            END { flush() }' "$PLAN" |
            sed -e 's/^name = \(splitk_hopper[a-z0-9_]*\)$/name = \1_screen\nselected_from = tools\/device\/hopper_splitk.sh short campaign/' >"$R/screen.kg"
        sed "s#\.\./\.\./kernels#$ROOT/kernels#" "$R/screen.kg" >"$W/screen-abs.kg"
        "$K" check "$W/screen-abs.kg" --backend fake -o "$W/screen-check" >/dev/null 2>"$W/screen.err" &&
            echo "== screen.kg: 6 variants selected ($(echo $sel)); parses (kgate check --backend fake)" >>"$R/summary.txt" ||
            { echo "== screen.kg: does not parse:"; head -3 "$W/screen.err"; } >>"$R/summary.txt"
    fi

    # (a') the numerical negative, source arms only (cublas and torch cannot be negated);
    # STAGES does not change the stores: one variant per section
    sed -e '/^\[arm cublas[a-z0-9_]*\]/,/^$/d' -e '/^\[arm torch\]/,/^$/d' -e 's/STAGES={2, 4, 8}/STAGES=2/g' \
        -e 's/^timeout = 300/timeout = 60/' "$P" >"$W/neg.kg"
    KGATE_NEGATIVE=1 timeout $(tl 70) "$K" check "$W/neg.kg" -o "$W/neg" >/dev/null 2>&1; step negative $?
    awk -F, 'NR > 1 && $6 ~ /^(poison0|poison1):[A-Za-z]+$/ { n[$4]++; if ($7 == "pass") p[$4]++ }
             END { for (a in n) printf "%s: %d of %d output checks failed%s\n", a, n[a] - p[a], n[a],
                   (p[a] > 0 ? "  <-- passes the negative" : "") }' "$W/neg/checks/proc-000.csv" 2>/dev/null | sort >"$R/neg.txt"
    echo "== (a') negative: $(grep -c 'passes the negative' "$R/neg.txt") of $(wc -l <"$R/neg.txt") arms pass it (expected 0)" >>"$R/summary.txt"
    ARM=$(awk -F, '$3 ~ /^wg_/ && $5 > 0 && $2 ~ /96x/ && (b == "" || $5 < r) { b = $3; r = $5 } END { print b }' "$W/ratios.csv")
fi

# (c) ncu on ARM and cuBLAS
NCUBIN=$(command -v ncu 2>/dev/null || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ "$NCU" = ncu ] && [ -n "$ARM" ] && [ -n "$NCUBIN" ]; then
    # ARM as the trusted baseline of a plan with cublas: its section, its STAGES fixed
    base=${ARM%%\[*}; st=$(echo "$ARM" | sed -n 's/.*STAGES=\([0-9]*\).*/\1/p')
    # (a plan of expanded variants, as screen.kg, names the section ARM itself)
    awk -v base="$base" -v arm="$ARM" -v st="$st" '
        /^\[arm / { me = ($0 == "[arm " base "]" || $0 == "[arm " arm "]")
                    keep = (me || $0 == "[arm cublas]"); if (me) { print; print "trusted = yes"; next } }
        /^\[gate\]/ { keep = 0 }
        /^\[campaign\]/ || /^\[case / { keep = 1 }
        keep { if ($1 == "role" && $3 == "candidate") $0 = "role = baseline"
               if ($1 == "defines" && st != "") sub(/STAGES=\{[^}]*\}/, "STAGES=" st); print }' "$P" >"$W/ncu.kg"
    # the sections, the DRAM and L2 bytes issue 34's table asks for, and the sections' bodies (the
    # warp stall reasons); where this ncu refuses the extra flags, once more without them
    ncu_run() {
        rm -rf "$W/ncu"
        timeout $(tl 150) "$NCUBIN" --clock-control none --target-processes all \
            -k 'regex:splitk_wg|splitk_accum|gemm|nvjet|sm90|cutlass|xmma' -c 40 \
            --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
            --section MemoryWorkloadAnalysis --section SchedulerStats "$@" \
            "$K" check "$W/ncu.kg" -o "$W/ncu" >"$R/ncu.txt" 2>&1
    }
    ncu_run --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum --print-details all
    nst=$?
    if [ $nst != 0 ] && grep -qE '^==ERROR==.*([Uu]nrecogni[sz]ed|[Ii]nvalid|[Mm]etric|[Oo]ption)' "$R/ncu.txt"; then
        mv "$R/ncu.txt" "$W/ncu-refused.txt"
        ncu_run; nst=$?
        { echo "== the first try (with --metrics and --print-details) was refused:"; grep '^==ERROR==' "$W/ncu-refused.txt" | head -3; } >>"$R/ncu.txt"
    fi
    step "ncu ($ARM)" $nst
    { echo "== the plan profiled"; cat "$W/ncu.kg"; } >>"$R/ncu.txt"
elif [ "$NCU" = ncu ]; then
    echo "ncu: not run (no arm ranked, or no ncu on PATH)" >>"$R/env.txt"
fi
echo "total $(( $(date +%s) - T0 )) s" >>"$R/env.txt"
tar czf "$OUT/hopper_splitk.tgz" -C "$OUT" hs
rm -rf "$R" "$W"
