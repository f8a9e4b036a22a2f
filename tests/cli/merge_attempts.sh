# kgate merge binds the attempts of a campaign (docs/scale-out.md,
# "Campaigns and attempts"; docs/security.md).  The cherry-pick attack:
# shard 0 of run A merged with shard 1 of run B of the same plan, signed,
# was accepted (1e28e32); now the shards of two campaigns are refused, a
# shard run again (attempt 2) merged without attempt 1 is refused, and
# merged with it the verdict takes attempt 1 and the report lists both
# attempts with their verdicts.  The ledger is a hash chain: an edited
# line stops the next shard run; a shard numbered in a second ledger, or
# a folder changed after its attempt ended, is refused.  --devices and
# kgate slurm give every shard one campaign id and one ledger.
. tests/cli_lib.sh
sed "s#\.\./\.\./kernels#$PWD/kernels#" tests/plans/fake-attempts.kg >"$T/plan.kg"
"$KGATE" key init --out "$T/key" >/dev/null 2>&1 || die "kgate key init"
K="$T/key/signing-key.pem"
PUB="$T/key/signing-key.pub.pem"
run() { "$KGATE" run "$T/plan.kg" -q --quiet-window 0 --key "$K" "$@" 2>>"$T/run.err"; }
ok_run() { run "$@"; st=$?; [ $st -le 1 ] || { cat "$T/run.err" >&2; die "kgate run $*: exit $st"; }; }
merge() { "$KGATE" merge --quiet --key "$K" "$@" 2>"$T/e"; }

