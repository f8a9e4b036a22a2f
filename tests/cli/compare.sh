# kgate compare (docs/compare.md) on fake campaigns of tests/plans/fake-compare.kg:
#   (a) two runs of the plan with different seeds: no row FASTER or SLOWER;
#   (b) the candidate 20% slower (fake_ns 970 -> 1164) and a case renamed:
#       SLOWER for the candidate on both cases (matched by shape, the new
#       name noted), no other row FASTER or SLOWER, the plan key named;
#       --fail-on-slower exits 1;
#   (c) three folders: the trend table, one column per folder;
#   (d) another device (KGATE_FAKE_DEVICE): refused naming both and the flag,
#       compared with --allow-device; the same device is refused nothing;
#   (e) a folder changed after its campaign: refused, naming the file;
#   (f) --json: JSON alone on stdout, with the same verdicts;
#   (g) no case in common, a check-only folder, too few folders: errors.
# Another kgate version cannot be made here without a second build; the
# rule is tested in tests/unit/test_compare.c.
. tests/cli_lib.sh
P=$(pwd)
sed "s#\.\./\.\./kernels#$P/kernels#" tests/plans/fake-compare.kg >"$T/a.kg"
sed 's/^seed = 11/seed = 12/' "$T/a.kg" >"$T/b.kg"
awk '/^\[arm cand\]/ { f = 1 } f && /^fake_ns = 970/ { print "fake_ns = 1164"; f = 0; next } { print }' "$T/a.kg" |
    sed 's/^seed = 11/seed = 13/; s/^\[case wide\]/[case wide2]/' >"$T/s.kg"
sed 's/^M = 8/M = 6/; s/^M = 4/M = 5/' "$T/a.kg" >"$T/other.kg"
run() { # plan folder [env...]
    plan=$1 dir=$2; shift 2
    env "$@" "$KGATE" run --report "$plan" -o "$dir" >"$T/run.out" 2>"$T/run.err"; st=$?
    [ "$st" -le 1 ] || { cat "$T/run.err" >&2; die "kgate run $plan: exit status $st"; }
}
run "$T/a.kg" "$T/A"
run "$T/b.kg" "$T/B"
run "$T/s.kg" "$T/S"
run "$T/b.kg" "$T/D" KGATE_FAKE_DEVICE="Fake GPU 2"
run "$T/other.kg" "$T/O"
grep -q '"device": "Fake GPU 2 (scripted timings, no hardware)"' "$T/D/meta.json" || die "KGATE_FAKE_DEVICE did not name the device"

# (a) the same plan, another seed
"$KGATE" compare "$T/A" "$T/B" >"$T/ab.md" 2>"$T/ab.err"; st=$?
expect_status 0 $st "compare A B"
[ -s "$T/ab.err" ] && { cat "$T/ab.err" >&2; die "compare A B wrote on stderr"; }
expect_grep "^## B against A" "$T/ab.md"
expect_grep "seed: 11 -> 12" "$T/ab.md"
n=$(grep -c '^| \(small\|wide\) | rowsum | f32 |' "$T/ab.md")
[ "$n" -eq 6 ] || die "compare A B: $n rows, expected 6 (2 cases x 3 arms)"
expect_no_grep "| FASTER |" "$T/ab.md"
expect_no_grep "| SLOWER |" "$T/ab.md"
expect_grep "| small | rowsum | f32 | M = 4, N = 16 | cand |.*| 0.9[0-9]* → 0.9[0-9]* vs base |" "$T/ab.md"
expect_grep "6 rows: 0 FASTER, 0 SLOWER" "$T/ab.md"
expect_no_grep "^## Trend" "$T/ab.md"

# (b) the candidate 20% slower, a case renamed
"$KGATE" compare "$T/A" "$T/S" >"$T/as.md" 2>"$T/as.err"; st=$?
expect_status 0 $st "compare A S"
expect_grep "| small | rowsum | f32 | M = 4, N = 16 | cand |.*| SLOWER |.*fake_ns: 970 -> 1164" "$T/as.md"
expect_grep "| wide | rowsum | f32 | M = 8, N = 32 | cand |.*| SLOWER |.*case named wide2 in B" "$T/as.md"
expect_grep "relative to base: SLOWER +20" "$T/as.md"
expect_grep "cases of B matched under another name: wide2 (A's wide)" "$T/as.md"
for arm in base ctrl; do
    if grep "| $arm |" "$T/as.md" | grep -q "| \(FASTER\|SLOWER\) |"; then
        grep "| $arm |" "$T/as.md" >&2
        die "compare A S: arm $arm is FASTER or SLOWER"
    fi
done
# the change of the slow candidate is about +20% (a 1164/970 ratio), its interval around it
grep "| small | rowsum | f32 | M = 4, N = 16 | cand |" "$T/as.md" | grep -q "| +\(19\|2[01]\)\.[0-9]*% \[+1[0-9]\.[0-9]*%, +2[0-9]\.[0-9]*%\] |" ||
    { grep "| cand |" "$T/as.md" >&2; die "compare A S: the candidate's change is not near +20%"; }
