#!/bin/sh
# The cpu backend's request floor (issue 33 item 2) on the device machine's
# host CPU, a quieter machine than the 2-core VM: examples/cpu-floor.kg
# through tools/bench/cpu-floor.sh (8 campaigns), armhost_floor where it
# can be built, and the bare round trip without kgate (tools/bench/ipc_probe.c).
# Usage, from the repository root on the device: sh tools/device/cpu_floor_run.sh OUT
#   KGATE: the kgate to measure (default: bin/kgate-portable from .carry/bins.tgz when
#   there, else bin/kgate); KGATE_BEFORE: a build to compare with, run alternately.
set -u
OUT=${1:?OUT folder}
mkdir -p "$OUT"
if [ -z "${KGATE:-}" ]; then
    if [ -f .carry/bins.tgz ]; then tar xzf .carry/bins.tgz; KGATE=$PWD/bin/kgate-portable; else KGATE=$PWD/bin/kgate; fi
fi
{ uname -a; nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; "$KGATE" --version; } >"$OUT/env.txt" 2>&1
cc -std=c11 -D_GNU_SOURCE -O2 -o "$OUT/ipc_probe" tools/bench/ipc_probe.c >"$OUT/ipc_probe.txt" 2>&1
for m in socket futex futexflag; do taskset -c 2 "$OUT/ipc_probe" $m 20000 >>"$OUT/ipc_probe.txt" 2>&1; done
builds="after=$KGATE"
[ -n "${KGATE_BEFORE:-}" ] && builds="before=$KGATE_BEFORE $builds"
# two CPUs, as on the VM: each process pins its worker and hosts to one of them
timeout 500 taskset -c 2,3 sh tools/bench/cpu-floor.sh "$OUT/floor" 8 $builds >"$OUT/cpu-floor.txt" 2>&1
echo "exit $?" >>"$OUT/cpu-floor.txt"
rm -rf "$OUT"/floor/*-[0-9]*/ 2>/dev/null
tail -n 3 "$OUT/ipc_probe.txt" "$OUT/cpu-floor.txt"
