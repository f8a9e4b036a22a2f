# The first run (issue 32): what a newcomer's first command meets.
#  1. the device lock of the host's CPUs (and of fake) is the user's own:
#     $XDG_RUNTIME_DIR/kgate, else kgate-locks-UID in $TMPDIR, mode 0700;
#     a folder there that another user made, one others may write, or a
#     link, is refused with a message that names the way out;
#  2. a misspelled kernel path is said at once, before the device lock, and
#     so is a kernel that does not compile (a new campaign builds its arms
#     before it waits): a campaign that holds the lock delays neither;
#  3. one budget for the whole campaign's waits for a quiet host: past it
#     the campaign stops INVALID and says how to go on (--resume,
#     --quiet-window 0, --quiet-budget), its folder verifies, and
#     --resume on a quiet host completes it;
#  4. the short answer: stdout of a quickstart-shaped campaign is at most
#     20 lines and holds the gate, one line per candidate and case, the
#     control, the host's load and the paths of report.html and the
#     folder; "unsigned" is said once, on stdout; --report prints
#     report.md; a piped run prints a line per process on stderr, -q
#     none;
#  5. what the watch saw of the host's other work is recorded per process
#     in watch.csv (a note) and shown in report.md, judged or not.
# kgate-test: waits (a quiet-host budget of 1.5 s and a held lock)
# kgate-test: no-sanitize (how soon a first run answers, a matter of wall time; the paths it runs are every other scenario's under the sanitizers)
. tests/cli_lib.sh
export KGATE_FAKE_SLEEP_MS=5
uid=$(id -u)

# ---- 1. the user's own lock folder
unset KGATE_LOCK_DIR
mkdir -p "$T/run" "$T/tmp"
XDG_RUNTIME_DIR="$T/run" "$KGATE" run tests/plans/fake-faster.kg -o "$T/l1" -q 2>"$T/l1.err"; st=$?
expect_status 0 $st "a fake campaign with the lock under XDG_RUNTIME_DIR"
[ -f "$T/run/kgate/fake.lock" ] || die "no lock under \$XDG_RUNTIME_DIR/kgate"
[ "$(stat -c %a "$T/run/kgate")" = 700 ] || die "the user's lock folder is not mode 0700"
env -u XDG_RUNTIME_DIR TMPDIR="$T/tmp" "$KGATE" run tests/plans/fake-faster.kg -o "$T/l2" -q 2>"$T/l2.err"; st=$?
expect_status 0 $st "a fake campaign with the lock under TMPDIR"
[ -f "$T/tmp/kgate-locks-$uid/fake.lock" ] || die "no lock under \$TMPDIR/kgate-locks-$uid"
# a folder others may write is refused (anyone could replace the lock file)
chmod 0777 "$T/tmp/kgate-locks-$uid"
env -u XDG_RUNTIME_DIR TMPDIR="$T/tmp" "$KGATE" run tests/plans/fake-faster.kg -o "$T/l3" -q 2>"$T/l3.err"; st=$?
expect_status 2 $st "a lock folder others may write"
expect_grep "others may write it" "$T/l3.err"
expect_grep "KGATE_LOCK_DIR" "$T/l3.err"
# a link planted where the folder goes is refused, never followed
rm -rf "$T/tmp/kgate-locks-$uid"
mkdir "$T/elsewhere"
ln -s "$T/elsewhere" "$T/tmp/kgate-locks-$uid"
env -u XDG_RUNTIME_DIR TMPDIR="$T/tmp" "$KGATE" run tests/plans/fake-faster.kg -o "$T/l4" -q 2>"$T/l4.err"; st=$?
expect_status 2 $st "a link where the lock folder goes"
expect_grep "not a folder" "$T/l4.err"
[ ! -e "$T/elsewhere/fake.lock" ] || die "the lock was taken through a planted link"
# a folder another user made (as root: made here and given to nobody)
if [ "$uid" = 0 ]; then
    rm -f "$T/tmp/kgate-locks-0"
    mkdir -m 0700 "$T/tmp/kgate-locks-0" && chown 65534 "$T/tmp/kgate-locks-0"
    env -u XDG_RUNTIME_DIR TMPDIR="$T/tmp" "$KGATE" run tests/plans/fake-faster.kg -o "$T/l5" -q 2>"$T/l5.err"; st=$?
    expect_status 2 $st "a lock folder another user made"
    expect_grep "belongs to uid 65534, not to this user" "$T/l5.err"
