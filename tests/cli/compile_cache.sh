# The compile cache of cpu arms (src/backend/armcache.h):
#  1. a campaign compiles its arms and stores them; the next one takes
#     them from the cache: it says so on stderr, environment.json's
#     compile_cache and the report's header name them, build/ARM.so.cache
#     sits beside each, the objects are byte for byte a compile's, and the
#     folder verifies;
#  2. --no-cache and KGATE_CACHE=0 compile, and neither read nor write it;
#  3. an entry whose object was damaged, or cut short, is not used: the arm
#     is compiled and the entry replaced;
#  4. what the compile depends on makes a new entry: a header the source
#     includes, a flag of the arm, the compiler (a wrapper named by path);
#  5. two campaigns filling an empty cache at once both finish, and leave
#     one whole entry per arm;
#  6. the cache folder is the user's alone (0700), and a cache folder
#     others may write is not used (an entry there could be anyone's).
. tests/cli_lib.sh
C="$T/kcache"
export KGATE_CACHE_DIR="$C"
mkdir -p "$T/src"
cp kernels/cpu/rowsum_naive.c kernels/cpu/rowsum_unrolled.c "$T/src/"
plan() { # FILE [extra line for arm cand]
    cat >"$1" <<PLAN
[campaign]
name = cache
backend = cpu
quiet = 0
warmup = 1
samples = 2
rounds = 1
processes = 1
timeout = 60
[case r]
op = rowsum
dtype = f32
M = 16
N = 64
[arm naive]
op = rowsum
role = baseline
source = $T/src/rowsum_naive.c
[arm cand]
op = rowsum
role = candidate
source = $T/src/rowsum_unrolled.c
${2:-}
[gate]
min_reduction = 1%
PLAN
}
entries() { ls "$C/arms" 2>/dev/null | grep -c '\.so$'; }
plan "$T/p.kg"

# ---- 1. stored, then used
"$KGATE" run --report "$T/p.kg" -o "$T/a" --no-progress >/dev/null 2>"$T/a.err"; st=$?
[ $st -le 1 ] || { cat "$T/a.err" >&2; die "first campaign: exit $st"; }
expect_no_grep "from the compile cache" "$T/a.err"
expect_no_grep '"compile_cache"' "$T/a/environment.json"
expect_no_grep "| compile cache |" "$T/a/report.md"
[ "$(entries)" = 2 ] || die "expected 2 entries after the first campaign, found $(entries)"
"$KGATE" run --report "$T/p.kg" -o "$T/b" --no-progress >/dev/null 2>"$T/b.err"; st=$?
[ $st -le 1 ] || { cat "$T/b.err" >&2; die "second campaign: exit $st"; }
expect_grep "kgate: arm naive: from the compile cache" "$T/b.err"
expect_grep "kgate: arm cand: from the compile cache" "$T/b.err"
expect_grep '"compile_cache"' "$T/b/environment.json"
expect_grep '"naive.so": "compile cache [0-9a-f]\{64\} (' "$T/b/environment.json"
expect_grep '"cand.so": "compile cache [0-9a-f]\{64\} (' "$T/b/environment.json"
expect_grep "^| compile cache | cand.so, naive.so: from the compile cache" "$T/b/report.md"
[ -f "$T/b/build/naive.so.cache" ] && [ -f "$T/b/build/cand.so.cache" ] || die "no build/ARM.so.cache beside the objects"
for a in naive cand; do
    cmp -s "$T/a/build/$a.so" "$T/b/build/$a.so" || die "arm $a: the cached object is not the compiled one"
done
"$KGATE" verify "$T/b" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "the folder built from the cache does not verify"; }
expect_report_identical "$T/b"
# the note beside an object is evidence: an edit is caught
cp -r "$T/b" "$T/bx"
echo "compile cache 0000" >"$T/bx/build/naive.so.cache"
"$KGATE" verify "$T/bx" >"$T/vx.out" 2>&1 && die "verify accepted an edited build/naive.so.cache"

