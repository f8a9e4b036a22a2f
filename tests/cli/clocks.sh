# Clock-aware confirmation from the evidence folder: a fake campaign whose
# candidate is 3% faster, given telemetry files with an SM clock per
# sample (the fake backend reads none), then regenerated with kgate report.
# Equal clocks: FASTER, confirmed in cycles, no round clock-mismatched.  The
# candidate at a 3% higher clock: INCONCLUSIVE ("FASTER in time but not in
# cycles"), every round flagged, the gate fails.  Without telemetry the
# report says clocks were not recorded.
. tests/cli_lib.sh
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "fake-faster run"
expect_grep "Clocks were not recorded" "$T/ev/report.md"
expect_grep '"clocks_recorded": false' "$T/ev/results.json"
expect_grep "^small,cand,candidate,ok,FASTER,.*,base,,,[-0-9.e]*,0$" "$T/ev/results.csv"

# telemetry/proc-NNN.csv from raw/proc-NNN.csv.gz: one row per sample, the
# candidate's clock cand_mhz, every other arm's 1980
telemetry() { # folder cand_mhz
    mkdir -p "$1/telemetry"
    for f in "$1"/raw/proc-*.csv.gz; do
        raw_text "$f" | awk -F, -v c="$2" 'NR == 1 { print "process,case,round,arm,sample,sm_mhz,mem_mhz,power_w,temp_c,clock_event_reasons,foreign_procs,escaped,event_ns,host_ns"; next }
            { printf "%s,%s,%s,%s,%s,%d,2619,300.0,40,0x0,0,0,%.0f,%.0f\n", $1, $5, $3, $4, $6, ($4 == "cand" ? c : 1980), $7, $7 }' \
            >"$1/telemetry/$(basename "$f" .gz)"
    done
}
cp -r "$T/ev" "$T/eq"
telemetry "$T/eq" 1980
"$KGATE" report "$T/eq" >"$T/eq.out" 2>"$T/eq.err"; st=$?
expect_status 0 $st "equal clocks: report"
expect_grep "^| small | 24 | 0 |$" "$T/eq/report.md"
expect_grep "^| small | cand | base | .* | 24 | FASTER: FASTER confirmed |$" "$T/eq/report.md"
expect_grep "^small,cand,candidate,ok,FASTER,.*,base,0.02[0-9]*,0,[-0-9.e]*,0$" "$T/eq/results.csv"
# equal clocks: the cycle bound is the time bound
awk -F, '$2 == "cand" { d = $20 - $32; if (d < -1e-8 || d > 1e-8) exit 1 }' "$T/eq/results.csv" ||
    die "equal clocks: reduction_lower_cycles differs from reduction_lower"
expect_grep '"clocks_recorded": true' "$T/eq/results.json"

cp -r "$T/ev" "$T/fast"
telemetry "$T/fast" 2039
"$KGATE" report "$T/fast" >"$T/fast.out" 2>"$T/fast.err"; st=$?
expect_status 1 $st "candidate at a 3% higher clock: the gate fails"
expect_grep "^| small | 24 | 24 |$" "$T/fast/report.md"
expect_grep "| small | cand | candidate |.*| INCONCLUSIVE |" "$T/fast/report.md"
expect_grep "| small | cand | base | .* | 24 | FASTER in time but not in cycles: the clocks differed |$" "$T/fast/report.md"
expect_grep "^small,cand,candidate,ok,INCONCLUSIVE,.*,base,-\{0,1\}0.0[0-9e-]*,24,[-0-9.e]*,[01]$" "$T/fast/results.csv"
expect_grep "lower bound of reduction in cycles" "$T/fast/report.md"
expect_grep '"demoted": true' "$T/fast/results.json"
# the time columns are those of the campaign without clocks (but the two
# clock columns before the robust check's two)
cut -d, -f1-4,6- "$T/ev/results.csv" | sed 's/,[^,]*,[^,]*\(,[^,]*,[^,]*\)$/\1/' >"$T/time.ev"
cut -d, -f1-4,6- "$T/fast/results.csv" | sed 's/,[^,]*,[^,]*\(,[^,]*,[^,]*\)$/\1/' >"$T/time.fast"
cmp -s "$T/time.ev" "$T/time.fast" || { diff "$T/time.ev" "$T/time.fast" >&2; die "clocks changed a time column"; }
expect_report_identical "$T/fast"

# one process without telemetry: the cycle effect is reported, the verdict
# and the gate are those of time
cp -r "$T/ev" "$T/part"
telemetry "$T/part" 2039
rm "$T/part/telemetry/proc-003.csv"
"$KGATE" report "$T/part" >"$T/part.out" 2>"$T/part.err"; st=$?
expect_status 0 $st "clocks on part of the samples: report"
expect_grep "^| small | 20 | 20 |$" "$T/part/report.md"
expect_grep "| small | cand | base | .* | 20 | clocks on part of the samples only (20 of 24 paired rounds): the verdict is in time |$" "$T/part/report.md"
expect_grep "^small,cand,candidate,ok,FASTER,.*,base,,20,[-0-9.e]*,0$" "$T/part/results.csv"
expect_grep '"complete": false' "$T/part/results.json"
# the clocks' objects of results.json and the telemetry rows conform to the published formats
# (docs/results.schema.json, the folder's schema.json; tests/cli/formats.sh for the rest)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" tests/formats_check.py results docs/results.schema.json "$T/eq" "$T/fast" "$T/part" >"$T/fr.out" 2>&1 ||
    { cat "$T/fr.out" >&2; die "results.json with clocks does not validate against docs/results.schema.json"; }
"$PY" tests/formats_check.py csv "$T/eq" "$T/fast" "$T/part" >"$T/fc.out" 2>&1 ||
    { cat "$T/fc.out" >&2; die "the telemetry rows do not conform to schema.json"; }
