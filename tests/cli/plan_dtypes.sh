# The dtypes and tensor counts of declared ops (docs/ops.md, "Dtypes"):
# examples/quantized.kg (an exact int8 GEMM with an int32 result; an
# FP8 e4m3 GEMM with float32 scales, a bf16 result and float32 row
# maxima) admitted and timed on the cpu backend, and a wrong kernel of
# each rejected; tests/plans/ops/mix.c, six inputs and four outputs of
# every dtype, admitted, and a float32 shortcut for its f64 output and an
# unwritten int32 output rejected; the dtypes refused where they do not
# apply.
. tests/cli_lib.sh
R=$(pwd)
mkdir -p "$T/ops"
cp examples/ops/gemm_i8.c examples/ops/gemm_fp8.c tests/plans/ops/mix.c "$T/ops/"
sed "s#\.\./kernels/#$R/kernels/#" examples/quantized.kg | sed 's/^rounds = 4/rounds = 2/; s/^processes = 2/processes = 1/; s/^quiet = 1$/quiet = 0/' \
    >"$T/q.kg"

# ---- 1. the quantized example: admitted, timed, checked, verified
"$KGATE" run --report "$T/q.kg" -o "$T/q" --no-progress >"$T/q.out" 2>"$T/q.err"; st=$?
[ $st -le 1 ] || { cat "$T/q.err" >&2; die "quantized.kg: exit $st"; }
expect_grep "| q | gemm_i8 | i8 | M = 96, N = 128, K = 512 |" "$T/q.out"
expect_grep "| f8 | gemm_fp8 | e4m3 | M = 64, N = 96, K = 256 |" "$T/q.out"
expect_honest "$T/q" "quantized.kg"
# a timed verdict for the int8 candidate (under the sanitizers it may be INCORRECT for timing:escape alone)
if ! grep "| q | i8_tiled | candidate |" "$T/q.out" | grep -q "INCORRECT"; then
    grep -q "| q | i8_tiled | candidate |.*| \(FASTER\|EQUIVALENT\|SLOWER\|INCONCLUSIVE\) |" "$T/q.out" ||
        { grep "| q |" "$T/q.out" >&2; die "no timed verdict for the int8 candidate"; }
