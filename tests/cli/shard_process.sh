# Shards by process (docs/scale-out.md): a one-case plan with 6 processes per
# direction over 2 and 3 shards, each shard running whole processes (every
# arm and case) with the unsharded campaign's process indices, seeds and load
# orders; kgate merge reassembles the schedule, and the merged results are
# byte for byte the unsharded run's (report.md too, but for the lines that
# name the run, the shards and the host watch); verify re-verifies the
# shards; a process missing from its shard, a process of another shard's
# slot, a tampered shard and a forged shard record are refused; a sequential plan is not sharded;
# --devices 0,1 on fake devices and kgate slurm deal processes too.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
run() { "$KGATE" run --report "$@" -q --quiet-window 0 2>>"$T/run.err"; }
sed "s#\.\./\.\./kernels#$PWD/kernels#" tests/plans/fake-shard-process.kg >"$T/plan.kg"
# report.md without the lines that name the run (kgate, host, start, backend
# and its shard count), the shards and their campaign, the folder's size and
# the host watch's section (the shards' own wall times and sessions)
masked() {
    sed '/^| kgate | /d; /^| host | /d; /^| started | /d; /^| backend | /d; /^| campaign | /d; /^| shard /d
         /^Evidence folder: /d
         /^## Host watch/,/^## /{/^## /!d}' "$1/report.md"
}

# 1. the whole campaign; 2 and 3 shards by process, merged
run "$T/plan.kg" -o "$T/whole"
for n in 2 3; do
    i=0
    while [ $i -lt $n ]; do
        run "$T/plan.kg" --shard $i/$n --campaign c$n -o "$T/s$n.$i"
        st=$?
        [ $st -le 1 ] || { cat "$T/run.err" >&2; die "shard $i/$n: exit $st"; }
        expect_grep '"by": "process"' "$T/s$n.$i/meta.json"
        i=$((i + 1))
    done
done
# pairs of slots dealt round-robin: shard 0/2 has slots 0 1 4 5 8 9, shard 2/3 slots 4 5 10 11
slots_of() { tr -d ' \n' <"$1/meta.json" | sed 's/.*"slots":\[\([^]]*\)\].*/\1/'; }
[ "$(slots_of "$T/s2.0")" = '0,1,4,5,8,9' ] || die "shard 0/2 has slots $(slots_of "$T/s2.0")"
[ "$(slots_of "$T/s3.2")" = '4,5,10,11' ] || die "shard 2/3 has slots $(slots_of "$T/s3.2")"
[ "$(awk -F, 'NR > 1' "$T/s3.2/processes.csv" | wc -l)" = 4 ] || die "shard 2/3 ran other than its 4 processes"
expect_grep '| shard | 1 of 2 (from 0) by process, device 0; its processes (the schedule.s slots, each with every case and arm): 2, 3, 6, 7, 10, 11;' "$T/s2.1/report.md"
"$KGATE" verify "$T/s3.1" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "shard 1/3 does not verify"; }
masked "$T/whole" >"$T/whole.masked"
for n in 2 3; do
    dirs=""
    i=$((n - 1))
    while [ $i -ge 0 ]; do dirs="$dirs $T/s$n.$i"; i=$((i - 1)); done
    "$KGATE" merge --quiet "$T/m$n" $dirs 2>"$T/merge.err"
    st=$?
    [ $st -le 1 ] || { cat "$T/merge.err" >&2; die "kgate merge of $n shards: exit $st"; }
    for f in results.csv results.json; do
        cmp -s "$T/whole/$f" "$T/m$n/$f" || { diff "$T/whole/$f" "$T/m$n/$f" >&2; die "$n shards: merged $f differs from the unsharded run's"; }
    done
    masked "$T/m$n" >"$T/m$n.masked"
    cmp -s "$T/whole.masked" "$T/m$n.masked" || { diff "$T/whole.masked" "$T/m$n.masked" >&2; die "$n shards: merged report.md differs"; }
    "$KGATE" verify "$T/m$n" >"$T/v.out" 2>"$T/v.err"; expect_status 0 $? "verify of the merged folder of $n shards"
    expect_grep "$n shards verified" "$T/v.out"
    expect_report_identical "$T/m$n"
done
expect_grep '| shard 1 | shards/1: processes 2, 3, 6, 7, 10, 11 on' "$T/m2/report.md"

# 2. a process missing from its shard: the last one removed (its row, files
# and the reports made again, SHA256SUMS recomputed)
sums() { (cd "$1" && find . -type f ! -name SHA256SUMS ! -name attestation.dsse.json | sed 's#^\./##' | LC_ALL=C sort |
    xargs sha256sum >SHA256SUMS); }
