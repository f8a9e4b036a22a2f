# What measured is what is signed: the signed statement binds the programs
# that ran (supervisor, worker, wrapper, arm host, compiler) by SHA-256,
# and the environment that changes kgate's behaviour.
#   - the wrapper attack (review 2026-12-04, S3): KGATE_WORKER_WRAPPER
#     execs a different binary as the worker (here a copy of kgate with one
#     byte appended: the binary that measured differs).  Before, the
#     campaign was signed and verify --key exited 0, with nothing recorded.
#     Now each worker's hello reports its image's SHA-256: the signed run
#     stops, unsigned, and watch.csv names the binary; a resume does not
#     sign it either; an unsigned run records it and goes on; without a
#     wrapper the worker is the supervisor's own image, even when the file
#     at its path is replaced during the campaign;
#   - an honest wrapper (it execs this kgate), LD_PRELOAD and KGATE_CC:
#     signed, recorded in the statement as unattested, and verify --key
#     fails with "unattested environment: NAME=value" unless --allow-env
#     names them;
#   - CI's own variables (KGATE_LOCK_DIR, KGATE_PEAKS, KGATE_CACHE_DIR) are
#     recorded and verify --key passes; the statement's programs are the
#     binaries' SHA-256 (the compiler's path, hash and version on cpu);
#   - a recorded hash changed afterwards breaks the signature;
#   - a signed merge carries its shards' unattested environment.
. tests/cli_lib.sh
export XDG_CONFIG_HOME="$T/config" HOME="$T/home"
mkdir -p "$HOME"
unset KGATE_WORKER_WRAPPER KGATE_CC LD_PRELOAD
"$KGATE" key init --out "$T/keys" >/dev/null 2>&1 || die "key init"
KEY="$T/keys/signing-key.pem" PUB="$T/keys/signing-key.pub.pem"
PLAN=tests/plans/fake-faster.kg
sha() { sha256sum "$1" | cut -d' ' -f1; }
# the signed statement of a folder, decoded
statement() { sed -n 's/.*"payload": *"\([^"]*\)".*/\1/p' "$1/attestation.dsse.json" | base64 -d; }
SELF=$(sha "$KGATE")
# the library LD_PRELOAD names: harmless (libm); under ASan its runtime, which must come first
PRE=$(ldd "$KGATE" 2>/dev/null | awk '/libasan/ { print $3 }')
[ -n "$PRE" ] || PRE=libm.so.6

# the attack: a wrapper that execs another binary as the worker
cp "$KGATE" "$T/other-kgate" && printf 'x' >>"$T/other-kgate" && chmod +x "$T/other-kgate"
OTHER=$(sha "$T/other-kgate")
printf '#!/bin/sh\nshift\nexec "%s" "$@"\n' "$T/other-kgate" >"$T/evil-wrap" && chmod +x "$T/evil-wrap"
KGATE_WORKER_WRAPPER="$T/evil-wrap" "$KGATE" run $PLAN --quiet-window 0 -o "$T/evil" --key "$KEY" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "a signed run whose worker is another binary"
expect_grep "not the supervisor's binary" "$T/err"
expect_grep "a run that signs refuses a worker" "$T/err"
[ ! -e "$T/evil/attestation.dsse.json" ] || die "the wrapper attack was signed"
grep ",0,worker,.*other-kgate, SHA-256 $(echo "$OTHER" | cut -c1-16)" "$T/evil/watch.csv" >/dev/null ||
    { cat "$T/evil/watch.csv" >&2; die "watch.csv does not name the worker's binary"; }
"$KGATE" verify "$T/evil" --key "$PUB" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key of the wrapper attack's folder"
expect_grep "unsigned" "$T/v.err"
# resumed without the wrapper, it is still not signed: process 0's worker was not this binary
"$KGATE" run $PLAN --quiet-window 0 --resume "$T/evil" --key "$KEY" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "a signed resume of a campaign with another worker binary"
expect_grep "left unsigned" "$T/err"
[ ! -e "$T/evil/attestation.dsse.json" ] || die "the resumed wrapper attack was signed"

# without a wrapper the worker is the supervisor's own image: a binary replaced
# at its path during the campaign (a rebuild) is not what later workers run
cp "$KGATE" "$T/k1"
(KGATE_FAKE_SLEEP_MS=10 "$T/k1" run $PLAN --quiet-window 0 -o "$T/rb" --key "$KEY" >"$T/rb.out" 2>"$T/rb.err"
 echo $? >"$T/rb.rc") &
