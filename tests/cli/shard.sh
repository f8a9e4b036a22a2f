# Shards of a fake-backend campaign (docs/scale-out.md): the assignment is
# deterministic and covers every case once, each shard's folder records
# the plan hash, the shard and the device, kgate merge refuses a missing,
# duplicated, foreign, tampered or other-model shard, the merged verdicts
# equal the unsharded run's (same seeds), verify of the merged folder
# verifies the shards again, and kgate run --devices 0,1 runs and merges
# one shard per fake device.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
P=tests/plans/fake-shard.kg
run() { "$KGATE" run --report "$@" -q 2>>"$T/run.err"; }
# the plan with absolute kernel paths, and a variant of it (another seed: another hash)
sed "s#\.\./\.\./kernels#$PWD/kernels#" "$P" >"$T/plan.kg"
sed 's/^seed = 11/seed = 12/' "$T/plan.kg" >"$T/other.kg"
sed 's/^\[campaign\]/[campaign]\ndevices = any/' "$T/plan.kg" >"$T/any.kg"

# 1. the whole campaign, and three shards
run "$T/plan.kg" -o "$T/whole"
for i in 0 1 2; do
    run "$T/plan.kg" --shard $i/3 --campaign c1 -o "$T/s$i"
    st=$?
    [ $st -le 1 ] || { cat "$T/run.err" >&2; die "shard $i/3: exit $st"; }
done
hash=$(cat "$T/whole/plan.sha256")
for i in 0 1 2; do
    cmp -s "$T/s$i/plan.sha256" "$T/whole/plan.sha256" || die "shard $i has another plan hash"
    cmp -s "$T/s$i/plan.kg" "$T/whole/plan.kg" || die "shard $i has another canonical plan"
    expect_grep "\"index\": $i" "$T/s$i/meta.json"
    expect_grep '"count": 3' "$T/s$i/meta.json"
    expect_grep '"device_index": 0' "$T/s$i/meta.json"
    expect_grep '"device_model": "scripted timings (no hardware)"' "$T/s$i/meta.json"
    expect_grep "| shard | $i of 3" "$T/s$i/report.md"
    "$KGATE" verify "$T/s$i" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "shard $i does not verify"; }
done
# round-robin in canonical order: a, d | b | c; every case once
cases_of() { tr -d ' \n' <"$1/meta.json" | sed 's/.*"cases":\[\([^]]*\)\].*/\1/'; }
[ "$(cases_of "$T/s0")" = '"a","d"' ] || die "shard 0/3 runs $(cases_of "$T/s0"), expected a, d"
[ "$(cases_of "$T/s1")" = '"b"' ] || die "shard 1/3 runs $(cases_of "$T/s1"), expected b"
[ "$(cases_of "$T/s2")" = '"c"' ] || die "shard 2/3 runs $(cases_of "$T/s2"), expected c"
grep -q '^b,' "$T/s0/results.csv" && die "shard 0/3 has rows of case b"
# deterministic: the same shard again (in a campaign of its own) runs the same cases, with the same samples
run "$T/plan.kg" --shard 0/3 -o "$T/s0again"
[ "$(cases_of "$T/s0again")" = '"a","d"' ] || die "shard 0/3 again runs other cases"
cmp -s "$T/s0/results.csv" "$T/s0again/results.csv" || die "shard 0/3 again: other results"


# 2. usage errors
sed 's/^\[campaign\]/[campaign]\nshard = case/' "$T/plan.kg" >"$T/bycase.kg"
"$KGATE" run --report "$T/bycase.kg" --shard 4/5 -o "$T/bad" -q 2>"$T/e"; expect_status 2 $? "--shard 4/5 of 4 cases"
expect_grep 'shard 4/5 has no case.*lower N to at most 4' "$T/e"
"$KGATE" run --report "$T/plan.kg" --shard 2/2 -o "$T/bad2" -q 2>"$T/e"; expect_status 2 $? "--shard 2/2"
expect_grep 'I must be in \[0, 1\]' "$T/e"
"$KGATE" run --report "$T/plan.kg" --shard x -o "$T/bad3" -q 2>"$T/e"; expect_status 2 $? "--shard x"
expect_grep 'expected I/N' "$T/e"
"$KGATE" run --report "$T/plan.kg" --resume "$T/s1" --shard 0/3 -q 2>"$T/e"; expect_status 2 $? "resume with another shard"
expect_grep 'is shard 1/3 of its campaign: resume it with --shard 1/3' "$T/e"

