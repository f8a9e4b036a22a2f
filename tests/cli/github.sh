# kgate run --github: GitHub Actions workflow commands naming the plan.
# An INCORRECT arm is an ::error at its arm's line, a failed gate and an
# INVALID campaign an ::error each, a passing gate a ::notice, a campaign
# that stopped before a verdict one ::error whose multi-line message (a
# compiler's diagnostics) stays one command (%0A); with --json the
# commands go to stderr and stdout stays one JSON document.  With
# $GITHUB_STEP_SUMMARY set, the verdict table is appended to that file (and
# a file that cannot be written changes no exit status).
. tests/cli_lib.sh
unset GITHUB_STEP_SUMMARY
fix() { sed 's|\.\./\.\./kernels|'"$PWD"'/kernels|' "$1"; }

# an INCORRECT arm (fake_fault: its host dies in process 1) and the failed gate
printf 'an earlier step\n' >"$T/summary.md"
GITHUB_STEP_SUMMARY="$T/summary.md" "$KGATE" run tests/plans/fake-fault.kg -o "$T/fault" --github -q >"$T/fault.out" 2>"$T/fault.err"; st=$?
expect_status 1 $st "fake-fault --github"
head -n 2 "$T/summary.md" | tail -n 1 | grep -qx '### kgate: fake-fault: gate FAIL' || { cat "$T/summary.md" >&2; die "the step summary's heading, after what was there"; }
expect_grep '^| case | arm | role | verdict | reduction | interval |$' "$T/summary.md"
expect_grep '^| small | cand | candidate | INCORRECT |' "$T/summary.md"
expect_grep "^Gate FAIL: case small, arm cand: INCORRECT (plan tests/plans/fake-fault.kg, evidence $T/fault)" "$T/summary.md"
line=$(grep -n '^\[arm cand\]$' tests/plans/fake-fault.kg | cut -d: -f1)
expect_grep "^::error file=tests/plans/fake-fault.kg,line=$line,title=kgate arm cand is INCORRECT on case small::case small, arm cand (candidate): a correctness check failed" "$T/fault.out"
expect_grep "^::error file=tests/plans/fake-fault.kg,title=kgate gate FAIL::case small, arm cand: INCORRECT$" "$T/fault.out"
expect_no_grep "^::notice" "$T/fault.out"
[ "$(grep -c '^::' "$T/fault.out")" = "$(wc -l <"$T/fault.out")" ] || { cat "$T/fault.out" >&2; die "-q --github: more than the commands on stdout"; }

# an INVALID campaign: the control's A/A interval lies outside its margin
fix tests/plans/fake-faster.kg | sed 's/^of = base$/of = base\nfake_ns = 900/' >"$T/invalid.kg"
"$KGATE" run "$T/invalid.kg" -o "$T/inv" --github >"$T/inv.out" 2>"$T/inv.err"; st=$?
expect_status 3 $st "an invalid control --github"
expect_grep "^::error file=$T/invalid.kg,title=kgate campaign INVALID::control invalid: case small, arm ctrl" "$T/inv.out"
expect_grep "^::error file=$T/invalid.kg,title=kgate gate FAIL::" "$T/inv.out"
cline=$(grep -n '^\[arm ctrl\]$' "$T/invalid.kg" | cut -d: -f1)
expect_grep "^::warning file=$T/invalid.kg,line=$cline,title=kgate control ctrl on case small::control: INVALID" "$T/inv.out"
# the short answer comes first, the commands after it
head -n 1 "$T/inv.out" | grep -q ': gate FAIL (campaign INVALID): ' || die "--github without -q: the short answer first"
awk '/^::/ { c = 1 } c && !/^::/ { bad = 1 } END { exit bad || !c }' "$T/inv.out" || die "--github: the commands after the answer"

# a passing gate: a notice, and nothing at error level
GITHUB_STEP_SUMMARY="$T/summary.md" "$KGATE" run tests/plans/fake-faster.kg -o "$T/ok" --github --json >"$T/ok.json" 2>"$T/ok.err"; st=$?
expect_status 0 $st "fake-faster --github --json"
expect_grep '^### kgate: fake-faster: gate PASS$' "$T/summary.md"
expect_grep '^| small | cand | candidate | FASTER | +3\.[0-9]% | \[+[0-9.]*%, +[0-9.]*%\] |$' "$T/summary.md"
expect_grep '^| small | ctrl | control | control: ' "$T/summary.md"
expect_no_grep '| base |' "$T/summary.md"
[ "$(grep -c '^### kgate: ' "$T/summary.md")" = 2 ] || die "two runs: two tables appended"
# a summary file that cannot be written: said on stderr, the exit status unchanged
GITHUB_STEP_SUMMARY="$T/no/such/dir/summary.md" "$KGATE" run tests/plans/fake-faster.kg -o "$T/ok2" --github -q >"$T/ok2.out" 2>"$T/ok2.err"; st=$?
expect_status 0 $st "an unwritable GITHUB_STEP_SUMMARY"
expect_grep "cannot append to \$GITHUB_STEP_SUMMARY ($T/no/such/dir/summary.md)" "$T/ok2.err"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/ok.json" || die "--github --json: stdout is not one JSON document"
expect_no_grep "^::" "$T/ok.json"
expect_grep "^::notice file=tests/plans/fake-faster.kg,title=kgate gate PASS::passed$" "$T/ok.err"
expect_no_grep "^::error" "$T/ok.err"

# stopped before a verdict: one command, the compiler's lines escaped
mkdir -p "$T/ex"
printf '#include "kgate/kernel.h"\nvoid kernel(const kg_kargs *a) { this is not C; }\n' >"$T/ex/broken.c"
sed -e 's#source = .*gemm_bt_blocked.c#source = broken.c#' -e 's#\.\./kernels#'"$PWD"'/kernels#' examples/quickstart.kg >"$T/ex/broken.kg"
"$KGATE" run "$T/ex/broken.kg" -o "$T/br" --github --quiet-window 0 >"$T/br.out" 2>"$T/br.err"; st=$?
expect_status 2 $st "a kernel that does not compile --github"
[ "$(grep -c '^::' "$T/br.out")" = 1 ] || { cat "$T/br.out" >&2; die "one command for a campaign that stopped"; }
expect_grep "^::error file=$T/ex/broken.kg,title=kgate stopped before a verdict::.*failed to compile .*broken.c:%0A.*error: .*%0A *2 | void kernel" "$T/br.out"
exit 0