i=0
while [ ! -f "$T/rb/processes.csv" ] && [ ! -f "$T/rb.rc" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
[ -f "$T/rb.rc" ] && die "the campaign ended before its first process was recorded"
cp "$T/other-kgate" "$T/k1.new" && mv "$T/k1.new" "$T/k1"
wait
[ "$(cat "$T/rb.rc")" = 0 ] || { cat "$T/rb.err" >&2; die "the rebuilt-binary run: exit $(cat "$T/rb.rc")"; }
[ -f "$T/rb/attestation.dsse.json" ] || die "the rebuilt-binary run is not signed"
[ "$(grep -c ',worker,' "$T/rb/watch.csv")" = 0 ] || { cat "$T/rb/watch.csv" >&2; die "a worker ran the replaced file"; }

# the same wrapper, unsigned: recorded for every process, the run goes on
KGATE_WORKER_WRAPPER="$T/evil-wrap" "$KGATE" run $PLAN --quiet-window 0 -o "$T/evil-u" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "an unsigned run whose worker is another binary"
n=$(grep -c ",worker," "$T/evil-u/watch.csv")
np=$(($(wc -l <"$T/evil-u/processes.csv") - 1))
[ "$n" = "$np" ] || die "watch.csv has $n worker events for $np processes"
expect_grep "\"KGATE_WORKER_WRAPPER=$T/evil-wrap\"" "$T/evil-u/environment.json"
"$KGATE" verify "$T/evil-u" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "verify of the unsigned folder"; }

# an honest wrapper: signed, the wrapper recorded as unattested
printf '#!/bin/sh\nexec "$@"\n' >"$T/wrap" && chmod +x "$T/wrap"
KGATE_WORKER_WRAPPER="$T/wrap" "$KGATE" run $PLAN --quiet-window 0 -o "$T/wr" --key "$KEY" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "a signed run under a wrapper that execs this kgate"
expect_grep "unattested environment (KGATE_WORKER_WRAPPER" "$T/err"
[ -f "$T/wr/attestation.dsse.json" ] || die "the honest wrapper's run is not signed"
statement "$T/wr" >"$T/wr.st"
expect_grep "\"unattested\":\[\"KGATE_WORKER_WRAPPER=$T/wrap\"\]" "$T/wr.st"
expect_grep "\"worker_wrapper\":{\"path\":\"$T/wrap\",\"sha256\":\"$(sha "$T/wrap")\"" "$T/wr.st"
"$KGATE" verify "$T/wr" --key "$PUB" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key of a wrapper's run"
expect_grep "unattested environment: KGATE_WORKER_WRAPPER=$T/wrap" "$T/v.err"
"$KGATE" verify "$T/wr" --key "$PUB" --allow-env KGATE_WORKER_WRAPPER >"$T/v.out" 2>"$T/v.err" ||
    { cat "$T/v.err" >&2; die "verify --key --allow-env KGATE_WORKER_WRAPPER"; }
expect_grep "verified" "$T/v.out"
"$KGATE" verify "$T/wr" --allow-env KGATE_WORKER_WRAPPER >/dev/null 2>"$T/v.err"; st=$?
expect_status 2 $st "--allow-env without --key"

# LD_PRELOAD and KGATE_CC: recorded, refused by verify --key unless allowed
env LD_PRELOAD=$PRE KGATE_CC=cc "$KGATE" run $PLAN --quiet-window 0 -o "$T/ld" --key "$KEY" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "a signed run with LD_PRELOAD and KGATE_CC"
statement "$T/ld" >"$T/ld.st"
expect_grep "\"unattested\":\\[\"KGATE_CC=cc\",\"LD_PRELOAD=$PRE\"\\]" "$T/ld.st"
"$KGATE" verify "$T/ld" --key "$PUB" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key of an LD_PRELOAD run"
expect_grep "unattested environment: LD_PRELOAD=$PRE" "$T/v.err"
expect_grep "unattested environment: KGATE_CC=cc" "$T/v.err"
"$KGATE" verify "$T/ld" --key "$PUB" --allow-env LD_PRELOAD >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key --allow-env LD_PRELOAD (KGATE_CC still unattested)"
expect_no_grep "LD_PRELOAD" "$T/v.err"
"$KGATE" verify "$T/ld" --key "$PUB" --allow-env LD_PRELOAD,KGATE_CC >"$T/v.out" 2>"$T/v.err" ||
    { cat "$T/v.err" >&2; die "verify --key --allow-env LD_PRELOAD,KGATE_CC"; }

