# CI outputs of kgate run (docs/ci.md): --json prints one JSON object on
# stdout and nothing else; --junit FILE writes JUnit XML that validates
# against tests/fixtures/junit.xsd, one test case per gated case and arm,
# failures with the gate's reason; a campaign that cannot run is one
# error; -q/--quiet leaves only the verdict line.
. tests/cli_lib.sh
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
command -v xmllint >/dev/null 2>&1 || die "xmllint is missing (Debian libxml2-utils; tools/install-deps.sh installs it)"
json_get() { # file python-expression over d
    "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# ---- 1. a passing gate: JSON only on stdout, JUnit valid
"$KGATE" run tests/plans/fake-faster.kg -o "$T/ok" --json --junit "$T/ok.xml" >"$T/ok.json" 2>"$T/ok.err"; st=$?
expect_status 0 $st "run --json of a passing plan"
"$PY" -c "import json,sys; json.load(open(sys.argv[1]))" "$T/ok.json" || { cat "$T/ok.json" >&2; die "stdout is not one JSON document"; }
[ "$(json_get "$T/ok.json" "d['gate']['pass']")" = True ] || die "gate.pass is not true"
[ "$(json_get "$T/ok.json" "d['evidence']")" = "$T/ok" ] || die "evidence is not the folder"
[ "$(json_get "$T/ok.json" "d['exit_status']")" = 0 ] || die "exit_status"
[ "$(json_get "$T/ok.json" "d['signature']['signed']")" = False ] || die "an unsigned run says signed"
[ "$(json_get "$T/ok.json" "[v['verdict'] for v in d['verdicts'] if v['arm'] == 'cand'][0]")" = FASTER ] || die "cand's verdict"
[ "$(json_get "$T/ok.json" "[v['gated'] for v in d['verdicts'] if v['arm'] == 'base'][0]")" = False ] || die "a baseline is gated"
# the JSON's numbers are the folder's
[ "$(json_get "$T/ok.json" "[v['reduction_lower'] for v in d['verdicts'] if v['arm'] == 'cand'][0]")" = \
  "$("$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print([r['effect']['reduction_lower'] for r in d['results'] if r['arm'] == 'cand'][0])" "$T/ok/results.json")" ] ||
    die "the JSON's reduction_lower is not results.json's"
xmllint --noout --schema tests/fixtures/junit.xsd "$T/ok.xml" 2>"$T/xl.err" || { cat "$T/xl.err" "$T/ok.xml" >&2; die "the JUnit XML does not validate"; }
expect_grep '<testsuites name="kgate" tests="1" failures="0" errors="0"' "$T/ok.xml"
expect_grep '<testcase classname="kgate.fake-faster.small" name="cand"' "$T/ok.xml"
expect_grep "gate PASS" "$T/ok.err"

# ---- 2. a failing gate: the failure and its reason per case and arm
sed "s/^min_reduction = 1%\$/min_reduction = 50%/; s#\.\./\.\./kernels/#$(pwd)/kernels/#" tests/plans/fake-faster.kg >"$T/hard.kg"
"$KGATE" run "$T/hard.kg" -o "$T/fail" --json --junit "$T/fail.xml" >"$T/fail.json" 2>"$T/fail.err"; st=$?
expect_status 1 $st "run --json of a plan whose gate fails"
[ "$(json_get "$T/fail.json" "d['gate']['pass']")" = False ] || die "gate.pass is not false"
reason=$(json_get "$T/fail.json" "[v['gate_fail'] for v in d['verdicts'] if v['arm'] == 'cand'][0]")
case "$reason" in *"case small, arm cand: lower bound of reduction"*) ;; *) die "cand's gate_fail: '$reason'" ;; esac
xmllint --noout --schema tests/fixtures/junit.xsd "$T/fail.xml" 2>"$T/xl.err" || { cat "$T/xl.err" "$T/fail.xml" >&2; die "the failing JUnit XML does not validate"; }
expect_grep 'tests="1" failures="1" errors="0"' "$T/fail.xml"
expect_grep '<failure type="gate: lower bound of reduction" message="case small, arm cand: lower bound of reduction' "$T/fail.xml"
expect_no_grep '<failure type="FASTER"' "$T/fail.xml"
[ "$(json_get "$T/fail.json" "d['gate']['reason']")" = "$reason" ] || die "the campaign's reason is not the first pair's"

# ---- 3. a campaign that cannot run: one error, still valid XML and JSON
"$KGATE" run "$T/none.kg" -o "$T/none" --json --junit "$T/none.xml" >"$T/none.json" 2>"$T/none.err"; st=$?
expect_status 2 $st "run --json of a missing plan"
[ "$(json_get "$T/none.json" "d['exit_status']")" = 2 ] || die "exit_status of the error"
json_get "$T/none.json" "d['error']" | grep -q "none.kg" || die "the error does not name the plan"
xmllint --noout --schema tests/fixtures/junit.xsd "$T/none.xml" 2>"$T/xl.err" || { cat "$T/xl.err" "$T/none.xml" >&2; die "the error JUnit XML does not validate"; }
expect_grep 'errors="1"' "$T/none.xml"
# the checker is real: a document outside the schema fails it
sed 's/<testcase classname="[^"]*" /<testcase /' "$T/ok.xml" >"$T/bad.xml"
xmllint --noout --schema tests/fixtures/junit.xsd "$T/bad.xml" >/dev/null 2>&1 && die "the schema accepts a testcase without classname"

# ---- 4. a signed campaign says so, with its key id
mkdir -p "$T/cfg"
XDG_CONFIG_HOME="$T/cfg" "$KGATE" key init --out "$T/keys" >/dev/null 2>&1 || die "key init"
"$KGATE" run tests/plans/fake-faster.kg -o "$T/sig" --json --key "$T/keys/signing-key.pem" >"$T/sig.json" 2>/dev/null; st=$?
expect_status 0 $st "signed run --json"
[ "$(json_get "$T/sig.json" "d['signature']['signed']")" = True ] || die "a signed run says unsigned"
json_get "$T/sig.json" "d['signature']['keyid']" | grep -Eq '^[0-9a-f]{64}$' || die "no key id"

# ---- 5. -q: nothing on stdout, the verdict line alone on stderr
"$KGATE" run tests/plans/fake-faster.kg -o "$T/q" -q >"$T/q.out" 2>"$T/q.err"; st=$?
expect_status 0 $st "run -q"
[ ! -s "$T/q.out" ] || die "-q wrote on stdout"
[ "$(wc -l <"$T/q.err")" -eq 1 ] || { cat "$T/q.err" >&2; die "-q: more than the verdict line on stderr"; }
expect_grep "^kgate: gate PASS: passed$" "$T/q.err"
"$KGATE" verify "$T/q" >/dev/null 2>&1 || die "the -q folder does not verify"
exit 0
