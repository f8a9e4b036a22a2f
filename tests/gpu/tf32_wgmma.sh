# tests/gpu/tf32_wgmma.sh: f32 inputs on Hopper's tensor cores as TF32 (sourced by
# tests/gpu/run.sh; uses its ok/bad helpers, $KGATE, $T, $ROOT).  Expected
# (tests/gpu/tf32_wgmma.kg): the wgmma .tf32 arms (cp.async with partials, the TMA with the
# cluster reduction) and cuBLAS's TF32 mode pass every check under precision = tf32, whether
# the tensor cores round or truncate the inputs' low bits; the same kernel under the f32
# contract fails its output checks; the f32 FMA kernel and cuBLAS in float32 pass under f32; on
# the f16 and bf16 cases every arm passes (16-bit inputs are exact in TF32).
sed 's#\.\./\.\./kernels/cuda/##' "$ROOT/tests/gpu/tf32_wgmma.kg" >"$T/kernels/tf32_wgmma.kg"
"$KGATE" check "$T/kernels/tf32_wgmma.kg" -o "$T/tf32-wgmma" >"$T/out" 2>&1
st=$?
ck="$T/tf32-wgmma/checks/proc-000.csv"
# fail rows of arm $1 on output checks (poison0/1:C), and its pass rows there
outfail() { grep -cE ",$1,pre,poison[01]:C,fail," "$ck" 2>/dev/null; }
outpass() { grep -cE ",$1,pre,poison[01]:C,pass," "$ck" 2>/dev/null; }
if [ -f "$ck" ] && [ "$(outpass wg_tf32)" -ge 4 ] && [ "$(outpass wg_tf32_tma_clu)" -ge 4 ] &&
   [ "$(outpass cublas_tf32)" -ge 4 ] && [ "$(outpass fma)" -ge 4 ] && [ "$(outpass cublas_f32)" -ge 4 ] &&
   [ "$(grep -h ",fail," "$ck" | grep -vc ",wg_as_f32,")" = 0 ]; then
    ok "tf32 wgmma: the .tf32 arms and cuBLAS's TF32 mode pass every check under precision = tf32 (and f16, bf16)"
else
    bad "tf32 wgmma: the .tf32 arms and cuBLAS's TF32 mode pass every check under precision = tf32 (and f16, bf16) (exit $st)"
    # the rows that failed it (the table above is the first 40 lines of the report, not these)
    grep -h ",fail," "$ck" 2>/dev/null | grep -v ",wg_as_f32," | head -20 | cut -c1-400 | sed 's/^/     fail: /'
    grep -h "error\|trap\|INADMISSIBLE" "$T/out" 2>/dev/null | head -5 | sed 's/^/     log: /'
fi
if [ -f "$ck" ] && [ "$(grep -cE ",f32_[^,]*,wg_as_f32,pre,poison[01]:C,fail," "$ck")" -ge 2 ] &&
   [ "$(grep -cE ",(f16|bf16)_[^,]*,wg_as_f32,pre,poison[01]:C,pass," "$ck")" -ge 4 ]; then
    ok "tf32 wgmma: the same kernel under the f32 contract is INCORRECT on f32 cases, admitted on f16 and bf16"
else bad "tf32 wgmma: the same kernel under the f32 contract is INCORRECT on f32 cases, admitted on f16 and bf16 (exit $st)"; fi
