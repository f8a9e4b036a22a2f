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