# 1. the cherry-pick: two runs of the same plan, each shard by hand.  A
# shard without --campaign starts a campaign of its own and says so.
ok_run --shard 0/2 -o "$T/A0"
expect_grep 'shard 0/2 starts a new campaign [0-9a-f]*: run its other shards with --campaign' "$T/run.err"
ID=$(sed -n 's/.*"id": "\([0-9a-f]*\)".*/\1/p' "$T/A0/meta.json")
[ ${#ID} -eq 32 ] || die "shard 0/2 made no 32-digit campaign id: '$ID'"
ok_run --shard 1/2 --campaign "$ID" -o "$T/A1"
expect_grep '"attempt": 1' "$T/A1/meta.json"
ok_run --shard 0/2 -o "$T/B0"
ok_run --shard 1/2 --campaign "$(sed -n 's/.*"id": "\([0-9a-f]*\)".*/\1/p' "$T/B0/meta.json")" -o "$T/B1"
merge "$T/m1" "$T/A0" "$T/B1"; expect_status 2 $? "merge of shard 0 of run A and shard 1 of run B"
expect_grep 'B1: is of campaign [0-9a-f]*, .*A0 of campaign '"$ID"': shards of different campaigns do not merge' "$T/e"
[ -e "$T/m1/SHA256SUMS" ] && die "a refused merge wrote a folder"
# both halves of one run merge
merge "$T/mA" "$T/A0" "$T/A1"; st=$?
[ $st -le 1 ] || { cat "$T/e" >&2; die "merge of run A's shards: exit $st"; }
expect_grep '| campaign | '"$ID"'; the verdict takes attempt 1 of every shard' "$T/mA/report.md"

# 2. shard 1 run again in campaign A: attempt 2, numbered in the ledger
ok_run --shard 1/2 --campaign "$ID" -o "$T/A1b"
expect_grep "shard 1/2 of campaign $ID: attempt 2" "$T/run.err"
expect_grep '"attempt": 2' "$T/A1b/meta.json"
[ "$(grep -c " attempt 1 started" "$T/kgate-$ID.ledger")" = 2 ] || die "the ledger does not hold two attempts 1"
merge "$T/m2" "$T/A0" "$T/A1b"; expect_status 2 $? "merge of a re-run shard without its attempt 1"
expect_grep "shard 1/2 attempt 1 (started .*, salt 0x[0-9a-f]*) is left out: give its folder to kgate merge too" "$T/e"
# the attempt is bound by the shard's signature: attempt 2 renumbered 1
# in its meta.json no longer verifies with the key
cp -r "$T/A1b" "$T/A1f"
sed -i 's/"attempt": 2/"attempt": 1/' "$T/A1f/meta.json"
merge "$T/m2b" "$T/A0" "$T/A1f"; expect_status 2 $? "merge of a shard whose attempt was edited"
expect_grep "A1f: its signature does not verify with the key" "$T/e"
# attempt 1 with shard 0, leaving the re-run out: the ledger names it
merge "$T/m3" "$T/A0" "$T/A1"; expect_status 2 $? "merge that leaves attempt 2 out"
expect_grep "shard 1/2 attempt 2 (started .*) is left out" "$T/e"
# every attempt: merged; the verdict is attempt 1's, the report lists both
merge "$T/m4" "$T/A1b" "$T/A0" "$T/A1"; st=$?
[ $st -le 1 ] || { cat "$T/e" >&2; die "merge of every attempt: exit $st"; }
cmp -s "$T/m4/shards/1/meta.json" "$T/A1/meta.json" || die "shards/1 is not attempt 1 of shard 1"
cmp -s "$T/m4/shards/1.2/meta.json" "$T/A1b/meta.json" || die "shards/1.2 is not attempt 2 of shard 1"
cmp -s "$T/m4/results.csv" "$T/mA/results.csv" || die "the verdict is not attempt 1's"
expect_grep '| shard 1 attempt 1 | shards/1, in the verdict: started .*; its own verdicts: gate PASS; b fast FASTER |' \
    "$T/m4/report.md"
expect_grep '| shard 1 attempt 2 | shards/1.2, not in the verdict (a later attempt): started .*; its own verdicts: gate PASS; b fast FASTER |' \
    "$T/m4/report.md"
[ -f "$T/m4/ledger" ] || die "the merged folder does not keep the ledger"
"$KGATE" verify "$T/m4" --key "$PUB" >"$T/v.out" 2>"$T/v.err"
expect_status 0 $? "verify --key of the merge of every attempt"
expect_report_identical "$T/m4"
# the merged folder without attempt 2 (its folder and its meta.json entry
# removed, SHA256SUMS recomputed: a forger without the key): the ledger
# it keeps names attempt 2, verify refuses
cp -r "$T/m4" "$T/m5"
rm -rf "$T/m5/shards/1.2" "$T/m5/attestation.dsse.json"
python3 - "$T/m5/meta.json" <<'EOF'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m["merged"]["attempts"] = [a for a in m["merged"]["attempts"] if a["attempt"] == 1]
open(p, "w").write(json.dumps(m, indent=2) + "\n")
EOF
"$KGATE" report "$T/m5" >/dev/null 2>&1
(cd "$T/m5" && find . -type f ! -path ./SHA256SUMS ! -path ./attestation.dsse.json | sed 's#^\./##' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
"$KGATE" verify "$T/m5" >/dev/null 2>"$T/v.err"; expect_status 1 $? "verify of a merged folder without attempt 2"
expect_grep "shard 1/2 attempt 2 (started .*) is left out" "$T/v.err"

# 3. the ledger: an edited line stops the next run; a second ledger for
# the same campaign is refused by merge; a folder changed after its
# attempt ended is refused by merge
cp "$T/kgate-$ID.ledger" "$T/ledger.kept"
sed -i '3s/ attempt 1 / attempt 9 /' "$T/kgate-$ID.ledger"
run --shard 1/2 --campaign "$ID" -o "$T/A1c"; expect_status 2 $? "a shard run on an edited ledger"
expect_grep "kgate-$ID.ledger:4: its prev is not the sha256 of the lines before it: the ledger was edited" "$T/run.err"
cp "$T/ledger.kept" "$T/kgate-$ID.ledger"
ok_run --shard 1/2 --campaign "$ID" --ledger "$T/fresh.ledger" -o "$T/A1d"
expect_grep '"attempt": 1' "$T/A1d/meta.json"
merge "$T/m6" "$T/A0" "$T/A1d"; expect_status 2 $? "merge of a shard numbered in a second ledger"
expect_grep "A1d: numbered its attempt in ledger $T/fresh.ledger, .* the shards of a campaign share one ledger" "$T/e"
cp -r "$T/A1" "$T/A1e"
echo "changed after the run" >>"$T/A1e/logs/$(ls "$T/A1e/logs" | head -n 1)"
rm -f "$T/A1e/attestation.dsse.json"
(cd "$T/A1e" && find . -type f ! -path ./SHA256SUMS ! -path ./attestation.dsse.json | sed 's#^\./##' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
"$KGATE" merge --quiet "$T/m7" "$T/A0" "$T/A1e" "$T/A1b" 2>"$T/e"; expect_status 2 $? "merge of a folder changed after it ended"
expect_grep "A1e: its SHA256SUMS is not the one shard 1/2 attempt 1 ended with" "$T/e"
# --campaign goes with --shard
"$KGATE" run "$T/plan.kg" --campaign "$ID" -o "$T/x" -q 2>"$T/e"; expect_status 2 $? "--campaign without --shard"
expect_grep '\-\-campaign and --ledger name a shard' "$T/e"

# 4. --devices: one id and one ledger (DIR/ledger) for every shard
"$KGATE" run "$T/plan.kg" --devices 0,1 -o "$T/d" -q --quiet-window 0 2>"$T/d.err"; st=$?
[ $st -le 1 ] || { cat "$T/d.err" >&2; die "run --devices 0,1: exit $st"; }
d0=$(sed -n 's/.*"id": "\([0-9a-f]*\)".*/\1/p' "$T/d/shards/0/meta.json")
d1=$(sed -n 's/.*"id": "\([0-9a-f]*\)".*/\1/p' "$T/d/shards/1/meta.json")
[ ${#d0} -eq 32 ] && [ "$d0" = "$d1" ] || die "--devices: shards of campaigns '$d0' and '$d1'"
[ "$(grep -c " started " "$T/d/ledger")" = 2 ] || die "--devices: the ledger does not hold both shards' starts"
"$KGATE" verify "$T/d" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "verify of the --devices folder"; }

# 5. kgate slurm: the script gives every array task the campaign id it
# made; its tasks, run here by hand as Slurm would, merge
"$KGATE" slurm "$T/plan.kg" --shards 2 -o "$T/s" --key "$K" >"$T/slurm.out" 2>"$T/slurm.err" || die "kgate slurm"
S="$T/s.slurm/shards.sbatch"
sid=$(sed -n 's/^CAMPAIGN=\([0-9a-f]*\)$/\1/p' "$S")
[ ${#sid} -eq 32 ] || die "shards.sbatch sets no campaign id"
expect_grep "campaign $sid" "$T/slurm.err"
expect_grep '\-\-shard "$I/$N" --campaign "$CAMPAIGN" --ledger "$OUT/ledger" -o "$D"' "$S"
expect_grep '\-\-shard "$I/$N" --campaign "$CAMPAIGN" --resume "$D"' "$S"
for i in 0 1; do
    SLURM_ARRAY_TASK_ID=$i sh "$S" >"$T/task$i.out" 2>&1 || { cat "$T/task$i.out" >&2; die "array task $i"; }
done
sh "$T/s.slurm/merge.sbatch" >/dev/null 2>&1
[ "$(cat "$T/s.slurm/merge.status")" -le 1 ] || die "the merge job: kgate merge exit $(cat "$T/s.slurm/merge.status")"
expect_grep "\"id\": \"$sid\"" "$T/s/shards/1/meta.json"
"$KGATE" verify "$T/s" --key "$PUB" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "verify of the Slurm folder"; }
echo "merge_attempts.sh: ok"
