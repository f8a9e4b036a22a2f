# One definition of each format (docs/evidence.md, "schema.json"; docs/results.schema.json):
#   - every evidence folder holds schema.json, written from the column tables kgate's own
#     writers and readers use (src/evidence/rows.c, src/report/report_csv.c), hashed in
#     SHA256SUMS and recomputed by verify like a report (an edit is a MISMATCH);
#   - every CSV file of real folders (fake, cpu, check-only, INVALID, sequential, merged)
#     is a kind of its schema.json, with its header and field types (tests/formats_check.py);
#   - every results.json validates against the published JSON Schema
#     (docs/results.schema.json, with Debian's python3-jsonschema);
#   - both checkers are real: a field of the wrong type, a missing key or an unknown
#     value fails them.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import jsonschema' 2>/dev/null || die "$PY lacks jsonschema (Debian python3-jsonschema; sh tools/install-deps.sh)"
check_csv() { "$PY" tests/formats_check.py csv "$@" >"$T/fc.out" 2>&1 || { cat "$T/fc.out" >&2; die "CSV files of $* do not conform to schema.json"; }; }
check_results() { "$PY" tests/formats_check.py results docs/results.schema.json "$@" >"$T/fr.out" 2>&1 ||
    { cat "$T/fr.out" >&2; die "results.json of $* does not validate against docs/results.schema.json"; }; }
src=$(pwd)/kernels/cpu

# ---- 1. a passing fake campaign: schema.json, hashed, verified, recomputed
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ok" -q 2>/dev/null; expect_status 0 $? "fake-faster"
[ -f "$T/ok/schema.json" ] || die "no schema.json in the folder"
expect_grep ' schema.json$' "$T/ok/SHA256SUMS"
"$PY" - "$T/ok" <<'PYEOF' || die "schema.json does not describe the folder's kinds"
import json, sys
s = json.load(open(sys.argv[1] + "/schema.json"))
kinds = {k["kind"]: k for k in s["files"]}
assert s["schema"] == json.load(open(sys.argv[1] + "/results.json"))["schema"], "schema number"
assert set(kinds) == {"raw", "checks", "telemetry", "resources", "processes", "outputs", "watch", "results",
                      "samples"}, sorted(kinds)
assert kinds["raw"]["file"] == "raw/proc-NNN.csv.gz"
# the samples table is no file of the folder: kgate report DIR --samples FILE makes it
assert kinds["samples"]["file"] == "" and "--samples" in kinds["samples"]["written_by"], kinds["samples"]
for k in kinds.values():
    for c in k["columns"]:
        assert c["type"] in s["types"], c
        assert c["meaning"], c
        assert (c["type"] == "enum") == ("values" in c) and (c["type"] != "enum" or c["values"]), c
assert [c["name"] for c in kinds["samples"]["columns"]] == \
    ["process", "slot", "direction", "round", "case", "op", "dtype", "arm", "role", "sample", "ns"]
verdicts = [c for c in kinds["results"]["columns"] if c["name"] == "verdict"][0]["values"]
assert verdicts == ["FASTER", "SLOWER", "EQUIVALENT", "INCONCLUSIVE", "INCORRECT", "INADMISSIBLE", "NO DATA",
                    "WEAK CASE", "INVALID", "BASELINE", "CONTROL", "SMOKE"], verdicts
PYEOF
check_csv "$T/ok"
check_results "$T/ok"
"$KGATE" verify "$T/ok" >/dev/null 2>&1 || die "the fake folder does not verify"
# the samples table on demand: schema.json's columns, one row per raw sample, the folder untouched
[ -e "$T/ok/raw/samples.csv" ] && die "the campaign wrote raw/samples.csv"
(cd "$T/ok" && find . -type f | LC_ALL=C sort | xargs sha256sum) >"$T/ok.sums"
"$KGATE" report "$T/ok" --samples "$T/samples.csv" >"$T/s.out" 2>&1; expect_status 0 $? "report --samples"
[ -s "$T/s.out" ] && die "report --samples printed something"
"$KGATE" report "$T/ok" --samples - | cmp -s - "$T/samples.csv" || die "report --samples - differs from the file"
(cd "$T/ok" && find . -type f | LC_ALL=C sort | xargs sha256sum) | cmp -s - "$T/ok.sums" || die "report --samples wrote into the folder"
"$PY" - "$T/ok" "$T/samples.csv" <<'PYEOF' || die "the samples table does not conform to schema.json"
import csv, glob, gzip, json, sys
s = json.load(open(sys.argv[1] + "/schema.json"))
cols = [c["name"] for c in [k for k in s["files"] if k["kind"] == "samples"][0]["columns"]]
rows = list(csv.reader(open(sys.argv[2])))
assert rows[0] == cols, rows[0]
raw = [r for f in sorted(glob.glob(sys.argv[1] + "/raw/proc-*.csv.gz")) for r in list(csv.reader(gzip.open(f, "rt")))[1:]]
assert len(rows) - 1 == len(raw) == 360, (len(rows), len(raw))
for t, r in zip(rows[1:], raw):
    assert (t[0], t[2], t[3], t[4], t[7], t[9], t[10]) == (r[0], r[1], r[2], r[4], r[3], r[5], r[6]), (t, r)
