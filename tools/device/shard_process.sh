#!/bin/sh
# tools/device/shard_process.sh OUT [PLAN]: shards by process on one GPU (docs/scale-out.md), in one
# device call.  Uses bin/kgate-portable from .carry/bins.tgz when there is one (make portable &&
# strip bin/kgate-portable && tar czf .carry/bins.tgz bin/kgate-portable), else build/kgate (make).
# PLAN (default examples/cuda-aa.kg: one case, three arms, processes = 3) runs:
#   whole    kgate run PLAN --devices 0: the unsharded campaign as one shard on device 0, verified
#   shard I  kgate run PLAN --shard I/2 --device 0 --campaign ID --ledger DIR/ledger -o DIR/shards/I,
#            I = 0 then 1, one after the other on the same GPU (what --devices 0,1 starts at once on
#            two GPUs); with one case and two shards the plan is dealt by process: shard 0 runs the
#            pairs of slots 0 and 2 (slots 0, 1, 4, 5), shard 1 pair 1 (slots 2, 3)
#   merge    kgate merge DIR DIR/shards/0 DIR/shards/1, then kgate verify DIR, kgate report DIR
#            (byte for byte) and kgate compare WHOLE DIR --allow-device (the merged device line names
#            its shard count): the verdicts and intervals of the same schedule
# Every step's command, exit status and wall time go to OUT/r/steps.txt; each folder's report.md,
# results.csv, meta.json and processes.csv (the shards' too) to OUT/r; all of it in OUT/shard_process.tgz.
set -u
OUT=${1:?usage: shard_process.sh OUT [PLAN]}
PLAN=${2:-examples/cuda-aa.kg}
ROOT=$(pwd)
R=$OUT/r
W=${TMPDIR:-/tmp}/kgate-shard-process.$$
mkdir -p "$R" "$W"
[ -f .carry/bins.tgz ] && tar xzf .carry/bins.tgz
K=$ROOT/bin/kgate-portable
if [ ! -x "$K" ]; then
    K=$ROOT/build/kgate
    [ -x "$K" ] || make -j"$(nproc)" >"$R/make.txt" 2>&1
fi
{ ldd "$K"; nvidia-smi -L; nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,temperature.gpu --format=csv;
  date -u; "$K" --version; } >"$R/env.txt" 2>&1
export KGATE_LOCK_DIR="$W/locks"
now() { date +%s.%N; }
# NAME COMMAND...: runs it (from the plan's folder, with a 250 s bound), its status and wall time
step() {
    name=$1
    shift
    s=$(now)
    (cd "$ROOT/$(dirname "$PLAN")" && timeout 250 "$@") >"$R/$name.out" 2>"$R/$name.err"
    st=$?
    echo "$name: exit $st, wall $(awk -v a="$s" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s: $*" >>"$R/steps.txt"
    return $st
}
keep() { # DIR NAME
    for f in report.md results.csv results.json meta.json processes.csv; do cp "$1/$f" "$R/$2-$f" 2>/dev/null; done
}
P=$(basename "$PLAN")
step whole "$K" run "$P" --devices 0 -o "$W/whole" -q
keep "$W/whole" whole
step whole-verify "$K" verify "$W/whole"
ID=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
mkdir -p "$W/m/shards"
for i in 0 1; do
    step "shard$i" "$K" run "$P" --shard "$i/2" --device 0 --campaign "$ID" --ledger "$W/m/ledger" \
        -o "$W/m/shards/$i" -q
    keep "$W/m/shards/$i" "shard$i"
done
step merge "$K" merge "$W/m" "$W/m/shards/0" "$W/m/shards/1"
keep "$W/m" merged
step verify "$K" verify "$W/m"
cp "$W/m/report.md" "$W/report.before"
step report "$K" report "$W/m"
cmp -s "$W/m/report.md" "$W/report.before" && echo "report: byte for byte" >>"$R/steps.txt" ||
    echo "report: kgate report changed report.md" >>"$R/steps.txt"
step compare "$K" compare "$W/whole" "$W/m" --allow-device
cp "$W/m/ledger" "$R/ledger.txt" 2>/dev/null
tar czf "$OUT/shard_process.tgz" -C "$OUT" r
rm -rf "$W"