"$KGATE" compare "$T/A" "$T/S" --fail-on-slower >/dev/null 2>&1; st=$?
expect_status 1 $st "compare A S --fail-on-slower"
"$KGATE" compare "$T/A" "$T/B" --fail-on-slower >/dev/null 2>&1; st=$?
expect_status 0 $st "compare A B --fail-on-slower"
# a margin of 25% makes the slow candidate's change within it
"$KGATE" compare "$T/A" "$T/S" --margin 25% >"$T/as25.md" 2>&1 || die "compare --margin 25%"
expect_grep "| small | rowsum | f32 | M = 4, N = 16 | cand |.*| EQUIVALENT |" "$T/as25.md"

# (c) three folders: the trend table
"$KGATE" compare "$T/A" "$T/B" "$T/S" >"$T/abs.md" 2>&1; st=$?
expect_status 0 $st "compare A B S"
expect_grep "^## C against A" "$T/abs.md"
expect_grep "^## Trend against A" "$T/abs.md"
expect_grep "^| case | arm | A µs | B µs | C µs |$" "$T/abs.md"
expect_grep "^| small | cand | 0.9[0-9]* | 0.9[0-9]* ([-+][0-9.]*%, [A-Z]*) | 1.1[0-9]* (+2[0-9.]*%, SLOWER) |$" "$T/abs.md"
expect_grep "^| wide | base | .* | .* | .* |$" "$T/abs.md"

# (d) another device
"$KGATE" compare "$T/A" "$T/D" >"$T/ad.md" 2>"$T/ad.err"; st=$?
expect_status 2 $st "compare A D (another device)"
expect_grep "ran on another device than A" "$T/ad.err"
expect_grep "'scripted timings' and 'Fake GPU 2'" "$T/ad.err"
expect_grep "\-\-allow-device" "$T/ad.err"
[ -s "$T/ad.md" ] && die "a refused comparison printed on stdout"
"$KGATE" compare "$T/A" "$T/D" --allow-device >"$T/ad.md" 2>&1; st=$?
expect_status 0 $st "compare A D --allow-device"
expect_grep "B ran on another device than A (--allow-device)" "$T/ad.md"
"$KGATE" compare "$T/A" "$T/B" --same-device >/dev/null 2>&1; st=$?
expect_status 0 $st "compare A B --same-device"
"$KGATE" compare "$T/A" "$T/D" --same-device --allow-device >/dev/null 2>"$T/err"; st=$?
expect_status 2 $st "--same-device with --allow-device"

# (e) a folder changed after its campaign
cp -r "$T/B" "$T/Bt"
raw_edit '$a1,rev,0,base,small,0,1.000,0000000000000000' "$T/Bt/raw/proc-001.csv.gz"
"$KGATE" compare "$T/A" "$T/Bt" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "compare with a changed raw file"
expect_grep "fails its integrity check: raw/proc-001.csv.gz: SHA-256" "$T/err"
cp -r "$T/B" "$T/Bx"
echo note >"$T/Bx/notes.txt"
"$KGATE" compare "$T/A" "$T/Bx" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "compare with an added file"
expect_grep "notes.txt: not listed in SHA256SUMS" "$T/err"
"$KGATE" compare "$T/A" "$T/B" --verify >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "compare --verify"

# (f) JSON
"$KGATE" compare --json "$T/A" "$T/B" "$T/S" >"$T/abs.json" 2>"$T/err"; st=$?
expect_status 0 $st "compare --json"
if command -v jq >/dev/null 2>&1; then
    [ "$(jq -r '.summary.slower' "$T/abs.json")" = 2 ] || die "JSON: summary.slower is not 2"
    [ "$(jq -r '[.rows[] | select(.arm == "cand")] | map(.level.verdict) | join(",")' "$T/abs.json")" = "SLOWER,SLOWER" ] ||
        die "JSON: the candidate rows are not SLOWER"
    [ "$(jq -r '.trend | length' "$T/abs.json")" = 6 ] || die "JSON: the trend has not 6 rows"
    [ "$(jq -r '.trend[0].points | length' "$T/abs.json")" = 3 ] || die "JSON: a trend row has not 3 points"
    [ "$(jq -r '.rows[0].folders[1].case' "$T/abs.json")" = small ] || die "JSON: the folders of a row"
else
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["summary"]["slower"] == 2' "$T/abs.json" ||
        die "JSON: not valid or summary.slower is not 2"
fi
head -c 1 "$T/abs.json" | grep -q '{' || die "JSON: stdout does not start with the object"

# (g) errors
"$KGATE" compare "$T/A" "$T/O" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "compare with no case in common"
expect_grep "have no case in common (cases are matched by op, dtype and variables, not by name)" "$T/err"
"$KGATE" check "$T/a.kg" -o "$T/K" >/dev/null 2>&1
if [ -f "$T/K/SHA256SUMS" ]; then
    "$KGATE" compare "$T/A" "$T/K" >"$T/out" 2>"$T/err"; st=$?
    expect_status 2 $st "compare with a check-only folder"
    expect_grep "a kgate check folder has no timings" "$T/err"
fi
"$KGATE" compare "$T/A" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "compare with one folder"
expect_grep "give two evidence folders or more" "$T/err"
"$KGATE" compare "$T/A" "$T/nope" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "compare with a missing folder"
expect_grep "not an evidence folder" "$T/err"
"$KGATE" compare "$T/A" "$T/B" --margin 2x >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "compare --margin 2x"
expect_grep "\-\-margin needs" "$T/err"
echo "compare: ok"