cp -r "$T/s2.1" "$T/miss"
sed -i '$d' "$T/miss/processes.csv"
find "$T/miss" -name 'proc-005*' -exec rm -f {} +
"$KGATE" report "$T/miss" >/dev/null 2>&1
sums "$T/miss"
"$KGATE" merge --quiet "$T/r1" "$T/s2.0" "$T/miss" 2>"$T/e"; expect_status 2 $? "merge with a process missing"
expect_grep 'slot 11 (process 11 of the schedule) has no process .*shard 1/2.s processes are incomplete' "$T/e"
[ -e "$T/r1/SHA256SUMS" ] && die "a refused merge wrote a folder"
# a process of another shard's slot (shard 1's slot 2 claimed as slot 0, shard 0's)
cp -r "$T/s2.1" "$T/dup"
sed -i '2s/^\(0,[a-z]*,[^,]*,[^,]*,[^,]*,[^,]*,"[^"]*"\),2,/\1,0,/' "$T/dup/processes.csv"
grep -q '^0,.*",0,0,' "$T/dup/processes.csv" || die "the test did not edit processes.csv: $(sed -n 2p "$T/dup/processes.csv")"
sums "$T/dup"
"$KGATE" merge --quiet "$T/r2" "$T/s2.0" "$T/dup" 2>"$T/e"; expect_status 2 $? "merge with a duplicated process"
expect_grep 'slot 0 is shard 0/2.s, not this shard.s' "$T/e"
# a shard changed inside the merged folder, SHA256SUMS recomputed: verify names it
cp -r "$T/m2" "$T/mt"
f=$(ls "$T/mt/shards/1/raw/"proc-00*.csv.gz | head -n 1)
raw_edit '2s/,[0-9.]*,\([0-9a-f]*,-\{0,1\}[0-9]*,-\{0,1\}[0-9]*\)$/,1.000,\1/' "$f"
sums "$T/mt"
"$KGATE" verify "$T/mt" >/dev/null 2>"$T/v.err"; expect_status 1 $? "verify of a merged folder with a changed shard"
expect_grep 'MISMATCH shards/1: ' "$T/v.err"
# a by-process shard recorded as a shard of cases
cp -r "$T/m2" "$T/mc"
sed -i 's/"by": "process"/"by": "case"/' "$T/mc/shards/0/meta.json"
sums "$T/mc/shards/0"
sums "$T/mc"
"$KGATE" verify "$T/mc" >/dev/null 2>"$T/v.err"; expect_status 1 $? "verify of a shard recorded by case"
expect_grep 'recorded as a shard of cases, but the plan' "$T/v.err"
# a by-process shard whose meta.json lists another shard's slot
cp -r "$T/m2" "$T/ms"
sed -i '/"slots": \[/{n;s/0,/2,/}' "$T/ms/shards/0/meta.json"
grep -q '^ *2,$' "$T/ms/shards/0/meta.json" || die "the test did not edit the slots of shards/0/meta.json"
sums "$T/ms/shards/0"
sums "$T/ms"
"$KGATE" verify "$T/ms" >/dev/null 2>"$T/v.err"; expect_status 1 $? "verify of a shard listing another's slot"
expect_grep 'lists slots that are not its assignment' "$T/v.err"

# 3. refusals: a sequential plan, a plan that says shard = case
sed 's/^processes = 6/processes = 12\nlooks = 2/' "$T/plan.kg" >"$T/seq.kg"
"$KGATE" run "$T/seq.kg" --shard 0/2 --campaign q -o "$T/q" -q 2>"$T/e"; expect_status 2 $? "a sequential plan sharded"
expect_grep 'cannot be sharded: a shard sees only its own processes' "$T/e"
sed 's/^\[campaign\]/[campaign]\nshard = case/' "$T/plan.kg" >"$T/case.kg"
"$KGATE" run "$T/case.kg" --shard 1/2 --campaign k -o "$T/k" -q 2>"$T/e"; expect_status 2 $? "shard = case of one case"
expect_grep 'shard 1/2 has no case.*shard = process' "$T/e"
"$KGATE" run "$T/plan.kg" --shard 6/7 --campaign k -o "$T/k" -q 2>"$T/e"; expect_status 2 $? "more shards than pairs"
expect_grep 'shard 6/7 has no process.*lower N to at most 6' "$T/e"

# 4. --devices 0,1 deals processes over two fake devices; kgate slurm takes 2 shards of one case
"$KGATE" run --report "$T/plan.kg" --devices 0,1 --quiet-window 0 -o "$T/d" -q 2>"$T/d.err"
st=$?
[ $st -le 1 ] || { cat "$T/d.err" >&2; die "run --devices 0,1: exit $st"; }
expect_grep '"by": "process"' "$T/d/shards/1/meta.json"
cmp -s "$T/whole/results.csv" "$T/d/results.csv" || die "run --devices 0,1: results differ from the unsharded run's"
"$KGATE" verify "$T/d" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "verify of the --devices folder"; }
"$KGATE" slurm "$T/plan.kg" --shards 2 -o "$T/sl" >"$T/sl.out" 2>&1; expect_status 0 $? "kgate slurm of one case in 2 shards"
expect_grep 'array=0-1' "$T/sl.slurm/shards.sbatch"
echo "shard_process.sh: ok"
