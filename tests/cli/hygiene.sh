# Path hygiene: kgate reads only regular files and folders in an evidence
# folder.  A symbolic link (to a file inside or outside the folder, to a
# device, or a linked subfolder), a FIFO or a socket is refused by verify,
# report and --resume with a message naming it; it is never followed and
# never blocks.  -o refuses an existing non-empty folder and a regular file.
# The device lock refuses a linked lock file, works in a lock folder it may
# only read, and a lock file planted by another user blocks no one.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
bad=0
fail() { echo "FAIL: $*" >&2; bad=$((bad + 1)); }
has() { grep -q -- "$1" "$2" || { echo "--- $2:" >&2; head -n 20 "$2" >&2; fail "expected '$1' in $2"; }; }
# SHA256SUMS rewritten the way kgate writes it (what a forger does)
resum() {
    (cd "$1" && find . \( -type f -o -type l -o -type p \) ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort |
        while read -r f; do [ -p "$f" ] && printf '%064d  %s\n' 0 "$f" || sha256sum "$f"; done >"$T/sums.new") &&
        mv "$T/sums.new" "$1/SHA256SUMS"
}
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/a" >/dev/null 2>&1; st=$?
[ $st -le 1 ] || die "reference campaign: exit $st"
"$KGATE" verify "$T/a" >/dev/null 2>&1 || die "the reference folder does not verify"
mkdir -p "$T/outside"

# 1. a raw file replaced by a link to an identical copy outside the folder
cp -r "$T/a" "$T/s1"
cp "$T/s1/raw/proc-000.csv.gz" "$T/outside/proc-000.csv.gz"
ln -sf "$T/outside/proc-000.csv.gz" "$T/s1/raw/proc-000.csv.gz"
"$KGATE" verify "$T/s1" >"$T/s1.out" 2>&1; st=$?
[ $st = 1 ] || fail "verify of a linked raw file: exit $st, expected 1"
has "raw/proc-000.csv.gz: a symbolic link" "$T/s1.out"
"$KGATE" report "$T/s1" >"$T/s1r.out" 2>&1; st=$?
[ $st = 0 ] && fail "report read through a linked raw file"
has "raw/proc-000.csv.gz: a symbolic link" "$T/s1r.out"

# 2. a link to /etc/passwd listed in SHA256SUMS
cp -r "$T/a" "$T/s2"
ln -s /etc/passwd "$T/s2/notes.txt"
resum "$T/s2"
"$KGATE" verify "$T/s2" >"$T/s2.out" 2>&1; st=$?
[ $st = 1 ] || fail "verify of a link to /etc/passwd listed in SHA256SUMS: exit $st, expected 1"
has "notes.txt: a symbolic link" "$T/s2.out"

# 3. a FIFO as a log: verify must not block
cp -r "$T/a" "$T/s3"
rm "$T/s3/logs/proc-001.log"
mkfifo "$T/s3/logs/proc-001.log"
timeout 20 "$KGATE" verify "$T/s3" >"$T/s3.out" 2>&1; st=$?
[ $st = 1 ] || fail "verify with a FIFO: exit $st, expected 1 (124: it hung)"
has "logs/proc-001.log: a FIFO" "$T/s3.out"

# 4. a link to /dev/zero: refused at once, nothing read
cp -r "$T/a" "$T/s4"
ln -sf /dev/zero "$T/s4/logs/proc-001.log"
# (an address-space bound keeps a reader of /dev/zero from eating the host's memory; an
# AddressSanitizer build reserves terabytes of shadow and runs under none)
case ${BUILD:-build} in
*san*) timeout 20 "$KGATE" verify "$T/s4" >"$T/s4.out" 2>&1; st=$? ;;
*) (ulimit -v 1000000; timeout 20 "$KGATE" verify "$T/s4") >"$T/s4.out" 2>&1; st=$? ;;
esac
[ $st = 1 ] || fail "verify with a link to /dev/zero: exit $st, expected 1"
has "logs/proc-001.log: a symbolic link" "$T/s4.out"

# 5. a linked subfolder
cp -r "$T/a" "$T/s5"
mv "$T/s5/raw" "$T/outside/raw5"
ln -s "$T/outside/raw5" "$T/s5/raw"
"$KGATE" report "$T/s5" >"$T/s5.out" 2>&1; st=$?
[ $st = 0 ] && fail "report read through a linked raw/ folder"
has "raw: a symbolic link" "$T/s5.out"
"$KGATE" verify "$T/s5" >"$T/s5v.out" 2>&1; st=$?
[ $st = 1 ] || fail "verify with a linked raw/: exit $st"
has "raw: a symbolic link" "$T/s5v.out"

