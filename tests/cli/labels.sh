# What the rows of a campaign say: a baseline's row says "baseline" and a
# control's says how its A/A interval stands ("control: EQUIVALENT within
# ±m", "control: reaches X, past the gate's g", ...), never INCONCLUSIVE,
# in report.md, results.json, results.csv and --json alike; only a
# candidate carries a verdict.
. tests/cli_lib.sh
P=tests/plans/fake-faster.kg
"$KGATE" run "$P" -o "$T/ev" --json >"$T/out.json" 2>"$T/err"; st=$?
expect_status 0 $st "fake-faster"
python3 - "$T/out.json" "$T/ev/results.json" <<'PY' || die "the verdict words and labels"
import json, sys
summary = json.load(open(sys.argv[1]))
results = json.load(open(sys.argv[2]))
rows = {"--json": summary["verdicts"], "results.json": results["results"]}
for where, vs in rows.items():
    by_role = {v["role"]: v for v in vs}
    assert by_role["baseline"]["verdict"] == "BASELINE", (where, by_role["baseline"])
    assert by_role["baseline"]["label"] == "baseline", (where, by_role["baseline"])
    assert by_role["control"]["verdict"] == "CONTROL", (where, by_role["control"])
    assert by_role["control"]["label"] == "control: EQUIVALENT within \u00b11.00%", (where, by_role["control"])
    assert by_role["candidate"]["verdict"] == "FASTER", (where, by_role["candidate"])
    assert by_role["candidate"]["label"] == "FASTER", (where, by_role["candidate"])
    assert not [v for v in vs if v["verdict"] == "INCONCLUSIVE"], (where, vs)
PY
expect_grep '^| small | ctrl | control | .* | control: EQUIVALENT within ±1.00% |$' "$T/ev/report.md"
expect_grep '^| small | base | baseline | .* | baseline |$' "$T/ev/report.md"
expect_no_grep 'INCONCLUSIVE' "$T/ev/report.md"
awk -F, 'NR > 1 { print $3 "=" $5 }' "$T/ev/results.csv" | sort >"$T/words"
printf 'baseline=BASELINE\ncandidate=FASTER\ncontrol=CONTROL\n' | cmp -s - "$T/words" || { cat "$T/words" >&2; die "results.csv's verdict words"; }
# the words are in schema.json's enumeration of the verdict column, and verify accepts them
python3 - "$T/ev/schema.json" <<'PY' || die "schema.json's verdict values"
import json, sys
s = json.load(open(sys.argv[1]))
def find(o):
    if isinstance(o, dict):
        if o.get("name") == "verdict" and "values" in o:
            return o["values"]
        for v in o.values():
            r = find(v)
            if r: return r
    if isinstance(o, list):
        for v in o:
            r = find(v)
            if r: return r
vals = find(s)
assert vals and "BASELINE" in vals and "CONTROL" in vals and "FASTER" in vals, vals
PY
"$KGATE" verify "$T/ev" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; die "verify"; }
exit 0
