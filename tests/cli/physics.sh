# Physics limits (docs/admission.md, "Physics limits").  A gemm_bt that
# returns a remembered output while a fingerprint of its inputs is
# unchanged was FASTER (+99.5%) with a gate PASS before the limit: with
# resident inputs every timed sample hits.  kgate now measures the host's
# peaks before the first process (peaks.json) and the arm's timing implies
# many times the measured FMA rate: INVALID (impossible), the gate fails;
# the honest baseline stays far below the limit.  The fake backend
# measures nothing and applies no limit (its timings are synthetic).
# Peaks given in a file (KGATE_PEAKS, what every other test uses) are
# applied and recorded as read from it, not measured.
# kgate-test: first (the peaks measured, and 384^3 gemms)
. tests/cli_lib.sh
# the one test that measures the peaks
fixture=$KGATE_PEAKS
unset KGATE_PEAKS
# the plan with one process per direction and two rounds (the runs below; under the sanitizers the
# measured run too, whose C is the same with fewer samples of the 384^3 gemms)
sed -e 's/^processes = 2$/processes = 1/' -e 's/^rounds = 3$/rounds = 2/' -e "s#^source = \.\./\.\./#source = $PWD/#" \
    -e "s#^source = gemm_cached.c#source = $PWD/tests/contracts/gemm_cached.c#" tests/contracts/physics.kg >"$T/small.kg"
first=tests/contracts/physics.kg
case ${BUILD:-build} in *san*) first=$T/small.kg ;; esac
"$KGATE" run --report "$first" -o "$T/p" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "run of the impossibly fast arm"
expect_grep "gate FAIL: case f32_384, arm cached: INVALID (impossible: [0-9.]*x the measured FMA rate)" "$T/err"
expect_grep "^f32_384,cached,candidate,ok,INVALID,f32,.*,impossible," "$T/p/results.csv"
expect_grep "^f32_384,blocked,baseline,ok,BASELINE,f32,.*,[0-9.e+-]*,ok," "$T/p/results.csv"
expect_grep "| f32_384 | cached | candidate | .* | INVALID (impossible: " "$T/p/report.md"
expect_grep '"physics": "impossible: ' "$T/p/results.json"
expect_grep '"verdict": "INVALID"' "$T/p/results.json"
expect_no_grep "FASTER" "$T/p/results.csv"
expect_grep "^## Physics limits" "$T/p/report.md"
expect_grep '"status": "measured"' "$T/p/peaks.json"
expect_grep " peaks.json$" "$T/p/SHA256SUMS"
# the honest arm: well below the limit (the fraction is in results.csv)
frac=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "peak_fraction") c = i } $2 == "blocked" { print $c }' "$T/p/results.csv")
awk -v f="$frac" 'BEGIN { exit !(f > 0 && f < 1) }' || die "the honest baseline is at $frac of the peak"
# verify and report use the recorded peaks, never a new measurement
"$KGATE" verify "$T/p" >"$T/vout" 2>"$T/verr" || { cat "$T/verr" >&2; die "verify failed"; }
expect_report_identical "$T/p"
# a peak edited after the run is caught
sed 's/"flops_f32": [0-9.e+]*/"flops_f32": 1e15/' "$T/p/peaks.json" >"$T/peaks" && cp "$T/peaks" "$T/p/peaks.json"
if "$KGATE" verify "$T/p" >"$T/vout" 2>"$T/verr"; then die "verify accepted an edited peaks.json"; fi
expect_grep "peaks.json" "$T/verr"

# peaks from a file: applied (the cached arm is still impossible), and said
# to be read from the file, not measured, in peaks.json and the report
# (the small plan)
# (the file's FMA rate 2e10, 25x below the fixture's: the remembered
# output stays many times too fast even when the host's load slows its
# copy tenfold, so the outcome does not depend on the host)
sed 's/"flops_f32": [0-9.e]*/"flops_f32": 2e10/' "$fixture" >"$T/slow-peaks.json"
KGATE_PEAKS="$T/slow-peaks.json" "$KGATE" run "$T/small.kg" -o "$T/pf" >"$T/out" 2>"$T/err"; st=$?
expect_status 1 $st "run of the impossibly fast arm, peaks from a file"
expect_grep "^f32_384,cached,candidate,ok,INVALID,f32,.*,impossible," "$T/pf/results.csv"
expect_grep "\"status\": \"from $T/slow-peaks.json, not measured\"" "$T/pf/peaks.json"
expect_grep "\"flops_f32\": 20000000000" "$T/pf/peaks.json"
expect_grep "^Peaks from $T/slow-peaks.json, not measured (peaks.json: read from $T/slow-peaks.json (KGATE_PEAKS), not measured on this host)" \
    "$T/pf/report.md"
"$KGATE" verify "$T/pf" >"$T/vout" 2>"$T/verr" || { cat "$T/verr" >&2; die "verify of the folder with peaks from a file"; }
# a file that is not a peaks.json: said in peaks.json, and no limit applies (on 48^3 gemms: what
# is tested is the file's reading, not a limit)
sed 's/"flops_f32": [0-9.e]*/"flops_f32": "fast"/' "$fixture" >"$T/bad-peaks.json"
sed 's/^\([MNK]\) = 384$/\1 = 48/' "$T/small.kg" >"$T/tiny.kg"
[ "$(grep -c '^[MNK] = 48$' "$T/tiny.kg")" = 3 ] || die "tiny.kg: the gemm's sizes were not replaced"
KGATE_PEAKS="$T/bad-peaks.json" "$KGATE" run --report "$T/tiny.kg" -o "$T/pb" >"$T/out" 2>"$T/err"
expect_grep "\"status\": \"measurement failed: KGATE_PEAKS=$T/bad-peaks.json: field 'flops_f32' is missing or malformed" \
    "$T/pb/peaks.json"
expect_grep "No physics limit applies: peaks measurement failed: KGATE_PEAKS=" "$T/pb/report.md"

# fake backend: no measurement, no limit, said so
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/f" >"$T/out" 2>"$T/err" || die "fake campaign failed"
expect_grep '"status": "not measured: backend fake has no peak measurement (its timings are synthetic)"' "$T/f/peaks.json"
expect_grep "No physics limit applies: peaks not measured: backend fake" "$T/f/report.md"
# check-only runs time nothing and record no peaks
"$KGATE" check "$T/tiny.kg" -o "$T/c" >"$T/out" 2>"$T/err" || die "check failed"
[ ! -f "$T/c/peaks.json" ] || die "check-only run measured peaks"
exit 0
