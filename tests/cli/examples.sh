# kgate-test: first (every shipped example plan, the cpu ones run as smoke campaigns)
# kgate-test: no-sanitize (the shipped plans as a user runs them; the paths they take are the other scenarios' under the sanitizers)
# Every plan under examples/ and examples/replication/ works as shipped.
# A plan whose backend is here (cpu; a library arm whose Python has its
# library) runs for real as its smoke run (kgate run --smoke: every check
# of the plan, compiled and run in fresh workers, on 1 process per
# direction of 2 rounds of 3 samples): every worker process ends "ok" or
# "contaminated" (never killed, crashed or timed out), no check of any arm
# fails, every candidate is SMOKE (none INCORRECT), the gate fails with
# the smoke run's reason (exit 1: a smoke run decides nothing) and kgate
# verify accepts the folder.  A plan whose backend is absent (cuda without
# a driver, torch without torch) is parsed and frozen, its op checked
# (kgate check reaches the device and says only that it is missing), and
# every kernel source it names exists.  examples/cpu-image.kg loads an
# image that `make examples` builds.
. tests/cli_lib.sh
make -s examples >"$T/make.out" 2>&1 || { cat "$T/make.out" >&2; die "make examples failed"; }
[ -f build/images/rowsum_unrolled.so ] || die "make examples did not build build/images/rowsum_unrolled.so"

has_py() { # module
    for p in "${KGATE_PYTHON:-}" /usr/bin/python3; do
        [ -n "$p" ] && "$p" -c "import $1" 2>/dev/null && return 0
    done
    return 1
}
has_cuda() {
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1
}
backend_of() { # plan
    sed -n 's/^backend *= *\([a-z]*\).*/\1/p' "$1" | head -n 1
}

# the kernel sources a plan names exist, relative to its folder
sources_exist() { # plan
    dir=$(dirname "$1")
    sed -n 's/^source *= *\([^ #]*\).*/\1/p' "$1" | while read -r src; do
        case $src in /*) f=$src ;; *) f="$dir/$src" ;; esac
        [ -f "$f" ] || { echo "$1: source $src: no such file ($f)"; }
    done
}

run_cpu() { # plan name
    out="$T/run-$2"
    "$KGATE" run "$1" -o "$out" --smoke --json >"$T/$2.json" 2>"$T/$2.err"
    st=$?
    [ "$st" = 1 ] || { cat "$T/$2.err" >&2; die "$1: kgate run --smoke exited $st"; }
    expect_grep '^smoke = yes$' "$out/plan.kg"
    expect_grep '^processes = 1$' "$out/plan.kg"
    [ -f "$out/processes.csv" ] || { cat "$T/$2.err" >&2; die "$1: no processes.csv"; }
    awk -F, 'FNR > 1 && $3 != "ok" && $3 != "contaminated" { print "process " $1 ": " $3 " " $7 }' \
        "$out/processes.csv" >"$T/$2.bad"
    [ -s "$T/$2.bad" ] && { cat "$T/$2.bad" "$T/$2.err" >&2; die "$1: a worker process did not end ok"; }
    awk -F, 'FNR > 1 && $3 == "ok" && $4 == 1' "$out/processes.csv" | grep -q . ||
        die "$1: no accepted process"
    expect_honest "$out" "$1"
    python3 - "$T/$2.json" "$1" "$st" <<'EOF' || die "$1: its --json summary"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["exit_status"] == int(sys.argv[3]), (s["exit_status"], sys.argv[3])
assert s["verdicts"], "no verdicts"
assert not s["gate"]["pass"] and not s["gate"]["invalid"], s["gate"]
assert s["gate"]["reason"].startswith("a smoke run (kgate run --smoke"), s["gate"]["reason"]
words = {v["role"]: set() for v in s["verdicts"]}
for v in s["verdicts"]:
    words[v["role"]].add(v["verdict"])
assert words.get("candidate") == {"SMOKE"}, words
assert words.get("baseline") == {"BASELINE"}, words
assert words.get("control", {"CONTROL"}) == {"CONTROL"}, words
EOF
    "$KGATE" verify "$out" >"$T/$2.verify" 2>&1 || { tail -n 20 "$T/$2.verify" >&2; die "$1: kgate verify failed"; }
    echo "ran $1 (smoke): exit $st"
}

check_absent() { # plan name backend
    "$KGATE" freeze "$1" -o "$T/$2.frozen" >"$T/$2.freeze" 2>&1 || { cat "$T/$2.freeze" >&2; die "$1: kgate freeze"; }
    sources_exist "$1" >"$T/$2.missing"
    [ -s "$T/$2.missing" ] && { cat "$T/$2.missing" >&2; die "$1: a kernel source is missing"; }
    "$KGATE" check "$1" -o "$T/check-$2" >"$T/$2.out" 2>"$T/$2.err"
    st=$?
    if [ "$3" = cuda ]; then
        # the plan and its ops were accepted: the one complaint is the missing
        # driver, or a precompiled image that nvcc builds outside kgate
        # (build/images/, docs/images.md), which is checked before the driver
        expect_status 2 "$st" "$1: kgate check without a GPU"
        grep -v '^kgate: note: ' "$T/$2.err" >"$T/$2.err2"
        [ "$(wc -l <"$T/$2.err2")" -eq 1 ] || { cat "$T/$2.err" >&2; die "$1: more than the missing driver"; }
        grep -Eq "no CUDA driver found|kernel image not found: '[^']*/build/images/[^']*\.(cubin|fatbin|ptx)'" "$T/$2.err2" ||
            { cat "$T/$2.err2" >&2; die "$1: not the missing driver or an nvcc-built image"; }
    fi
    echo "checked $1 ($3 absent)"
}

n=0
for plan in examples/*.kg examples/replication/*.kg; do
    name=$(echo "$plan" | sed 's#^examples/##; s#/#-#g; s#\.kg$##')
    be=$(backend_of "$plan")
    n=$((n + 1))
    if [ "$be" = cuda ]; then
        if has_cuda; then run_cpu "$plan" "$name"; else check_absent "$plan" "$name" cuda; fi
    elif grep -q '^builtin *= *torch' "$plan" && ! has_py torch; then
        check_absent "$plan" "$name" torch
    elif grep -q '^builtin *= *numpy' "$plan" && ! has_py numpy; then
        check_absent "$plan" "$name" numpy
    else
        [ "$be" = cpu ] || die "$plan: backend '$be': every example names its backend"
        run_cpu "$plan" "$name"
    fi
done
[ "$n" -ge 20 ] || die "only $n example plans found"
echo "examples: $n plans"
