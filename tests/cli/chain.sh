# Evidence binding: processes.csv chains its processes and their files'
# digests from the plan hash, verify proves the schedule complete and
# consistent with the plan, environment.json's build and source hashes
# are checked against build/ and sources/, and a write that fails as on a
# full disk at any point of a campaign costs nothing: --resume ends with
# the folder an uninterrupted run writes.  Every forgery below rewrites
# SHA256SUMS (and the reports where it changes what they read), as a
# forger who knows the format would.
# kgate-test: first (about 150 fake campaigns: a full disk at every write)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
PLAN=tests/plans/fake-faster.kg
# CHAIN_SKIP_CPU=1 leaves out the cpu campaign of part 3 (a quicker run while working on the rest)
resum() { (cd "$1" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS); }
fresh() { rm -rf "$T/f"; cp -r "$T/ev" "$T/f"; }
# the forged folder F must not verify, with a message matching pattern
refused() { # what pattern
    "$KGATE" report "$T/f" >/dev/null 2>&1
    resum "$T/f"
    "$KGATE" verify "$T/f" >"$T/v.out" 2>"$T/v.err"; st=$?
    [ $st = 1 ] || { cat "$T/v.out" "$T/v.err" >&2; die "$1: verify exit $st, expected 1"; }
    grep -q -- "$2" "$T/v.out" "$T/v.err" || { cat "$T/v.out" "$T/v.err" >&2; die "$1: expected '$2'"; }
}
"$KGATE" run --report $PLAN -o "$T/ev" >/dev/null 2>&1; st=$?
[ $st -le 1 ] || die "campaign: exit $st"
"$KGATE" verify "$T/ev" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "an honest folder does not verify"; }
head -n 1 "$T/ev/processes.csv" | grep -q ',raw_sha256,checks_sha256,outputs_bin_sha256,outputs_sha256,telemetry_sha256,resources_sha256,chain$' ||
    die "processes.csv has no digests and chain"

# 1. the chain and the files' digests
fresh; sed -i 's/^\(3,[^,]*,[^,]*,[^,]*,\)[0-9.]*/\10.500/' "$T/f/processes.csv"
refused "an edited process row" "processes.csv:5: chain"
fresh; raw_edit '4s/,[0-9.]*,\([0-9a-f]*,-\{0,1\}[0-9]*,-\{0,1\}[0-9]*\)$/,970.000,\1/' "$T/f/raw/proc-001.csv.gz"
refused "an edited raw sample" "raw/proc-001.csv.gz: SHA-256"
fresh; rm "$T/f/raw/proc-005.csv.gz" "$T/f/checks/proc-005.csv" "$T/f/outputs/proc-005."* "$T/f/logs/proc-005.log"
sed -i '$d' "$T/f/processes.csv"
refused "the last process deleted" "slot 5 has no process"
fresh; rm "$T/f/raw/proc-002.csv.gz" "$T/f/outputs/proc-002."*
sed -i 's/^2,fwd,ok,1,/2,fwd,crashed,0,/' "$T/f/processes.csv"
refused "a process turned into a crash" "processes.csv:4: chain"
fresh; for k in raw checks logs; do for f in "$T/f/$k/proc-000".*; do
    cp "$f" "$(echo "$f" | sed 's/proc-000/proc-006/')"; done; done
raw_edit "s/^0,/6,/" "$T/f/raw/proc-006.csv.gz"
sed -i "s/^0,/6,/" "$T/f/checks/proc-006.csv"
sed -n 2p "$T/f/processes.csv" | sed 's/^0,/6,/' >>"$T/f/processes.csv"
refused "a copy of process 0 appended as process 6" "processes.csv:8"
fresh; cp "$T/f/logs/proc-000.log" "$T/f/logs/proc-009.log"
refused "a file of a process that does not exist" "logs/proc-009.log: no process 9"
fresh; raw_text "$T/ev/raw/proc-001.csv.gz" | sed 's/^1,/3,/' | gzip -n >"$T/f/raw/proc-003.csv.gz"
raw_text "$T/ev/raw/proc-003.csv.gz" | sed 's/^3,/1,/' | gzip -n >"$T/f/raw/proc-001.csv.gz"
refused "two processes' samples swapped and renumbered" "raw/proc-001.csv.gz: SHA-256"

# a processes.csv of the schema before the chain (13 columns) still reads,
# but verify cannot prove its processes; the two older schemas read too
for ncols in 13 9 7; do
    fresh; cut -d, -f1-$ncols "$T/ev/processes.csv" >"$T/f/processes.csv"
    "$KGATE" report "$T/f" >/dev/null 2>"$T/r.err" || { cat "$T/r.err" >&2; die "a $ncols-column processes.csv does not read"; }