# ---- 2. off: compiled, the cache untouched
before=$(ls -l --time-style=+%s.%N "$C/arms")
"$KGATE" run --report "$T/p.kg" -o "$T/n1" --no-progress --no-cache >/dev/null 2>"$T/n1.err"; st=$?
[ $st -le 1 ] || { cat "$T/n1.err" >&2; die "--no-cache: exit $st"; }
KGATE_CACHE=0 "$KGATE" check "$T/p.kg" -o "$T/n2" >/dev/null 2>"$T/n2.err"; st=$?
[ $st = 0 ] || { cat "$T/n2.err" >&2; die "KGATE_CACHE=0 check: exit $st"; }
"$KGATE" check "$T/p.kg" -o "$T/n3" --no-cache >/dev/null 2>"$T/n3.err"; st=$?
[ $st = 0 ] || { cat "$T/n3.err" >&2; die "check --no-cache: exit $st"; }
for d in n1 n2 n3; do
    expect_no_grep "from the compile cache" "$T/$d.err"
    expect_no_grep '"compile_cache"' "$T/$d/environment.json"
done
[ "$(ls -l --time-style=+%s.%N "$C/arms")" = "$before" ] || die "the cache was written with the cache off"
KGATE_CACHE=2 "$KGATE" check "$T/p.kg" -o "$T/n4" >/dev/null 2>"$T/n4.err"; st=$?
expect_status 2 $st "KGATE_CACHE=2"
expect_grep "KGATE_CACHE must be 0 (no compile cache) or 1" "$T/n4.err"

# ---- 3. a damaged entry, and one cut short: compiled, and replaced
key=$(sed -n 's/^compile cache \([0-9a-f]*\) .*/\1/p' "$T/b/build/naive.so.cache")
e="$C/arms/$key.so"
[ -f "$e" ] || die "no entry $e"
size=$(wc -c <"$e")
printf '\001' | dd of="$e" bs=1 seek=$((size - 100)) conv=notrunc 2>/dev/null
"$KGATE" run --report "$T/p.kg" -o "$T/d1" --no-progress >/dev/null 2>"$T/d1.err"; st=$?
[ $st -le 1 ] || { cat "$T/d1.err" >&2; die "campaign over a damaged entry: exit $st"; }
expect_no_grep "arm naive: from the compile cache" "$T/d1.err"
expect_grep "arm cand: from the compile cache" "$T/d1.err"
cmp -s "$T/a/build/naive.so" "$T/d1/build/naive.so" || die "the damaged entry's object was used"
"$KGATE" run --report "$T/p.kg" -o "$T/d2" --no-progress >/dev/null 2>"$T/d2.err"
expect_grep "arm naive: from the compile cache" "$T/d2.err"
head -c 200 "$e" >"$e.cut" && mv "$e.cut" "$e"
"$KGATE" run --report "$T/p.kg" -o "$T/d3" --no-progress >/dev/null 2>"$T/d3.err"; st=$?
[ $st -le 1 ] || { cat "$T/d3.err" >&2; die "campaign over an entry cut short: exit $st"; }
expect_no_grep "arm naive: from the compile cache" "$T/d3.err"
"$KGATE" verify "$T/d3" >/dev/null 2>&1 || die "the folder compiled over a cut entry does not verify"