# CI's own variables are recorded, and the statement lists the programs
"$KGATE" run $PLAN --quiet-window 0 -o "$T/ok" --key "$KEY" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "a signed run"
expect_no_grep "unattested" "$T/err"
"$KGATE" verify "$T/ok" --key "$PUB" >"$T/v.out" 2>"$T/v.err" || { cat "$T/v.err" >&2; die "verify --key"; }
statement "$T/ok" >"$T/ok.st"
expect_grep '"unattested":\[\]' "$T/ok.st"
expect_grep "\"KGATE_LOCK_DIR\":\"$KGATE_LOCK_DIR\"" "$T/ok.st"
expect_grep "\"KGATE_PEAKS\":\"$KGATE_PEAKS\"" "$T/ok.st"
expect_grep "\"supervisor\":{\"path\":\"[^\"]*\",\"sha256\":\"$SELF\"}" "$T/ok.st"
expect_grep "\"worker\":{\"path\":\"[^\"]*\",\"sha256\":\"$SELF\"" "$T/ok.st"
expect_grep "\"arm_host\":{\"path\":\"[^\"]*\",\"sha256\":\"$SELF\"}" "$T/ok.st"
[ "$(grep -c ',worker,' "$T/ok/watch.csv")" = 0 ] || die "an honest run has worker events"
# kgate puts OpenBLAS's idle threads to sleep at once in its processes (OPENBLAS_THREAD_TIMEOUT=4,
# src/cli/main.c), recorded as the environment it ran with; a value the user set is kept
if [ -z "${OPENBLAS_THREAD_TIMEOUT+set}" ]; then
    expect_grep '"OPENBLAS_THREAD_TIMEOUT":"4"' "$T/ok.st"
fi
OPENBLAS_THREAD_TIMEOUT=12 "$KGATE" run $PLAN --quiet-window 0 -o "$T/blas" -q 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "a run with OPENBLAS_THREAD_TIMEOUT=12: exit $st"; }
expect_grep '"OPENBLAS_THREAD_TIMEOUT": "12"' "$T/blas/environment.json"

# the compiler's identity on the cpu backend: path, SHA-256, version line
cat >"$T/cpu.kg" <<EOF
[campaign]
name = attest-env-cpu
backend = cpu
quiet = 0
warmup = 1
samples = 2
rounds = 1
processes = 2
margin = 5%
timeout = 60

[case c]
op = rowsum
dtype = f32
M = 8
N = 64

[arm base]
op = rowsum
role = baseline
source = $(pwd)/kernels/cpu/rowsum_naive.c

[arm cand]
op = rowsum
role = candidate
source = $(pwd)/kernels/cpu/rowsum_unrolled.c
EOF
"$KGATE" run "$T/cpu.kg" --quiet-window 0 -o "$T/cpu" --key "$KEY" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "the signed cpu run: exit $st"; }
CC=$(readlink -f "$(command -v cc)")
statement "$T/cpu" >"$T/cpu.st"
expect_grep "\"compiler\":{\"path\":\"$CC\",\"sha256\":\"$(sha "$CC")\",\"command\":\"cc\",\"version\":\"$(cc --version | head -n 1)\"}" "$T/cpu.st"
"$KGATE" verify "$T/cpu" --key "$PUB" >"$T/v.out" 2>"$T/v.err" || { cat "$T/v.err" >&2; die "verify --key of the cpu run"; }

# a recorded hash changed afterwards: environment.json no longer matches the signed statement
cp -r "$T/ok" "$T/t1"
sed -i "0,/$SELF/s//$(echo "$OTHER")/" "$T/t1/environment.json"
"$KGATE" verify "$T/t1" --key "$PUB" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key after environment.json's hash was changed"
expect_grep "environment.json: SHA-256 .* differs from the signed statement's" "$T/v.err"
# ... or the statement itself: the signature no longer holds
cp -r "$T/ok" "$T/t2"
p=$(statement "$T/ok" | sed "s/$SELF/$OTHER/g" | base64 -w0)
sed -i "s|\"payload\": *\"[^\"]*\"|\"payload\": \"$p\"|" "$T/t2/attestation.dsse.json"
"$KGATE" verify "$T/t2" --key "$PUB" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key after the statement's hash was changed"
expect_grep "the signature does not verify" "$T/v.err"

# a signed merge carries its shards' unattested environment
sed "s#\.\./\.\./kernels#$PWD/kernels#" tests/plans/fake-shard.kg >"$T/shard.kg"
"$KGATE" run "$T/shard.kg" --shard 0/2 --campaign envc -o "$T/m0" --key "$KEY" -q 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "shard 0: exit $st"; }
env LD_PRELOAD=$PRE "$KGATE" run "$T/shard.kg" --shard 1/2 --campaign envc -o "$T/m1" --key "$KEY" -q 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "shard 1: exit $st"; }
"$KGATE" merge --quiet "$T/mm" "$T/m0" "$T/m1" --key "$KEY" 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "signed merge: exit $st"; }
statement "$T/mm" >"$T/mm.st"
expect_grep "\"unattested\":\\[\"LD_PRELOAD=$PRE\"\\]" "$T/mm.st"
"$KGATE" verify "$T/mm" --key "$PUB" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify --key of a merge with an LD_PRELOAD shard"
expect_grep "unattested environment: LD_PRELOAD=$PRE" "$T/v.err"
"$KGATE" verify "$T/mm" --key "$PUB" --allow-env LD_PRELOAD >"$T/v.out" 2>"$T/v.err" ||
    { cat "$T/v.err" >&2; die "verify --key --allow-env LD_PRELOAD of the merge"; }

echo "attest_env: the worker's binary is checked, the environment recorded, verify --key refuses the unattested"