done
fresh; cut -d, -f1-13 "$T/ev/processes.csv" >"$T/f/processes.csv"
refused "a processes.csv rewritten without the chain" "processes.csv: records no file digests and chain"

# --resume does not continue a folder whose chain was broken since
fresh; rm "$T/f/raw/proc-005.csv.gz" "$T/f/checks/proc-005.csv" "$T/f/outputs/proc-005."* "$T/f/SHA256SUMS"
sed -i '$d' "$T/f/processes.csv"
sed -i 's/^\(3,[^,]*,[^,]*,[^,]*,\)[0-9.]*/\10.500/' "$T/f/processes.csv"
"$KGATE" run --report --resume "$T/f" $PLAN >/dev/null 2>"$T/r.err"; st=$?
expect_status 2 $st "resume of an edited folder"
expect_grep "processes.csv:5: its chain does not follow" "$T/r.err"

# 2. the schedule and the saved outputs
fresh; rm -rf "$T/f/outputs"
refused "every saved output deleted" "outputs/proc-000.csv: process 0 was accepted but its saved outputs are missing"

# 3. build provenance, on the cpu backend
if [ -z "${CHAIN_SKIP_CPU:-}" ]; then
mkdir -p "$T/p"
# (the quickstart's arms on its first case, two processes: the build is what counts here)
sed -e "s|^source = \.\./|source = $PWD/|" -e 's/^rounds = .*/rounds = 1/' -e 's/^samples = .*/samples = 2/' \
    -e 's/^warmup = .*/warmup = 1/' -e 's/^processes = .*/processes = 1/' examples/quickstart.kg |
    awk '/^\[case / { keep = ($0 == "[case f32_128]") } /^\[(arm|gate|campaign)/ { keep = 1 } keep' >"$T/p/qs.kg"
# no quiet host asked for: the test must not depend on what else runs here
"$KGATE" run --report "$T/p/qs.kg" -o "$T/cpu" --quiet-window 0 >/dev/null 2>"$T/cpu.err"; st=$?
[ $st -le 3 ] || { cat "$T/cpu.err" >&2; die "cpu campaign: exit $st"; }
"$KGATE" verify "$T/cpu" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "the cpu folder does not verify"; }
[ -f "$T/cpu/sources/naive.c" ] || die "no copy of arm naive's source in sources/"
expect_grep '"copy": "sources/naive.c"' "$T/cpu/environment.json"
rm -rf "$T/f"; cp -r "$T/cpu" "$T/f"
so=$(cd "$T/f/build" && ls *.so | head -n 2)
set -- $so
cp "$T/f/build/$2" "$T/f/build/$1"
refused "one built arm replaced by another" "build/$1: SHA-256"
rm -rf "$T/f"; cp -r "$T/cpu" "$T/f"
echo '/* edited */' >>"$T/f/sources/naive.c"
refused "an arm's source copy edited" "sources/naive.c: SHA-256"
fi