# 6. --resume through linked logs/ and raw/ writes nothing outside
cp -r "$T/a" "$T/s6"
head -n 3 "$T/s6/processes.csv" >"$T/p6" && mv "$T/p6" "$T/s6/processes.csv"
rm -f "$T/s6/SHA256SUMS" "$T/s6/report.md" "$T/s6/results.json" "$T/s6/results.csv" "$T/s6/report.html"
mkdir -p "$T/outside/six"
mv "$T/s6/logs" "$T/outside/six/logs"; mv "$T/s6/raw" "$T/outside/six/raw"
ln -s "$T/outside/six/logs" "$T/s6/logs"; ln -s "$T/outside/six/raw" "$T/s6/raw"
n0=$(find "$T/outside/six" -type f | wc -l)
"$KGATE" run --report --resume "$T/s6" tests/plans/fake-faster.kg >"$T/s6.out" 2>&1; st=$?
[ $st = 2 ] || fail "resume through linked folders: exit $st, expected 2"
has "symbolic link" "$T/s6.out"
n1=$(find "$T/outside/six" -type f | wc -l)
[ "$n0" = "$n1" ] || fail "resume wrote $((n1 - n0)) file(s) outside the folder"

# 7. a socket is refused too (where python3 can make one)
if command -v python3 >/dev/null 2>&1; then
    cp -r "$T/a" "$T/s7"
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/s7/logs/sock"
    "$KGATE" verify "$T/s7" >"$T/s7.out" 2>&1; st=$?
    [ $st = 1 ] || fail "verify with a socket: exit $st"
    has "logs/sock: a socket" "$T/s7.out"
fi

# 8. -o: an existing non-empty folder is refused (its files would join the evidence)
mkdir -p "$T/o1" && echo mine >"$T/o1/mine.txt"
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/o1" >"$T/o1.out" 2>&1; st=$?
[ $st = 2 ] || fail "-o a non-empty folder: exit $st, expected 2"
has "is not empty" "$T/o1.out"
[ -f "$T/o1/plan.kg" ] && fail "a campaign was written into a non-empty folder"
# an empty one is fine
mkdir -p "$T/o2"
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/o2" >/dev/null 2>&1; st=$?
[ $st -le 1 ] || fail "-o an empty folder: exit $st"
# a regular file
echo x >"$T/o3"
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/o3" >"$T/o3.out" 2>&1; st=$?
[ $st = 2 ] || fail "-o a regular file: exit $st, expected 2"
has "is not a folder" "$T/o3.out"
grep -q "evidence so far" "$T/o3.out" && fail "-o a regular file must not speak of evidence so far"

# 9. a linked lock file is refused; its target is left alone
mkdir -p "$T/l9"
echo "victim" >"$T/victim.txt" && chmod 0600 "$T/victim.txt"
ln -s "$T/victim.txt" "$T/l9/fake.lock"
KGATE_LOCK_DIR="$T/l9" "$KGATE" run --report tests/plans/fake-faster.kg -o "$T/o9" >"$T/l9.out" 2>&1; st=$?
[ $st = 2 ] || fail "a linked lock file: exit $st, expected 2"
has "symbolic link" "$T/l9.out"
[ "$(cat "$T/victim.txt")" = victim ] || fail "the lock file's link target was written"
[ "$(stat -c %a "$T/victim.txt")" = 600 ] || fail "the lock file's link target was chmod'ed"

# 10. another user: a lock file planted 0600 blocks no one; a lock folder the
# user may only read, where the lock file exists, works
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
    setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$KGATE" 2>/dev/null &&
    setpriv --reuid=65534 --regid=65534 --clear-groups test -r tests/plans/fake-faster.kg 2>/dev/null; then
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    chmod 0755 "$T"
    mkdir -p "$T/l10" "$T/w10" && chmod 01777 "$T/l10" && chmod 0777 "$T/w10"
    : >"$T/l10/fake.lock" && chmod 0600 "$T/l10/fake.lock"   # owned by root, unreadable to nobody
    KGATE_LOCK_DIR="$T/l10" as_nobody "$KGATE" run --report tests/plans/fake-faster.kg -o "$T/w10/a" >"$T/l10.out" 2>&1; st=$?
    [ $st -le 1 ] || fail "a lock file planted 0600 by another user: exit $st"
    has "not a kgate lock" "$T/l10.out"
    [ -f "$T/l10/fake.uid-65534.lock" ] || fail "no per-user lock file next to the planted one"
    mkdir -p "$T/l11" && chmod 0755 "$T/l11"
    : >"$T/l11/fake.lock" && chmod 0644 "$T/l11/fake.lock"   # nobody may read it, not write it
    KGATE_LOCK_DIR="$T/l11" as_nobody "$KGATE" run --report tests/plans/fake-faster.kg -o "$T/w10/b" >"$T/l11.out" 2>&1; st=$?
    [ $st -le 1 ] || { cat "$T/l11.out" >&2; fail "a lock folder that may only be read: exit $st"; }
    [ -s "$T/l11/fake.lock" ] && fail "a lock file of another user was written"
else
    echo "hygiene: skipped the other-user lock cases (needs root and setpriv)" >&2
fi

# 11. plans: a timeout below 1 s is refused with the bound
sed 's/^timeout = 30/timeout = 1e-320/' tests/plans/fake-faster.kg >"$T/tiny.kg"
"$KGATE" run --report "$T/tiny.kg" -o "$T/tiny" >"$T/tiny.out" 2>&1; st=$?
[ $st = 2 ] || fail "timeout = 1e-320: exit $st, expected 2"
has "timeout" "$T/tiny.out"

[ $bad = 0 ] || die "$bad hygiene check(s) failed"
echo "hygiene: links, special files, -o, locks and plan bounds: all refused as they should be"
exit 0
