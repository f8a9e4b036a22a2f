# Quiet host: a process on the forbidden list (a copy of sleep under a
# listed name) started during a campaign makes the running process
# "contaminated": excluded, kept with its reason, and repeated in the same
# direction; the analysis counts it as excluded and the folder verifies.
# kgate-test: waits (campaigns slowed to last while a forbidden process comes and goes)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
export KGATE_FAKE_SLEEP_MS=10
# a name of this run alone (another run of the suite on the host has its own)
CCN=kgcc$$
cp "$(command -v sleep)" "$T/$CCN" || die "cannot copy sleep"
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ev" --quiet-window 0 --forbid $CCN,kgate-other \
    >"$T/out" 2>"$T/err" &
k=$!
i=0
until [ -f "$T/ev/processes.csv" ]; do
    i=$((i + 1)); [ $i -lt 200 ] || die "no process finished"; sleep 0.05
done
sleep 0.2
"$T/$CCN" 0.8 &
cc=$!
wait $cc
wait $k; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "campaign: exit $st"; }
cat "$T/ev/processes.csv" >&2
grep -q ",contaminated,0,.*forbidden process $CCN (pid $cc) running at 20" "$T/ev/processes.csv" ||
    die "no contaminated process naming $CCN (pid $cc)"
expect_grep "contaminated" "$T/err"
# every contaminated row is followed by a repeat of its slot, in its direction
# (slot and attempt counted from the end: a reason may hold commas)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "slot") os = NF - i; if ($i == "attempt") oa = NF - i }; next }
         NR > 1 { n = NF; slot = $(n-os); att = $(n-oa); dir[slot] = dir[slot] ? dir[slot] : $2;
                  if (dir[slot] != $2) { print "slot " slot " changed direction"; bad = 1 }
                  if ($3 == "contaminated") { c[slot]++; nc++ } else if (att != c[slot]) { print "slot " slot " attempt " att; bad = 1 }
                  rows++ }
         END { if (rows != 6 + nc) { print "rows " rows " contaminated " nc; bad = 1 } exit bad }' \
    "$T/ev/processes.csv" || die "repeats do not match their slots"
nc=$(grep -c ",contaminated,0," "$T/ev/processes.csv")
expect_grep "6 accepted, $nc excluded" "$T/out"
# the contaminated process's evidence is kept
p=$(grep ",contaminated,0," "$T/ev/processes.csv" | head -n 1 | cut -d, -f1)
[ -f "$T/ev/raw/$(printf 'proc-%03d.csv.gz' "$p")" ] || die "the contaminated process's rows must be kept"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "folder does not verify"; }
expect_report_identical "$T/ev"
# the quiet window: a forbidden process before the start makes the campaign
# wait, and it starts once the process left (the process runs until the
# campaign says it waits for it: no race with a slow start of either)
"$T/$CCN" 60 &
cc=$!
i=0
until [ "$(cat "/proc/$cc/comm" 2>/dev/null)" = $CCN ]; do
    i=$((i + 1)); [ $i -lt 200 ] || die "the forbidden process never started"; sleep 0.01
done
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ev2" --quiet-window 0.2 --forbid $CCN >"$T/out2" 2>"$T/err2" &
k=$!
i=0
until grep -q "waiting for a quiet host: forbidden process $CCN" "$T/err2" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 600 ] || { kill $cc $k; die "the campaign never said it waits for the forbidden process"; }
    sleep 0.05
done
kill $cc; wait $cc 2>/dev/null
wait $k; st=$?
[ $st -le 1 ] || { cat "$T/err2" >&2; die "second campaign: exit $st"; }
expect_no_grep "contaminated" "$T/ev2/processes.csv"
exit 0
