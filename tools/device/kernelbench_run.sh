#!/bin/sh
# tools/device/kernelbench_run.sh OUT [PROBLEM ...]: the KernelBench-style problems of
# examples/kernelbench/ (docs/kernelbench.md) on a GPU machine, in one device call, with nothing
# fetched from outside.  For each problem (all ten by default, or the NN_name stems given):
#   1. kgate import kernelbench with its honest and its wrong candidate (OUT/work/NN_name/);
#   2. kgate check of both plans: the honest candidate must pass every check (exit 0), the wrong
#      one must be INCORRECT (exit 1, an INCORRECT row);
#   3. a short kgate run of the honest plan (--quiet-window 0, 2 rounds, the plan's processes:
#      --json summary), and kgate verify of its folder;
#   4. where NN_name_triton.py exists, the Triton candidate imported, compiled by the script the
#      import writes (kgate.triton.compile_arm, PYTHONPATH=python/) and checked: it must pass.
# Every step goes on when another fails; every output is kept under OUT/r/NN_name/.  Writes the
# table OUT/r/summary.md (one row a problem: the imports, both checks, the run's candidate verdict
# with its reduction and interval, the gate, verify) and OUT/kernelbench.tgz.
#
# kgate: $KGATE, else bin/kgate-portable (from .carry/bins.tgz when there), else build/kgate.
# Python with torch (CUDA): KGATE_PYTHON, else python3.  A step's wall-clock limit: STEP_LIMIT
# seconds (default 420); KB_TOLERANCE=RTOL,ATOL imports with --tolerance; KB_CHECKS=0 leaves out
# the two checks of step 2 (a problem whose checks are on record: its run alone).  Exit 0 when every
# honest candidate passed, every wrong one was INCORRECT and every run produced a verdict.
set -u
OUT=${1:?usage: kernelbench_run.sh OUT [PROBLEM ...]}
shift
ROOT=$(pwd)
R=$OUT/r
W=$OUT/work
mkdir -p "$R" "$W"
[ -f .carry/bins.tgz ] && [ ! -x bin/kgate-portable ] && tar xzf .carry/bins.tgz
K=${KGATE:-}
[ -n "$K" ] || { [ -x "$ROOT/bin/kgate-portable" ] && K=$ROOT/bin/kgate-portable; }
[ -n "$K" ] || K=$ROOT/build/kgate
[ -x "$K" ] || { echo "kernelbench_run: no kgate binary (set KGATE, or build it)" >&2; exit 2; }
export KGATE_INCLUDE=${KGATE_INCLUDE:-$ROOT/include}
export KGATE_LOCK_DIR=${KGATE_LOCK_DIR:-$OUT/locks}
LIMIT=${STEP_LIMIT:-420}
# KB_TOLERANCE=RTOL,ATOL: the ops' bound as a declared tolerance instead of the library bound
TOL=${KB_TOLERANCE:+--tolerance $KB_TOLERANCE}
PY=${KGATE_PYTHON:-python3}
{ "$K" --version; nvidia-smi; "$PY" -c 'import torch; print("torch", torch.__version__, torch.version.cuda,
  torch.cuda.is_available())'; date -u; } >"$R/env.txt" 2>&1
