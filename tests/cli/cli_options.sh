# The command line's option tables: --opt=value and --opt value both
# work, numbers are read strictly, unknown options and missing values are
# one-line errors (exit 2), every command's --help lists exactly what its
# parser accepts (-q among them) and is what kgate help COMMAND prints,
# kgate --help lists every command (new op too), and a malformed
# numeric environment variable is refused.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
P=tests/plans/fake-faster.kg

# --opt=value, options before and after the plan; meta.json keeps argv as given
"$KGATE" run --backend=fake "$P" --out="$T/ev" --repeats=2 --quiet-window=0 --max-load=1000 --no-progress \
    >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "run with --opt=value"
expect_grep "gate PASS" "$T/err"
cmp -s "$T/ev/results.csv" tests/golden/fake-faster.results.csv || die "results.csv differs from the golden file"
tr -d ' \n' <"$T/ev/meta.json" >"$T/meta.flat"
expect_grep '"argv":\["run","--backend=fake","tests/plans/fake-faster.kg","--out='"$T"'/ev","--repeats=2",' "$T/meta.flat"
"$KGATE" freeze "$P" --out="$T/p.frozen" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "freeze --out=FILE"
[ -f "$T/p.frozen" ] || die "freeze --out=FILE wrote no file"
"$KGATE" run --frozen "$T/p.frozen" "$P" -o "$T/ev2" --lock-timeout 5 >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "run --frozen FILE --lock-timeout S"

# malformed numbers: exit 2, one line naming the option and the value
bad() { # what expected-pattern args...
    what=$1; pat=$2; shift 2
    "$KGATE" "$@" >"$T/out" 2>"$T/err"; st=$?
    expect_status 2 $st "$what"
    expect_grep "$pat" "$T/err"
    [ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err" >&2; die "$what: expected a one-line message"; }
    [ ! -s "$T/out" ] || die "$what: wrote on stdout"
}
bad "--repeats 2.5" "--repeats needs a whole number.*'2.5'" run "$P" -o "$T/x1" --repeats 2.5
bad "--repeats=2.5" "--repeats needs a whole number.*'2.5'" run "$P" -o "$T/x1" --repeats=2.5
bad "--quiet-window abc" "--quiet-window needs a number.*'abc'" run "$P" -o "$T/x2" --quiet-window abc
bad "--quiet-window -1" "--quiet-window needs a number.*'-1'" run "$P" -o "$T/x3" --quiet-window -1
bad "--lock-timeout 1x" "--lock-timeout needs a number.*'1x'" run "$P" --lock-timeout 1x
bad "--max-load nan" "--max-load needs a number.*'nan'" run "$P" --max-load nan
bad "worker --proc 1.5" "--proc needs a whole number.*'1.5'" worker --proc 1.5
bad "worker --slot -1" "--slot needs a whole number.*'-1'" worker --slot=-1
bad "unknown option" "unknown option '--bogus' (see kgate run --help)" run "$P" --bogus
bad "abbreviated option" "unknown option '--rep'" run "$P" --rep 2
bad "unknown short option" "unknown option '-x' (see kgate check --help)" check "$P" -x
bad "missing value" "--quiet-window needs a value S (see kgate run --help)" run "$P" --quiet-window
bad "missing value of -o" "--out needs a value" check "$P" -o
bad "flag with a value" "takes no value: '--archive=1'" run "$P" --archive=1
bad "two plans" "one PLAN at a time ('b.kg'" run a.kg b.kg
bad "stray argument" "unexpected argument 'x' (see kgate list --help)" list x
[ ! -e "$T/x1" ] && [ ! -e "$T/x2" ] && [ ! -e "$T/x3" ] || die "a refused command line started a campaign"

# every command of kgate --help; each --help lists its options, and each
# listed option is accepted by its parser (a value is given where one is
# named; the command then fails for want of a plan, never on the option)
"$KGATE" --help >"$T/top" 2>&1 || die "kgate --help"
for c in run merge slurm check report verify compare size screen freeze "new plan" "new op" import list key worker; do
    grep -q "^  $c\( \|$\)" "$T/top" || die "kgate --help does not list $c"
done
cmds=$(sed -n '/^commands:/,/^$/p' "$T/top" | sed -n 's/^  \([a-z][a-z]*\).*/\1/p' | uniq)
[ "$(echo $cmds)" = "run merge slurm check report verify compare size screen freeze new import list key worker" ] || die "commands listed: $cmds"
for c in $cmds; do
    # kgate help CMD is CMD's --help; -q is an option of every command
    "$KGATE" help $c >"$T/help-cmd" 2>&1 || die "kgate help $c"
    "$KGATE" $c --help >"$T/help" 2>&1
    cmp -s "$T/help" "$T/help-cmd" || die "kgate help $c is not kgate $c --help"
    expect_grep "^  -q, --quiet  " "$T/help"
    "$KGATE" $c --help >"$T/help" 2>"$T/err"; st=$?
    expect_status 0 $st "$c --help"
    expect_grep "^usage: kgate $c" "$T/help"
    "$KGATE" $c -h >"$T/help-h" 2>&1 || die "$c -h"
    cmp -s "$T/help" "$T/help-h" || die "$c: -h and --help differ"
    # the option lines: "  -o, --out DIR  text" or "  --name [ARG]  text"
    sed -n 's/^  \(-\([a-zA-Z]\), \)\{0,1\}--\([a-z][a-z-]*\)\( [A-Z][A-Z]*\)\{0,1\} .*/\3 \2\4/p' "$T/help" >"$T/opts"
    grep -q '^help ' "$T/opts" || die "$c --help does not list --help"
    n=0
    while read -r name short arg; do
        # read puts a lone ARG of an option without a short name in short
        case $short in [A-Z]*) arg=$short; short= ;; esac
        n=$((n + 1))
        [ "$name" = help ] && continue
        grep -q -- "--$name" "$T/help" || die "$c: --$name"
        # the usage line names it too
        sed -n '1,/^$/p' "$T/help" | grep -q -- "--$name\|-$short $arg\]\|\[-$short\]" || die "$c: --$name not in the usage line"
        if [ -n "$arg" ]; then "$KGATE" $c "--$name" 1 >"$T/o" 2>"$T/e"; else "$KGATE" $c "--$name" >"$T/o" 2>"$T/e"; fi
        if grep -q "unknown option\|needs a value\|takes no value" "$T/e"; then
            cat "$T/e" >&2; die "$c --help lists --$name, which its parser refuses"
        fi
        if [ -n "$arg" ]; then
            "$KGATE" $c "--$name=1" >"$T/o" 2>"$T/e"
            if grep -q "unknown option\|needs a value\|takes no value" "$T/e"; then
                cat "$T/e" >&2; die "$c: --$name=1 refused"
            fi
        fi
    done <"$T/opts"
    [ "$n" -ge 1 ] || die "$c --help lists no option"
