#!/bin/sh
# tools/device/hopper_splitk.sh OUTDIR [ncu]: the Hopper split-K arms
# (kernels/cuda/splitk_wgmma.cu, examples/replication/splitk_hopper.kg) on the
# H200, in one device call of at most 8 minutes (every step under timeout), with
# bin/kgate-portable from .carry/bins.tgz (else build/kgate) and PyTorch for the
# torch arm.  Writes OUTDIR/hopper_splitk.tgz holding at most 8 files:
#   env.txt     device, driver, kgate and torch versions, the steps' exit codes and walls
#   check.md    (a) kgate check of the whole plan; every failed or inadmissible row
#               is copied into summary.txt with its reason
#   neg.txt     (a') the numerical negative (KGATE_NEGATIVE=1): output checks failed per arm
#               (every source arm must fail all of its output checks)
#   run.md      (b) a short campaign (1 process per direction, 2 rounds of 5 samples,
#               --quiet-window 0): its report.md; this decides nothing (no interval),
#               it ranks the variants for kgate screen / the frozen confirmation
#   summary.txt each arm's median µs per case (mean of the two directions) and its
#               ratio to cublas, torch and the baseline, best wgmma arm per case first
#   results.csv the short campaign's results.csv
#   ncu.txt     (c, with "ncu") ncu on the best wgmma arm (trusted, in the worker, so
#               that ncu reaches it) and cuBLAS, on both cases
set -u
OUT=${1:?usage: hopper_splitk.sh OUTDIR [ncu]}
NCU=${2:-}
ROOT=$(pwd)
R=$OUT/hs
mkdir -p "$R"
T0=$(date +%s)
[ -f .carry/bins.tgz ] && tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
[ -x "$K" ] || K=$ROOT/build/kgate
export KGATE_LOCK_DIR=$(mktemp -d)
export KGATE_PYTHON=$(command -v python3)
W=$(mktemp -d)
P=$W/plan.kg
sed -e "s#\.\./\.\./kernels#$ROOT/kernels#" examples/replication/splitk_hopper.kg >"$P"
{ ldd "$K" | head -5; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv; date -u; "$K" --version;
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'; } >"$R/env.txt" 2>&1
step() { echo "$1: exit $2, $(( $(date +%s) - T0 )) s since start" >>"$R/env.txt"; }
# tl S: S seconds, or what is left of the call's LIMIT (default 450 s) less 20 s for the
# archive, whichever is smaller (at least 1): every step ends within the 8 minutes
LIMIT=${LIMIT:-450}
tl() { l=$(( LIMIT - 20 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"; }

# (a) admission of every arm and variant on both cases
timeout $(tl 140) "$K" check "$P" -o "$W/check" >"$R/check.md" 2>"$W/check.err"; st=$?
cat "$W/check.err" >>"$R/check.md"; step check $st
{ echo "== (a) kgate check: exit $st"; tail -1 "$R/check.md"
  echo "failed or inadmissible rows (case | arm | phase | check | result | ... | detail):"
  grep -E '^\| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| (FAIL|fail|INADMISSIBLE|INCORRECT)' "$R/check.md" | head -60
  grep -iE 'INCORRECT|INADMISSIBLE|error|trap|fault' "$W/check.err" | head -20; } >"$R/summary.txt"

# (b) a short campaign: ranks, decides nothing
sed -e 's/^rounds = 5/rounds = 2\nprocesses = 1/' -e 's/^samples = 10/samples = 5/' -e 's/^quiet = 2/quiet = 0/' \
    -e 's/^timeout = 300/timeout = 160/' "$P" >"$W/short.kg"
timeout $(tl 170) "$K" run "$W/short.kg" --quiet-window 0 -o "$W/run" -q >/dev/null 2>"$W/run.err"; st=$?; step run $st
cp "$W/run/report.md" "$R/run.md" 2>/dev/null; cat "$W/run.err" >>"$R/run.md" 2>/dev/null
cp "$W/run/results.csv" "$R/results.csv" 2>/dev/null
echo "== (b) short campaign: exit $st (1 process per direction: no interval, the gate cannot pass)" >>"$R/summary.txt"
# median µs (mean of the directions) and ratios, per case
awk -F, 'NR > 1 && $7 != "" { t = ($7 + ($8 != "" ? $8 : $7)) / 2 / 1000; us[$1 "," $2] = t; cs[$1] = 1; arms[++n] = $1 "," $2
           if ($2 == "cublas") cb[$1] = t; if ($2 == "torch") th[$1] = t; if ($3 == "baseline") bl[$1] = t
           if ($2 ~ /^wg_/ && (!($1 in best) || t < us[$1 "," best[$1]])) best[$1] = $2 }
         END { for (c in cs) printf "best wgmma arm %s: %s %.3f us = %.2fx cublas\n", c, best[c], us[c "," best[c]], (cb[c] > 0 ? us[c "," best[c]] / cb[c] : 0)
               printf "case,arm,us,x_cublas,x_torch,x_baseline\n"
               for (i = 1; i <= n; i++) { split(arms[i], k, ","); t = us[arms[i]]
                 printf "%s,%s,%.3f,%.3f,%.3f,%.3f\n", k[1], k[2], t, (cb[k[1]] > 0 ? t / cb[k[1]] : 0), (th[k[1]] > 0 ? t / th[k[1]] : 0), (bl[k[1]] > 0 ? t / bl[k[1]] : 0) } }' \
    "$W/run/results.csv" >>"$R/summary.txt" 2>/dev/null

# (a') the numerical negative, source arms only (cublas and torch cannot be negated)
# (STAGES does not change the stores: one variant per section)
sed -e '/^\[arm cublas\]/,/^$/d' -e '/^\[arm torch\]/,/^$/d' -e 's/STAGES={2, 4, 8}/STAGES=2/' "$P" >"$W/neg.kg"
KGATE_NEGATIVE=1 timeout $(tl 70) "$K" check "$W/neg.kg" -o "$W/neg" >/dev/null 2>&1; step negative $?
awk -F, 'NR > 1 && $6 ~ /^(poison0|poison1):[A-Za-z]+$/ { n[$4]++; if ($7 == "pass") p[$4]++ }
         END { for (a in n) printf "%s: %d of %d output checks failed%s\n", a, n[a] - p[a], n[a],
               (p[a] > 0 ? "  <-- passes the negative" : "") }' "$W/neg/checks/proc-000.csv" 2>/dev/null | sort >"$R/neg.txt"
echo "== (a') negative: $(grep -c 'passes the negative' "$R/neg.txt") arms pass it (expected 0), $(wc -l <"$R/neg.txt") arms" >>"$R/summary.txt"

# (c) ncu on the best wgmma arm (of the 96-row case) and cuBLAS
if [ "$NCU" = ncu ] && command -v ncu >/dev/null 2>&1; then
    best=$(awk -F, 'NR > 1 && $2 ~ /^wg_/ && $7 != "" && $1 ~ /96x/ { t = $7 + $8; if (b == "" || t < bt) { b = $2; bt = t } } END { print b }' "$W/run/results.csv")
    if [ -n "$best" ]; then
        # the best variant as the baseline of a two-arm plan, trusted so that it runs in the
        # worker (an arm host's environment is kgate's own: no profiler injection there)
        base=${best%%\[*}; st=$(echo "$best" | sed -n 's/.*STAGES=\([0-9]*\).*/\1/p')
        awk -v base="$base" -v st="$st" '
            /^\[arm / { keep = ($0 == "[arm " base "]" || $0 == "[arm cublas]"); if ($0 == "[arm " base "]") { print; print "trusted = yes"; next } }
            /^\[gate\]/ { keep = 0 }
            /^\[campaign\]/ || /^\[case / { keep = 1 }
            keep { if ($1 == "role" && $3 == "candidate") $0 = "role = baseline"; if ($1 == "defines") sub(/STAGES=\{[^}]*\}/, "STAGES=" st); print }' \
            "$P" >"$W/ncu.kg"
        cp "$W/ncu.kg" "$W/ncu-plan.kg"
        timeout $(tl 120) ncu --clock-control none --target-processes all \
            -k 'regex:splitk_wg|splitk_accum|gemm|nvjet|sm90|cutlass|xmma' -c 40 \
            --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
            --section MemoryWorkloadAnalysis --section SchedulerStats \
            "$K" check "$W/ncu.kg" -o "$W/ncu" >"$R/ncu.txt" 2>&1
        step "ncu ($best)" $?
        { echo "== plan"; cat "$W/ncu-plan.kg"; } >>"$R/ncu.txt"
    fi
fi
echo "total $(( $(date +%s) - T0 )) s" >>"$R/env.txt"
tar czf "$OUT/hopper_splitk.tgz" -C "$OUT" hs
rm -rf "$R" "$W"
