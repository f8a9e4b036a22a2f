# A user's Python call as a library arm (call = python:FILE:FUNCTION,
# docs/library-arms.md), numpy on the cpu backend:
#  1. honest calls (tests/plans/pycall/pycall.kg): a returned result and
#     out= on rowsum, softmax (a built-in op), and the declared op sumdiff
#     (two outputs, a real variable: a tuple returned, a tuple in out=):
#     admitted, checked (pre, post, sampled or snapshot), samples in every
#     round of every process; the file copied into the folder as
#     sources/call-ARM.py, its sha256 in the canonical plan and in the
#     record with the function and the trust mark, the report's Library
#     arms row saying "python call, timed in kgate's helper: trusted as the
#     plan", the short answer noting the candidate; verify ok, and not ok
#     once the folder's copy is edited;
#  2. wrong calls (pycall-wrong.kg), each INCORRECT and the campaign going
#     on: a wrong value; a wrong shape and a wrong dtype, with a message
#     naming the arm, the output and what came back; a raise after six
#     calls (the file and line named); a thread that writes the output
#     after the call returned; a cache keyed on the input buffer's address
#     (the sampled checks under fresh inputs);
#  3. a cache keyed on the input's contents (pycall-cache.kg): under
#     inputs = fresh its hits do not grow with the samples (no timed
#     execution repeats an input), under inputs = resident they do, and the
#     report says "inputs resident";
#  4. plan errors said before any lock or folder: a missing file, a missing
#     function, a class; a function that cannot take the op's inputs, said
#     by the helper at the build; a file edited after kgate freeze, refused
#     by --frozen and by the frozen plan itself;
#  5. torch calls (pycall-torch.kg) where /usr/bin/python3 has torch: a bf16
#     declared op (conv1d) with a returned tensor, rowsum with out=; a
#     float64 result for a float32 output is INCORRECT with its message.
# kgate-test: first (Python helpers)
. tests/cli_lib.sh
PY=
for p in "${KGATE_PYTHON:-}" /usr/bin/python3 python3; do
    [ -n "$p" ] && "$p" -c 'import numpy' 2>/dev/null && { PY=$(command -v "$p"); break; }