done
# the worker takes what the supervisor passes it
"$KGATE" worker --help | sed -n 's/^  --\([a-z-]*\).*/\1/p' >"$T/wopts"
for o in plan out proc backend progress slot check-only negative negative-arm token-fd; do
    grep -qx -- "$o" "$T/wopts" || die "worker --help lacks --$o"
done

# -q: nothing on stdout where the output is a report or a status; the
# answer stays in the exit status (and check's summary moves to stderr)
quiet_run() { # expected-status what args...
    want=$1; what=$2; shift 2
    "$KGATE" "$@" >"$T/qout" 2>"$T/qerr"; st=$?
    expect_status "$want" "$st" "$what"
    [ -s "$T/qout" ] && { head -n 5 "$T/qout" >&2; die "$what: printed on stdout"; }
    return 0
}
quiet_run 0 "verify -q" verify "$T/ev" -q
quiet_run 0 "report -q" report -q "$T/ev"
quiet_run 0 "freeze -q" freeze "$P" -q -o "$T/q.frozen"
[ -s "$T/q.frozen" ] || die "freeze -q wrote no file"
quiet_run 0 "compare -q" compare "$T/ev" "$T/ev2" --quiet
quiet_run 0 "key init -q" key init --out "$T/qkey" -q
[ -f "$T/qkey/signing-key.pem" ] || die "key init -q made no key"
quiet_run 0 "check -q" check "$P" -o "$T/qcheck" -q
expect_grep "^[0-9][0-9]* checks, 0 failed" "$T/qerr"
"$KGATE" list -q >"$T/qlist" || die "list -q"
grep -qx gemm_bt "$T/qlist" && grep -qx cpu "$T/qlist" || die "list -q: the names one a line"
"$KGATE" new op myop -q >"$T/qop" || die "new op NAME -q"
expect_grep "kg_op" "$T/qop"
"$KGATE" help bogus >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "kgate help bogus"
expect_grep "unknown command 'bogus'" "$T/err"

# the environment: numeric variables are checked once, by the CLI
KGATE_FAKE_SLEEP_MS=abc "$KGATE" run "$P" -o "$T/e1" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "KGATE_FAKE_SLEEP_MS=abc"
expect_grep "KGATE_FAKE_SLEEP_MS.*'abc'" "$T/err"
KGATE_FAULT_WRITE_AFTER=2.5 "$KGATE" run "$P" -o "$T/e2" >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "KGATE_FAULT_WRITE_AFTER=2.5"
expect_grep "KGATE_FAULT_WRITE_AFTER.*'2.5'" "$T/err"
[ ! -e "$T/e1" ] && [ ! -e "$T/e2" ] || die "a refused environment started a campaign"
exit 0