fi
# every output of both ops was checked, the negative of each rejected
for o in C D amax; do
    grep -qh ",pre,poison0:$o,pass," "$T/q"/checks/*.csv || die "output $o has no passing poisoned check"
done
for a in i8_tiled f8_naive; do
    "$KGATE" check "$T/q.kg" -o "$T/neg-$a" --negative $a >"$T/neg.out" 2>&1; st=$?
    expect_status 0 $st "the negative of $a"
    expect_grep "negative $a: .* output checks failed: the checks reject the negative" "$T/neg.out"
done
"$KGATE" verify "$T/q" >"$T/q.verify" 2>&1 || { cat "$T/q.verify" >&2; die "the quantized folder does not verify"; }

# ---- 2. wrong kernels: an int16 accumulator, amax of the rounded values
sed 's/^entry = gemm_i8_tiled$/entry = gemm_i8_short/' "$T/q.kg" | sed "s/^\[gate\]$/[arm f8_late]\nop = gemm_fp8\nrole = candidate\nsource = $(printf '%s' "$R" | sed 's#/#\\/#g')\/kernels\/cpu\/gemm_fp8.c\nentry = gemm_fp8_amax_late\n\n[gate]/" \
    >"$T/qbad.kg"
"$KGATE" run --report "$T/qbad.kg" -o "$T/qbad" --no-progress >"$T/qbad.out" 2>"$T/qbad.err"; st=$?
[ $st = 1 ] || { cat "$T/qbad.err" >&2; die "the wrong kernels' campaign: exit $st (1 expected)"; }
grep "| q | i8_tiled | candidate |" "$T/qbad.out" | grep -q "INCORRECT" || die "the int16 accumulator was not INCORRECT"
grep "| f8 | f8_late | candidate |" "$T/qbad.out" | grep -q "INCORRECT" || die "amax after rounding was not INCORRECT"
grep -q "| q | i8_tiled | pre:poison0:C | FAIL | max err/bound inf; .*want .* ± 0;" "$T/qbad.out" ||
    { grep "FAIL" "$T/qbad.out" >&2; die "the int32 mismatch is not reported against an exact bound"; }
grep -q "| f8 | f8_late | pre:poison0:amax | FAIL |" "$T/qbad.out" || die "the amax failure names another output"
grep "| f8 | f8_late | pre:poison0:D |" "$T/qbad.out" | grep -q FAIL && die "D of amax_late failed: only amax is wrong"

# ---- 3. six inputs, four outputs, every dtype
mix_plan() { # $1 file, $2 candidate entry
    cat >"$1" <<PLAN
[campaign]
name = mix
backend = cpu
quiet = 0
warmup = 1
samples = 5
rounds = 2
processes = 1
seed = 5
margin = 1%
timeout = 60

[op mix]
source = ops/mix.c

[case m]
op = mix
dtype = f32
N = 4096

[arm ok]
op = mix
role = baseline
source = $R/tests/plans/kernels/mix.c
entry = mix_ok

[arm cand]
op = mix
role = candidate
source = $R/tests/plans/kernels/mix.c
entry = $2

[gate]
PLAN
}
mix_plan "$T/mix.kg" mix_ok
"$KGATE" run --report "$T/mix.kg" -o "$T/mix" --no-progress >"$T/mix.out" 2>"$T/mix.err"; st=$?
[ $st -le 1 ] || { cat "$T/mix.err" >&2; die "mix: exit $st"; }
expect_honest "$T/mix" "the mix op"
for o in y0 y1 y2 y3; do
    grep -qh ",pre,poison1:$o,pass," "$T/mix"/checks/*.csv || die "mix output $o has no passing check"
done
"$KGATE" verify "$T/mix" >"$T/mix.verify" 2>&1 || { cat "$T/mix.verify" >&2; die "the mix folder does not verify"; }
mix_plan "$T/mixf.kg" mix_f32
"$KGATE" run --report "$T/mixf.kg" -o "$T/mixf" --no-progress >"$T/mixf.out" 2>&1
grep "| m | cand | candidate |" "$T/mixf.out" | grep -q "INCORRECT" || die "float32 arithmetic for an f64 output was admitted"
grep -q "| m | cand | pre:poison0:y0 | FAIL |" "$T/mixf.out" || die "the float32 shortcut did not fail on y0"
mix_plan "$T/mixs.kg" mix_skip
"$KGATE" run --report "$T/mixs.kg" -o "$T/mixs" --no-progress >"$T/mixs.out" 2>&1
grep -q "| m | cand | pre:poison0:y1 | FAIL | .*(poison: never written)" "$T/mixs.out" ||
    { grep FAIL "$T/mixs.out" >&2; die "an unwritten int32 output was not reported as the poison"; }

# ---- 4. refused where they do not apply
cat >"$T/builtin.kg" <<'PLAN'
[campaign]
backend = cpu
[case r]
op = rowsum
dtype = e4m3
M = 4
N = 64
[arm a]
op = rowsum
role = baseline
builtin = ref
[gate]
PLAN
"$KGATE" check "$T/builtin.kg" -o "$T/builtin" >"$T/builtin.out" 2>&1 && die "a built-in op took an e4m3 case"
expect_grep "dtype e4m3 is not supported by the built-in op rowsum" "$T/builtin.out"
sed 's/KG_DT_F64, KG_DT_I32, KG_DT_F32, KG_DT_F16 }/KG_DT_F64, KG_DT_I8, KG_DT_F32, KG_DT_F16 }/' "$T/ops/mix.c" >"$T/ops/mix2.c"
mv "$T/ops/mix2.c" "$T/ops/mix.c"
"$KGATE" check "$T/mix.kg" -o "$T/mixo" >"$T/mixo.out" 2>&1 && die "an i8 output was accepted"
expect_grep "outputs are f32, f16, bf16, f64 or i32" "$T/mixo.out"

# ---- 5. specialize = yes: canonical, a CUDA arm's; refused on the cpu backend
mkdir -p "$T/ex"
cp -r examples/ops "$T/ex/ops"
# (its cases at 128 x 128 x 128: the fake backend computes each output as
# the float64 reference, and 1024^3 takes half a minute)
sed "s#\.\./kernels/#$R/kernels/#" examples/cuda-quantized.kg |
    sed 's/^M = [0-9]*$/M = 128/; s/^N = [0-9]*$/N = 128/; s/^K = [0-9]*$/K = 128/' >"$T/ex/cq.kg"
"$KGATE" check "$T/ex/cq.kg" -o "$T/cq" --backend fake >"$T/cq.out" 2>&1 || { cat "$T/cq.out" >&2; die "cuda-quantized.kg on the fake backend"; }
expect_grep " 0 failed (0 inadmissible, 0 weak)" "$T/cq.out"
sed -n '/^\[arm f8_smem\]/,/^$/p' "$T/cq/plan.kg" | grep -q "^specialize = yes$" || die "specialize = yes is not in the canonical plan"
sed -n '/^\[arm f8_row\]/,/^$/p' "$T/cq/plan.kg" | grep -q "^specialize" && die "specialize = no is written out (it is the default)"
sed 's/^entry = gemm_i8_tiled$/entry = gemm_i8_tiled\nspecialize = yes/' "$T/q.kg" >"$T/qs.kg"
"$KGATE" check "$T/qs.kg" -o "$T/qs" >"$T/qs.out" 2>&1 && die "specialize = yes was accepted on the cpu backend"
expect_grep "specialize = yes is for CUDA arms" "$T/qs.out"

# ---- 6. a plan with declared ops sharded by case and merged: the merged
# folder keeps the op sources its reports compile, and verifies
"$KGATE" run "$T/q.kg" --shard 0/2 --campaign q1 -o "$T/sh0" -q >/dev/null 2>&1
"$KGATE" run "$T/q.kg" --shard 1/2 --campaign q1 -o "$T/sh1" -q >/dev/null 2>&1
"$KGATE" merge "$T/shm" "$T/sh0" "$T/sh1" >"$T/shm.out" 2>&1 || true
[ -f "$T/shm/sources/op-gemm_i8.c" ] && [ -f "$T/shm/sources/op-gemm_fp8.c" ] || { cat "$T/shm.out" >&2; die "the merged folder lacks the op sources"; }
"$KGATE" verify "$T/shm" >"$T/shm.verify" 2>&1 || { cat "$T/shm.verify" >&2; die "the merged folder of declared ops does not verify"; }
exit 0
