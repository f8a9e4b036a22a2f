#!/bin/sh
# tools/bench/aa-hosted.sh: an A/A study of the cpu backend's arm hosts
# against in-worker arms, on this machine, with real timings.
#   sh tools/bench/aa-hosted.sh [N] [OUT]     (defaults: 10 pairs, a new folder under /tmp)
#   KGATE=build/kgate (default), KEEP=1 keeps every evidence folder
# Runs N campaigns of the untrusted-arms plan and N of the same plan with
# every arm trusted (in the worker), alternating (hosted, in-worker,
# hosted, ...), each in a private lock folder.  The plans are those of
# statistics.md section 10 of the 2026-12-04 review: gemm_bt f32 128^3,
# baseline `naive`, candidate `naive2` built from the same source, control
# `naive_copy` of naive (a separately loaded copy), quiet 0, max_steal 0,
# 3 processes per direction, 6 rounds x 5 samples (2 warmup), margin and
# control_margin 10% (wide: verdicts are not the subject; kgate refuses a
# margin below the control margin).
# The control takes `trusted` from naive.
#
# Prints one line per campaign (its kind, the 1-minute load average when
# it started, wall seconds, per contrast the estimate theta = mean log
# ratio arm/baseline in % and its standard error in %, the processes'
# arm spread: median and count above 5% and 10% of max/min - 1 of the
# three arms' process medians within one process, the CPUs of the
# processes and the contaminated samples), then per kind and contrast the
# RMS of the campaigns' SE, the SD of their estimates, the ratio of the
# two, the intervals (one-sided 95% each side) that exclude 0, and the
# hosted/in-worker ratio of the RMS SE (target: at most 1.5).
set -u
N=${1:-10}
OUT=${2:-$(mktemp -d "${TMPDIR:-/tmp}/kgate-aa-hosted.XXXXXX")}
KGATE=${KGATE:-build/kgate}
root=$(pwd)
[ -f "$root/kernels/cpu/gemm_bt_naive.c" ] || { echo "run from kgate's repository root" >&2; exit 2; }
mkdir -p "$OUT"
plan() { # file trusted seed
    cat >"$1" <<PLAN
[campaign]
name = aa-hosted
backend = cpu
quiet = 0
max_steal = 0
warmup = 2
samples = 5
rounds = 6
processes = 3
interleave = sample
seed = $3
margin = 10%
control_margin = 10%
timeout = 120
[case f32_128]
op = gemm_bt
dtype = f32
M = 128
N = 128
K = 128
[arm naive]
op = gemm_bt
role = baseline
source = $root/kernels/cpu/gemm_bt_naive.c
trusted = $2
[arm naive2]
op = gemm_bt
role = candidate
source = $root/kernels/cpu/gemm_bt_naive.c
trusted = $2
[arm naive_copy]
op = gemm_bt
role = control
of = naive
PLAN
}
i=1
while [ "$i" -le "$N" ]; do
    for kind in hosted inworker; do
        t=no
        [ "$kind" = inworker ] && t=yes
        d="$OUT/$kind-$i"
        rm -rf "$d"
        plan "$OUT/$kind-$i.kg" "$t" "$i"
        load=$(cut -d' ' -f1 /proc/loadavg)
        s0=$(date +%s.%N)
        KGATE_LOCK_DIR="$OUT/locks" "$KGATE" run "$OUT/$kind-$i.kg" -o "$d" >"$d.out" 2>"$d.err"
        st=$?
        s1=$(date +%s.%N)
        echo "$kind $i $st $load $s0 $s1" >>"$OUT/campaigns.txt"
        python3 - "$d" "$kind" "$i" "$st" "$load" "$s0" "$s1" >>"$OUT/lines.txt" <<'PY'
import csv, glob, gzip, json, os, sys
d, kind, i, st, load, s0, s1 = sys.argv[1:]
out = [f"{kind:8s} {int(i):3d} exit {st} load {float(load):5.2f} {float(s1) - float(s0):6.1f} s"]
try:
    res = json.load(open(os.path.join(d, "results.json")))["results"]