# 3. the merge: verdicts equal the unsharded run's; verify re-verifies the shards; report works
"$KGATE" merge --quiet "$T/m" "$T/s2" "$T/s0" "$T/s1" 2>"$T/merge.err"
st=$?
[ $st -le 1 ] || { cat "$T/merge.err" >&2; die "kgate merge: exit $st"; }
cmp -s "$T/whole/results.csv" "$T/m/results.csv" || { diff "$T/whole/results.csv" "$T/m/results.csv" >&2; die "merged results.csv differs from the unsharded run's"; }
for i in 0 1 2; do [ -f "$T/m/shards/$i/SHA256SUMS" ] || die "no shards/$i in the merged folder"; done
cmp -s "$T/m/shards/1/meta.json" "$T/s1/meta.json" || die "shards/1 is not shard 1/3's folder"
cmp -s "$T/m/plan.sha256" "$T/whole/plan.sha256" || die "the merged plan hash differs"
expect_grep '"shards": 3' "$T/m/meta.json"
expect_grep '| shard 2 | shards/2: c on' "$T/m/report.md"
"$KGATE" verify "$T/m" >"$T/v.out" 2>"$T/v.err"; expect_status 0 $? "verify of the merged folder"
expect_grep '3 shards verified' "$T/v.out"
expect_report_identical "$T/m"
# a shard changed inside the merged folder, SHA256SUMS recomputed: verify names the shard
cp -r "$T/m" "$T/mt"
f=$(ls "$T/mt/shards/1/raw/"proc-00*.csv.gz | head -n 1)
raw_edit '2s/,[0-9.]*,\([0-9a-f]*,-\{0,1\}[0-9]*,-\{0,1\}[0-9]*\)$/,1.000,\1/' "$f"
(cd "$T/mt" && find . -type f ! -name SHA256SUMS ! -name attestation.dsse.json | sed 's#^\./##' | LC_ALL=C sort |
    xargs sha256sum >SHA256SUMS)
"$KGATE" verify "$T/mt" >/dev/null 2>"$T/v.err"; expect_status 1 $? "verify of a merged folder with a changed shard"
expect_grep 'MISMATCH shards/1: ' "$T/v.err"

# 4. merge refusals: missing, duplicate, foreign plan, tampered, another device model
"$KGATE" merge --quiet "$T/r1" "$T/s0" "$T/s1" 2>"$T/e"; expect_status 2 $? "merge with a shard missing"
expect_grep 'shard 2/3 is missing' "$T/e"
[ -e "$T/r1/SHA256SUMS" ] && die "a refused merge wrote a folder"
"$KGATE" merge --quiet "$T/r2" "$T/s0" "$T/s1" "$T/s2" "$T/s0" 2>"$T/e"; expect_status 2 $? "merge with a duplicate"
expect_grep 'shard 0/3 attempt 1 twice' "$T/e"
# (the refused shards below are numbered in ledgers of their own, which
# keeps campaign c1's ledger to shards 0, 1 and 2, each run once)
run "$T/other.kg" --shard 2/3 --campaign c1 --ledger "$T/o.ledger" -o "$T/o2"
"$KGATE" merge --quiet "$T/r3" "$T/s0" "$T/s1" "$T/o2" 2>"$T/e"; expect_status 2 $? "merge with another plan's shard"
expect_grep 'ran plan .* shards of different plans do not merge' "$T/e"
cp -r "$T/s2" "$T/t2"
f=$(ls "$T/t2/raw/"proc-00*.csv.gz | head -n 1)
raw_edit '2s/,[0-9.]*,\([0-9a-f]*,-\{0,1\}[0-9]*,-\{0,1\}[0-9]*\)$/,1.000,\1/' "$f"
"$KGATE" merge --quiet "$T/r4" "$T/s0" "$T/s1" "$T/t2" 2>"$T/e"; expect_status 2 $? "merge with a tampered shard"
expect_grep "$T/t2: .*raw/proc-" "$T/e"
"$KGATE" merge --quiet "$T/r5" "$T/s0" "$T/s1" "$T/whole" 2>"$T/e"; expect_status 2 $? "merge with a whole campaign"
expect_grep 'is a whole campaign, not a shard' "$T/e"
KGATE_FAKE_MODEL=other-gpu "$KGATE" run "$T/plan.kg" --shard 2/3 --campaign c1 --ledger "$T/g.ledger" -o "$T/g2" -q \
    2>>"$T/run.err"