else
    echo "first_run: not root: the folder of another user is not made here (the rule is the same)" >&2
fi
export KGATE_LOCK_DIR="$T/locks"
mkdir -p "$T/locks"

# ---- 2. a misspelled kernel path, while another campaign holds the device
sed -e 's#\.\./kernels/cpu/gemm_bt_blocked.c#'"$PWD"'/kernels/cpu/gemm_bt_blockd.c#' \
    -e 's#\.\./kernels#'"$PWD"'/kernels#' examples/quickstart.kg >"$T/typo.kg"
flock "$T/locks/cpu.lock" sleep 30 &
holder=$!
i=0
until [ -f "$T/locks/cpu.lock" ]; do i=$((i + 1)); [ $i -lt 200 ] || die "the lock holder never started"; sleep 0.02; done
s0=$(date +%s.%N)
"$KGATE" run "$T/typo.kg" -o "$T/typo" --lock-timeout 8 >"$T/typo.out" 2>"$T/typo.err"; st=$?
s1=$(date +%s.%N)
expect_status 2 $st "a misspelled kernel path"
expect_grep "kernel source not found: '.*gemm_bt_blockd.c' (fix 'source' of \[arm blocked\]" "$T/typo.err"
expect_no_grep "in use by" "$T/typo.err"
awk -v a="$s0" -v b="$s1" 'BEGIN { exit !(b - a < 6) }' || die "the misspelled path was said after $(awk -v a="$s0" -v b="$s1" 'BEGIN { print b - a }') s: it waited for the lock"
[ ! -e "$T/typo" ] || die "a plan refused before the lock left a folder"
# ... and a kernel that does not compile: a new campaign builds its arms before it waits
printf '#include "kgate/kernel.h"\nvoid kernel(const kg_kargs *a) { this is not C; }\n' >"$T/broken.c"
sed -e 's#source = .*gemm_bt_blocked.c#source = broken.c#' -e 's#\.\./kernels#'"$PWD"'/kernels#' \
    examples/quickstart.kg >"$T/broken.kg"
s0=$(date +%s.%N)
"$KGATE" run "$T/broken.kg" -o "$T/broken" --lock-timeout 8 >"$T/broken.out" 2>"$T/broken.err"; st=$?
s1=$(date +%s.%N)
expect_status 2 $st "a kernel that does not compile"
expect_grep "arm 'blocked': cc failed to compile" "$T/broken.err"
expect_no_grep "in use by" "$T/broken.err"
awk -v a="$s0" -v b="$s1" 'BEGIN { exit !(b - a < 6) }' || die "the compile error was said after a wait for the lock"
kill $holder 2>/dev/null; wait $holder 2>/dev/null

# ---- 3. the campaign's budget for quiet-host waits
HOG=kgfr$$
cp "$(command -v sleep)" "$T/$HOG" || die "cannot copy sleep"
"$T/$HOG" 60 &
hog=$!
i=0
until [ "$(cat "/proc/$hog/comm" 2>/dev/null)" = "$HOG" ]; do i=$((i + 1)); [ $i -lt 200 ] || die "no hog"; sleep 0.01; done
s0=$(date +%s.%N)
"$KGATE" run tests/plans/fake-faster.kg -o "$T/b" --quiet-window 0.3 --forbid "$HOG" --quiet-budget 1.5 \
    >"$T/b.out" 2>"$T/b.err"; st=$?
s1=$(date +%s.%N)
kill $hog 2>/dev/null; wait $hog 2>/dev/null
expect_status 3 $st "a host that stays busy past the budget"
awk -v a="$s0" -v b="$s1" 'BEGIN { exit !(b - a < 30) }' || die "the budget of 1.5 s took $(awk -v a="$s0" -v b="$s1" 'BEGIN { print b - a }') s"
expect_grep "passed the campaign's budget of 2 s" "$T/b.err"
expect_grep "--resume $T/b" "$T/b.err"
expect_grep "--quiet-window 0" "$T/b.err"
expect_grep "--quiet-budget S" "$T/b.err"
expect_grep "budget of 2 s (quiet_budget)" "$T/b/processes.csv"
expect_grep ",never-quiet,.*budget" "$T/b/watch.csv"
expect_grep "gate FAIL (campaign INVALID)" "$T/b.out"
"$KGATE" verify "$T/b" >/dev/null 2>"$T/bv.err" || { cat "$T/bv.err" >&2; die "the folder stopped by the budget does not verify"; }
"$KGATE" run --resume "$T/b" tests/plans/fake-faster.kg --quiet-window 0 --forbid "$HOG" >"$T/br.out" 2>"$T/br.err"; st=$?
expect_status 0 $st "--resume on a quiet host"
"$KGATE" verify "$T/b" >/dev/null 2>"$T/bv2.err" || { cat "$T/bv2.err" >&2; die "the resumed folder does not verify"; }

