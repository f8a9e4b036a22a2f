#!/bin/sh
# The cache regime on the cuda backend, against the stand-in driver of
# tests/unit/fake_libcuda.c (no GPU), whose L2 is what one process read
# with kgate's warm kernel (kg_l2_warm) and has not changed since: a timed
# sample's events read 0.01 ms when none of its gemm's inputs missed, 0.05
# ms when one did.  A trusted arm (timed in the worker) and an untrusted
# one (timed in its cuda arm host), pack 2, so each sample reads two input
# sets.
#   l2 = warm, inputs = fresh: the worker's generator writes new inputs
#     before every sample and the warm kernel reads them again in the
#     process that times the arm, so every sample of both arms hits (before
#     the warm-up, a sample read inputs written elsewhere: on the H200 the
#     split-K arms ran 46-56% slower while the report said "l2 warm");
#   l2 = cold, inputs = resident: the worker flushes before every sample
#     and nothing warms, so every sample misses; under resident inputs each
#     operation of a pack reads a copy of its own, as under fresh ones.
# The protocol line and the evidence (a cache:l2 row per arm) say both.
#   l2 = warm, inputs = fresh, and a pack whose sets and outputs exceed a
#     sixth of the L2 (what stays resident when every SM reads it): the
#     campaign stops before any sample, naming the pack that fits.
# Skipped without NVRTC or without the stand-in driver.
. tests/cli_lib.sh
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_cache_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_cache_fake: no NVRTC, skipped" >&2; exit 0; }
# a graph whose operations read one input set faults, in the arm hosts too
# (each operation of a pack reads a set of its own)
fake_cuda_copy FAKE_CUDA_DISTINCT_SETS=1
arm() { # name role trusted
    printf '[arm %s]\nop = gemm_bt\nrole = %s\ntrusted = %s\nsource = %s\nentry = gemm_bt_naive\n' "$1" "$2" "$3" \
        "$(pwd)/kernels/cuda/gemm_bt_naive.cu"
    printf 'grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n'
}
plan() { # l2 inputs [pack [M N K]]
    printf '[campaign]\nname = cache_fake\nbackend = cuda\nquiet = 0\nwarmup = 1\nsamples = 2\nrounds = 2\n'
    printf 'processes = 2\npack = %s\nl2 = %s\ninputs = %s\ntimeout = 120\n' "${3:-2}" "$1" "$2"
    printf '[case c]\nop = gemm_bt\ndtype = f32\nM = %s\nN = %s\nK = %s\n' "${4:-24}" "${5:-24}" "${6:-8}"
    arm base baseline yes
    arm hosted candidate no
}
run() { # name l2 inputs
    plan "$2" "$3" >"$T/$1.kg"
    KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run --report "$T/$1.kg" -o "$T/$1" --no-progress \
        >"$T/$1.log" 2>&1; st=$?
    [ $st -le 3 ] || { cat "$T/$1.log" >&2; die "$1: campaign against the stand-in driver: exit $st"; }
    KGATE_LIBCUDA=$FAKE "$KGATE" verify "$T/$1" >"$T/$1.verify" 2>&1 || { cat "$T/$1.verify" >&2; die "$1: verify"; }
    expect_grep "| protocol | .*pack 2, .*l2 $2, inputs $3," "$T/$1/report.md"
    # the timed samples of both arms: how many, and which event times
    for a in base hosted; do
        gzip -dc "$T/$1"/raw/proc-*.csv.gz | awk -F, -v a=$a '$4 == a { print $7 }' | sort | uniq -c >"$T/$1.$a"
    done
}
one_time() { # file ns: every sample of the arm read ns per operation
    n=$(awk 'END { print NR }' "$1")
    [ "$n" = 1 ] && grep -q " $2\$" "$1" || { cat "$1" >&2; die "$1: not every sample took $2 ns per operation"; }
    c=$(awk '{ print $1 }' "$1")
    [ "$c" = 16 ] || die "$1: $c timed samples, expected 16 (2 processes x 2 directions x 2 rounds x 2 samples)"
}