done
[ -n "$PY" ] || die "no python3 with numpy (sh tools/install-deps.sh installs Debian's)"
export KGATE_PYTHON="$PY"
# the plans and calls in a folder of this test's, the kernels named whole
D=$T/p
cp -r tests/plans/pycall "$D"
sed -i "s#\.\./\.\./\.\./kernels#$PWD/kernels#; s#\.\./\.\./\.\./examples#$PWD/examples#" "$D"/*.kg
results() { awk -F, -v c="$2" -v a="$3" '$1 == c && $2 == a { print $4 "," $5; exit }' "$1/results.csv"; }

# ---- 1. honest calls
"$KGATE" run "$D/pycall.kg" -o "$T/ok" --quiet-window 0 --no-progress >"$T/ok.out" 2>"$T/ok.err"; st=$?
[ $st -le 1 ] || { cat "$T/ok.err" >&2; die "honest python calls: exit $st"; }
for ca in r,np_out r2,np sm,sm_np sd,sd_np sd2,sd_out; do
    c=${ca%,*} a=${ca#*,}
    case $(results "$T/ok" "$c" "$a") in ok,*) ;; *) cat "$T/ok/results.csv" >&2; die "python call $a on $c is not ok" ;; esac
done
expect_honest "$T/ok" "honest python calls"
for a in np_out np sm_np sd_np sd_out; do
    for ph in pre post; do
        n=$(cat "$T"/ok/checks/proc-*.csv | awk -F, -v a=$a -v p=$ph '$4 == a && $5 == p && $7 == "pass"' | wc -l)
        [ "$n" -gt 0 ] || die "no passing $ph check of $a"
    done
    n=$(cat "$T"/ok/checks/proc-*.csv | awk -F, -v a=$a '$4 == a && $6 ~ /^(sampled@|snapshot)/ && $7 == "pass"' | wc -l)
    [ "$n" -gt 0 ] || die "no passing sampled or snapshot check of $a"
done
# both outputs of sumdiff are checked, for the tuple returned and for out=
for a in sd_np sd_out; do
    for o in S D; do
        grep -h ",$a,post,snapshot:$o,pass," "$T"/ok/checks/*.csv >/dev/null || die "$a: output $o not checked"
    done
done
# samples of every python call in every round of every process, beside its baseline's
for f in "$T"/ok/raw/proc-*.csv.gz; do
    [ -f "$f" ] || die "no raw rows in $T/ok/raw"
    raw_text "$f" | awk -F, 'FNR > 1 { s[$3 "," $4]++; r[$3] = 1 }
             END { for (x in r) for (a in want) if (!s[x "," a]) { print "round " x " lacks " a; exit 1 } }
             BEGIN { split("np_out np sm_np sd_np sd_out naive sd_naive", w, " "); for (i in w) want[w[i]] = 1 }' ||
        die "$f: a python call is not in every round"
done
# the file: copied, hashed into the canonical plan, recorded
sha=$(sha256sum "$D/calls.py" | cut -d' ' -f1)
for a in np np_out sm_np sd_np sd_out; do
    cmp -s "$D/calls.py" "$T/ok/sources/call-$a.py" || die "sources/call-$a.py is not the call's file"
done
[ "$(grep -c "^call_sha256 = $sha\$" "$T/ok/plan.kg")" = 5 ] || { cat "$T/ok/plan.kg" >&2; die "call_sha256 not in the canonical plan"; }
cat "$T"/ok/telemetry/resources-*.csv >"$T/res.csv"
"$PY" - "$T/res.csv" "$sha" <<'EOF' || die "the python calls' records are not as documented"
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["process"] != "process" and r["library"]]
seen = set()
for r in rows:
    rec = json.loads(r["library"])
    py = rec["python"]
    assert py["file"] == "calls.py" and py["sha256"] == sys.argv[2], py
    assert py["trust"] == "python call, timed in kgate's helper: trusted as the plan", py
    assert rec["call"] == "python:calls.py:" + py["function"], rec
    out = py["function"].endswith("_out")
    assert py["out"] == out, rec
    assert rec["output"].startswith("written into kgate's output buffer by the call (out=)" if out else
                                    "returned by the call, copied into kgate's output buffer"), rec
    assert rec["expression"].endswith(" from calls.py"), rec
    seen.add((r["arm"], rec["expression"]))
want = {("np", "rowsum(X) from calls.py"), ("np_out", "rowsum_out(X, out=Y) from calls.py"),
        ("sm_np", "softmax(X, M=M, N=N, eps=eps) from calls.py"),
        ("sd_np", "sumdiff(A, B, alpha=alpha) from calls.py"),
        ("sd_out", "sumdiff_out(A, B, alpha=alpha, out=(S, D)) from calls.py")}
assert seen == want, seen ^ want
print("ok")
EOF
expect_grep '| r | np_out | `python:calls.py:rowsum_out` (python call, timed in kgate.s helper: trusted as the plan; sha256 ' "$T/ok/report.md"
expect_grep "note: python call, timed in kgate's helper: trusted as the plan, not confined (docs/security.md): candidate np_out\$" "$T/ok.out"
"$KGATE" verify "$T/ok" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "verify of the python calls' folder"; }
expect_report_identical "$T/ok"
cp -r "$T/ok" "$T/edited"
echo "# edited" >>"$T/edited/sources/call-np.py"
"$KGATE" verify "$T/edited" >"$T/ve.out" 2>&1 && die "verify passed a folder whose call file was edited"
expect_grep "plan.kg:[0-9]*: call file changed: 'python:calls.py:rowsum' (.*/edited/sources/call-np.py hashes to" "$T/ve.out"

