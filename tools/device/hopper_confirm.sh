#!/bin/sh
# tools/device/hopper_confirm.sh OUT screen PLAN [K] | OUT confirm CONFIRM_PLAN: the second and third
# steps of issue 34's method on a GPU, after tools/device/hopper_splitk.sh ranked the variants and
# wrote screen.kg (commit it beside the example plans first: the device works on a copy of the tree).
#   screen   kgate screen PLAN --select K (default 2): every check on every variant a process runs,
#            a variant dropped once INCORRECT or futile; writes the confirmation plan and its frozen
#            form, and verifies the screen's folder.  Bring back OUT/confirm.tgz, commit
#            CONFIRM.kg and CONFIRM.kg.frozen, then run the confirm step in the next call.
#            With SCREEN_PROCESSES=N, PLAN is a whole family (examples/replication/splitk_hopper.kg,
#            _tma.kg, _f32.kg: every variant with its STAGES axis) screened directly, without
#            tools/device/hopper_splitk.sh's short ranking: the step writes PLAN-family.kg beside
#            it, the plan with `screen = yes` and N processes per direction (no load-order
#            square), screens that, and brings it back with the confirmation plan (commit all
#            three).  Whether a family fits one call: tools/device/screen64.sh's seconds per
#            candidate on the GPU say.
#   confirm  kgate run --frozen CONFIRM_PLAN.frozen CONFIRM_PLAN: the claim, with cuBLAS and torch in
#            the same processes and rounds; kgate verify of its folder; each arm's median in µs and
#            its ratio to cuBLAS per case (ratios.txt, from results.csv: the mean of the two
#            directions' medians).
# Writes OUT/confirm.tgz: the ranking or the verdicts (stdout), stderr, report.md, results.csv,
# verify.txt, the plans, ratios.txt; never the evidence folders.  PLAN is a path in the tree
# (examples/replication/...).  Each kgate step runs under
# timeout (STEP_LIMIT, default 520 s).  The binary: bin/kgate-portable from .carry/bins.tgz, else
# build/kgate.
set -u
OUT=${1:?usage: hopper_confirm.sh OUT screen PLAN [K] | OUT confirm CONFIRM_PLAN}
STEP=${2:?step: screen or confirm}
PLAN=${3:?the plan}
ROOT=$(pwd)
[ -f .carry/bins.tgz ] && tar xzf .carry/bins.tgz   # a warm machine keeps an earlier call's bin/
K=$ROOT/bin/kgate-portable
[ -x "$K" ] || K=$ROOT/build/kgate
K=${HS_KGATE:-$K}   # a dry run on the CPU: a wrapper that adds --backend fake
export KGATE_LOCK_DIR=$(mktemp -d)
export KGATE_PYTHON=$(command -v python3)
LIMIT=${STEP_LIMIT:-520}
W=$(mktemp -d)
R=$W/confirm
mkdir -p "$R" "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; "$K" --version; date -u; } >"$R/env.txt" 2>&1
# the plans run where they are in the tree: their sources are relative to their folder, a
# confirmation plan must be written beside its screen's plan, and a frozen form names its plan's
# hash (a rewritten copy would not match)
cp "$PLAN" "$R/"
case $STEP in
screen)
    if [ -n "${SCREEN_PROCESSES:-}" ]; then
        # the family as a screen's exploration plan, beside PLAN (its sources stay relative)
        F=${PLAN%.kg}-family.kg
        awk -v n="$SCREEN_PROCESSES" '/^\[campaign\]/ { print; print "screen = yes"; print "processes = " n; c = 1; next }
                                      /^\[/ { c = 0 } c && /^(screen|processes) *=/ { next } { print }' "$PLAN" >"$F"
        PLAN=$F
        cp "$F" "$R/"
    fi
    C=${PLAN%.kg}-confirm.kg
    t0=$(date +%s)
    timeout "$LIMIT" "$K" screen "$PLAN" --select "${4:-2}" --confirm "$C" -o "$W/ev" >"$R/screen.md" 2>"$R/screen.err"
    echo "kgate screen: exit $? after $(( $(date +%s) - t0 )) s" >>"$R/env.txt"
    # commit these two beside PLAN, as they are
    for f in "$C" "$C.frozen"; do [ -f "$f" ] && cp "$f" "$R/"; done
    ;;
confirm)
    [ -f "$PLAN.frozen" ] || { echo "hopper_confirm.sh: no $PLAN.frozen beside the plan" >&2; exit 2; }
    t0=$(date +%s)
    timeout "$LIMIT" "$K" run --frozen "$PLAN.frozen" "$PLAN" -o "$W/ev" >"$R/run.md" 2>"$R/run.err"
    echo "kgate run --frozen: exit $? after $(( $(date +%s) - t0 )) s" >>"$R/env.txt"
    if [ -f "$W/ev/results.csv" ]; then
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                 { f = $(col["median_ns_fwd"]); r = $(col["median_ns_rev"]); if (f == "") next
                   t = (f + (r != "" ? r : f)) / 2 / 1000; us[$1 "," $2] = t; arm[++n] = $1 "," $2
                   if ($2 == "cublas") cb[$1] = t }
                 END { for (i = 1; i <= n; i++) { split(arm[i], k, ","); t = us[arm[i]]
                         printf "%s %s %.3f us %.3fx cublas\n", k[1], k[2], t, (cb[k[1]] > 0 ? t / cb[k[1]] : 0) } }' \
            "$W/ev/results.csv" >"$R/ratios.txt"
    fi
    ;;
*)
    echo "hopper_confirm.sh: the step is screen or confirm, not '$STEP'" >&2
    exit 2 ;;
esac
if [ -d "$W/ev" ]; then
    cp "$W/ev/report.md" "$W/ev/results.csv" "$R/" 2>/dev/null
    timeout 120 "$K" verify "$W/ev" >"$R/verify.txt" 2>&1
    echo "kgate verify: exit $?" >>"$R/env.txt"
fi
tar czf "$OUT/confirm.tgz" -C "$W" confirm
cat "$R/env.txt"