# ---- 4. what the compile depends on
n=$(entries)
printf 'typedef int kg_test_extra_1;\n' >"$T/src/extra.h"
{ echo '#include "extra.h"'; cat kernels/cpu/rowsum_unrolled.c; } >"$T/src/rowsum_unrolled.c"
"$KGATE" check "$T/p.kg" -o "$T/h1" >/dev/null 2>"$T/h1.err" || { cat "$T/h1.err" >&2; die "check with a header"; }
"$KGATE" check "$T/p.kg" -o "$T/h2" >/dev/null 2>"$T/h2.err" || die "check with a header, again"
expect_grep "arm cand: from the compile cache" "$T/h2.err"
printf 'typedef int kg_test_extra_2;\n' >"$T/src/extra.h"
"$KGATE" check "$T/p.kg" -o "$T/h3" >/dev/null 2>"$T/h3.err" || die "check with an edited header"
expect_no_grep "arm cand: from the compile cache" "$T/h3.err"
expect_grep "arm naive: from the compile cache" "$T/h3.err"
plan "$T/pf.kg" "cflags = -O1"
"$KGATE" check "$T/pf.kg" -o "$T/f1" >/dev/null 2>"$T/f1.err" || { cat "$T/f1.err" >&2; die "check with cflags"; }
expect_no_grep "arm cand: from the compile cache" "$T/f1.err"
printf '#!/bin/sh\nexec cc "$@"\n' >"$T/mycc" && chmod +x "$T/mycc"
KGATE_CC="$T/mycc" "$KGATE" check "$T/p.kg" -o "$T/c1" >/dev/null 2>"$T/c1.err" || { cat "$T/c1.err" >&2; die "check with KGATE_CC"; }
expect_no_grep "from the compile cache" "$T/c1.err"
KGATE_CC="$T/mycc" "$KGATE" check "$T/p.kg" -o "$T/c2" >/dev/null 2>"$T/c2.err" || die "check with KGATE_CC, again"
expect_grep "arm naive: from the compile cache" "$T/c2.err"
[ "$(entries)" = $((n + 5)) ] || die "expected $((n + 5)) entries (two versions of a header, a flag, another compiler for both arms), found $(entries)"

# ---- 5. two campaigns filling an empty cache at once (each with a lock
# folder of its own: on one lock the second would build after the first)
export KGATE_CACHE_DIR="$T/kcache2"
KGATE_LOCK_DIR="$T/lock1" "$KGATE" run --report "$T/p.kg" -o "$T/x1" --no-progress >/dev/null 2>"$T/x1.err" &
p1=$!
KGATE_LOCK_DIR="$T/lock2" "$KGATE" check "$T/p.kg" -o "$T/x2" >/dev/null 2>"$T/x2.err" &
p2=$!
wait $p1; s1=$?
wait $p2; s2=$?
[ $s1 -le 1 ] && [ $s2 = 0 ] || { cat "$T/x1.err" "$T/x2.err" >&2; die "two campaigns at once: exit $s1 and $s2"; }
[ "$(ls "$KGATE_CACHE_DIR/arms" | grep -c '\.so$')" = 2 ] || { ls -la "$KGATE_CACHE_DIR/arms" >&2; die "expected 2 entries"; }
[ "$(ls "$KGATE_CACHE_DIR/arms" | grep -vc '\.so$')" = 0 ] || { ls -la "$KGATE_CACHE_DIR/arms" >&2; die "a temporary was left"; }
for f in "$KGATE_CACHE_DIR"/arms/*.so; do
    want=$(head -n 1 "$f" | sed -n 's/^kgate-arm-cache 1 \([0-9a-f]\{64\}\)$/\1/p')
    got=$(tail -n +2 "$f" | sha256sum | cut -d' ' -f1)
    [ -n "$want" ] && [ "$want" = "$got" ] || die "entry $f is not whole (header '$want', object $got)"
done

# ---- 6. the user's alone
[ "$(stat -c %a "$KGATE_CACHE_DIR")" = 700 ] && [ "$(stat -c %a "$KGATE_CACHE_DIR/arms")" = 700 ] ||
    die "the cache folder is not 0700"
chmod 0777 "$KGATE_CACHE_DIR/arms"
"$KGATE" check "$T/p.kg" -o "$T/w1" >/dev/null 2>"$T/w1.err" || { cat "$T/w1.err" >&2; die "check over a shared cache"; }
expect_no_grep "from the compile cache" "$T/w1.err"
expect_grep "is not this user's alone .*: not used" "$T/w1.err"
expect_no_grep '"compile_cache"' "$T/w1/environment.json"
echo "compile_cache: ok"
