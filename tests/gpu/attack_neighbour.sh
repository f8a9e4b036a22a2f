# tests/gpu/attack_neighbour.sh: the device-memory neighbour attack
# (tests/gpu/attack_neighbour.cu with tests/gpu/attack_neighbour.kg).
# Sourced by tests/gpu/run.sh (it uses $KGATE, $ROOT, $T, ok and bad), or
# run alone from the repository root:
#   KGATE=build/kgate sh tests/gpu/attack_neighbour.sh
# The candidate copies the baseline's C out of device memory near its own
# C instead of computing; it is the naive loop otherwise.  Expected once
# every arm has its own device context (per-arm device isolation): the
# candidate is not FASTER and the gate does not pass (INCORRECT when the
# scan faults and the fault is attributed to the arm; INCONCLUSIVE or
# EQUIVALENT when the scan finds nothing).  Against a shared context
# (today) the candidate is expected to come out FASTER: the attack succeeds.
if ! command -v ok >/dev/null 2>&1; then
    set -u
    : "${KGATE:?set KGATE to the kgate binary}"
    case $KGATE in /*) ;; *) KGATE=$(pwd)/$KGATE ;; esac
    ROOT=$(pwd)
    T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-gpu-attack.XXXXXX")
    trap 'rm -rf "$T"' EXIT
    passed=0
    failed=0
    ok() { passed=$((passed + 1)); echo "ok   $1"; }
    bad() {
        failed=$((failed + 1)); echo "FAIL $1"
        [ -f "$T/out" ] && sed -n '1,40p' "$T/out" | sed 's/^/     | /'
    }
    attack_alone=1
fi
"$KGATE" run "$ROOT/tests/gpu/attack_neighbour.kg" -o "$T/attack-neighbour-out" --no-progress >"$T/out" 2>&1
st=$?
v=$(awk -F, '$2 == "neighbour" { print $4 "/" $5; exit }' "$T/attack-neighbour-out/results.csv" 2>/dev/null)
gate=none
grep -q 'gate PASS' "$T/out" && gate=PASS
grep -q 'gate FAIL' "$T/out" && gate=FAIL
crashed=$(awk -F, 'NR > 1 && $3 != "ok"' "$T/attack-neighbour-out/processes.csv" 2>/dev/null | wc -l)
what="device neighbour attack: exit $st, gate $gate, candidate ${v:-no results}, $crashed processes not ok"
case $v in
*/FASTER) bad "$what (expected: not FASTER)" ;;
*) if [ "$gate" = PASS ] || [ "$st" -gt 3 ]; then bad "$what (expected: not FASTER, gate not passed, campaign ends)"
   else ok "$what (not FASTER)"; fi ;;
esac
if [ "${attack_alone:-0}" = 1 ]; then
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
fi