EX=$ROOT/examples/kernelbench
if [ $# -gt 0 ]; then problems="$*"; else
    problems=$(cd "$EX" && ls [0-9][0-9]_*.py | grep -v -e '_honest\.py$' -e '_wrong\.py$' -e '_triton\.py$' | sed 's/\.py$//')
fi
ok=1
row() { echo "$*" >>"$R/summary.md"; }
echo "| problem | import honest / wrong | check honest | check wrong | run: candidate | reduction [interval] | gate | verify |" >"$R/summary.md"
echo "|---|---|---|---|---|---|---|---|" >>"$R/summary.md"
for s in $problems; do
    d=$W/$s
    r=$R/$s
    mkdir -p "$d" "$r"
    imp=""
    for k in honest wrong; do
        if timeout "$LIMIT" "$K" import kernelbench "$EX/$s.py" --candidate "$EX/${s}_$k.py" -o "$d/$k.kg" $TOL \
                >"$r/import-$k.txt" 2>&1; then imp="$imp ok"; else imp="$imp FAILED"; ok=0; fi
        cp "$d/$k.kg" "$d/${k}_candidate.cu" "$r/" 2>/dev/null
    done
    if [ "${KB_CHECKS:-1}" = 0 ]; then
        ch="not run (KB_CHECKS=0)"; cw="not run (KB_CHECKS=0)"
    else
        # honest: every check passes
        timeout "$LIMIT" "$K" check "$d/honest.kg" -o "$d/check-honest" >"$r/check-honest.txt" 2>&1
        rc=$?
        if [ $rc = 0 ]; then ch="PASS"; else ch="FAILED (exit $rc)"; ok=0; fi
        # wrong: INCORRECT
        timeout "$LIMIT" "$K" check "$d/wrong.kg" -o "$d/check-wrong" >"$r/check-wrong.txt" 2>&1
        rc=$?
        # kgate check's summary: "N checks, F failed (...)", F > 0 with exit 1 is the candidate rejected
        if [ $rc = 1 ] && grep -q -E '^[0-9]+ checks, [1-9][0-9]* failed' "$r/check-wrong.txt"; then cw="INCORRECT"
        else cw="NOT REJECTED (exit $rc)"; ok=0; fi
        grep -h -i -E "fail|incorrect" "$r/check-wrong.txt" | head -n 5 >"$r/check-wrong.why" 2>/dev/null
    fi
    # a short run of the honest candidate
    # (the plan's own protocol with 2 rounds: its reference module and device code are beside it)
    sed -e 's/^rounds = .*/rounds = 2/' "$d/honest.kg" >"$d/run.kg"
    timeout "$LIMIT" "$K" run "$d/run.kg" -o "$d/run-ev" --quiet-window 0 --json >"$r/run.json" 2>"$r/run.txt"
    rc=$?
    cp "$d/run-ev/report.md" "$r/report.md" 2>/dev/null
    # where each worker's time went (its log's time: lines)
    grep -h "^time:" "$d"/run-ev/logs/proc-*.log >"$r/times.txt" 2>/dev/null
    verdict=$("$PY" - "$r/run.json" <<'EOF' 2>/dev/null
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception as e:
    print("no summary | - | -"); sys.exit()
v = [x for x in s.get("verdicts", []) if x.get("arm") == "candidate"]
g = s.get("gate") or {}
if not v:
    print("%s | - | %s" % ((s.get("error") or "no verdict")[:80].replace("|", "/"), "-"))
else:
    x = v[0]
    f = lambda y: "-" if y is None else "%+.2f%%" % (100 * y)
    print("%s | %s [%s, %s] | %s" % (x.get("label") or x.get("verdict"), f(x.get("reduction")),
          f(x.get("reduction_lower")), f(x.get("reduction_upper")), "PASS" if g.get("pass") else "FAIL"))
EOF
)
    [ -n "$verdict" ] || verdict="no summary (exit $rc) | - | -"
    case $verdict in no\ *) ok=0 ;; esac
    if [ -d "$d/run-ev" ] && timeout "$LIMIT" "$K" verify "$d/run-ev" >"$r/verify.txt" 2>&1; then vf="verified"
    else vf="NOT VERIFIED"; ok=0; fi
    row "| $s |$imp | $ch | $cw | $verdict | $vf |"
    tail -n 1 "$R/summary.md"
    # a Triton candidate (NN_name_triton.py): imported, compiled by its script, checked
    if [ -f "$EX/${s}_triton.py" ]; then
        tr="import FAILED"
        if timeout "$LIMIT" "$K" import kernelbench "$EX/$s.py" --candidate "$EX/${s}_triton.py" -o "$d/triton.kg" \
                >"$r/import-triton.txt" 2>&1; then
            tr="compile FAILED"
            if PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} timeout "$LIMIT" "$PY" "$d/triton_triton.py" \
                    >"$r/compile-triton.txt" 2>&1; then
                cp "$d/triton.kg" "$r/"
                timeout "$LIMIT" "$K" check "$d/triton.kg" -o "$d/check-triton" >"$r/check-triton.txt" 2>&1
                rc=$?
                if [ $rc = 0 ]; then tr="PASS"; else tr="FAILED (exit $rc)"; fi
            fi
        fi
        case $tr in PASS) ;; *) ok=0 ;; esac
        row "| $s (Triton candidate) | $(echo "$tr" | sed 's/PASS/ok/') | $tr | - | - | - | - | - |"
        tail -n 1 "$R/summary.md"
    fi
done
tar czf "$OUT/kernelbench.tgz" -C "$OUT" r 2>/dev/null
cat "$R/summary.md"
[ $ok = 1 ]
