# Library arms on the cpu backend (docs/library-arms.md), with numpy:
#  1. the helper's table of calls equals libarm.c's (names and expressions),
#     and it speaks kgate's frames: its hello, a reply repeating the
#     request's tag, and an end (naming why) on a frame over its limit, of
#     another magic, whose length lies, shorter than a header, longer than
#     its buffer, or with more descriptors than a BIND brings;
#  2. a campaign with numpy reference arms on three ops: their outputs pass
#     the float64 checks, their samples are interleaved with the other arms'
#     in every round of every process, a bf16 case numpy cannot take is
#     INADMISSIBLE for its arm alone, resources.csv holds each case's
#     provenance record (library, versions, call, expression, the helper's
#     sha256), the report has the Library arms section, verify passes;
#  3. PYTHONPATH does not reach the helper (it runs with python3 -I); a
#     helper whose call returns a wrong output (sabotaged through a
#     KGATE_PYTHON that takes PYTHONPATH): INCORRECT for that arm, the
#     campaign ends normally and verifies;
#  4. a helper that dies mid-campaign: INCORRECT (a fault of its arm),
#     the other arms unaffected;
#  5. plan errors: call on a source arm, an unknown call, compile = yes on
#     numpy; a library that cannot be imported stops the campaign before any
#     worker, naming it.
# kgate-test: first (Python helpers)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
# a Python that has numpy (the helper also falls back to /usr/bin/python3)
PY=
for p in "${KGATE_PYTHON:-}" /usr/bin/python3 python3; do
    [ -n "$p" ] && "$p" -c 'import numpy' 2>/dev/null && { PY=$(command -v "$p"); break; }
done
[ -n "$PY" ] || die "no python3 with numpy (sh tools/install-deps.sh installs Debian's)"
export KGATE_PYTHON="$PY"

# 1. the two tables
"$PY" src/backend/libarm_helper.py --list yes >"$T/py-table.json" || die "the helper cannot list its calls"
"$PY" - "$T/py-table.json" src/backend/libarm.c >"$T/tables.out" 2>&1 <<'EOF' || { cat "$T/tables.out" >&2; die "the helper's table of calls differs from libarm.c's"; }
import json, re, sys
py = json.load(open(sys.argv[1]))
src = open(sys.argv[2]).read()
c = {}
for lib, op, call, expr in re.findall(r'\{\s*"(numpy|torch)",\s*"(\w+)",\s*"([\w.]+)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}', src):
    text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', expr))
    c.setdefault(lib, {})[op] = [call, text]
assert c == py, (c, py)
print("tables agree:", sum(len(v) for v in c.values()), "calls")
EOF
expect_grep 'tables agree: 16 calls' "$T/tables.out"

# 1b. the helper's framing (src/base/frame.h): its hello and replies are
# frames "<IIII" (magic "KGF1", kind, tag, length) that repeat the request's
# tag; a message that is not one whole frame of that magic, a frame over
# --max-bytes, or more descriptors than a BIND brings ends the helper, saying why
"$PY" - src/backend/libarm_helper.py >"$T/frames.out" 2>&1 <<'EOF' || { cat "$T/frames.out" >&2; die "the helper's framing"; }
import json, os, socket, struct, subprocess, sys
H = struct.Struct("<IIII")
MAGIC, MAX = 0x3146474B, 1024
def start():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    p = subprocess.Popen([sys.executable, "-B", sys.argv[1], "--max-bytes", str(MAX), "--library", "numpy",
                          "--device", "cpu", "--threads", "1"], close_fds=False,
                         preexec_fn=lambda: os.dup2(b.fileno(), 3), stderr=subprocess.PIPE)
    b.close()
    a.settimeout(60)
    kind, tag, obj = reply(a)
    assert (kind, tag, obj["status"]) == (1, 0, 0) and "numpy" in obj["versions"], (kind, tag, obj)
    return a, p
