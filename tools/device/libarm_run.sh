#!/bin/sh
# tools/device/libarm_run.sh OUT: library arms on the H200 in one device call
# (bin/kgate-portable from .carry/bins.tgz, python3 with PyTorch):
#   torch-OP  each replication plan (rowsum, layernorm, rmsnorm, softmax, splitk_bf16)
#             with a `builtin = torch` reference arm added, at 1 process per direction
#             and 3 rounds (a short form of the plan), quiet = 0; verified
#   handover  rowsum without the torch arm, then kgate compare against torch-rowsum:
#             the native arms' change when the helper's samples sit between theirs
#   test-gpu  tests/gpu/run.sh, in the time that is left
# Writes OUT/libarm.tgz only (reports, results, resources, verify outputs; no raw outputs).
set -u
OUT=${1:?usage: libarm_run.sh OUT}
ROOT=$(pwd)
R=$OUT/l
mkdir -p "$R"
T0=$(date +%s)
tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
{ ldd "$K"; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; date -u; "$K" --version;
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.device_count())'; } >"$R/env.txt" 2>&1
export KGATE_PYTHON=$(command -v python3)
short() { # PLAN OUTPLAN OP [torch]
    sed -e 's/^processes = .*/processes = 1/' -e 's/^rounds = .*/rounds = 3/' -e 's/^quiet = .*/quiet = 0/' \
        -e "s#\.\./\.\./kernels#$ROOT/kernels#" "$1" >"$2.tmp"
    if [ "${4:-}" = torch ]; then
        awk -v op="$3" '/^\[gate\]/ && !done { print "[arm torch]\nop = " op "\nrole = reference\nbuiltin = torch\n"; done = 1 } { print }' "$2.tmp" >"$2"
    else
        mv "$2.tmp" "$2"
    fi
    rm -f "$2.tmp"
}
camp() { # NAME PLAN
    timeout 45 "$K" run "$2" -o "/tmp/lr-$1" -q >/dev/null 2>"$R/$1.err"; echo "exit $?" >>"$R/$1.err"
    for f in report.md results.csv; do cp "/tmp/lr-$1/$f" "$R/$1-$f" 2>/dev/null; done
    cat /tmp/lr-$1/telemetry/resources-000.csv >"$R/$1-resources.csv" 2>/dev/null
    "$K" verify "/tmp/lr-$1" >"$R/$1-verify.txt" 2>&1; echo "exit $?" >>"$R/$1-verify.txt"
    grep -h "torch\|library\|helper" /tmp/lr-$1/logs/*.log 2>/dev/null | head -40 >"$R/$1-logs.txt"
    echo "$1 done at $(( $(date +%s) - T0 )) s" >>"$R/times.txt"
}
P=$ROOT/examples/replication
short "$P/rowsum.kg" /tmp/p-rowsum.kg rowsum torch;       camp torch-rowsum /tmp/p-rowsum.kg
short "$P/layernorm.kg" /tmp/p-ln.kg layernorm torch;     camp torch-layernorm /tmp/p-ln.kg
short "$P/rmsnorm.kg" /tmp/p-rms.kg rmsnorm torch;        camp torch-rmsnorm /tmp/p-rms.kg
short "$P/softmax.kg" /tmp/p-sm.kg softmax torch;         camp torch-softmax /tmp/p-sm.kg
short "$P/splitk_bf16.kg" /tmp/p-gemm.kg gemm_splitk torch; camp torch-gemm /tmp/p-gemm.kg
short "$P/rowsum.kg" /tmp/p-rowsum0.kg rowsum;            camp notorch-rowsum /tmp/p-rowsum0.kg
"$K" compare /tmp/lr-notorch-rowsum /tmp/lr-torch-rowsum >"$R/handover-compare.md" 2>&1; echo "exit $?" >>"$R/handover-compare.md"
cp /tmp/p-*.kg "$R/" 2>/dev/null
LEFT=$(( 170 - ($(date +%s) - T0) ))
if [ "$LEFT" -gt 40 ]; then
    KGATE=$K timeout "$LEFT" sh tests/gpu/run.sh >"$R/test-gpu.txt" 2>&1; echo "exit $?" >>"$R/test-gpu.txt"
else
    echo "not run: $LEFT s left of the call's 170 s" >"$R/test-gpu.txt"
fi
echo "total $(( $(date +%s) - T0 )) s" >>"$R/times.txt"
tar czf "$OUT/libarm.tgz" -C "$OUT" l
rm -rf "$R"
