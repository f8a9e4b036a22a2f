#!/bin/sh
# tests/cli/attacks.sh: the attack suite.  Runs one small cpu campaign per
# attack of tests/attacks/a*.c (issue 10's list), each a candidate rowsum
# that leaves the honest result in its output and cheats in one other
# way, against the naive baseline.  No attacker is really faster than the
# baseline, so a FASTER verdict (or a gate PASS) is a successful attack.
# Prints one line per attack, then the honest quickstart's arms, and exits
# 1 naming every attack that succeeded.
#
#   KGATE=$PWD/build/kgate sh tests/cli/attacks.sh [N ...]   (run from the repository root)
#
# Against today's kgate most attacks succeed, so this script lives here and
# not in tests/cli/ (which `make test` runs); it moves there as
# tests/cli/attacks.sh once the defences are in (see README.md).
#
# Expected outcome per attack, once untrusted arms run in sandboxed arm
# hosts and the supervisor alone writes the evidence:
#
# | #  | attack               | expected                          | why |
# |----|----------------------|-----------------------------------|-----|
# | 1  | reference read       | not FASTER, verify ok             | the float64 reference lives in the worker, not in the arm host; the scan finds nothing and the kernel falls back to the naive loop (a sandbox that kills the scan gives INCORRECT: also fine) |
# | 2  | timer patch          | not FASTER, verify ok             | the clock is read by the worker around the request; patching the arm host's own clock_gettime changes nothing (a refused mprotect gives INCORRECT: also fine) |
# | 3  | kernel-struct write  | not FASTER, verify ok             | the kg_kargs in the arm host is a copy; pack lives in the worker, which divides by its own count |
# | 4  | result-file edit     | not FASTER, verify ok, raw intact | the arm host has no write access to the folder; rows travel over a pipe and the supervisor writes them |
# | 5  | other-arm code patch | not FASTER, verify ok             | the baseline's .so is not mapped in the candidate's arm host |
# | 6  | spinner thread       | candidate INCORRECT (or INVALID)  | CPU time read from outside shows the arm host burning CPU between and after its requests |
# | 7  | work after return    | candidate INCORRECT (or INVALID)  | CPU time read from outside shows work after the request returned |
# | 8  | setsid child         | not FASTER, verify ok 2 s after the run, no late file | the child dies with the arm host (or cannot setsid/write): the folder is unchanged after SHA256SUMS |
# | 9  | chdir                | not FASTER, every process accepted, nothing written outside, verify ok | the supervisor writes through a pre-opened folder fd (openat), so a chdir in the arm host moves nothing |
# | 10 | kill of the parent   | run ends (exit 0/1, not killed, not stuck), candidate INCORRECT (or INVALID), verify ok | the arm host's parent is the worker; its death is attributed to the arm, and the campaign finishes |
# | 11 | output flood         | not FASTER, folder < 32 MiB, verify and run peak RSS < 200 MiB | logs are capped and files are hashed streaming |
# | 12 | neighbourhood read   | not FASTER, verify ok             | the baseline's output buffer is in another process |
# | 13 | unchecked pack operations | not FASTER, verify ok       | every operation of a sample writes an output of its own, and each sampled check compares one of them, picked where the arm cannot see |
# | q  | honest quickstart    | every arm admitted, no check failed, verify ok | the defences must not break honest arms (the quickstart's arms on one of its cases; its verdicts are timings on a shared host, not judged) |
# kgate-test: first (twelve cpu campaigns, the longest scenario)
set -u
: "${KGATE:?set KGATE to the kgate binary}"
ROOT=$PWD
A=$ROOT/tests/attacks
[ -f "$A/attack_common.h" ] || { echo "run from the repository root" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-attacks.XXXXXX")
# the cpu backend's peaks from the suite's fixture (tests/cli_lib.sh says why): measured, they cost
# about a second of every campaign, and no attack's outcome depends on them
export KGATE_PEAKS="${KGATE_PEAKS:-$ROOT/tests/fixtures/peaks-cpu.json}"
[ -n "${KEEP:-}" ] && echo "keeping $T" >&2 || trap 'rm -rf "$T"' EXIT
succeeded=""
ran=0

# mkplan DIR SOURCE [EXTRA-ARM-LINE]: a campaign of the naive baseline
# against the attacker (arm cand) on one small f32 rowsum case, 64 x N
# with N = $cols (2048: about 0.1 ms a call), $procs (2) processes per
# direction.  The margin and the gate are 25%: a cheat that works gains 2x
# or more (a reduction of 50% and up), while an attacker whose cheat did
# not fire does 1.25x the baseline's work; a 5% margin let a loaded shared
# host's noise make such an attacker FASTER (attack 3, in CI).
mkplan() {
    mkdir -p "$1"
    cat > "$1/plan.kg" <<EOF
[campaign]
quiet = 0
name = attack
backend = cpu
warmup = 1
samples = 5
rounds = 3
processes = ${procs:-2}
seed = 20261201
margin = 25%
control_margin = 10%
timeout = 60
${pack:+pack = $pack}
[case r]
op = rowsum
dtype = f32
M = 64
N = ${cols:-2048}
[arm naive]
op = rowsum
role = baseline
source = $ROOT/kernels/cpu/rowsum_naive.c
[arm cand]
op = rowsum
role = candidate
source = $2
${3:-}
[gate]
min_reduction = 25%
EOF
}

# campaign DIR OUT [ARGS]: runs the campaign from DIR (so that a relative
# OUT is relative to DIR), under a wall-clock limit; sets st.
campaign() {
    d=$1; o=$2; shift 2
    # (through sh -c, so that the notice of a killed kgate goes to err)
    sh -c 'cd "$1" || exit 2; shift; timeout -k 5 150 "$@"' sh "$d" "$KGATE" run --report plan.kg -o "$o" "$@" \
        >"$d/out" 2>"$d/err"; st=$?
}

# facts DIR: sets gate (PASS/FAIL/none), cand (state/verdict of arm cand),
# ver (exit status of kgate verify, or - without a folder).
facts() {
    e=$1/ev
    gate=none
    grep -q 'gate PASS' "$1/err" 2>/dev/null && gate=PASS
    grep -q 'gate FAIL' "$1/err" 2>/dev/null && gate=FAIL
    cand=no-results
    [ -f "$e/results.csv" ] && cand=$(awk -F, '$2 == "cand" { print $4 "/" $5; exit }' "$e/results.csv")
    ver=-
    if [ -d "$e" ]; then "$KGATE" verify "$e" >"$1/verify.out" 2>&1; ver=$?; fi
}

faster() { case $cand in */FASTER) return 0 ;; esac; [ "$gate" = PASS ]; }
rejected() { case $cand in incorrect/* | inadmissible/* | */INCORRECT | */INADMISSIBLE | */INVALID) return 0 ;; esac; return 1; }