def reply(a):
    m = a.recv(H.size + MAX + 1)
    magic, kind, tag, n = H.unpack_from(m)
    assert magic == MAGIC and len(m) == H.size + n and n <= MAX, (magic, len(m), n)
    return kind, tag, json.loads(m[H.size:])
def frame(kind, tag, payload, says=None, magic=MAGIC):
    return H.pack(magic, kind, tag, len(payload) if says is None else says) + payload
a, p = start()
a.send(frame(7, 41, b'{"slot": 99}'))   # UNLOAD of a slot nobody loaded
kind, tag, obj = reply(a)
assert (kind, tag, obj["status"]) == (7, 41, 1) and "no case loaded in slot 99" in obj["error"], (kind, tag, obj)
a.send(frame(6, 42, b"{}"))   # QUIT
assert reply(a)[:2] == (6, 42)
assert p.wait(30) == 0
bad = [
    (frame(7, 1, b"x" * (MAX + 1)), "a frame of 1025 bytes, over the 1024 it takes"),
    (frame(7, 1, b"{}", magic=0x6B67484C), "not a kgate frame (magic 6b67484c)"),
    (frame(7, 1, b'{"slot": 1}', says=4), "a message of 27 bytes whose frame says 4"),
    (b"KGF1x", "a message of 5 bytes, shorter than a frame's header"),
    (frame(7, 1, b"x" * (MAX + 64)), "a message longer than a frame of 1024 bytes"),
]
for msg, why in bad + [(None, "or with more than 64 descriptors")]:
    a, p = start()
    if msg is None:
        fd = os.open("/dev/null", os.O_RDONLY)
        socket.send_fds(a, [frame(3, 1, b"{}")], [fd] * 65)
    else:
        a.send(msg)
    err = p.communicate(timeout=30)[1].decode()
    assert p.returncode != 0 and why in err, (why, p.returncode, err)
    print("refused:", why)
print("frames ok")
EOF
expect_grep 'frames ok' "$T/frames.out"

# 2. the campaign
P=tests/plans/libarm-numpy.kg
"$KGATE" run --report "$P" -o "$T/ok" -q 2>"$T/ok.err"
st=$?
[ $st -le 1 ] || { cat "$T/ok.err" >&2; die "numpy campaign: exit $st"; }
R=$T/ok/results.csv
for a in r,np sm,sm_np mm,mm_np; do
    grep -q "^$a,reference,ok," "$R" || { cat "$R" >&2; die "library arm $a is not ok"; }
done
grep -q '^rb,np,reference,inadmissible,INADMISSIBLE' "$R" || { cat "$R" >&2; die "numpy on bf16 is not INADMISSIBLE"; }
grep -q '^rb,naive,baseline,ok,' "$R" || die "the bf16 case's other arms suffered from numpy's refusal"
expect_grep 'numpy has no bf16 dtype' "$T/ok/report.md"
# checked like every arm: pre and post checks of the library arm passed
for ph in pre post; do
    n=$(cat "$T"/ok/checks/proc-*.csv | awk -F, -v p=$ph '$3 == "r" && $4 == "np" && $5 == p && $7 == "pass"' | wc -l)
    [ "$n" -gt 0 ] || die "no passing $ph check of the numpy arm"
done
# numpy.softmax returns its result: the checks of timed executions see it too
n=$(cat "$T"/ok/checks/proc-*.csv | awk -F, '$4 == "sm_np" && $6 ~ /^(sampled@|snapshot)/ && $7 == "pass"' | wc -l)
[ "$n" -gt 0 ] || die "no passing sampled or snapshot check of sm_np (a returned result after a timed sample)"
bad=$(cat "$T"/ok/checks/proc-*.csv | awk -F, '$4 ~ /np$/ && $3 != "rb" && $7 == "fail"' | wc -l)
[ "$bad" = 0 ] || die "$bad failing checks of numpy arms"
# interleaved: in every process and round, samples of np and of naive
for f in "$T"/ok/raw/proc-*.csv.gz; do
    raw_text "$f" | awk -F, 'FNR > 1 && $5 == "r" { s[$3 "," $4]++; r[$3] = 1 }
             END { for (x in r) if (!s[x ",np"] || !s[x ",naive"]) { print "round " x " lacks an arm"; exit 1 } }' ||
        die "$f: the library arm is not in every round"