PYEOF
"$KGATE" report "$T/nowhere" --samples "$T/s2.csv" >/dev/null 2>&1; expect_status 2 $? "report --samples of no folder"
[ -e "$T/s2.csv" ] && die "a failed report --samples left its file"
cp -r "$T/ok" "$T/edited"
sed -i 's/"the case"/"a case"/' "$T/edited/schema.json"
(cd "$T/edited" && find . -type f ! -name SHA256SUMS | sed 's#^\./##' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
"$KGATE" verify "$T/edited" >/dev/null 2>"$T/ve.err"; expect_status 1 $? "verify of an edited schema.json"
expect_grep "MISMATCH schema.json: differs" "$T/ve.err"
rm "$T/edited/schema.json"
"$KGATE" report "$T/edited" >/dev/null 2>&1 || die "kgate report"
cmp -s "$T/edited/schema.json" "$T/ok/schema.json" || die "kgate report does not write schema.json again"

# ---- 2. the checkers are real
cp -r "$T/ok" "$T/bad"
raw_edit '2s/^\([0-9]*\),fwd,/\1,sideways,/' "$T/bad/raw/proc-000.csv.gz"
"$PY" tests/formats_check.py csv "$T/bad" >"$T/fc.out" 2>&1 && die "the CSV checker accepts a direction 'sideways'"
expect_grep "raw/proc-000.csv.gz:2: column direction" "$T/fc.out"
"$PY" - "$T/bad/results.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
del d["gate_pass"]
d["results"][0]["verdict"] = "MAYBE"
json.dump(d, open(sys.argv[1], "w"))
PYEOF
"$PY" tests/formats_check.py results docs/results.schema.json "$T/bad" >"$T/fr.out" 2>&1 &&
    die "the JSON Schema accepts a results.json without gate_pass"
expect_grep "gate_pass" "$T/fr.out"

# ---- 3. a campaign that is INVALID (a drifting control) and a failing one
sed -e "s#\.\./\.\./kernels/#$(pwd)/kernels/#" -e 's/^of = base$/of = base\nfake_drift = 0.01/' \
    tests/plans/fake-aa.kg >"$T/drift.kg"
"$KGATE" run --report "$T/drift.kg" -o "$T/invalid" -q 2>/dev/null; expect_status 3 $? "a drifting control (INVALID)"
"$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['invalid'] and d['invalid_host']))" \
    "$T/invalid/results.json" || die "the INVALID campaign's results.json does not say so"
"$KGATE" run --report tests/plans/fake-order.kg -o "$T/fail" -q 2>/dev/null; expect_status 1 $? "fake-order"

# ---- 4. a sequential design (looks = 2), stopped at a look
cat >"$T/seq.kg" <<PLAN
[campaign]
quiet = 0
name = seq
backend = fake
warmup = 1
samples = 5
rounds = 4
processes = 4
looks = 2
seed = 5
margin = 1%
control_margin = 1%
[case small]
op = rowsum
dtype = f32
M = 4
N = 16
[arm base]
op = rowsum
role = baseline
source = $src/rowsum_naive.c
[arm cand]
op = rowsum
source = $src/rowsum_naive.c
fake_ns = 900
[gate]
min_reduction = 1%
PLAN
"$KGATE" run --report "$T/seq.kg" -o "$T/seq" -q 2>/dev/null; expect_status 0 $? "a sequential design"
expect_grep "Decided at look 1 (efficacy)" "$T/seq/report.md"

# ---- 5. a check-only folder and a small cpu campaign (telemetry and resources rows)
"$KGATE" check tests/plans/fake-faster.kg -o "$T/check" >/dev/null 2>&1 || die "kgate check"
cat >"$T/cpu.kg" <<PLAN
[campaign]
name = formats-cpu
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = 2
timeout = 120
margin = 1%
[case r]
op = rowsum
dtype = f32
M = 32
N = 256
[arm naive]
op = rowsum
role = baseline
source = $src/rowsum_naive.c
[arm unrolled]
op = rowsum
source = $src/rowsum_unrolled.c
PLAN
"$KGATE" run --report "$T/cpu.kg" -o "$T/cpu" -q 2>"$T/cpu.err"; st=$?
[ $st -le 1 ] || { cat "$T/cpu.err" >&2; die "the cpu campaign: exit $st"; }
[ -f "$T/cpu/telemetry/proc-000.csv" ] && [ -f "$T/cpu/telemetry/resources-000.csv" ] ||
    die "the cpu campaign wrote no telemetry or resources"

# ---- 6. a merged folder of two fake shards
sed "s#\.\./\.\./kernels/#$(pwd)/kernels/#" tests/plans/fake-shard.kg >"$T/shard.kg"
for i in 0 1; do
    "$KGATE" run "$T/shard.kg" --shard $i/2 --campaign f1 -o "$T/s$i" -q 2>/dev/null; [ $? -le 1 ] || die "shard $i/2"
done
"$KGATE" merge --quiet "$T/merged" "$T/s0" "$T/s1" 2>/dev/null; [ $? -le 1 ] || die "kgate merge"

for d in "$T/ok" "$T/invalid" "$T/fail" "$T/seq" "$T/check" "$T/cpu" "$T/s0" "$T/merged"; do
    check_csv "$d"
    check_results "$d"
done
echo "formats: 8 folders conform to schema.json and docs/results.schema.json"
exit 0
