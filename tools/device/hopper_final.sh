#!/bin/sh
# tools/device/hopper_final.sh OUT [PLAN]: issue 34's method in one device call, on PLAN
# (default examples/replication/splitk_hopper_final.kg, a family with its STAGES axes):
#   1. kgate screen of the family (tools/device/hopper_confirm.sh screen, SCREEN_PROCESSES
#      per direction, default 6; --select SELECT, default 4): every check on every variant,
#      dropped once INCORRECT or futile; it writes the confirmation plan and its frozen form
#      before the confirmation's first sample
#   2. the frozen confirmation (hopper_confirm.sh confirm): kgate run --frozen with cuBLAS and
#      torch in the same processes and rounds, kgate verify of its folder, ratios.txt
#   3. ncu (tools/device/hopper_splitk.sh ncu ARM) of the confirmation's fastest wgmma arm at
#      256 rows and cuBLAS, both cases
# Each step under what is left of LIMIT (default 570 s).  Writes OUT/final.tgz: the two
# archives of hopper_confirm.sh and hopper_splitk.sh's, and parts.txt.  The binary:
# bin/kgate-portable from .carry/bins.tgz (carried as .carry).
set -u
OUT=${1:?usage: hopper_final.sh OUT [PLAN]}
PLAN=${2:-examples/replication/splitk_hopper_final.kg}
LIMIT=${LIMIT:-570}
T0=$(date +%s)
W=$(mktemp -d)
mkdir -p "$W/final" "$OUT"
left() { echo $(( LIMIT - 15 - ($(date +%s) - T0) )); }
note() { echo "$1: exit $2 after $(( $(date +%s) - T0 )) s since the start" >>"$W/final/parts.txt"; }

SCREEN_PROCESSES=${SCREEN_PROCESSES:-6} STEP_LIMIT=$(left) \
    sh tools/device/hopper_confirm.sh "$W/s" screen "$PLAN" "${SELECT:-4}" >/dev/null 2>&1
note screen $?
cp "$W/s/confirm.tgz" "$W/final/screen.tgz" 2>/dev/null
C=${PLAN%.kg}-family-confirm.kg
if [ -f "$C.frozen" ] && [ "$(left)" -gt 60 ]; then
    STEP_LIMIT=$(( $(left) - 70 )) sh tools/device/hopper_confirm.sh "$W/c" confirm "$C" >/dev/null 2>&1
    note confirm $?
    cp "$W/c/confirm.tgz" "$W/final/confirm.tgz" 2>/dev/null
    tar xzf "$W/c/confirm.tgz" -C "$W/c" 2>/dev/null
    # the fastest wgmma arm at 256 rows (ratios.txt: case arm us 'us' ratio 'x' cublas)
    ARM=$(awk '$1 ~ /256x/ && $2 ~ /^wg_/ && (b == "" || $3 < t) { b = $2; t = $3 } END { print b }' \
          "$W/c/confirm/ratios.txt" 2>/dev/null)
    if [ -n "$ARM" ] && [ "$(left)" -gt 60 ]; then
        PLAN=$PLAN LIMIT=$(left) sh tools/device/hopper_splitk.sh "$W/n" ncu "$ARM" >/dev/null 2>&1
        note "ncu $ARM" $?
        cp "$W/n/hopper_splitk.tgz" "$W/final/ncu.tgz" 2>/dev/null
    fi
else
    echo "confirm: not run (no frozen confirmation plan, or $(left) s left)" >>"$W/final/parts.txt"
fi
# the plans the screen wrote, to commit beside PLAN as they are
for f in "${PLAN%.kg}-family.kg" "$C" "$C.frozen"; do [ -f "$f" ] && cp "$f" "$W/final/"; done
tar czf "$OUT/final.tgz" -C "$W" final
cat "$W/final/parts.txt"