done
# provenance, per case, in resources.csv
RES=$(cat "$T"/ok/telemetry/resources-*.csv)
sha=$(sha256sum src/backend/libarm_helper.py | cut -d' ' -f1)
printf '%s\n' "$RES" >"$T/res.csv"
"$PY" - "$T/res.csv" "$sha" <<'EOF' || die "the library provenance records are not as documented"
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["process"] != "process"]
lib = [r for r in rows if r["library"]]
cases = {(r["case"], r["arm"]) for r in lib}
assert {("r", "np"), ("sm", "sm_np"), ("mm", "mm_np")} <= cases, cases
for r in lib:
    rec = json.loads(r["library"])
    assert rec["library"] == "numpy", rec
    assert rec["helper_sha256"] == sys.argv[2], (rec["helper_sha256"], sys.argv[2])
    assert rec["versions"]["numpy"] and rec["versions"]["python"], rec
    assert rec["versions"]["threads"] == 1, rec
    assert rec["call"] in ("numpy.sum", "numpy.softmax", "numpy.matmul"), rec
    assert rec["expression"] and rec["timing"].startswith("CLOCK_MONOTONIC_RAW"), rec
    # numpy.softmax returns a new array: copied into kgate's buffer after each
    # timed sample too, which the sampled and snapshot checks above passed on
    want = ("returned by the call, copied into kgate's output buffer in checked runs and after each "
            "timed sample" if rec["call"] == "numpy.softmax" else "written into kgate's output buffer")
    assert rec["output"].startswith(want), rec
    assert rec["compile"] is None and rec["cache"] is None, rec
    assert r["sandbox"].startswith("library helper"), r
assert all(not r["library"] for r in rows if not r["arm"].endswith("np")), "a library record on a C arm"
print("ok")
EOF
expect_grep '## Library arms' "$T/ok/report.md"
expect_grep '| r | np | `numpy.sum` | `numpy.sum(X, axis=1, dtype=float32, out=Y)`' "$T/ok/report.md"
"$KGATE" verify "$T/ok" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "verify of the numpy campaign"; }
expect_report_identical "$T/ok"

# 3 and 4: a helper sabotaged from outside (sitecustomize on the path of a
# Python that KGATE_PYTHON names)
mkdir -p "$T/wrong" "$T/dies"
cat >"$T/wrong/sitecustomize.py" <<'EOF'
import numpy
_sum = numpy.sum
def _bad(*a, **k):
    r = _sum(*a, **k)
    out = k.get("out")
    if out is not None and out.shape and out.shape[0] > 3:
        out[3] += 1.0
    return r
numpy.sum = _bad
EOF
cat >"$T/dies/sitecustomize.py" <<'EOF'
import os, numpy
_sum = numpy.sum
_n = [0]
def _dies(*a, **k):
    _n[0] += 1
    if _n[0] > 12:
        os._exit(7)
    return _sum(*a, **k)
numpy.sum = _dies
EOF
# the runs of 3 and 4 on a smaller campaign: cases r and sm, with their baselines and numpy arms
# (two arms a case: two processes complete the load-order square, where the whole plan takes six)
S=$T/libarm-small.kg
sed "s#\.\./\.\./kernels#$PWD/kernels#" "$P" |
    plan_drop "case rb" "case mm" "arm unrolled" "arm mm_naive" "arm mm_np" |
    sed 's/^processes = 6$/processes = 2/' >"$S"