# 4. a full disk at every write of a campaign costs nothing
masktimes() { # processes.csv, without the time columns and the chain (which hashes them)
    awk -F, 'BEGIN{OFS=","} NR>1{$5="";$6="";$(NF-10)="";$(NF-9)="";$(NF-8)="";$(NF-7)="";$NF=""} {print}' "$1"
}
maskwatch() { # watch.csv: the events of the processes, without times
    grep -v ',\(session\|build\|end\|wait\|overlap\),\|,note,"host load: ' "$1" | sed 's/^[^,]*,[^,]*,//; s/[0-9][0-9.]* s/N s/g'
}
# every write; under the sanitizer (BUILD=build-san) every third, from the first: the same failure
# paths at a third of the cost, the plain pass covering each write
n=1; total=0; stride=1
case ${BUILD:-build} in *san*) stride=3 ;; esac
while :; do
    d="$T/w$n"
    KGATE_FAULT_WRITE_AFTER=$n "$KGATE" run --report $PLAN -o "$d" >/dev/null 2>"$T/w.err"; st=$?
    if [ $st -le 1 ]; then total=$n; rm -rf "$d"; break; fi
    [ $st = 2 ] || { cat "$T/w.err" >&2; die "fault after $n writes: exit $st"; }
    grep -q "the disk is full" "$T/w.err" || { cat "$T/w.err" >&2; die "fault after $n writes: no full-disk message"; }
    if [ ! -e "$d" ]; then
        # refused before its first process: nothing was kept, and the same -o runs it
        grep -q "evidence so far" "$T/w.err" && die "fault at write $n: a removed folder named as evidence"
        "$KGATE" run $PLAN -o "$d" >/dev/null 2>"$T/w.err"; st=$?
        [ $st -le 1 ] || { cat "$T/w.err" >&2; die "the same -o after a fault at write $n: exit $st"; }
        cmp -s "$d/results.csv" "$T/ev/results.csv" || die "fault at write $n: results.csv differs from the first run's"
        "$KGATE" verify "$d" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "fault at write $n: the rerun does not verify"; }
        rm -rf "$d"
        n=$((n + stride))
        continue
    fi
    "$KGATE" run --resume "$d" $PLAN >/dev/null 2>"$T/w.err"; st=$?
    [ $st -le 1 ] || { cat "$T/w.err" >&2; die "resume after a fault at write $n: exit $st"; }
    # the uninterrupted run with the same input salt (drawn fresh for each
    # campaign, kept in meta.json): the campaign's first three files, resumed
    rm -rf "$T/u"; mkdir "$T/u"; cp "$d/plan.kg" "$d/plan.sha256" "$d/meta.json" "$T/u/"
    "$KGATE" run --report --resume "$T/u" $PLAN >/dev/null 2>"$T/w.err" || { cat "$T/w.err" >&2; die "uninterrupted run $n"; }
    for k in raw checks outputs; do
        diff -r "$d/$k" "$T/u/$k" >/dev/null || die "fault at write $n: $k/ differs from an uninterrupted run"
    done
    cmp -s "$d/results.csv" "$T/u/results.csv" || die "fault at write $n: results.csv differs"
    cmp -s "$d/results.csv" "$T/ev/results.csv" || die "fault at write $n: results.csv differs from the first run's"
    masktimes "$d/processes.csv" >"$T/a"; masktimes "$T/u/processes.csv" >"$T/b"
    cmp -s "$T/a" "$T/b" || { diff "$T/b" "$T/a" >&2; die "fault at write $n: processes.csv differs beyond times"; }
    maskwatch "$d/watch.csv" >"$T/a"; maskwatch "$T/u/watch.csv" >"$T/b"
    cmp -s "$T/a" "$T/b" || { diff "$T/b" "$T/a" >&2; die "fault at write $n: watch.csv differs beyond times"; }
    "$KGATE" verify "$d" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "fault at write $n: resumed folder does not verify"; }
    rm -rf "$d"
    n=$((n + stride))
    [ $n -lt 400 ] || die "the campaign never ran to its end under the fault"
done
[ $total -gt 20 ] || die "only $total writes in a campaign?"
echo "note: a full disk at write 1 and every ${stride} after it, of about $((total - 1)) in the campaign, resumed to the uninterrupted folder" >&2

# a real full disk of several sizes, where a tmpfs can be mounted
mkdir -p "$T/mnt"
if mount -t tmpfs -o size=400k tmpfs "$T/mnt" 2>/dev/null; then
    umount "$T/mnt"
    for size in 40k 60k 80k 100k 120k 160k 200k; do
        mount -t tmpfs -o size=$size tmpfs "$T/mnt" || die "tmpfs $size"
        "$KGATE" run --report $PLAN -o "$T/mnt/ev" >/dev/null 2>"$T/w.err"; st=$?
        mount -o remount,size=64m "$T/mnt"
        [ $st -le 2 ] || { umount "$T/mnt"; cat "$T/w.err" >&2; die "tmpfs $size: exit $st"; }
        "$KGATE" run --report --resume "$T/mnt/ev" $PLAN >/dev/null 2>"$T/w.err"; st=$?
        cp -r "$T/mnt/ev" "$T/disk"; umount "$T/mnt"
        [ $st -le 1 ] || { cat "$T/w.err" >&2; die "tmpfs $size: resume exit $st"; }
        rm -rf "$T/u"; mkdir "$T/u"; cp "$T/disk/plan.kg" "$T/disk/plan.sha256" "$T/disk/meta.json" "$T/u/"
        "$KGATE" run --report --resume "$T/u" $PLAN >/dev/null 2>&1 || die "uninterrupted run for tmpfs $size"
        for k in raw checks outputs; do
            diff -r "$T/disk/$k" "$T/u/$k" >/dev/null || die "tmpfs $size: $k/ differs from an uninterrupted run"
        done
        cmp -s "$T/disk/results.csv" "$T/ev/results.csv" || die "tmpfs $size: results.csv differs"
        "$KGATE" verify "$T/disk" >/dev/null 2>&1 || die "tmpfs $size: the resumed folder does not verify"
        rm -rf "$T/disk"
    done
else
    echo "note: cannot mount a tmpfs here; the full disk ran with fault injection only" >&2
fi
exit 0