# ---- 2. wrong calls: INCORRECT each, the campaign goes on
"$KGATE" run "$D/pycall-wrong.kg" -o "$T/wrong" --quiet-window 0 --no-progress >"$T/wrong.out" 2>"$T/wrong.err"; st=$?
expect_status 1 $st "wrong python calls (the gate fails)"
for ca in value,wrong_value shape,wrong_shape dtype,wrong_dtype raise,raises late,late ptr,cache_ptr; do
    c=${ca%,*} a=${ca#*,}
    [ "$(results "$T/wrong" "$c" "$a")" = incorrect,INCORRECT ] || { cat "$T/wrong/results.csv" >&2; die "$a is not INCORRECT"; }
    grep -q "^$c,naive,baseline,ok," "$T/wrong/results.csv" || die "the baseline of case $c suffered from $a"
done
C=$(cat "$T"/wrong/checks/proc-*.csv)
printf '%s\n' "$C" >"$T/wrong.checks"
expect_grep ",wrong_value,pre,poison0:Y,fail,.*element 3" "$T/wrong.checks"
expect_grep "arm 'wrong_shape' .*: output Y (f32 (16,)): wrong_shape returned a numpy array of float32 (256,)" "$T/wrong.checks"
expect_grep "arm 'wrong_dtype' .*: output Y (f32 (16,)): wrong_dtype returned a numpy array of float64 (16,)" "$T/wrong.checks"
expect_grep "arm 'raises' .*: ValueError: the call failed on purpose (calls.py:[0-9]*)" "$T/wrong.checks"
expect_grep "arm 'late' .*: late left 1 thread running after it returned" "$T/wrong.checks"
expect_grep ",cache_ptr,post,sampled@[0-9]*:Y,fail," "$T/wrong.checks"
"$KGATE" verify "$T/wrong" >"$T/vw.out" 2>&1 || { cat "$T/vw.out" >&2; die "verify of the wrong calls' folder"; }

# ---- 3. a cache keyed on the input's contents
for x in f3,3,fresh f9,9,fresh r9,9,resident; do
    n=${x%%,*} rest=${x#*,}
    sed "s/^samples = 3/samples = ${rest%,*}/; s/^\[campaign\]/[campaign]\ninputs = ${rest#*,}/" "$D/pycall-cache.kg" >"$D/cache-$n.kg"
    : >"$T/hits-$n"
    KGATE_TEST_HITS="$T/hits-$n" "$KGATE" run "$D/cache-$n.kg" -o "$T/cache-$n" --quiet-window 0 -q 2>"$T/cache-$n.err"
    st=$?
    [ $st -le 1 ] || { cat "$T/cache-$n.err" >&2; die "cache campaign $n: exit $st"; }
    case $(results "$T/cache-$n" h cache_hash) in ok,*) ;; *) die "cache_hash ($n) is not ok" ;; esac
done
hit() { grep -c " $2\$" "$T/hits-$1"; }
[ "$(hit f3 hit)" -gt 0 ] || die "the contents-keyed cache never hit (it cannot tell anything)"
[ "$(hit f3 hit)" = "$(hit f9 hit)" ] ||
    die "fresh inputs: the cache hit $(hit f3 hit) times with 3 samples, $(hit f9 hit) with 9: a timed execution repeated an input"
[ "$(hit f9 miss)" -gt "$(hit f3 miss)" ] || die "fresh inputs: more samples did not add misses"
[ "$(hit r9 hit)" -gt "$(hit f9 hit)" ] || die "resident inputs: the cache's hits did not grow past fresh inputs'"
expect_grep "inputs resident" "$T/cache-r9/report.md"

# ---- 4. plan errors, before any lock or folder
bad() { # name sed-expression message
    sed "$2" "$D/pycall.kg" >"$D/bad-$1.kg"
    KGATE_LOCK_DIR="$T/nolock-$1" "$KGATE" run "$D/bad-$1.kg" -o "$T/o-$1" -q 2>"$T/bad-$1.err"; st=$?
    expect_status 2 $st "$1"
    expect_grep "$3" "$T/bad-$1.err"
    [ ! -e "$T/nolock-$1" ] || die "$1: the device lock was taken before the plan error"
    [ ! -e "$T/o-$1" ] || die "$1: an evidence folder was made before the plan error"
}
bad nofile 's/^call = python:calls.py:softmax/call = python:nope.py:softmax/' \
    "bad-nofile\.kg:[0-9]*: call file not found: 'python:nope.py:softmax' (.*/nope.py: No such file"
