#!/bin/sh
# tools/bench/cuda_build.sh PLAN N LABEL=KGATE ...: the wall time of a cuda campaign's build stage
# (every NVRTC compile of the plan, before the first process), N times per build, the builds
# alternating.  Runs against the stand-in driver (build/tests/libcuda_fake.so: no GPU needed; the
# compiles are real NVRTC ones) with `kgate check`, and reads the build's seconds from the folder's
# watch.csv ("build" row).  Prints one line per run: label, run, build seconds, cubins in build/.
# Example: sh tools/bench/cuda_build.sh examples/screen-64.kg 3 before=/tmp/old/kgate after=build/kgate
set -u
PLAN=${1:?usage: cuda_build.sh PLAN N LABEL=KGATE ...}
N=${2:?N}
shift 2
FAKE=${FAKE:-$(pwd)/build/tests/libcuda_fake.so}
[ -f "$FAKE" ] || { echo "cuda_build: no $FAKE (make test-bin)" >&2; exit 2; }
W=$(mktemp -d)
export KGATE_LOCK_DIR="$W/locks" KGATE_INCLUDE=${KGATE_INCLUDE:-$(pwd)/include}
echo "cpus $(getconf _NPROCESSORS_ONLN), load $(cut -d' ' -f1-3 /proc/loadavg), plan $PLAN"
i=0
while [ $i -lt "$N" ]; do
    for lk in "$@"; do
        label=${lk%%=*}
        k=${lk#*=}
        d="$W/$label.$i"
        s=$(date +%s.%N)
        KGATE_LIBCUDA=$FAKE "$k" check "$PLAN" -o "$d" >/dev/null 2>&1
        e=$(date +%s.%N)
        b=$(awk -F, '$4 == "build" { print $2 " s" }' "$d/watch.csv" 2>/dev/null | head -n 1)
        printf '%s run %d: build %s, check wall %.1f s, %s cubins\n' "$label" "$i" "${b:-?}" \
            "$(echo "$e - $s" | bc)" "$(ls "$d/build/"*.cubin 2>/dev/null | wc -l)"
    done
    i=$((i + 1))
done
rm -rf "$W"
