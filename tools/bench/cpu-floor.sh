#!/bin/sh
# tools/bench/cpu-floor.sh: the cpu backend's request floor, what an
# untrusted (arm-host) arm pays per sample over the same empty kernel run
# in the worker, measured with examples/cpu-floor.kg (docs/cpu-backend.md,
# "The request floor").
#   sh tools/bench/cpu-floor.sh OUT N LABEL=KGATE [LABEL=KGATE ...]   (from the repository root)
# Runs `KGATE run examples/cpu-floor.kg --quiet-window 0` N times for each
# build, the builds alternating (a, b, a, b, ...), each in a private lock
# folder, the evidence under OUT/LABEL-I.  Where the build's folder holds
# armhost_floor (tools/bench/armhost_floor.c built against that build's
# libkgate.a), it also runs that, 20000 samples, pinned to one CPU
# (taskset -c, the first CPU this script may use), after each campaign.
#
# Prints one line per campaign: the build, the 1-minute load average when
# it started, the wall seconds, per process (from raw/proc-*.csv.gz) the
# median of arm_host's and of in_worker's samples in us, and the floor of
# the campaign: the median over its processes of arm_host's process
# medians minus in_worker's.  Then, per build, the median of the floors
# and the median, min and max over every process of arm_host's process
# median.  Writes the same lines to OUT/summary.txt.
set -u
[ $# -ge 3 ] || { echo "usage: sh tools/bench/cpu-floor.sh OUT N LABEL=KGATE [LABEL=KGATE ...]" >&2; exit 2; }
OUT=$1
N=$2
shift 2
[ -f examples/cpu-floor.kg ] || { echo "run from kgate's repository root" >&2; exit 2; }
mkdir -p "$OUT"
: > "$OUT/summary.txt"
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
cpu=$(taskset -cp $$ 2>/dev/null | sed 's/.*: *//; s/[,-].*//')
say "# cpu-floor.sh: $N campaigns of examples/cpu-floor.kg per build, $(nproc) CPUs, $(uname -r), $(date -u +%FT%TZ)"

# proc_medians DIR ARM: the median of ARM's samples in each raw/proc-*.csv.gz, one a line
proc_medians() {
    for f in "$1"/raw/proc-*.csv.gz; do
        zcat "$f" | awk -F, -v arm="$2" 'NR > 1 && $4 == arm { print $7 }' | sort -g |
            awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000 }'
    done
}
# median: of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

i=1
while [ "$i" -le "$N" ]; do
    for spec in "$@"; do
        label=${spec%%=*}
        kgate=${spec#*=}
        d=$OUT/$label-$i
        load=$(cut -d' ' -f1 /proc/loadavg)
        t0=$(date +%s.%N)
        KGATE_LOCK_DIR=$(mktemp -d) "$kgate" run examples/cpu-floor.kg --quiet-window 0 -o "$d" > "$d.log" 2>&1
        t1=$(date +%s.%N)
        host=$(proc_medians "$d" arm_host | tr '\n' ' ')
        work=$(proc_medians "$d" in_worker | tr '\n' ' ')
        hm=$(echo "$host" | tr ' ' '\n' | grep . | median)
        wm=$(echo "$work" | tr ' ' '\n' | grep . | median)
        floor=$(awk -v h="$hm" -v w="$wm" 'BEGIN { printf "%.3f", h - w }')
        say "$label run $i load $load wall_s $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') arm_host_us [ $host] in_worker_us [ $work] floor_us $floor"
        echo "$host" | tr ' ' '\n' | grep . >> "$OUT/$label.procs"
        echo "$floor" >> "$OUT/$label.floors"
        af=$(dirname "$kgate")/armhost_floor
        if [ -x "$af" ]; then
            KGATE_LOCK_DIR=$(mktemp -d) taskset -c "$cpu" "$af" "$kgate" 20000 > "$d.armhost_floor" 2>&1
            say "$label run $i armhost_floor (taskset -c $cpu): $(tr '\n' ' ' < "$d.armhost_floor")"
        fi
    done
    i=$((i + 1))
done
for spec in "$@"; do
    label=${spec%%=*}
    say "$label: floor median_us $(median < "$OUT/$label.floors") over $N campaigns; arm_host process medians:" \
        "median_us $(median < "$OUT/$label.procs") min_us $(sort -g "$OUT/$label.procs" | head -1)" \
        "max_us $(sort -g "$OUT/$label.procs" | tail -1) ($(wc -l < "$OUT/$label.procs") processes)"
done
