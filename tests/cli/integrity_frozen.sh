# Frozen plans: kgate freeze writes the canonical plan under its hash;
# run --frozen accepts the same plan (in any spelling) and refuses a
# changed one, listing the keys that changed; an edited frozen file is
# refused too.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
mkdir -p "$T/p"
sed "s|^source = ../../|source = $PWD/|" tests/plans/fake-faster.kg >"$T/p/base.kg"
"$KGATE" freeze "$T/p/base.kg" -o "$T/ff.frozen" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "freeze"
h=$(head -n 1 "$T/ff.frozen" | sed 's/^# kgate frozen plan sha256 //')
[ ${#h} = 64 ] || die "no hash in the frozen file's header"
expect_grep "^$h  $T/ff.frozen" "$T/out"
tail -n +2 "$T/ff.frozen" | sha256sum | grep -q "^$h " || die "the header is not the SHA-256 of the canonical text"
# the same plan, spelled differently (comments and spacing), is accepted
sed 's/^samples = 5/samples   =   5   # reformatted/' "$T/p/base.kg" >"$T/p/same.kg"
"$KGATE" run --report --frozen "$T/ff.frozen" "$T/p/same.kg" -o "$T/ev" >/dev/null 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "frozen run of the same plan: exit $st"; }
expect_grep "\"frozen_plan\"" "$T/ev/meta.json"
expect_grep "$h" "$T/ev/plan.sha256"
# a changed plan is refused, with what changed
# (a fourth arm: processes 4 complete its load-order square)
sed -e 's/^samples = 5/samples = 6/' -e 's/^margin = 1%/margin = 2%/' -e 's/^processes = 3/processes = 4/' \
    "$T/p/base.kg" >"$T/p/changed.kg"
printf '[arm extra]\nop = rowsum\nrole = reference\nsource = %s/kernels/cpu/rowsum_naive.c\n' "$PWD" >>"$T/p/changed.kg"
"$KGATE" run --report --frozen "$T/ff.frozen" "$T/p/changed.kg" -o "$T/ev2" >/dev/null 2>"$T/err"; st=$?
expect_status 2 $st "frozen run of a changed plan"
expect_grep "differs from the frozen plan" "$T/err"
expect_grep "\[campaign\] samples: 5 -> 6" "$T/err"
expect_grep "\[campaign\] margin: 0.01 -> 0.02" "$T/err"
expect_grep "\[campaign\] processes: 3 -> 4" "$T/err"
expect_grep "+ \[arm extra\] op = rowsum" "$T/err"
[ -d "$T/ev2" ] && die "a refused plan must not create a folder"
# an edited frozen file is refused
sed 's/^samples = 5/samples = 6/' "$T/ff.frozen" >"$T/edited.frozen"
"$KGATE" run --report --frozen "$T/edited.frozen" "$T/p/same.kg" -o "$T/ev3" >/dev/null 2>"$T/err"; st=$?
expect_status 2 $st "edited frozen file"
expect_grep "was edited" "$T/err"
"$KGATE" run --report --frozen "$T/nothing" "$T/p/same.kg" -o "$T/ev4" >/dev/null 2>&1; st=$?
expect_status 2 $st "missing frozen file"
exit 0
