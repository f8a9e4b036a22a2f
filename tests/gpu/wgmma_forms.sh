# tests/gpu/wgmma_forms.sh: the producer-warp, multicast and two-warpgroup forms of
# kernels/cuda/splitk_wgmma.cu (sourced by tests/gpu/run.sh; uses its ok/bad helpers, $KGATE,
# $T, $ROOT).  Expected (tests/gpu/wgmma_forms.kg): every arm passes every check on both cases,
# except wg_mc4_atom_n32 at 96 rows, whose 16-block cluster the device refuses: no output check
# of it passes there, and it passes at 256 rows.
sed 's#\.\./\.\./kernels/cuda/##' "$ROOT/tests/gpu/wgmma_forms.kg" >"$T/kernels/wgmma_forms.kg"
"$KGATE" check "$T/kernels/wgmma_forms.kg" -o "$T/wgmma-forms" >"$T/out" 2>&1
st=$?
ck="$T/wgmma-forms/checks/proc-000.csv"
# output-check rows (poison0/1:C) of arm $2 on case $1 that $3 (pass or fail)
rows() { grep -cE "^[^,]*,[^,]*,$1,$2,pre,poison[01]:C,$3," "$ck" 2>/dev/null; }
good=1
for a in wg_pw_atom_n32 wg_mc2_part_n64 wg_k2_mc4_atom_m128_n32 wg_pw_atom_w2_n32 wg_mc2_atom_w2_n32 wg_clu_w2_n32; do
    for c in bf16_96x512x2048_s4 bf16_256x512x2048_s2; do
        [ "$(rows "$c" "$a" pass)" -ge 2 ] || { good=0; echo "     $a on $c: $(rows "$c" "$a" pass) output checks passed"; }
    done
done
if [ -f "$ck" ] && [ $good = 1 ] && [ "$(grep -h ",fail," "$ck" | grep -vc ",wg_mc4_atom_n32,")" = 0 ]; then
    ok "wgmma forms: the producer warp, TMA multicast and two-warpgroup forms pass every check"
else
    bad "wgmma forms: the producer warp, TMA multicast and two-warpgroup forms pass every check (exit $st)"
    grep -h ",fail," "$ck" 2>/dev/null | head -20 | cut -c1-400 | sed 's/^/     fail: /'
fi
if [ -f "$ck" ] && [ "$(rows bf16_96x512x2048_s4 wg_mc4_atom_n32 pass)" = 0 ] &&
   [ "$(rows bf16_256x512x2048_s2 wg_mc4_atom_n32 pass)" -ge 2 ]; then
    ok "wgmma forms: a cluster past 8 blocks is not admitted, the same arm passes where its cluster fits"
else
    bad "wgmma forms: a cluster past 8 blocks is not admitted, the same arm passes where its cluster fits (exit $st)"
    grep -h "wg_mc4_atom_n32" "$T/out" 2>/dev/null | head -5 | sed 's/^/     log: /'
fi