except (OSError, ValueError, KeyError):
    print(" ".join(out) + " no results.json"); sys.exit(0)
for arm in ("naive2", "naive_copy"):
    r = [x for x in res if x["arm"] == arm]
    e = r[0].get("effect") if r else None
    if e and e.get("se") is not None:
        lo, hi = e["reduction_lower"], e["reduction_upper"]
        excl = lo > 0 or hi < 0
        out.append(f"{arm} {100 * e['theta']:+.3f}% se {100 * e['se']:.3f}%{' excl0' if excl else ''}")
    else:
        out.append(f"{arm} - se -")
spreads, cpus, bad = [], [], 0
for f in sorted(glob.glob(os.path.join(d, "raw", "proc-*.csv*"))):   # .csv.gz from schema 9
    by, pin = {}, None
    with (gzip.open(f, "rt") if f.endswith(".gz") else open(f)) as fh:
        for row in csv.DictReader(fh):
            if row.get("process_cpu", "-1") != "-1" and row.get("cpu") != row.get("process_cpu"):
                bad += 1
                continue
            pin = row.get("process_cpu", "-1")
            by.setdefault(row["arm"], []).append(float(row["ns"]))
    med = [sorted(v)[len(v) // 2] for v in by.values() if v]
    if len(med) == 3:
        spreads.append(max(med) / min(med) - 1)
    cpus.append(pin if pin is not None else "?")
spreads.sort()
if spreads:
    out.append(f"spread median {100 * spreads[len(spreads) // 2]:.2f}% >5% {sum(s > 0.05 for s in spreads)} "
               f">10% {sum(s > 0.10 for s in spreads)} of {len(spreads)}")
out.append(f"cpus {','.join(cpus)} contaminated {bad}")
print(" ".join(out))
PY
        tail -n 1 "$OUT/lines.txt"
        [ -n "${KEEP:-}" ] || rm -rf "$d"
    done
    i=$((i + 1))
done
python3 - "$OUT/lines.txt" <<'PY'
import math, re, sys
rows = [l.split() for l in open(sys.argv[1])]
print("\nkind     contrast    campaigns  RMS SE   SD of estimates  SD/RMS  excl0  processes >10% spread")
rms = {}
for kind in ("hosted", "inworker"):
    for arm in ("naive2", "naive_copy"):
        th, se, ex = [], [], 0
        for r in rows:
            if r[0] != kind or arm not in r:
                continue
            k = r.index(arm)
            if r[k + 1] == "-":
                continue
            th.append(float(r[k + 1].rstrip("%")))
            se.append(float(r[k + 3].rstrip("%")))
            ex += k + 4 < len(r) and r[k + 4] == "excl0"
        if len(th) < 2:
            continue
        m = sum(th) / len(th)
        sd = math.sqrt(sum((x - m) ** 2 for x in th) / (len(th) - 1))
        q = math.sqrt(sum(x * x for x in se) / len(se))
        rms[(kind, arm)] = q
        big = sum(int(r[r.index(">10%") + 1]) for r in rows if r[0] == kind and ">10%" in r)
        tot = sum(int(r[r.index(">10%") + 3]) for r in rows if r[0] == kind and ">10%" in r)
        print(f"{kind:8s} {arm:11s} {len(th):9d}  {q:6.3f}%  {sd:6.3f}% (mean {m:+.3f}%)  {sd / q:5.2f}  "
              f"{ex:2d}/{len(th):<3d} {big}/{tot}")
for arm in ("naive2", "naive_copy"):
    if ("hosted", arm) in rms and ("inworker", arm) in rms:
        print(f"hosted / in-worker RMS SE, {arm}: {rms[('hosted', arm)] / rms[('inworker', arm)]:.2f} (target <= 1.5)")
PY
echo "campaign lines: $OUT/lines.txt"
