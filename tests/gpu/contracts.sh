# tests/gpu/contracts.sh: precision contracts and physics limits on the GPU
# (sourced by tests/gpu/run.sh; uses its ok/bad helpers, $KGATE, $T, $ROOT).
# Expected: tf32 and f16acc INCORRECT under f32; tf32_declared admitted with
# its contract printed; f16acc_declared admitted; cached INVALID
# (impossible); naive, tiled, cublas and reduce_sum admitted and not
# INVALID; peaks.json measured (FMA, matrix and bandwidth); verify ok; under
# fresh inputs with pack 8 (pack_cache.kg) the cached gemm never hits.
sed 's#\.\./\.\./kernels/cuda/##' "$ROOT/tests/gpu/contracts.kg" >"$T/kernels/contracts.kg"
"$KGATE" run "$T/kernels/contracts.kg" -o "$T/contracts" --no-progress >"$T/out" 2>&1
csv="$T/contracts/results.csv"
row() { grep -q "^$1,$2,[a-z]*,$3," "$csv"; }
if row f32_1024 tf32 incorrect && row r_f32 f16acc incorrect; then
    ok "contracts: TF32 inputs and f16 accumulation are INCORRECT under the f32 contract"
else bad "contracts: TF32 inputs and f16 accumulation are INCORRECT under the f32 contract"; fi
if grep -q "^f32_1024,tf32_declared,candidate,ok,[A-Z]*,tf32," "$csv" &&
   grep -q "^r_f32,f16acc_declared,candidate,ok,[A-Z]*,tol 0.01," "$csv" &&
   grep -q "| tf32_declared | .*(contract tf32) |" "$T/contracts/report.md"; then
    ok "contracts: the declared contracts admit them, printed next to the verdict"
else bad "contracts: the declared contracts admit them, printed next to the verdict"; fi
if grep -q "^f32_1024,cached,candidate,ok,INVALID,.*,impossible," "$csv"; then
    ok "physics: the cached gemm is INVALID (impossible)"
else bad "physics: the cached gemm is INVALID (impossible)"; fi
honest=1
for a in "f32_1024,naive" "f32_1024,tiled" "f32_1024,cublas" "r_f32,reduce_sum"; do
    grep -q "^$a,[a-z]*,ok,.*,[0-9.e+-]*,ok," "$csv" || honest=0
done
if [ $honest = 1 ]; then ok "physics: kgate's kernels and cuBLAS are admitted and within the limit"
else bad "physics: kgate's kernels and cuBLAS are admitted and within the limit"; fi
if grep -q '"status": "measured"' "$T/contracts/peaks.json" && grep -q '"flops_mma16": [0-9]' "$T/contracts/peaks.json" &&
   "$KGATE" verify "$T/contracts" >"$T/out" 2>&1; then
    ok "physics: peaks.json measured (FMA, matrix, bandwidth) and the folder verifies"
else bad "physics: peaks.json measured (FMA, matrix, bandwidth) and the folder verifies"; fi
# fresh inputs with pack = 8: an input set per operation, so the cached
# gemm never hits while timed; the generator kernel wrote them
sed 's#\.\./\.\./kernels/cuda/##' "$ROOT/tests/gpu/pack_cache.kg" >"$T/kernels/pack_cache.kg"
"$KGATE" run "$T/kernels/pack_cache.kg" -o "$T/pack-cache" --no-progress >"$T/out" 2>&1
pc="$T/pack-cache/results.csv"
if [ -f "$pc" ] && grep -q "^f32_1024,cached,candidate,ok," "$pc" && ! grep -q "^f32_1024,cached,.*,\(FASTER\|INVALID\)," "$pc" &&
   grep -q "generating them in place with the cuda backend's generator" "$T/pack-cache/checks/proc-000.csv"; then
    ok "fresh inputs, pack 8: the cached gemm never hits (an input set per operation, from the generator kernel)"
else bad "fresh inputs, pack 8: the cached gemm never hits (an input set per operation, from the generator kernel)"; fi
