# Crash safety: kill -9 of the supervisor mid-campaign, then
# `kgate run --resume DIR PLAN`: completed processes are kept byte for
# byte, the interrupted one is run again, and the results equal those of
# an uninterrupted campaign.  A write that fails as on a full disk (fault
# injection, and a real small tmpfs where one can be mounted) is a clear
# error that leaves a folder which resumes; one that fails while the
# supervisor writes a process's rows leaves that process unrecorded, and
# resume runs it again.  Another plan is refused.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ref" >/dev/null 2>&1; st=$?
[ $st -le 1 ] || die "reference campaign: exit $st"

KGATE_FAKE_SLEEP_MS=10 "$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ev" >/dev/null 2>"$T/err1" &
k=$!
i=0
until [ "$( { wc -l <"$T/ev/processes.csv"; } 2>/dev/null || echo 0)" -ge 3 ]; do
    i=$((i + 1)); [ $i -lt 300 ] || die "the campaign never completed two processes"; sleep 0.05
done
sleep 0.3
kill -9 $k
wait $k 2>/dev/null
head -n 3 "$T/ev/processes.csv" >"$T/kept"
cp "$T/ev/raw/proc-000.csv.gz" "$T/raw0"
[ -f "$T/ev/SHA256SUMS" ] && die "a killed campaign has no SHA256SUMS"
"$KGATE" verify "$T/ev" >/dev/null 2>&1 && die "an unfinished folder must not verify"

# another plan is refused, naming what differs
"$KGATE" run --report --resume "$T/ev" tests/plans/fake-aa.kg >/dev/null 2>"$T/bad.err"; st=$?
expect_status 2 $st "resume with another plan"
expect_grep "is not the plan of" "$T/bad.err"
expect_grep "\[campaign\] name: fake-faster -> fake-aa" "$T/bad.err"

# the orphaned worker still holds the device lock: resume waits for it
"$KGATE" run --report --resume "$T/ev" tests/plans/fake-faster.kg >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "resume: exit $st"; }
expect_grep "resuming" "$T/err"
head -n 3 "$T/ev/processes.csv" | cmp -s - "$T/kept" || die "resume changed completed processes"
cmp -s "$T/raw0" "$T/ev/raw/proc-000.csv.gz" || die "resume changed a completed process's rows"
[ "$(wc -l <"$T/ev/processes.csv")" = 7 ] || die "resume must end with 6 processes"
ls "$T/ev" "$T/ev/raw" "$T/ev/checks" "$T/ev/outputs" | grep -q '\.tmp\.' && die "temporary files left"
cmp -s "$T/ev/results.csv" "$T/ref/results.csv" || die "resumed results differ from an uninterrupted campaign"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "resumed folder does not verify"; }
# resuming a finished campaign only rewrites its reports and sums
"$KGATE" run --report --resume "$T/ev" tests/plans/fake-faster.kg >/dev/null 2>&1; st=$?
[ $st -le 1 ] || die "second resume: exit $st"
[ "$(wc -l <"$T/ev/processes.csv")" = 7 ] || die "a finished campaign must not grow"
"$KGATE" verify "$T/ev" >/dev/null 2>&1 || die "folder does not verify after a second resume"

# full disk, simulated: the 7th atomic write of the supervisor fails,
# before the first process: the refused campaign's folder goes (nothing
# in it is evidence), and the same -o runs it once there is room
KGATE_FAULT_WRITE_AFTER=6 "$KGATE" run tests/plans/fake-faster.kg -o "$T/full" >/dev/null 2>"$T/full.err"; st=$?
expect_status 2 $st "full disk"
expect_grep "the disk is full" "$T/full.err"
expect_no_grep "evidence so far is in" "$T/full.err"
[ -e "$T/full" ] && die "a campaign refused before its first process left its folder"
"$KGATE" run tests/plans/fake-faster.kg -o "$T/full" >/dev/null 2>&1; st=$?
[ $st -le 1 ] || die "the same -o after a full disk: exit $st"
cmp -s "$T/full/results.csv" "$T/ref/results.csv" || die "results after a full disk differ"
"$KGATE" verify "$T/full" >/dev/null 2>&1 || die "folder does not verify after a full disk"

# a full disk while the supervisor writes a process's rows (D5): the
# campaign stops with the process unrecorded, and --resume runs that slot
# again.  Writes: plan.kg, plan.sha256, meta.json, the two sources'
# copies, environment.json, then per process checks, outputs .bin,
# outputs index, raw, processes.csv, watch.csv; write 21 is process 2's
# outputs index.
KGATE_FAULT_WRITE_AFTER=20 "$KGATE" run --report tests/plans/fake-faster.kg -o "$T/rows" >/dev/null 2>"$T/rows.err"; st=$?
expect_status 2 $st "full disk while writing a process's rows"
expect_grep "the disk is full" "$T/rows.err"
[ "$(wc -l <"$T/rows/processes.csv")" = 3 ] || die "a process whose rows could not be written must not be recorded"
[ -f "$T/rows/raw/proc-002.csv.gz" ] && die "a process whose rows could not be written left its raw file"
"$KGATE" run --report --resume "$T/rows" tests/plans/fake-faster.kg >/dev/null 2>"$T/rows2.err"; st=$?
[ $st -le 1 ] || { cat "$T/rows2.err" >&2; die "resume after a failed row write: exit $st"; }
expect_grep "^2,fwd,ok,1," "$T/rows/processes.csv"
cmp -s "$T/rows/results.csv" "$T/ref/results.csv" || die "results after a failed row write differ"
"$KGATE" verify "$T/rows" >/dev/null 2>&1 || die "folder does not verify after a failed row write"

# a real full disk, where a small tmpfs can be mounted (root); skipped otherwise
mkdir -p "$T/small"
if mount -t tmpfs -o size=64k tmpfs "$T/small" 2>/dev/null; then
    "$KGATE" run --report tests/plans/fake-faster.kg -o "$T/small/ev" >/dev/null 2>"$T/small.err"; st=$?
    cp -r "$T/small/ev" "$T/smallcopy" 2>/dev/null
    umount "$T/small"
    expect_status 2 $st "tmpfs full"
    expect_grep "No space left on device" "$T/small.err"
    find "$T/smallcopy" -name '*.tmp.*' | grep -q . && die "a full tmpfs left a temporary file"
    # whatever was written is whole: every CSV ends with a newline
    for f in $(find "$T/smallcopy" -name '*.csv'); do
        [ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || die "$f is cut short"
    done
    "$KGATE" run --report --resume "$T/smallcopy" tests/plans/fake-faster.kg >/dev/null 2>&1; st=$?
    [ $st -le 1 ] || die "resume of the tmpfs folder: exit $st"
    "$KGATE" verify "$T/smallcopy" >/dev/null 2>&1 || die "tmpfs folder does not verify after resume"
else
    echo "note: cannot mount a tmpfs here; the full-disk case ran with fault injection only" >&2
fi
exit 0
