# kgate run --smoke: the plan's checks in fresh workers on a few samples,
# recorded as what it is and never a verdict.  The folder's plan says
# smoke = yes with 1 process per direction of 2 rounds of 3 samples (its
# hash is not the plan's: --frozen refuses it), every candidate that
# passed its checks is SMOKE, the gate fails with the smoke run's reason
# (exit 1) even where the plan's own run passes, kgate report and verify
# agree; an arm that fails its checks is still INCORRECT and named.
. tests/cli_lib.sh
P=tests/plans/fake-faster.kg
"$KGATE" run "$P" -o "$T/sm" --smoke --json >"$T/sm.json" 2>"$T/sm.err"; st=$?
expect_status 1 $st "fake-faster --smoke"
expect_grep "^kgate: gate FAIL: a smoke run (kgate run --smoke: 1 process per direction, 2 rounds of 3 samples)" "$T/sm.err"
expect_grep '^smoke = yes$' "$T/sm/plan.kg"
expect_grep '^processes = 1$' "$T/sm/plan.kg"
expect_grep '^rounds = 2$' "$T/sm/plan.kg"
expect_grep '^samples = 3$' "$T/sm/plan.kg"
expect_grep '^quiet = 0$' "$T/sm/plan.kg"
[ "$(wc -l <"$T/sm/processes.csv")" = 3 ] || die "a smoke run of 1 process per direction ran $(($(wc -l <"$T/sm/processes.csv") - 1))"
expect_grep '^small,cand,candidate,ok,SMOKE,' "$T/sm/results.csv"
expect_grep '| small | cand | candidate | .* | SMOKE (a smoke run: no verdict) |$' "$T/sm/report.md"
expect_no_grep 'FASTER' "$T/sm/results.csv"
python3 - "$T/sm.json" <<'PY' || die "--smoke --json"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["gate"]["pass"] is False and s["exit_status"] == 1, s["gate"]
c = [v for v in s["verdicts"] if v["role"] == "candidate"]
assert c and all(v["verdict"] == "SMOKE" and v["gate_fail"].startswith("a smoke run") for v in c), c
PY
expect_report_identical "$T/sm"
"$KGATE" verify "$T/sm" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "a smoke run's folder does not verify"; }
# the smoke run is another plan than the frozen one
"$KGATE" freeze "$P" -o "$T/p.frozen" >/dev/null || die "freeze"
"$KGATE" run --frozen "$T/p.frozen" "$P" -o "$T/fz" --smoke >"$T/fz.out" 2>"$T/fz.err"; st=$?
expect_status 2 $st "--frozen with --smoke"
expect_grep "smoke" "$T/fz.err"
# resumed, it is the smoke run again
rm -f "$T/sm/processes.csv"
"$KGATE" run --resume "$T/sm" "$P" --smoke >/dev/null 2>"$T/r.err"; st=$?
expect_status 1 $st "--resume --smoke"
# an arm that fails its checks: INCORRECT, named by the gate
"$KGATE" run tests/plans/fake-fault.kg -o "$T/f" --smoke >"$T/f.out" 2>"$T/f.err"; st=$?
expect_status 1 $st "fake-fault --smoke"
expect_grep "gate FAIL: case small, arm cand: INCORRECT" "$T/f.err"
expect_grep '^small,cand,candidate,incorrect,INCORRECT,' "$T/f/results.csv"
expect_grep '^small,cand2,candidate,ok,SMOKE,' "$T/f/results.csv"
exit 0