run warm warm fresh
one_time "$T/warm.base" 5000.000
one_time "$T/warm.hosted" 5000.000
expect_grep "c,base,post,cache:l2,pass,.*l2 warm: before each of its 6 timed samples kgate read the sample's 4 input buffers (3.0 KiB,.* with its kernel, 4 times over.* in the worker, the process that times it" "$T/warm/checks/proc-000.csv"
expect_grep "c,hosted,post,cache:l2,pass,.*l2 warm: before each of its 6 timed samples kgate read the sample's 4 input buffers (3.0 KiB,.* with its kernel, 4 times over.* in its cuda arm host, the process that times it" "$T/warm/checks/proc-000.csv"
expect_grep "c,hosted,post,inputs:fresh,pass,.*generating them in place with the cuda backend's generator" "$T/warm/checks/proc-000.csv"

run cold cold resident
one_time "$T/cold.base" 25000.000
one_time "$T/cold.hosted" 25000.000
expect_grep "c,hosted,post,cache:l2,pass,.*l2 cold: before each of its 6 timed samples the worker wrote 2.00 MiB (twice the device's 1 MiB L2).*each operation of a sample reads an input set of its own" "$T/cold/checks/proc-000.csv"
grep -q "inputs:fresh" "$T"/cold/checks/*.csv && die "cold: inputs = resident regenerated inputs"

# a pack the L2 cannot hold: 64x64x64 f32 is 48 KiB of A, B and C per operation; at pack 8, 384 KiB
# against a sixth of the stand-in's 1 MiB L2 (170.7 KiB): refused before any sample, pack 3 named
plan warm fresh 8 64 64 64 >"$T/big.kg"
KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run --report "$T/big.kg" -o "$T/big" --no-progress \
    >"$T/big.log" 2>&1; st=$?
[ $st = 2 ] || { cat "$T/big.log" >&2; die "big: a warm fresh pack over the L2's budget: exit $st, expected 2"; }
# one process recorded, with the reason, and no other started
[ "$(grep -c '^[0-9]' "$T/big/processes.csv")" = 1 ] || die "big: more than the refused process ran"
expect_grep "pack = 8: a timed sample reads 8 input sets" "$T/big/processes.csv"
expect_grep "case 'c': l2 = warm with inputs = fresh and pack = 8: a timed sample reads 8 input sets and writes 8 outputs, 0.38 MiB, more than the cache keeps resident (0.17 MiB, a sixth of the device's 1 MiB L2" "$T/big.log"
expect_grep "Use pack = 3 or less, or l2 = cold" "$T/big.log"
if [ -d "$T/big/raw" ]; then
    n=$(gzip -dc "$T/big"/raw/proc-*.csv.gz 2>/dev/null | grep -c ',c,' || true)
    [ "${n:-0}" = 0 ] || die "big: $n timed samples before the refusal"
fi
# the same case at pack 3 (144 KiB), or at pack 8 under l2 = cold, runs (the stand-in faults where the
# operations of a pack share a set, so inputs = resident at pack 8 is not run here)
plan warm fresh 3 64 64 64 >"$T/fit.kg"
KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run --report "$T/fit.kg" -o "$T/fit" --no-progress \
    >"$T/fit.log" 2>&1; st=$?
[ $st -le 1 ] || { cat "$T/fit.log" >&2; die "fit: pack 3 within the budget: exit $st"; }
plan cold fresh 8 64 64 64 >"$T/cold8.kg"
KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run --report "$T/cold8.kg" -o "$T/cold8" --no-progress \
    >"$T/cold8.log" 2>&1; st=$?
[ $st -le 1 ] || { cat "$T/cold8.log" >&2; die "cold8: pack 8 under l2 = cold: exit $st"; }
exit 0