expect_grep '^processes = 2$' "$S"
expect_no_grep '^\[arm unrolled\]' "$S"
# the helper runs isolated (python3 -I): PYTHONPATH does not reach it (review
# 2026-12-04, 5c: it chose the helper's code), and the run is not changed
# (under the sanitizers the helper's own behaviours are left to the plain pass: the PYTHONPATH run
# and the wrong helper run the C of the first run and of any failed check; the dying helper stays)
san=0
case ${BUILD:-build} in *san*) san=1 ;; esac
if [ $san = 0 ]; then
PYTHONPATH="$T/wrong" "$KGATE" run "$S" -o "$T/o-pp" -q 2>"$T/pp.err"; st=$?
[ $st -le 1 ] || { cat "$T/pp.err" >&2; die "PYTHONPATH run: exit $st"; }
grep -q '^r,np,reference,ok,' "$T/o-pp/results.csv" || { cat "$T/o-pp/results.csv" >&2; die "PYTHONPATH reached the helper"; }
expect_grep '"flags": "-I -B"' "$T/o-pp/environment.json"
# the helper's Python and script by SHA-256 (docs/evidence.md, environment.json's programs)
expect_grep "\"path\": \"$(readlink -f "$PY")\"" "$T/o-pp/environment.json"
expect_grep "\"sha256\": \"$(sha256sum "$(readlink -f "$PY")" | cut -d' ' -f1)\"" "$T/o-pp/environment.json"
expect_grep "\"script_sha256\": \"$(sha256sum src/backend/libarm_helper.py | cut -d' ' -f1)\"" "$T/o-pp/environment.json"
fi
# so the sabotage comes through KGATE_PYTHON (which the environment's record
# calls unattested): a Python that drops -I and takes PYTHONPATH
helpers="wrong dies"
[ $san = 1 ] && helpers=dies
for w in $helpers; do
    printf '#!/bin/sh\n[ "$1" = -I ] && shift\nPYTHONPATH="%s" exec "%s" "$@"\n' "$T/$w" "$PY" >"$T/py-$w"
    chmod +x "$T/py-$w"
    KGATE_PYTHON="$T/py-$w" "$KGATE" run "$S" -o "$T/o-$w" -q 2>"$T/$w.err"
    st=$?
    [ $st -le 1 ] || { cat "$T/$w.err" >&2; die "$w helper: exit $st (the campaign must go on)"; }
    grep -q '^r,np,reference,incorrect,INCORRECT' "$T/o-$w/results.csv" || { cat "$T/o-$w/results.csv" >&2; die "$w helper: numpy arm not INCORRECT"; }
    grep -q '^r,naive,baseline,ok,' "$T/o-$w/results.csv" || die "$w helper: the baseline suffered"
    grep -q '^sm,sm_np,reference,ok,' "$T/o-$w/results.csv" || die "$w helper: another library arm suffered"
    "$KGATE" verify "$T/o-$w" >"$T/v-$w.out" 2>&1 || { cat "$T/v-$w.out" >&2; die "verify after the $w helper"; }
done
[ $san = 1 ] || expect_grep 'element 3: got' "$T/o-wrong/report.md"
expect_grep "arm .np. host exited with status 7" "$T/o-dies/report.md"

# 4b. a helper that starts for the supervisor's build and never in a worker
# (each worker starts the library arms' helpers side by side before its first
# case, and an arm's load starts a failed one again, telling why): its arms
# are refused in every process, the campaign goes on, the baseline is timed
printf '#!/bin/sh\ntr "\\0" " " </proc/$PPID/cmdline | grep -q " worker " && { echo "no start here" >&2; exit 3; }\nexec "%s" "$@"\n' \
    "$PY" >"$T/py-once"