expect_grep '"device_model": "scripted timings (no hardware), model other-gpu"' "$T/g2/meta.json"
"$KGATE" merge --quiet "$T/r6" "$T/s0" "$T/s1" "$T/g2" 2>"$T/e"; expect_status 2 $? "merge of two device models"
expect_grep "device model 'scripted timings (no hardware), model other-gpu'.*devices = any" "$T/e"
# the same with the device declared a case variable: merged
for i in 0 1; do run "$T/any.kg" --shard $i/3 --campaign c2 -o "$T/a$i"; done
KGATE_FAKE_MODEL=other-gpu "$KGATE" run "$T/any.kg" --shard 2/3 --campaign c2 -o "$T/a2" -q 2>>"$T/run.err"
"$KGATE" merge --quiet "$T/ma" "$T/a0" "$T/a1" "$T/a2" 2>"$T/e"
st=$?
[ $st -le 1 ] || { cat "$T/e" >&2; die "merge of two models under devices = any: exit $st"; }
expect_grep 'several device models' "$T/ma/meta.json"
"$KGATE" verify "$T/ma" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "verify of the devices = any merge"; }

# 5. signed shards, a signed merge, verify --key checks every signature
"$KGATE" key init --out "$T/key" >/dev/null 2>&1 || die "kgate key init"
for i in 0 1; do run "$T/plan.kg" --shard $i/2 --campaign c3 -o "$T/k$i" --key "$T/key/signing-key.pem"; done
run "$T/plan.kg" --shard 1/2 --campaign c3 --ledger "$T/u.ledger" -o "$T/u1"
"$KGATE" merge --quiet "$T/mk" "$T/k0" "$T/u1" --key "$T/key/signing-key.pem" 2>"$T/e"; expect_status 2 $? "signed merge of an unsigned shard"
expect_grep 'unsigned: a shard of a signed merge must be signed' "$T/e"
"$KGATE" merge --quiet "$T/mk" "$T/k0" "$T/k1" --key "$T/key/signing-key.pem" 2>"$T/e"
st=$?
[ $st -le 1 ] || { cat "$T/e" >&2; die "signed merge: exit $st"; }
[ -f "$T/mk/attestation.dsse.json" ] || die "the signed merge has no attestation"
"$KGATE" verify "$T/mk" --key "$T/key/signing-key.pub.pem" >"$T/v.out" 2>"$T/v.err"
expect_status 0 $? "verify --key of the signed merge"
expect_grep 'signature ok' "$T/v.out"

# 6. --devices 0,1: one shard per fake device, in parallel, each with its own lock, merged
"$KGATE" run --report "$T/plan.kg" --devices 0,1 -o "$T/d" -q 2>"$T/d.err"
st=$?
[ $st -le 1 ] || { cat "$T/d.err" >&2; die "run --devices 0,1: exit $st"; }
expect_grep 'shard 1/2 on device 1' "$T/d.err"
expect_grep '"device_index": 1' "$T/d/shards/1/meta.json"
expect_grep '"device": "scripted timings (no hardware), fake device 1"' "$T/d/shards/1/meta.json"
[ -f "$KGATE_LOCK_DIR/fake-1.lock" ] || die "no lock of fake device 1 in $KGATE_LOCK_DIR"
cmp -s "$T/whole/results.csv" "$T/d/results.csv" || die "run --devices 0,1: results differ from the unsharded run's"
"$KGATE" verify "$T/d" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "verify of the --devices folder"; }
"$KGATE" run --report "$T/plan.kg" --devices 0,1 -q 2>"$T/e"; expect_status 2 $? "--devices without -o"
expect_grep 'needs -o DIR' "$T/e"
echo "shard.sh: ok"
