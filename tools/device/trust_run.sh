#!/bin/sh
# The GPU checks of issue 30's items 1 and 3 (the shared memory's poison,
# the cuda arm host's confinement), in one device call, on the carried
# binaries (make portable portable-tests, stripped, in .carry/bins.tgz,
# with strace and its libraries under .carry/strace/):
#   1. test_cuda_confine with the real driver: an honest arm under the
#      confinement, and a host forced to make each denied call (the test
#      build's cuda_host_attack, kgate's host with a load hook) stopped and
#      named; the key's folder and the environment;
#   2. strace of a kgate check whose arms run in cuda arm hosts and in the
#      worker: every system call each process made (the driver's needs);
#   3. make test-gpu's script (examples/cuda-gemm.kg and the shared-memory
#      read-before-write kernel among its tests);
#   4. two replication plans (a workspace: split-K; a row reduction).
# Usage, from the repository root on the device: sh tools/device/trust_run.sh OUT
set -u
OUT=${1:?OUT folder}
mkdir -p "$OUT"
tar xzf .carry/bins.tgz
export KGATE="$PWD/bin/kgate-portable"
export KGATE_LOCK_DIR=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uname -a; id
  "$KGATE" --version; ls -la /dev/nvidia* 2>&1; } >"$OUT/env.txt" 2>&1

# 1. the confinement against the real driver
K=/tmp/kgate-trust
mkdir -p $K/tests
cp bin/kgate-portable $K/kgate
cp bin/tests/test_cuda_confine bin/tests/cuda_host_attack $K/tests/
t0=$(date +%s)
KGATE_TEST_CUDA_REAL=1 timeout 100 $K/tests/test_cuda_confine >"$OUT/confine.txt" 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$OUT/confine.txt"

# 2. every system call of the worker and its cuda arm hosts
S=/tmp/kgate-strace
mkdir -p $S
cat >$S/p.kg <<PLAN
[campaign]
name = strace
backend = cuda
quiet = 0
timeout = 120
[case c]
op = gemm_bt
dtype = f32
M = 96
N = 128
K = 64
[arm naive]
op = gemm_bt
role = baseline
trusted = yes
source = $PWD/kernels/cuda/gemm_bt_naive.cu
entry = gemm_bt_naive
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K
[arm hosted]
op = gemm_bt
role = candidate
source = $PWD/kernels/cuda/gemm_bt_naive.cu
entry = gemm_bt_naive
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K
[arm rbw]
op = gemm_bt
role = candidate
source = $PWD/tests/gpu/smem_rbw.cu
entry = gemm_bt_smem_rbw
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K
PLAN
LD_LIBRARY_PATH=$PWD/.carry/strace timeout 100 .carry/strace/strace -f -ff -o $S/t \
    "$KGATE" check $S/p.kg -o $S/ev >$S/check.txt 2>&1
{ echo "== kgate check (exit $?) under strace -f"; cat $S/check.txt
  for f in $S/t.*; do
      head -c 4000 "$f" | grep -q 'armhost\|"worker"' || continue
      echo "== $(grep -m1 '^execve' "$f" | cut -c1-300)"
      awk -F'(' '/^[a-z_0-9]+\(/ { n[$1]++ } END { for (k in n) printf "%s %d\n", k, n[k] }' "$f" | sort | tr '\n' ' '
      echo
      echo "-- after the filter (seccomp onwards): calls, opens, kills"
      awk '/seccomp\(SECCOMP_SET_MODE_FILTER/ { on = 1 } on' "$f" |
          awk -F'(' '/^[a-z_0-9]+\(/ { n[$1]++ } END { for (k in n) printf "%s %d\n", k, n[k] }' | sort | tr '\n' ' '
      echo
      awk '/seccomp\(SECCOMP_SET_MODE_FILTER/ { on = 1 } on && /^(openat|open|socket|connect|unlink|mkdir|clone3?|execve)\(|SIGSYS|killed/' "$f" |
          cut -c1-200 | sort | uniq -c | sort -rn | head -n 60
      # the driver's threads (started before the filter): every call of their lives
      for tid in $(sed -n 's/^clone3\?(.*= \([0-9][0-9]*\)$/\1/p' "$f"); do
          [ -f $S/t.$tid ] || continue
          printf -- "-- thread %s: " "$tid"
          awk -F'(' '/^[a-z_0-9]+\(/ { n[$1]++ } END { for (k in n) printf "%s %d ", k, n[k] }' $S/t.$tid
          grep -c 'SIGSYS' $S/t.$tid | sed 's/^/SIGSYS lines: /'
      done
  done; } >"$OUT/strace.txt" 2>&1

# 3. make test-gpu's script
t0=$(date +%s)
KGATE_GPU_KEEP="$OUT" timeout 300 sh tests/gpu/run.sh >"$OUT/test-gpu.txt" 2>&1
echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$OUT/test-gpu.txt"

# 4. replication plans: split-K (its workspace is poisoned before checked runs) and rowsum
for p in splitk_f32 rowsum; do
    t0=$(date +%s)
    echo "== examples/replication/$p.kg"
    timeout 80 "$KGATE" run examples/replication/$p.kg -o /tmp/ev-$p --no-progress 2>&1 | tail -n 25
    echo "exit $? after $(( $(date +%s) - t0 )) s"
    grep -h "smem poisoned" /tmp/ev-$p/telemetry/resources-000.csv 2>/dev/null | head -n 3
    awk -F, 'FNR > 1 && $7 == "fail"' /tmp/ev-$p/checks/*.csv 2>/dev/null | head -n 5
done >"$OUT/replication.txt" 2>&1
tail -n 3 "$OUT/confine.txt" "$OUT/test-gpu.txt"; grep "^exit" "$OUT/replication.txt"
