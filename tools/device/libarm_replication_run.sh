#!/bin/sh
# tools/device/libarm_replication_run.sh OUT [PLAN ...]: the replication study with PyTorch inside
# the campaigns (docs/replication.md, docs/library-arms.md), in one device call on a GPU machine
# with PyTorch, bin/kgate-portable from .carry/bins.tgz.  Each plan (default: the reduction plans
# and splitk_bf16) runs at its full protocol with a `builtin = torch` reference arm added before its
# [gate], so every ratio to torch comes from the same processes and rounds; each folder is
# verified.  Then the hand-over cost: rowsum at its full protocol without the torch arm, and
# kgate compare of the two campaigns (the native arms' change when the helper's samples sit
# between theirs).  Writes OUT/librep.tgz: each campaign's report.md, results.csv, the library
# arms' provenance (resources-000.csv), verify output and wall time; no raw outputs.
set -u
OUT=${1:?usage: libarm_replication_run.sh OUT [PLAN ...]}
shift
ROOT=$(pwd)
R=$OUT/lr
mkdir -p "$R"
T0=$(date +%s)
[ -f .carry/bins.tgz ] && tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
[ -x "$K" ] || K=$ROOT/build/kgate
{ ldd "$K"; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; date -u; "$K" --version;
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.device_count())'; } >"$R/env.txt" 2>&1
export KGATE_PYTHON=$(command -v python3)
P=$ROOT/examples/replication
[ $# -gt 0 ] || set -- rowsum layernorm rmsnorm softmax splitk_bf16
# PLAN OUT OP: the plan with its kernel paths made absolute and a torch reference arm added
with_torch() {
    sed -e "s#\.\./\.\./kernels#$ROOT/kernels#" "$1" |
        awk -v op="$3" '/^\[gate\]/ && !done { print "[arm torch]\nop = " op "\nrole = reference\nbuiltin = torch\n"; done = 1 } { print }' >"$2"
}
# NAME PLAN: one campaign, bounded so that the call stays under ten minutes: a campaign is
# started only while LIMIT (seconds, default 560) minus the time spent leaves it its 110 s
LIMIT=${LIMIT:-560}
camp() {
    s=$(date +%s)
    if [ $(( s - T0 + 110 )) -gt "$LIMIT" ]; then echo "$1: not run (the call's time limit)" >>"$R/walls.txt"; return 0; fi
    timeout 110 "$K" run "$2" -o "/tmp/lrep-$1" -q >/dev/null 2>"$R/$1.err"; echo "exit $?" >>"$R/$1.err"
    echo "$1: $(( $(date +%s) - s )) s" >>"$R/walls.txt"
    for f in report.md results.csv; do cp "/tmp/lrep-$1/$f" "$R/$1-$f" 2>/dev/null; done
    cp /tmp/lrep-$1/telemetry/resources-000.csv "$R/$1-resources.csv" 2>/dev/null
    "$K" verify "/tmp/lrep-$1" >"$R/$1-verify.txt" 2>&1; echo "exit $?" >>"$R/$1-verify.txt"
}
for b in "$@"; do
    op=$(awk -F' *= *' '/^\[arm /{a=1} a && $1 == "op" { print $2; exit }' "$P/$b.kg")
    with_torch "$P/$b.kg" "/tmp/lrep-$b.kg" "$op"
    cp "/tmp/lrep-$b.kg" "$R/$b-torch.kg"
    camp "torch-$b" "/tmp/lrep-$b.kg"
done
# the hand-over cost: the same plan without the helper's samples between the native arms'
# (HANDOVER=0 leaves it out)
if [ "${HANDOVER:-1}" = 1 ]; then
sed -e "s#\.\./\.\./kernels#$ROOT/kernels#" "$P/rowsum.kg" >/tmp/lrep-rowsum-native.kg
camp native-rowsum /tmp/lrep-rowsum-native.kg
"$K" compare /tmp/lrep-native-rowsum /tmp/lrep-torch-rowsum >"$R/handover-compare.md" 2>&1
echo "exit $?" >>"$R/handover-compare.md"
fi
echo "total $(( $(date +%s) - T0 )) s" >>"$R/walls.txt"
tar czf "$OUT/librep.tgz" -C "$OUT" lr
rm -rf "$R"