chmod +x "$T/py-once"
KGATE_PYTHON="$T/py-once" "$KGATE" run "$S" -o "$T/o-once" -q 2>"$T/once.err"
st=$?
[ $st -le 1 ] || { cat "$T/once.err" >&2; die "helpers that start only for the build: exit $st (the campaign must go on)"; }
grep -q '^r,naive,baseline,ok,' "$T/o-once/results.csv" || { cat "$T/o-once/results.csv" >&2; die "helpers that do not start: the baseline suffered"; }
grep -q '^r,np,reference,ok,' "$T/o-once/results.csv" && die "an arm whose helper never started in a worker was timed"
grep -q "np.*did not start" "$T/o-once/checks/"*.csv 2>/dev/null || grep -rq "did not start" "$T/o-once/report.md" ||
    { cat "$T/o-once/report.md" >&2; die "helpers that do not start: the report does not say why"; }

# 4c. a worker starts the helpers of the arms it runs, not the others': a shard by case that
# runs case r alone starts np's helper and neither sm_np's nor mm_np's (one start per process)
printf '#!/bin/sh\ntr "\\0" " " </proc/$PPID/cmdline | grep -q " worker " && echo "$PPID" >>"%s"\nexec "%s" "$@"\n' \
    "$T/worker-starts" "$PY" >"$T/py-count"
chmod +x "$T/py-count"
KGATE_PYTHON="$T/py-count" "$KGATE" run "$P" --shard 0/4 -o "$T/o-shard" -q --quiet-window 0 2>"$T/shard.err"
st=$?
[ $st -le 1 ] || { cat "$T/shard.err" >&2; die "a shard of the library plan: exit $st"; }
grep -q '^r,np,reference,ok,' "$T/o-shard/results.csv" || { cat "$T/o-shard/results.csv" >&2; die "the shard's numpy arm"; }
grep -q '^sm,' "$T/o-shard/results.csv" && die "shard 0 of 4 ran case sm"
per=$(sort "$T/worker-starts" | uniq -c | awk '{ print $1 }' | sort -u | tr '\n' ' ')
[ "$per" = "1 " ] || die "helpers started per worker of a shard that runs case r alone: $per (expected 1: np's)"

# 5. plan errors and a missing library
sed 's/^call = numpy.softmax/call = numpy.nope/' "$P" >"$T/badcall.kg"
sed -i "s#\.\./\.\./kernels#$PWD/kernels#" "$T/badcall.kg"
"$KGATE" run --report "$T/badcall.kg" -o "$T/o-bc" -q 2>"$T/bc.err"; expect_status 2 $? "an unknown call"
expect_grep "op 'softmax' has no numpy call 'numpy.nope' (set call = numpy.softmax" "$T/bc.err"
sed "s#\.\./\.\./kernels#$PWD/kernels#" "$P" | awk '/^\[arm unrolled\]/ { print; print "call = numpy.sum"; next } { print }' >"$T/srccall.kg"
"$KGATE" run --report "$T/srccall.kg" -o "$T/o-sc" -q 2>"$T/sc.err"; expect_status 2 $? "call on a source arm"
expect_grep "a library key on an arm that is not a library arm" "$T/sc.err"
sed "s#\.\./\.\./kernels#$PWD/kernels#" "$P" | awk '/^\[arm mm_np\]/ { print; print "compile = yes"; next } { print }' >"$T/comp.kg"
"$KGATE" run --report "$T/comp.kg" -o "$T/o-cp" -q 2>"$T/cp.err"; expect_status 2 $? "compile = yes on numpy"
expect_grep "compile = yes on a numpy arm" "$T/cp.err"
if ! "$PY" -c 'import torch' 2>/dev/null && ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    sed "s#\.\./\.\./kernels#$PWD/kernels#; s/^builtin = numpy/builtin = torch/" "$P" | grep -v '^call = ' >"$T/torch.kg"
    "$KGATE" run --report "$T/torch.kg" -o "$T/o-t" -q 2>"$T/t.err"; st=$?
    [ $st = 2 ] || [ $st = 3 ] || { cat "$T/t.err" >&2; die "builtin = torch without torch: exit $st"; }
    expect_grep "its library helper (.*) could not start: cannot import torch" "$T/t.err"
    [ -f "$T/o-t/results.csv" ] && die "a worker ran without the library"
fi
echo "libarm.sh: ok"