# ---- 4 and 5. the short answer of a quickstart-shaped campaign (4 cases, a
# candidate and a control; fewer processes and rounds), the watch on
sed -e 's/^rounds = [0-9]*/rounds = 2/' -e 's/^processes = [0-9]*.*/processes = 1/' -e 's/^quiet = [0-9.]*/quiet = 0.2/' \
    -e 's#\.\./kernels#'"$PWD"'/kernels#' examples/quickstart.kg >"$T/qs.kg"
"$KGATE" run "$T/qs.kg" -o "$T/qs" >"$T/qs.out" 2>"$T/qs.err"; st=$?
[ $st -le 1 ] || { cat "$T/qs.err" >&2; die "the quickstart-shaped campaign: exit $st"; }
cat "$T/qs.out" >&2
n=$(wc -l <"$T/qs.out")
[ "$n" -le 20 ] || die "the short answer has $n lines (20 at most)"
expect_grep "^quickstart: gate \(PASS\|FAIL\)" "$T/qs.out"
for c in f32_128 bf16_128 f32_96x160x200 bf16_96x160x200; do
    grep -q "^  $c  *blocked  *\(FASTER\|INCONCLUSIVE\|EQUIVALENT\|SLOWER\)" "$T/qs.out" || die "no line for blocked on $c"
done
expect_grep "control naive_copy (A/A of naive" "$T/qs.out"
expect_grep "^report:   $T/qs/report.html$" "$T/qs.out"
expect_grep "^evidence: $T/qs (unsigned" "$T/qs.out"
[ "$(grep -c unsigned "$T/qs.out")" = 1 ] || die "unsigned: said more than once on stdout"
expect_no_grep "unsigned" "$T/qs.err"
expect_no_grep "^| case | arm" "$T/qs.out"
# piped: one line per process on stderr
expect_grep "^kgate: process 1/2 ok (fwd)" "$T/qs.err"
expect_grep "^kgate: process 2/2 ok (rev)" "$T/qs.err"
# 5. the host's load, recorded per process (not judged by default) and shown
# (a process shorter than the watch's 1 s window on a fast, idle host says
# that it was not sampled; what was sampled is shown)
[ "$(grep -c ',note,"host load: ' "$T/qs/watch.csv")" -ge 2 ] ||
    { cat "$T/qs/watch.csv" >&2; die "expected one host-load note per process in watch.csv"; }
expect_grep "recorded, not judged (max_foreign_cpu = 0)" "$T/qs/watch.csv"
if grep -q ',note,"host load: processes that are not kgate.s used' "$T/qs/watch.csv"; then
    expect_grep "host load: processes that are not kgate" "$T/qs/report.md"
    expect_grep "other work on the host: [0-9.]* cores on average, [0-9.]* at most" "$T/qs.out"
else
    expect_grep ',note,"host load: not sampled: the process ended within' "$T/qs/watch.csv"
    expect_no_grep "other work on the host" "$T/qs.out"
fi
# --report: the full report.md on stdout; kgate report DIR: the same
"$KGATE" run tests/plans/fake-faster.kg -o "$T/full" --report >"$T/full.out" 2>"$T/full.err"; st=$?
expect_status 0 $st "--report"
cmp -s "$T/full.out" "$T/full/report.md" || die "--report: stdout is not report.md"
"$KGATE" report "$T/qs" >"$T/rep.out" 2>/dev/null
cmp -s "$T/rep.out" "$T/qs/report.md" || die "kgate report DIR: stdout is not report.md"
# -q: nothing on stdout, the verdict line alone on stderr
"$KGATE" run tests/plans/fake-faster.kg -o "$T/q" -q >"$T/q.out" 2>"$T/q.err"; st=$?
expect_status 0 $st "-q"
[ ! -s "$T/q.out" ] || die "-q: something on stdout"
[ "$(wc -l <"$T/q.err")" = 1 ] || { cat "$T/q.err" >&2; die "-q: more than the verdict line"; }
exit 0
