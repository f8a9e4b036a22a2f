# Bad input: a one-line message naming the file and line, exit status 2,
# never a crash.
. tests/cli_lib.sh
printf '[campaign]\nwarmpu = 3\n' > "$T/typo.kg"
"$KGATE" run --report "$T/typo.kg" -o "$T/a" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "unknown key"
expect_grep "typo.kg:2" "$T/err"
expect_grep "warmpu" "$T/err"

printf '\000\001\002junk' > "$T/bin.kg"
"$KGATE" check "$T/bin.kg" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "binary junk"
expect_grep "bin.kg" "$T/err"

: > "$T/empty.kg"
"$KGATE" run --report "$T/empty.kg" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "empty plan"

"$KGATE" run --report "$T/does-not-exist.kg" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "missing plan"
expect_grep "does-not-exist.kg" "$T/err"

# a missing kernel source names the arm's line
sed 's#../kernels/cpu/gemm_bt_blocked.c#../kernels/cpu/nope.c#' examples/quickstart.kg > "$T/missing.kg"
cp -r kernels "$T/../kernels-$$" 2>/dev/null || true
mkdir -p "$T/ex" && sed 's#\.\./kernels#'"$PWD"'/kernels#' "$T/missing.kg" > "$T/ex/missing.kg"
"$KGATE" run --report "$T/ex/missing.kg" -o "$T/b" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "missing source"
expect_grep "nope.c" "$T/err"
rm -rf "$T/../kernels-$$"

# a kernel that does not compile: the compiler's message and the arm
printf '#include "kgate/kernel.h"\nvoid kernel(const kg_kargs *a) { this is not C; }\n' > "$T/ex/broken.c"
sed -e 's#source = .*gemm_bt_blocked.c#source = broken.c#' -e 's#\.\./kernels#'"$PWD"'/kernels#' examples/quickstart.kg > "$T/ex/broken.kg"
"$KGATE" run --report "$T/ex/broken.kg" -o "$T/c" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "compile error"
expect_grep "arm 'blocked'" "$T/err"
expect_grep "failed to compile" "$T/err"
# the compiler's diagnostic keeps its lines: the source line and its caret
# line each on a line of their own, the caret under the word it marks
expect_grep "^kgate: .*broken.kg:[0-9]*: arm 'blocked': .* failed to compile .*broken.c:$" "$T/err"
expect_grep "broken.c:2:[0-9]*: error: " "$T/err"
src=$(grep -n '^ *2 | void kernel' "$T/err" | head -n 1 | cut -d: -f1)
[ -n "$src" ] || { cat "$T/err" >&2; die "the compiler's source line is not a line of its own"; }
sed -n "$((src + 1))p" "$T/err" | grep -q '^ *| *[ ]*\^' || { cat "$T/err" >&2; die "the caret line does not follow its source line"; }
line=$(sed -n "${src}p" "$T/err"); caret=$(sed -n "$((src + 1))p" "$T/err")
col=$(printf '%s\n' "$caret" | awk '{ print index($0, "^") }')
word=$(printf '%s\n' "$line" | cut -c"$col"-)
case $word in this*|is*|not*|C*) ;; *) cat "$T/err" >&2; die "the caret points at '$word', not at the broken text" ;; esac
# refused before its first process: nothing left that blocks the same -o
# (a folder it made is gone, an empty one given to it stays empty)
[ -e "$T/c" ] && { ls -la "$T/c" >&2; die "a run refused before its first process left $T/c"; }
expect_no_grep "evidence so far" "$T/err"
mkdir "$T/empty"
"$KGATE" check "$T/ex/broken.kg" -o "$T/empty" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "compile error into an empty folder"
[ -d "$T/empty" ] && [ -z "$(ls -A "$T/empty")" ] || die "the refused run did not leave the empty folder as it was"
cp kernels/cpu/gemm_bt_blocked.c "$T/ex/broken.c"
"$KGATE" check "$T/ex/broken.kg" -o "$T/c" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "the same -o once the kernel compiles"
expect_no_grep "already holds a campaign" "$T/err"
[ -f "$T/c/plan.kg" ] || die "the second run wrote no campaign in $T/c"

# an existing campaign folder is never overwritten
"$KGATE" run --report tests/plans/fake-aa.kg -o "$T/d" >/dev/null 2>&1
"$KGATE" run --report tests/plans/fake-aa.kg -o "$T/d" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "existing folder"
expect_grep "already holds a campaign" "$T/err"

"$KGATE" frobnicate >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "unknown command"
"$KGATE" --version >"$T/out" 2>&1 || die "--version"
expect_grep "kgate " "$T/out"
for c in run check report list; do "$KGATE" $c --help >"$T/out" 2>&1 || die "$c --help"; expect_grep "usage: kgate $c" "$T/out"; done
"$KGATE" report "$T/nowhere" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "report of a missing folder"

# an input mode kgate does not know is refused, naming the ones it does
printf '[campaign]\nquiet = 0\nbackend = fake\ninputs = sometimes\n[case a]\nop = rowsum\ndtype = f32\nM = 2\nN = 2\n[arm b]\nop = rowsum\nrole = baseline\nsource = x.c\n' > "$T/fresh.kg"
"$KGATE" run --report "$T/fresh.kg" -o "$T/fresh" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "inputs = sometimes"
expect_grep "resident or fresh" "$T/err"