bad nofunc 's/^call = python:calls.py:softmax/call = python:calls.py:softmaxx/' \
    "call function not found: 'python:calls.py:softmaxx' (.*calls.py defines no 'softmaxx' at its top level (its functions: rowsum, rowsum_out, softmax,"
bad notpy 's/^call = python:calls.py:softmax/call = python:calls.kg:softmax/' "call file is not a .py file"
bad noname 's/^call = python:calls.py:softmax/call = python:calls.py:/' "bad python call"
printf 'import numpy as np\n\nclass softmax:\n    pass\n' >"$D/klass.py"
bad class 's/^call = python:calls.py:softmax/call = python:klass.py:softmax/' "call is not a function: .*'softmax' is a class"
# a function that cannot take the op's inputs: the helper says so at the build
sed 's/^call = python:calls.py:softmax/call = python:calls.py:sumdiff/' "$D/pycall.kg" >"$D/sig.kg"
"$KGATE" run "$D/sig.kg" -o "$T/o-sig" --quiet-window 0 -q 2>"$T/sig.err"; st=$?
expect_status 2 $st "a function that cannot take the op's inputs"
expect_grep "sig\.kg:[0-9]*: arm 'sm_np': call = python:calls.py:sumdiff cannot be used: .*sumdiff(A, B, \*, alpha) cannot take the op's 1 inputs (X) and its variables (M, N, eps)" "$T/sig.err"
[ -f "$T/o-sig/results.csv" ] && die "a worker ran with a call that cannot take the op's inputs"
# a name that is not callable: the plan takes the assignment, the helper refuses it at the build
printf 'softmax = 3\n' >"$D/notfn.py"
sed 's/^call = python:calls.py:softmax/call = python:notfn.py:softmax/' "$D/pycall.kg" >"$D/notfn.kg"
"$KGATE" run "$D/notfn.kg" -o "$T/o-notfn" --quiet-window 0 -q 2>"$T/notfn.err"; st=$?
expect_status 2 $st "a name that is not callable"
expect_grep "notfn\.kg:[0-9]*: arm 'sm_np': call = python:notfn.py:softmax cannot be used: .*softmax in notfn.py is a int, not a function" "$T/notfn.err"
# an edited file after kgate freeze
cp -r "$D" "$T/fz"
"$KGATE" freeze "$T/fz/pycall.kg" -o "$T/fz/frozen.kg" >"$T/fz.out" 2>&1 || { cat "$T/fz.out" >&2; die "kgate freeze"; }
expect_grep "^call_sha256 = $sha\$" "$T/fz/frozen.kg"
printf '\n# edited after the freeze\n' >>"$T/fz/calls.py"
"$KGATE" run "$T/fz/pycall.kg" --frozen "$T/fz/frozen.kg" -o "$T/o-fz" -q 2>"$T/fz1.err"; expect_status 2 $? "--frozen after an edit"
expect_grep "differs from the frozen plan .*\[arm np\] call_sha256: $sha -> " "$T/fz1.err"
"$KGATE" run "$T/fz/frozen.kg" -o "$T/o-fz2" -q 2>"$T/fz2.err"; expect_status 2 $? "the frozen plan after an edit"
expect_grep "frozen.kg:[0-9]*: call file changed: 'python:calls.py:rowsum' (.*calls.py hashes to .*, the plan says ${sha%"${sha#????????????}"}" "$T/fz2.err"

# ---- 5. torch calls, where the system's Python has torch
# (left to the plain pass under the sanitizers: kgate's side is the numpy calls' above, and each
# torch import costs seconds)
case ${BUILD:-build} in *san*) torch_here=no ;; *) torch_here=yes ;; esac
if [ $torch_here = yes ] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    KGATE_PYTHON=/usr/bin/python3 "$KGATE" run "$D/pycall-torch.kg" -o "$T/torch" --quiet-window 0 -q 2>"$T/torch.err"; st=$?
    [ $st -le 1 ] || { cat "$T/torch.err" >&2; die "torch calls: exit $st"; }
    for ca in sig,torch r,r_torch; do
        case $(results "$T/torch" "${ca%,*}" "${ca#*,}") in ok,*) ;; *) cat "$T/torch/results.csv" >&2; die "torch call ${ca#*,} is not ok" ;; esac
    done
    expect_honest "$T/torch" "torch calls"
    cat "$T"/torch/telemetry/resources-*.csv >"$T/tres.csv"
    "$PY" - "$T/tres.csv" <<'EOF' || die "the torch calls' records"
