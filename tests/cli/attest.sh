# Signed evidence: a campaign signed with `kgate key init`'s key writes
# attestation.dsse.json (a DSSE envelope around an in-toto Statement v1);
# kgate verify --key PUB checks it before anything else.
#   - the forgery: raw samples scaled by 0.8, `kgate report`, SHA256SUMS
#     recomputed with sha256sum.  Plain `kgate verify` cannot tell (the
#     folder is consistent with itself: documented in docs/evidence.md);
#     `kgate verify --key` fails it;
#   - a deleted process, a deleted outputs file, a tampered envelope, a
#     wrong key, an unsigned folder with --key fail it too;
#   - the envelope verifies with securesystemslib (tests/attest_check.py)
#     when python3 can import it;
#   - `kgate worker` run by hand, without the supervisor's token, refuses.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
# no user key: the user's own configuration plays no part
export XDG_CONFIG_HOME="$T/config"
export HOME="$T/home"
mkdir -p "$HOME"

# keys
"$KGATE" key init --out "$T/keys" >"$T/k.out" 2>"$T/k.err"; st=$?
expect_status 0 $st "key init"
[ -f "$T/keys/signing-key.pem" ] && [ -f "$T/keys/signing-key.pub.pem" ] || die "key init: no key files"
expect_grep "signing-key.pem" "$T/k.out"
expect_grep "signing-key.pub.pem" "$T/k.out"
[ "$(stat -c %a "$T/keys/signing-key.pem")" = 600 ] || die "the private key is not mode 0600"
expect_grep "BEGIN PRIVATE KEY" "$T/keys/signing-key.pem"
expect_grep "BEGIN PUBLIC KEY" "$T/keys/signing-key.pub.pem"
cp "$T/keys/signing-key.pem" "$T/priv.copy"
"$KGATE" key init --out "$T/keys" >"$T/k2.out" 2>"$T/k2.err"; st=$?
expect_status 2 $st "key init over an existing key"
expect_grep "exists" "$T/k2.err"
cmp -s "$T/keys/signing-key.pem" "$T/priv.copy" || die "key init overwrote a key"
"$KGATE" key init --out "$T/keys2" >/dev/null 2>&1 || die "second key init"
# the default place: $XDG_CONFIG_HOME/kgate
"$KGATE" key init >"$T/k3.out" 2>&1 || { cat "$T/k3.out" >&2; die "key init (default folder)"; }
[ -f "$XDG_CONFIG_HOME/kgate/signing-key.pem" ] || die "key init: not under \$XDG_CONFIG_HOME/kgate"
rm -rf "$XDG_CONFIG_HOME"

# an unsigned campaign says so, once, in the short answer's evidence line (a newcomer never
# asked for signing: nothing on stderr)
"$KGATE" run tests/plans/fake-faster.kg --quiet-window 0 -o "$T/uns" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "unsigned run"
[ "$(grep -c "unsigned" "$T/out")" = 1 ] || { cat "$T/out" >&2; die "an unsigned run says so in one line"; }
expect_grep "^evidence: $T/uns (unsigned" "$T/out"
expect_no_grep "unsigned" "$T/err"
[ ! -e "$T/uns/attestation.dsse.json" ] || die "an unsigned run wrote an envelope"
"$KGATE" verify "$T/uns" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 0 $st "verify unsigned without --key"
expect_grep "unsigned" "$T/v.out"
"$KGATE" verify "$T/uns" --key "$T/keys/signing-key.pub.pem" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify unsigned with --key"
expect_grep "unsigned" "$T/v.err"

