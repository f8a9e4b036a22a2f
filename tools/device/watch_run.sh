#!/bin/sh
# tools/device/watch_run.sh OUT [PART]: the H200 records of the host watch in one device call.
# Needs .carry/bins.tgz with bin/kgate-portable of this tree, built and stripped here
# (make portable && strip bin/kgate-portable && tar czf .carry/bins.tgz bin/kgate-portable).
# PART (default "all"; several joined with '+'):
#   test     tests/gpu/run.sh (make test-gpu's script) -> test-gpu.txt
#   duty     examples/cuda-gemm.kg at its defaults on the idle device: wall time, the report's
#            "Host watch" section (duty cycle, where the time went), processes.csv, watch.csv
#   dutyno   the same with overlap = no (each worker starts after the one before it ended)
#   foreign  examples/cuda-aa.kg while a torch matrix-product loop runs on the same GPU for about
#            12 s, started once the campaign's first process has ended: which processes are
#            contaminated (only those it overlapped), the verdicts (no arm INCORRECT), the log
#   never    examples/cuda-aa.kg with quiet_timeout = 20 and repeats = 1 while the torch loop
#            runs for the whole campaign: INVALID, "the device never became quiet", data kept
# Writes OUT/watch.tgz.
set -u
OUT=${1:?usage: watch_run.sh OUT [test|duty|foreign|never|all]}
PART=${2:-all}
ROOT=$(pwd)
R=$OUT/r
mkdir -p "$R"
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
{ ldd "$K"; nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE; date -u; } >"$R/env.txt" 2>&1
"$K" --version >"$R/version.txt" 2>&1
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
has() { [ "$PART" = all ] || case "+$PART+" in *"+$1+"*) true ;; *) false ;; esac; }
keep() { # DIR NAME: the small files of a campaign folder
    for f in report.md results.csv processes.csv watch.csv; do cp "$1/$f" "$R/$2-$f" 2>/dev/null; done
    grep -h "clock:warm" "$1"/checks/*.csv >"$R/$2-warm.csv" 2>/dev/null
    cp "$1/logs/proc-000.log" "$R/$2-proc-000.log" 2>/dev/null
    cp "$1/logs/proc-001.log" "$R/$2-proc-001.log" 2>/dev/null
}
torch_loop() { # SECONDS: matrix products on GPU 0 for that long; prints its pid
    # (its output goes to a file: inside $(...) an inherited stdout would make
    # the substitution wait for the loop to end)
    python3 - "$1" >>"$R/torch.txt" 2>&1 <<'PY' &
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda")
t = time.time()
n = 0
while time.time() - t < float(sys.argv[1]):
    b = a @ a
    torch.cuda.synchronize()
    n += 1
print("torch loop: %d products in %.1f s, pid" % (n, time.time() - t), flush=True)
PY
    echo $!
}
P=/tmp/kw
mkdir -p "$P"
cp kernels/cuda/*.cu "$P/"
sed 's#\.\./kernels/cuda/##' examples/cuda-gemm.kg >"$P/gemm.kg"
sed 's#\.\./kernels/cuda/##' examples/cuda-aa.kg >"$P/aa.kg"

if has test; then
    t0=$(now)
    KGATE=$K timeout 420 sh tests/gpu/run.sh >"$R/test-gpu.txt" 2>&1
    echo "exit $? wall $(since "$t0") s" >>"$R/test-gpu.txt"
fi

if has duty; then
    t0=$(now)
    (cd "$P" && timeout 300 "$K" run gemm.kg -o /tmp/w-duty --no-progress >/dev/null 2>"$R/duty.err")
    echo "exit $? wall $(since "$t0") s" >>"$R/duty.err"
    keep /tmp/w-duty duty
    # the folder's size and a verify that replays every saved output
    { du -sb /tmp/w-duty /tmp/w-duty/outputs; ls -l /tmp/w-duty/outputs | head -20
      t1=$(now); timeout 120 "$K" verify /tmp/w-duty; echo "verify exit $? in $(since "$t1") s"; } >"$R/duty-size.txt" 2>&1
fi

if has dutyno; then
    sed 's/^\[campaign\]$/[campaign]\noverlap = no/' "$P/gemm.kg" >"$P/gemm-no.kg"
    t0=$(now)
    (cd "$P" && timeout 300 "$K" run gemm-no.kg -o /tmp/w-dutyno --no-progress >/dev/null 2>"$R/dutyno.err")
    echo "exit $? wall $(since "$t0") s" >>"$R/dutyno.err"
    keep /tmp/w-dutyno dutyno
fi

if has foreign; then
    t0=$(now)
    (cd "$P" && timeout 400 "$K" run aa.kg -o /tmp/w-foreign --no-progress >/dev/null 2>"$R/foreign.err") &
    k=$!
    i=0
    until [ -f /tmp/w-foreign/processes.csv ] || [ $i -ge 3000 ]; do i=$((i + 1)); sleep 0.1; done
    echo "torch loop starts at $(since "$t0") s" >"$R/foreign-torch.txt"
    pid=$(torch_loop 12)
    echo "torch pid $pid" >>"$R/foreign-torch.txt"
    wait $k
    echo "exit $? wall $(since "$t0") s" >>"$R/foreign.err"
    wait 2>/dev/null
    keep /tmp/w-foreign foreign
fi

if has never; then
    sed -e 's/^quiet = 5 .*/quiet = 5\nquiet_timeout = 20\nrepeats = 1/' "$P/aa.kg" >"$P/never.kg"
    pid=$(torch_loop 150)
    sleep 5
    t0=$(now)
    (cd "$P" && timeout 300 "$K" run never.kg -o /tmp/w-never --no-progress >/dev/null 2>"$R/never.err")
    echo "exit $? wall $(since "$t0") s" >>"$R/never.err"
    kill "$pid" 2>/dev/null
    keep /tmp/w-never never
    timeout 60 "$K" verify /tmp/w-never >"$R/never-verify.txt" 2>&1
    echo "exit $?" >>"$R/never-verify.txt"
fi
(cd "$OUT" && tar czf watch.tgz r && rm -rf r)