import csv, json, sys
recs = {r["arm"]: json.loads(r["library"]) for r in csv.DictReader(open(sys.argv[1])) if r["library"] and r["process"] != "process"}
assert recs["torch"]["library"] == "torch" and recs["torch"]["versions"]["torch"], recs["torch"]
assert recs["torch"]["expression"] == "conv1d(X, F) from calls_torch.py", recs["torch"]
assert recs["r_torch"]["expression"] == "rowsum_out(X, out=Y) from calls_torch.py", recs["r_torch"]
assert recs["r_torch"]["python"]["out"] is True, recs["r_torch"]
EOF
    "$KGATE" verify "$T/torch" >"$T/vt.out" 2>&1 || { cat "$T/vt.out" >&2; die "verify of the torch calls' folder"; }
    # the rowsum case and its arms alone, one process per order: the wrong dtype is found by the
    # checks before timing (each torch arm's helper imports torch, about a second, in every process)
    plan_drop "op conv1d" "case sig" "arm naive" "arm torch" <"$D/pycall-torch.kg" |
        sed -e 's/^call = python:calls_torch.py:rowsum_out/call = python:calls_torch.py:rowsum_f64/' \
            -e 's/^processes = .*/processes = 1/' >"$D/t64.kg"
    expect_grep '^call = python:calls_torch.py:rowsum_f64' "$D/t64.kg"
    expect_no_grep '^\[case sig\]' "$D/t64.kg"
    KGATE_PYTHON=/usr/bin/python3 "$KGATE" run "$D/t64.kg" -o "$T/t64" --quiet-window 0 -q 2>"$T/t64.err"; st=$?
    expect_status 1 $st "a torch call returning float64 for a float32 output"
    [ "$(results "$T/t64" r r_torch)" = incorrect,INCORRECT ] || die "a float64 torch result is not INCORRECT"
    grep -h ",r_torch,pre,fault,fail," "$T"/t64/checks/*.csv >"$T/t64.checks"
    expect_grep "output Y (f32 (16,)): rowsum_f64 returned a torch tensor of float64 (16,) on cpu" "$T/t64.checks"
else
    echo "pycall.sh: the torch calls are not run (the sanitizer pass, or /usr/bin/python3 without torch: CI installs python3-torch)"
fi
# a plan of library arms alone builds nothing (no build/ folder): its workers still find the
# folder's copy of the call, with -o a relative path
awk '/^\[arm unrolled\]/ { skip = 1; next } /^\[/ { skip = 0 } !skip' "$(pwd)/examples/pycall.kg" >"$T/only.kg"
cp "$(pwd)/examples/pycall_rowsum.py" "$T/"
printf '\n[arm mine_copy]\nop = rowsum\nrole = control\nof = mine\n' >>"$T/only.kg"
( cd "$T" && "$KGATE" check only.kg -o only.ev >only.out 2>&1 ) || { cat "$T/only.out" >&2; die "a plan of python calls alone"; }
expect_grep "0 failed" "$T/only.out"
echo "pycall.sh: ok"