# a signed campaign
"$KGATE" run tests/plans/fake-faster.kg --quiet-window 0 -o "$T/ev" --key "$T/keys/signing-key.pem" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "signed run"
# the recorded command line names the key, not its path (meta.json)
expect_grep "(the signing key)" "$T/ev/meta.json"
expect_no_grep "$T/keys/signing-key.pem" "$T/ev/meta.json"
expect_no_grep "unsigned" "$T/err"
[ -f "$T/ev/attestation.dsse.json" ] || die "no attestation.dsse.json"
expect_grep '"payloadType": *"application/vnd.in-toto+json"' "$T/ev/attestation.dsse.json"
# the key never reached a worker: no log, argv or file names it
grep -rl "signing-key" "$T/ev" >"$T/leak" 2>/dev/null
[ ! -s "$T/leak" ] || { cat "$T/leak" >&2; die "the key's path is in the folder"; }
"$KGATE" verify "$T/ev" --key "$T/keys/signing-key.pub.pem" >"$T/v.out" 2>"$T/v.err"; st=$?
[ $st = 0 ] || { cat "$T/v.err" >&2; die "verify --key of a signed folder: exit $st"; }
expect_grep "signature ok" "$T/v.out"
expect_grep "verified" "$T/v.out"
keyid=$(sed -n 's/.*"keyid": *"\([0-9a-f]*\)".*/\1/p' "$T/ev/attestation.dsse.json")
[ ${#keyid} = 64 ] || die "keyid is not 64 hex digits"
"$KGATE" verify "$T/ev" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 0 $st "verify signed without --key"
expect_grep "signed by key $keyid.*not checked" "$T/v.out"

# reference tooling
if python3 -c 'import securesystemslib.dsse, securesystemslib.signer, cryptography' 2>/dev/null; then
    python3 tests/attest_check.py "$T/ev" "$T/keys/signing-key.pub.pem" >"$T/py.out" 2>&1 ||
        { cat "$T/py.out" >&2; die "securesystemslib does not verify the envelope"; }
    expect_grep "^ok" "$T/py.out"
    if python3 tests/attest_check.py "$T/ev" "$T/keys2/signing-key.pub.pem" >"$T/py.out" 2>&1; then
        die "securesystemslib verified the envelope with another key"
    fi
else
    echo "attest.sh: securesystemslib check skipped (pip install 'securesystemslib[crypto]')"
fi

# copies for each attack
for n in forge proc outp env wrong; do cp -a "$T/ev" "$T/$n"; done

# the forgery: the candidate's raw samples scaled by 0.8, the reports
# rewritten by kgate report, SHA256SUMS recomputed as kgate writes it
for f in "$T/forge"/raw/proc-*.csv.gz; do
    raw_text "$f" | awk -F, 'BEGIN { OFS = "," } NR > 1 && $4 == "cand" { $7 = sprintf("%.3f", $7 * 0.8) } { print }' |
        gzip -n >"$f.new" && mv "$f.new" "$f"
done
"$KGATE" report "$T/forge" >/dev/null 2>&1
# ... the raw files' digests and the chain of processes.csv rewritten too (chain.c: each row's
# link is sha256 of the previous link and the row's text before its chain field)
python3 - "$T/forge" <<'PY'
import hashlib, sys
d = sys.argv[1]
prev = open(d + "/plan.sha256").read().split()[0]
lines = open(d + "/processes.csv").read().split("\n")
hdr = lines[0].split(",")
out = [lines[0]]
for line in lines[1:]:
    if not line:
        continue
    body = line[:line.rindex(",")]          # the row without its chain field
    head, _, tail = body.rpartition('",')   # the quoted reason ends before slot...
    fields = tail.split(",")
    p = int(line.split(",", 1)[0])
    k = len(fields) - 6                     # the first of the six file digests
    raw = open("%s/raw/proc-%03d.csv.gz" % (d, p), "rb").read()
    fields[k] = hashlib.sha256(raw).hexdigest()
    body = head + '",' + ",".join(fields)
    prev = hashlib.sha256((prev + body).encode()).hexdigest()
    out.append(body + "," + prev)
open(d + "/processes.csv", "w").write("\n".join(out) + "\n")
PY
resum() { # folder: SHA256SUMS as kgate writes it (sorted by path, "<hex>  <path>")
    (cd "$1" && find . -type f ! -name SHA256SUMS ! -name attestation.dsse.json | sed 's|^\./||' |
        LC_ALL=C sort | while read -r p; do sha256sum "$p"; done >"$T/sums.new") && mv "$T/sums.new" "$1/SHA256SUMS"
}
resum "$T/forge"
cmp -s "$T/forge/results.json" "$T/ev/results.json" && die "the forgery changed no result"
"$KGATE" verify "$T/forge" >"$T/v.out" 2>"$T/v.err"; st=$?
[ $st = 0 ] || cat "$T/v.err" "$T/v.out" >&2
expect_status 0 $st "plain verify of the forgery (a folder consistent with itself: only the signature tells)"
"$KGATE" verify "$T/forge" --key "$T/keys/signing-key.pub.pem" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key of the forgery"
expect_grep "raw/proc-000.csv.gz" "$T/v.err"

# a deleted process
rm "$T/proc/raw/proc-005.csv.gz" "$T/proc/checks/proc-005.csv" "$T/proc/outputs/proc-005.csv" \
   "$T/proc/outputs/proc-005.bin" "$T/proc/logs/proc-005.log"
resum "$T/proc"
"$KGATE" verify "$T/proc" --key "$T/keys/signing-key.pub.pem" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key after a deleted process"
expect_grep "raw/proc-005.csv.gz" "$T/v.err"

# a deleted outputs file
rm "$T/outp/outputs/proc-002.bin"
resum "$T/outp"
"$KGATE" verify "$T/outp" --key "$T/keys/signing-key.pub.pem" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key after a deleted outputs file"
expect_grep "outputs/proc-002.bin" "$T/v.err"

# a tampered envelope: a statement that lists the forged digests, its
# signature left as it was
python3 - "$T/env/attestation.dsse.json" <<'EOF' || die "tampering the envelope"
import base64, json, sys
p = sys.argv[1]
e = json.load(open(p))
s = json.loads(base64.b64decode(e["payload"]))
s["predicate"]["verdicts"]["gate_pass"] = not s["predicate"]["verdicts"]["gate_pass"]
e["payload"] = base64.b64encode(json.dumps(s).encode()).decode()
json.dump(e, open(p, "w"))
EOF
"$KGATE" verify "$T/env" --key "$T/keys/signing-key.pub.pem" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key of a tampered envelope"
expect_grep "signature" "$T/v.err"

# a wrong key
"$KGATE" verify "$T/wrong" --key "$T/keys2/signing-key.pub.pem" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key with another key"
expect_grep "signature" "$T/v.err"

# a missing key file is a usage error
"$KGATE" run tests/plans/fake-faster.kg --quiet-window 0 -o "$T/nokey" --key "$T/keys/none.pem" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "run --key with a missing file"
[ ! -e "$T/nokey/raw" ] || die "a missing key started a campaign"

# the worker needs its supervisor's token
mkfifo "$T/fifo" 2>/dev/null || true
"$KGATE" worker --plan tests/plans/fake-faster.kg --out "$T/ev" --proc 0 --backend fake --rows-fd 3 --salt-fd 4 \
    3>"$T/rows" 4<"$T/ev/meta.json" >"$T/w.out" 2>"$T/w.err"; st=$?
expect_status 2 $st "a worker without a token"
expect_grep "token" "$T/w.err"
[ ! -s "$T/rows" ] || die "a worker without a token sent rows"
# a worker whose rows are authenticated under another token (a wrapper
# swaps its token pipe for 32 zero bytes): every process is refused
head -c 32 /dev/zero >"$T/zero"
cat >"$T/wrap.sh" <<'EOF'
d=$(dirname "$0")
# a descriptor none of the worker's pipes uses (sh names 0-9 only)
used=" $(echo "$*" | tr ' ' '\n' | awk 'p { print } { p = ($0 ~ /^--.*-fd$/) }' | tr '\n' ' ') "
fd=9
while case $used in *" $fd "*) true ;; *) false ;; esac; do fd=$((fd - 1)); done
prev=
for a in "$@"; do
    shift
    o=$a
    [ "$prev" = --token-fd ] && a=$fd
    set -- "$@" "$a"
    prev=$o
done
eval 'exec "$@" '$fd'<"$d/zero"'
EOF
KGATE_WORKER_WRAPPER="sh $T/wrap.sh" "$KGATE" run tests/plans/fake-faster.kg --quiet-window 0 -o "$T/tok" >"$T/out" 2>"$T/err"; st=$?
[ $st != 0 ] || die "a campaign whose workers used another token passed"
expect_grep "bad rows" "$T/tok/processes.csv"
expect_grep "HMAC" "$T/tok/processes.csv"
[ -z "$(ls "$T/tok/raw" 2>/dev/null | grep "^proc-")" ] || die "rows under another token were recorded"
echo "attest: signed folders verify, the forgeries fail verify --key, the worker needs its token"
exit 0
