# Evidence integrity: a finished folder verifies; a one-byte change to any
# of its files (every file, one at a time) makes kgate verify exit 1 and
# name the file; the replay and the recomputed reports catch changes even
# when SHA256SUMS is recomputed to match; the archive holds the folder.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ev" --archive >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "campaign: exit status $st"; }
[ -f "$T/ev/SHA256SUMS" ] || die "SHA256SUMS missing"
[ -f "$T/ev/environment.json" ] || die "environment.json missing"
expect_grep '"kgate_binary_sha256"' "$T/ev/environment.json"
expect_grep '"cpu_model"' "$T/ev/environment.json"
[ -f "$T/ev/outputs/proc-000.bin" ] || die "saved outputs missing"
expect_grep "^0,small,cand,pre,poison0,0," "$T/ev/outputs/proc-000.csv"
expect_grep "^0,small,cand,post,fresh,0," "$T/ev/outputs/proc-000.csv"
"$KGATE" verify "$T/ev" >"$T/v.out" 2>"$T/v.err"; st=$?
[ $st = 0 ] || { cat "$T/v.err" >&2; die "verify of an untouched folder: exit $st"; }
expect_grep "verified" "$T/v.out"
expect_grep "saved outputs replayed" "$T/v.out"
(cd "$T/ev" && sha256sum -c --quiet SHA256SUMS) || die "SHA256SUMS is not in sha256sum format"
# the archive: next to the folder, with every file
[ -f "$T/ev.tar.gz" ] || die "no archive"
tar tzf "$T/ev.tar.gz" >"$T/list" || die "archive unreadable"
expect_grep "^ev/SHA256SUMS$" "$T/list"
expect_grep "^ev/raw/proc-005.csv.gz$" "$T/list"

# one byte of every file (an empty file gets one byte appended)
flip() {
    n=$(wc -c <"$1")
    if [ "$n" -eq 0 ]; then printf 'x' >>"$1"; return; fi
    off=$((n / 2))
    b=$(dd if="$1" bs=1 skip=$off count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
    if [ "$b" = 65 ]; then c=B; else c=A; fi
    printf '%s' "$c" | dd of="$1" bs=1 seek=$off count=1 conv=notrunc 2>/dev/null
}
count=0
for rel in $(cd "$T/ev" && find . -type f | sed 's|^\./||' | sort); do
    rm -rf "$T/t"
    cp -r "$T/ev" "$T/t"
    flip "$T/t/$rel"
    cmp -s "$T/ev/$rel" "$T/t/$rel" && die "flip did not change $rel"
    "$KGATE" verify "$T/t" >"$T/t.out" 2>"$T/t.err"; st=$?
    [ $st = 1 ] || die "one byte changed in $rel: verify exit $st, expected 1"
    grep -q -F -- "$rel" "$T/t.err" || { cat "$T/t.err" >&2; die "verify did not name $rel"; }
    count=$((count + 1))
done
[ $count -ge 30 ] || die "only $count files tampered"
# an added file is reported
rm -rf "$T/t"; cp -r "$T/ev" "$T/t"; echo extra >"$T/t/raw/proc-099.csv"
"$KGATE" verify "$T/t" >/dev/null 2>"$T/t.err"; st=$?
[ $st = 1 ] || die "added file: exit $st"
expect_grep "raw/proc-099.csv: not listed" "$T/t.err"

resum() { (cd "$1" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS); }
# replay: a saved output changed, SHA256SUMS forged to match
rm -rf "$T/t"; cp -r "$T/ev" "$T/t"
printf 'AAAA' | dd of="$T/t/outputs/proc-002.bin" bs=1 seek=0 count=4 conv=notrunc 2>/dev/null
resum "$T/t"
"$KGATE" verify "$T/t" >/dev/null 2>"$T/t.err"; st=$?
[ $st = 1 ] || die "forged output: exit $st"
grep -q "outputs/proc-002.csv:[0-9]*: \(replay of\|the stored output\)" "$T/t.err" || { cat "$T/t.err" >&2; die "the forged output is not named"; }
# recomputed reports: a process quietly excluded, SHA256SUMS forged to match
rm -rf "$T/t"; cp -r "$T/ev" "$T/t"
sed -i '3s/^1,rev,ok,1,/1,rev,ok,0,/' "$T/t/processes.csv"
cmp -s "$T/ev/processes.csv" "$T/t/processes.csv" && die "sed did not change processes.csv"
resum "$T/t"
"$KGATE" verify "$T/t" >/dev/null 2>"$T/t.err"; st=$?
[ $st = 1 ] || die "forged processes.csv: exit $st"
expect_grep "differs from the report recomputed" "$T/t.err"
# usage
"$KGATE" verify "$T/nothing" >/dev/null 2>&1; st=$?
[ $st = 2 ] || die "verify of a missing folder: exit $st, expected 2"
exit 0
