# A cache kept in files across runs (issue 11, item 5).  The cheat
# (tests/plans/cheats/xrun_cache.c) stores each output under a hash of its
# inputs and copies it back when it meets the same inputs again.
#  - As a trusted arm (in the worker, where files can be written), run by
#    `kgate check` and then `kgate run` of the same plan: before the input
#    salt every process 0 saw the same inputs, and the run hit the files
#    the check wrote (5 hits); now the two campaigns share no input, so
#    no hit can come from an earlier campaign.
#  - As an untrusted arm it is stopped by the sandbox (no open after
#    loading), and a constructor that tries to create storage in its
#    private folder or /tmp dies at the first open for writing.
#  - The two campaigns record different salts, and their saved outputs
#    different seeds; both verify.
. tests/cli_lib.sh
mkdir "$T/cache"
export KGATE_XRUN_DIR="$T/cache"
plan=tests/plans/cheats/xrun.kg
"$KGATE" check "$plan" -o "$T/c" >"$T/c.out" 2>"$T/c.err"; st=$?
expect_status 1 $st "check of the cross-run cache plan"
ls "$T/cache" | grep '^xrun-' | sed "s|^|$T/cache/|" >"$T/first"
[ -s "$T/first" ] || die "the trusted cheat wrote no cache file during kgate check"
: >"$T/cache/hits"
"$KGATE" run --report "$plan" -o "$T/r" >"$T/r.out" 2>"$T/r.err"; st=$?
expect_status 1 $st "run of the cross-run cache plan (untrusted cheats INCORRECT)"
[ -s "$T/cache/hits" ] || die "the cheat never hit its own cache within the run: the test is not exercising it"
n=$(grep -cxFf "$T/first" "$T/cache/hits")
[ "$n" -eq 0 ] || die "kgate run hit $n outputs cached by kgate check: the campaigns shared inputs"
# the untrusted arms: stopped by the sandbox
expect_grep "r,xrun,candidate,incorrect,INCORRECT" "$T/r/results.csv"
expect_grep "r,xrun_ctor,candidate,incorrect,INCORRECT" "$T/r/results.csv"
expect_grep "| r | xrun | pre | fault | FAIL | .*sandbox violation (syscall openat)" "$T/c.out"
grep -q "xrun_ctor.*sandbox violation (syscall open" "$T/c.out" || die "xrun_ctor was not stopped by the sandbox"
[ ! -e /tmp/kgate-xrun-ctor-cache ] || die "an arm host created /tmp/kgate-xrun-ctor-cache"
grep -q "cannot remove its private folder" "$T/r/logs/"*.log && die "an arm host's private folder was left behind"
# different salts, different seeds, both folders verify
sc=$(sed -n 's/.*"input_salt": "\(0x[0-9a-f]*\)".*/\1/p' "$T/c/meta.json")
sr=$(sed -n 's/.*"input_salt": "\(0x[0-9a-f]*\)".*/\1/p' "$T/r/meta.json")
[ -n "$sc" ] && [ -n "$sr" ] || die "meta.json records no input_salt"
[ "$sc" != "$sr" ] || die "kgate check and kgate run drew the same salt $sc"
seed() { awk -F, '$3 == "naive" && $4 == "pre" && $5 == "poison0" { print $7; exit }' "$1/outputs/proc-000.csv"; }
[ -n "$(seed "$T/c")" ] || die "no saved output of naive in the check"
[ "$(seed "$T/c")" != "$(seed "$T/r")" ] || die "process 0 of the check and of the run used the same inputs"
"$KGATE" verify "$T/c" >"$T/vc" 2>&1 || { cat "$T/vc" >&2; die "verify of the check failed"; }
"$KGATE" verify "$T/r" >"$T/vr" 2>&1 || { cat "$T/vr" >&2; die "verify of the run failed"; }
# a tampered salt no longer replays
sed -i "s/$sr/0x0000000000000001/" "$T/r/meta.json"
"$KGATE" verify "$T/r" >"$T/vt" 2>&1 && die "verify accepted a changed input salt"
exit 0