# report N NAME OK EXPECTED [DETAIL]: one line per attack.
report() {
    ran=$((ran + 1))
    if [ "$3" = 1 ]; then mark=defended; else mark="ATTACK SUCCEEDED"; succeeded="$succeeded $1:$2"; fi
    # the kernels log "kgate-attack: ..." once per process when the cheat is armed
    armed=$(grep -ls 'kgate-attack:' "$d"/ev/logs/*.log 2>/dev/null | wc -l)
    echo "attack $1 $2: kgate says exit $st, gate $gate, cand $cand, verify $ver${5:+, $5}, armed in $armed logs (expected $4): $mark"
}

want() {
    for n in $skip; do [ "$n" = "$1" ] && return 1; done
    [ -z "$only" ] && return 0
    for n in $only; do [ "$n" = "$1" ] && return 0; done
    return 1
}
only="$*"
# under the sanitizers (BUILD=build-san) the attacks judged by the CPU time a host burns (6, 7) and
# by volume (11) are left to the plain pass: instrumented, they measure the sanitizer, and they take
# half the scenario's time; every other attack runs in both passes
skip=""
case ${BUILD:-build} in *san*) [ -z "$only" ] && skip="6 7 11" ;; esac

# 1, 2, 3, 5, 12: the cheat is only a time; not FASTER and verify ok.
# A cheat that works works every time; an honest pair of arms is called
# FASTER only by chance (the host's load on a shared 2-core machine, the
# sanitizers' slowness), so an attack that looks successful is run once more
# and counts as successful only when it succeeds again.
simple() { # N NAME SOURCE
    want "$1" || return 0
    d=$T/a$1; mkplan "$d" "$A/$3"; campaign "$d" "$d/ev"; facts "$d"
    ok=1; faster && ok=0; [ "$ver" = 0 ] || ok=0; [ "$st" -le 1 ] || ok=0
    first=""
    if [ $ok = 0 ]; then
        first="first run: exit $st, gate $gate, cand $cand, verify $ver; again: "
        rm -rf "$d/ev"; campaign "$d" "$d/ev"; facts "$d"
        ok=1; faster && ok=0; [ "$ver" = 0 ] || ok=0; [ "$st" -le 1 ] || ok=0
    fi
    report "$1" "$2" $ok "not FASTER, verify ok" "${first:+${first%; again: }, run again}"
}
simple 1 reference-read a01_reference_read.c
simple 2 timer-patch a02_timer_patch.c
simple 3 kernel-struct-write a03_struct_write.c

if want 4; then
    d=$T/a4; mkplan "$d" "$A/a04_result_edit.c"; campaign "$d" "$d/ev"; facts "$d"
    # raw intact: in the raw files the attacker's median is close to the
    # baseline's (it is the naive loop); the edit halves it in every file
    # after the write.  ratio is the largest over the files of the
    # cand/naive median ratio (noisy processes on a loaded host can come
    # out low, by 30% and more; an edit halves them all).
    ratios=$(for f in "$d"/ev/raw/proc-*.csv.gz; do
        [ -f "$f" ] || continue
        for arm in cand naive; do
            gzip -dc "$f" | awk -F, -v a=$arm 'FNR > 1 && $4 == a { print $7 }' | sort -n |
                awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'
        done | paste -s -d' ' | awk '{ printf "%.2f\n", ($2 > 0 ? $1 / $2 : 0) }'
    done | sort -n)
    ratio=$(printf '%s\n' "$ratios" | awk 'NF { v[++n] = $1 } END { print (n ? v[n] : "-") }')
    ok=1; faster && ok=0; [ "$ver" = 0 ] || ok=0; [ "$st" -le 1 ] || ok=0
    case $ratio in - | 0.[0-6]*) ok=0 ;; esac
    report 4 result-file-edit $ok "not FASTER, verify ok, raw intact" "largest cand/naive median ratio over the raw files $ratio"
fi

simple 5 other-arm-code-patch a05_arm_patch.c

for n in 6 7; do
    want $n || continue
    src=a06_spinner.c; name=spinner-thread
    [ $n = 7 ] && { src=a07_after_return.c; name=work-after-return; }
    # the spinner needs calls longer than a scheduler slice: 64 x 65536 (a
    # few ms), and 4 processes per direction (more than 2, and the load-order
    # square of 2 arms): its effect varies between processes
    cols=2048 procs=2; [ $n = 6 ] && cols=65536 procs=4
    d=$T/a$n; mkplan "$d" "$A/$src"; cols=2048 procs=2; campaign "$d" "$d/ev"; facts "$d"
    ok=1; faster && ok=0; rejected || ok=0; [ "$st" -le 1 ] || ok=0
    report $n $name $ok "candidate INCORRECT or INVALID, not FASTER"
done

if want 8; then
    d=$T/a8; mkplan "$d" "$A/a08_setsid_child.c"; campaign "$d" "$d/ev"
    sleep 2   # the child writes 0.2 s after SHA256SUMS appears
    facts "$d"
    late=no; [ -e "$d/ev/late-file-from-kernel.txt" ] && late=yes
    ok=1; faster && ok=0; [ "$ver" = 0 ] || ok=0; [ $late = no ] || ok=0; [ "$st" -le 1 ] || ok=0
    report 8 setsid-child $ok "not FASTER, verify ok after the child's time, no late file" "late file $late"
fi

if want 9; then
    d=$T/a9; mkplan "$d" "$A/a09_chdir.c" "defines = ELSEWHERE=$T/a9/elsewhere"
    campaign "$d" ev; facts "$d"
    planned=$(grep -c '' "$d/ev/processes.csv" 2>/dev/null); planned=$((${planned:-1} - 1))
    bad=$(awk -F, 'NR > 1 && $3 != "ok"' "$d/ev/processes.csv" 2>/dev/null | wc -l)
    outside=$(find "$d/elsewhere" -type f 2>/dev/null | wc -l)
    ok=1; faster && ok=0; [ "$ver" = 0 ] || ok=0; [ "$bad" -eq 0 ] || ok=0; [ "$outside" -eq 0 ] || ok=0
    [ "$st" -le 1 ] || ok=0
    report 9 chdir $ok "not FASTER, every process ok, nothing outside, verify ok" \
        "$bad of $planned processes not ok, $outside files written outside the folder"
fi

if want 10; then
    d=$T/a10; mkplan "$d" "$A/a10_kill_parent.c"; campaign "$d" "$d/ev"; st0=$st
    resumed=""
    if [ "$st" -gt 1 ]; then
        sh -c 'cd "$1" || exit 2; shift; timeout -k 5 150 "$@"' sh "$d" "$KGATE" run --report plan.kg --resume "$d/ev" \
            >"$d/out" 2>"$d/err"; st=$?
        resumed=", first run exit $st0, resume exit $st"
    fi
    facts "$d"
    ok=1; faster && ok=0; rejected || ok=0; [ "$st0" -le 1 ] || ok=0; [ "$ver" = 0 ] || ok=0
    report 10 kill-parent $ok "run ends exit 0/1, candidate INCORRECT or INVALID, verify ok" "${resumed#, }"
fi

if want 11; then
    d=$T/a11; mkplan "$d" "$A/a11_output_flood.c"
    (cd "$d" && exec timeout -k 5 150 /usr/bin/time -f %M -o "$d/run.rss" "$KGATE" run --report plan.kg -o "$d/ev" >"$d/out" 2>"$d/err"); st=$?
    facts "$d"
    /usr/bin/time -f %M -o "$d/verify.rss" "$KGATE" verify "$d/ev" >/dev/null 2>&1
    kb=$(du -sk "$d/ev" 2>/dev/null | cut -f1)
    rrss=$(tail -n 1 "$d/run.rss" 2>/dev/null); vrss=$(tail -n 1 "$d/verify.rss" 2>/dev/null)
    ok=1; faster && ok=0; [ "$ver" = 0 ] || ok=0; [ "${kb:-0}" -lt 32768 ] || ok=0
    [ "${rrss:-0}" -lt 204800 ] || ok=0; [ "${vrss:-0}" -lt 204800 ] || ok=0; [ "$st" -le 1 ] || ok=0
    report 11 output-flood $ok "not FASTER, folder < 32 MiB, run and verify peak RSS < 200 MiB, verify ok" \
        "folder $((${kb:-0} / 1024)) MiB, run peak RSS $((${rrss:-0} / 1024)) MiB, verify peak RSS $((${vrss:-0} / 1024)) MiB"
fi

simple 12 neighbourhood-read a12_neighbour_read.c

# 13: pack = 8 under fresh inputs: the operations before a sample's last read input sets of their
# own; a kernel that works on the checked set alone would cost one call's work per sample, had the
# operations not each an output of their own, one of which each sampled check compares
pack=8 simple 13 unchecked-pack-operations a13_pack_sets.c

if want q; then
    # the quickstart's three arms on its first case (one process per direction):
    # what the defences could break is an honest arm's admission and checks, and
    # no timing verdict on a shared host says anything about them
    d=$T/q; mkdir -p "$d"
    sed -e 's/^quiet = [0-9]*/quiet = 0/' -e "s#\.\./kernels/#$ROOT/kernels/#" -e 's/^processes = [0-9]*/processes = 1/' \
        -e 's/^rounds = [0-9]*/rounds = 2/' "$ROOT/examples/quickstart.kg" |
        awk '/^\[case / { keep = ($0 == "[case f32_128]") } /^\[(arm|gate|campaign)/ { keep = 1 } keep' > "$d/plan.kg"
    campaign "$d" "$d/ev"; facts "$d"
    ok=1; [ "$ver" = 0 ] || ok=0
    [ "$st" -le 3 ] || ok=0
    [ "$(grep -c '^\[case ' "$d/plan.kg")" = 1 ] || ok=0
    want_q="exit 0, 1 or 3, every arm admitted, no check failed, verify ok"
    [ -f "$d/ev/results.csv" ] || ok=0
    # every arm ok (admitted, correct) on the case
    awk -F, 'NR > 1 && $4 != "ok" { bad = 1 } END { exit bad }' "$d/ev/results.csv" 2>/dev/null || ok=0
    # no failed check; under the sanitizers (BUILD=build-san) an instrumented
    # arm host on a loaded 2-core machine can exceed the timing-integrity
    # bounds (timing:escape: 200 us of host CPU between requests or after a
    # reply) honestly: there timing:escape alone is left out
    case ${BUILD:-build} in
    *san*) want_q="$want_q (but for timing:escape: sanitizer build)"
        awk -F, 'FNR > 1 && $7 == "fail" && $6 != "timing:escape" { bad = 1 } END { exit bad }' \
            "$d"/ev/checks/*.csv 2>/dev/null || ok=0 ;;
    *)  awk -F, 'FNR > 1 && $7 == "fail" { bad = 1 } END { exit bad }' "$d"/ev/checks/*.csv 2>/dev/null || ok=0 ;;
    esac
    ran=$((ran + 1))
    if [ $ok = 1 ]; then mark=ok; else
        mark=FAILED; succeeded="$succeeded quickstart-broken"
        # what made an honest arm fail: its failed checks and the escapes its logs name
        awk -F, 'NR > 1 && $7 == "fail"' "$d"/ev/checks/*.csv 2>/dev/null | head -n 20
        grep -h "escape" "$d"/ev/logs/*.log 2>/dev/null | head -n 20
        cut -d, -f1-7 "$d/ev/processes.csv" 2>/dev/null
    fi
    echo "honest quickstart arms: kgate says exit $st, gate $gate, candidate $(awk -F, '$2 == "blocked" { print $4 "/" $5; exit }' "$d/ev/results.csv" 2>/dev/null | tr '\n' ' ')verify $ver (expected $want_q): $mark"
fi

if [ -n "$succeeded" ]; then
    echo "FAIL: attacks that succeeded:$succeeded"
    exit 1
fi
echo "all $ran attacks defended"
