# tests/gpu/smem_rbw.sh (sourced by tests/gpu/run.sh): a kernel that reads
# shared memory it never wrote (tests/gpu/smem_rbw.cu) fails its checked
# executions, in a cuda arm host and trusted in the worker, because kgate
# fills the shared memory of every SM with a NaN pattern, then a finite
# one, before each; the naive kernel beside it passes.
{
    header smem_rbw warm 3 1 1
    naive_arm naive baseline
    for a in rbw:no rbw_trusted:yes; do
        cat <<ARM
[arm ${a%%:*}]
op = gemm_bt
role = candidate
trusted = ${a##*:}
source = kernels/smem_rbw.cu
entry = gemm_bt_smem_rbw
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K

ARM
    done
} >"$T/smem_rbw.kg"
"$KGATE" check "$T/smem_rbw.kg" >"$T/out" 2>&1
st=$?
if [ "$st" -ne 0 ] && grep -q "rbw .*poison0.*FAIL\|rbw .*poison1.*FAIL" "$T/out" &&
   grep -q "rbw_trusted .*poison0.*FAIL\|rbw_trusted .*poison1.*FAIL" "$T/out" &&
   ! grep -q "naive .*FAIL" "$T/out"; then
    ok "shared memory read before written: INCORRECT in a host and in the worker (poisoned SMs)"
else
    bad "shared memory read before written: INCORRECT in a host and in the worker (poisoned SMs) (exit $st)"
fi
