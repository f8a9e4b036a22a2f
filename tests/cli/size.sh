# kgate size on a fake-backend pilot: the components it reports match the
# fake backend's noise model, and the P it prints is the one a direct
# computation (awk, from the printed components) finds.
#
# The fake model (src/backend/fake.c): log t = log fake_ns + u_p + v_pa + z,
# u_p ~ N(0, 0.02) shared by the arms, v_pa ~ N(0, fake_noise / 4) per arm
# and process, z ~ N(0, fake_noise) per sample; no round effect.  With
# fake_noise = 1% each arm's sample SD is 1%, its process SD
# sqrt(0.02^2 + 0.0025^2) = 2.016% and the contrast's process SD
# sqrt(2) 0.25% = 0.354%; the contrast's round SD net of samples is 0.
# Pilot: 21 processes per direction (the load-order square of 3 arms), 10 rounds, 20 samples (8400 samples
# per arm).  Tolerances, from the estimates' degrees of freedom:
#   sample SD, df ~ 7980: SE 0.008%; accepted 0.95%..1.05% (6 SE)
#   arm process SD, df 40: SE ~ 2.016% / sqrt(80) = 0.23%; accepted 1.2%..2.8% (3.5 SE)
#   contrast process SD, df 40: Var D = 1.25e-5 + 1.45e-5 / 10, its SE
#     sqrt(2/40) 1.4e-5 = 3.1e-6, i.e. +-3.5 SE = +-1.1e-5 on the variance:
#     accepted 0.12%..0.48%
#   contrast round SD net of samples, truth 0: var_delta ~ 1.45e-5 with df 360,
#     SE 1.1e-6; accepted below 0.25% (sqrt of 5.7 SE)
. tests/cli_lib.sh
src=$(pwd)
sed -e 's/^processes = .*/processes = 21/' -e 's/^rounds = .*/rounds = 10/' -e 's/^samples = .*/samples = 20/' \
    -e "s|^source = \.\./\.\./|source = $src/|" -e 's/^name = .*/name = size-pilot/' \
    tests/plans/fake-faster.kg >"$T/pilot.kg"
"$KGATE" run --report "$T/pilot.kg" -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "pilot run"
expect_grep "## Variance components" "$T/ev/report.md"

# between lo and hi (percent values without the sign)
within() { # what value lo hi
    awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v + 0 >= lo + 0 && v + 0 <= hi + 0) }' ||
        die "$1 = $2%, expected within [$3%, $4%]"
}
# the report's table: | small | cand | candidate | P | R | S | sample | round | process | c.process | c.round |
row=$(sed -n '/^## Variance components/,$p' "$T/ev/report.md" | grep '^| small | cand | candidate |') ||
    die "no variance row for cand in report.md"
col() { echo "$row" | awk -F'|' -v i="$1" '{ gsub(/[ %*]/, "", $i); print $i }'; }
within "report: cand sample SD" "$(col 8)" 0.95 1.05
within "report: cand process SD" "$(col 10)" 1.2 2.8
within "report: contrast process SD" "$(col 11)" 0.12 0.48
grep -q '"variance_components"' "$T/ev/results.json" || die "results.json has no variance_components"
expect_report_identical "$T/ev"

# The contrast the components describe is the analysis' own: every
# contrast's sd_D in results.json is the effect's s (JSON keeps 12 digits).
same_contrast() { # results.json
    awk '
    /"variance_components"/ { vc = 1 }
    /"case": "/ { c = $0; sub(/.*"case": "/, "", c); sub(/".*/, "", c) }
    /"arm": "/ { a = $0; sub(/.*"arm": "/, "", a); sub(/".*/, "", a) }
    !vc && /"s": [-0-9]/ { v = $0; sub(/.*"s": /, "", v); sub(/,$/, "", v); s[c "/" a] = v + 0 }
    vc && /"sd_D": [-0-9]/ { v = $0; sub(/.*"sd_D": /, "", v); sub(/,$/, "", v); n++
        k = c "/" a; d = v - s[k]; if (d < 0) d = -d
        if (!(k in s) || d > 1e-9 * s[k]) { printf "%s: sd_D %s, effect s %s\n", k, v, s[k]; bad++ } }
    END { if (n == 0) { print "no contrast in variance_components"; exit 1 } exit bad > 0 }' "$1"
}
same_contrast "$T/ev/results.json" >&2 || die "a contrast's sd_D differs from the analysis' s"
# with two baselines (the reference is then the analysis' choice among them)
{ cat tests/plans/fake-faster.kg; printf '\n[arm base2]\nop = rowsum\nrole = baseline\nsource = ../../kernels/cpu/rowsum_naive.c\nfake_ns = 1005\nfake_noise = 0.01\n'; } |
    sed -e "s|^source = \.\./\.\./|source = $src/|" -e 's/^name = .*/name = size-two/' \
        -e 's/^processes = .*/processes = 4/' >"$T/two.kg"
"$KGATE" run --report "$T/two.kg" -o "$T/ev2" >"$T/out2" 2>"$T/err2"; st=$?
[ $st = 0 ] || [ $st = 1 ] || { cat "$T/err2" >&2; die "two-baseline run: exit status $st"; }
same_contrast "$T/ev2/results.json" >&2 || die "two baselines: a contrast's sd_D differs from the analysis' s"

"$KGATE" size "$T/pilot.kg" "$T/ev" --mde 1.4% >"$T/size" 2>"$T/size.err"; st=$?
expect_status 0 $st "kgate size"
cat "$T/size" >&2
comp=$(grep '^  components (SD of log time):' "$T/size") || die "no components line"
num() { echo "$comp" | sed -n "s/.*$1 \([0-9.]*\)%.*/\1/p"; }
sd_proc=$(num "process")
sd_round=$(num "round")
sd_cand=$(echo "$comp" | sed -n 's/.*sample \([0-9.]*\)% (cand).*/\1/p')
sd_base=$(echo "$comp" | sed -n 's/.* and \([0-9.]*\)% (base).*/\1/p')
within "size: cand sample SD" "$sd_cand" 0.95 1.05
within "size: base sample SD" "$sd_base" 0.95 1.05
within "size: contrast process SD" "$sd_proc" 0.12 0.48
within "size: contrast round SD net of samples" "$sd_round" 0 0.25
sd_delta=$(sed -n 's/^  round SD of delta at 20 samples: \([0-9.]*\)%.*/\1/p' "$T/size")
[ -n "$sd_delta" ] || die "no round SD of delta line"
line=$(grep '^  smallest P per direction at R 10, S 20:' "$T/size") || die "no smallest P line"
P=$(echo "$line" | sed -n 's/.*S 20: \([0-9]*\) (power \([0-9.]*\);.*/\1/p')
pw=$(echo "$line" | sed -n 's/.*S 20: \([0-9]*\) (power \([0-9.]*\);.*/\2/p')
[ -n "$P" ] && [ "$P" -gt 2 ] || die "expected a smallest P above 2, got '$P'"
trow=$(grep '^  | 10 | 20 |' "$T/size") || die "no table row for R 10, S 20"
tP=$(echo "$trow" | awk -F'|' '{ gsub(/ /, "", $4); print $4 }')
tse=$(echo "$trow" | awk -F'|' '{ gsub(/[ %]/, "", $6); print $6 }')
tn=$(echo "$trow" | awk -F'|' '{ gsub(/ /, "", $7); print $7 }')
[ "$tP" = "$P" ] || die "table P $tP differs from the smallest P $P"
[ "$tn" = "$((2 * P * 10 * 20))" ] || die "timed samples per arm $tn, expected 2 P R S = $((2 * P * 10 * 20))"

# The direct computation: Var D = sd_proc^2 + sd_delta^2 / R, SE = sqrt(Var D / (2P)),
# df = 2P - 2, tq the 0.95 quantile of t(df) (by bisection on the closed-form
# CDF for whole df), lambda = (log(1 - margin) - log(1 - mde)) / SE and
# power = E[Phi(lambda - tq W)], W = sqrt(chi2(df) / df) (Simpson's rule).
awk -v sp="$sd_proc" -v sd="$sd_delta" -v P="$P" -v pw="$pw" -v se_print="$tse" '
function tcdf(t, v,   th, s, c, k, term, sum, A) {
    th = atan2(t, sqrt(v)); s = sin(th); c = cos(th)
    if (v % 2 == 1) {
        sum = 0
        if (v > 1) { term = c; sum = c; for (k = 3; k <= v - 2; k += 2) { term *= c * c * (k - 1) / k; sum += term } }
        A = 2 / 3.141592653589793 * (th + s * sum)
    } else {
        term = 1; sum = 1
        for (k = 2; k <= v - 2; k += 2) { term *= c * c * (k - 1) / k; sum += term }
        A = s * sum
    }
    return 0.5 + A / 2
}
function tq(p, v,   lo, hi, mid, i) {
    lo = 0; hi = 1000
    for (i = 0; i < 200; i++) { mid = (lo + hi) / 2; if (tcdf(mid, v) < p) lo = mid; else hi = mid }
    return (lo + hi) / 2
}
function erfcc(x,   z, t, r) {
    z = x < 0 ? -x : x; t = 1 / (1 + 0.5 * z)
    r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + \
        t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
    return x >= 0 ? r : 2 - r
}
function Phi(x) { return 0.5 * erfcc(-x / sqrt(2)) }
function lgam(x,   r, k) {   # x a whole or half-whole number
    r = 0
    if (x == int(x)) { for (k = 1; k < x; k++) r += log(k) }
    else { r = 0.5 * log(3.141592653589793); for (k = 0.5; k < x; k++) r += log(k) }
    return r
}
function power(p,   vD, se, df, q, lam, lc, lo, hi, n, h, i, w, f, sum, wt) {
    vD = (sp / 100) ^ 2 + (sd / 100) ^ 2 / 10
    se = sqrt(vD / (2 * p)); df = 2 * p - 2; q = tq(0.95, df)
    lam = (log(1 - 0.01) - log(1 - 0.014)) / se
    lc = log(2) + df / 2 * log(df / 2) - lgam(df / 2)
    lo = 1 - 12 / sqrt(2 * df); if (lo < 0) lo = 0; hi = 1 + 12 / sqrt(2 * df)
    n = 2000; h = (hi - lo) / n; sum = 0
    for (i = 0; i <= n; i++) {
        w = lo + h * i
        f = w > 0 ? exp(lc + (df - 1) * log(w) - df * w * w / 2) : 0
        wt = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2)
        sum += wt * Phi(lam - q * w) * f
    }
    SE = se
    return sum * h / 3
}
BEGIN {
    a = power(P); se_at_P = SE; b = power(P - 1)
    printf "direct: power(P = %d) = %.5f (printed %.5f), power(P - 1) = %.5f; SE %.5f%% (printed %s%%)\n", P, a, pw, b, 100 * se_at_P, se_print
    if (a < 0.95) { print "direct computation: P does not reach 0.95"; exit 1 }
    if (b >= 0.95) { print "direct computation: P - 1 already reaches 0.95"; exit 1 }
    if (a - pw > 0.002 || pw - a > 0.002) { print "direct computation: power differs from the printed one"; exit 1 }
    if ((100 * se_at_P - se_print) / se_print > 0.002 || (se_print - 100 * se_at_P) / se_print > 0.002) { print "SE differs"; exit 1 }
}' >&2 || die "the printed P is not the direct computation's"

# bad input: exit 2 with the file and the fix
"$KGATE" size "$T/pilot.kg" >"$T/o" 2>"$T/e"; st=$?
expect_status 2 $st "size without EVIDENCE"
expect_grep "EVIDENCE is missing" "$T/e"
"$KGATE" size "$T/pilot.kg" "$T/nowhere" --mde 1.4% >"$T/o" 2>"$T/e"; st=$?
expect_status 2 $st "size with a missing folder"
expect_grep "$T/nowhere" "$T/e"
expect_grep "pilot campaign" "$T/e"
"$KGATE" size "$T/pilot.kg" "$T/ev" --mde 0.5% >"$T/o" 2>"$T/e"; st=$?
expect_status 2 $st "size with mde below the margin"
expect_grep "is not above the margin" "$T/e"
"$KGATE" size "$T/pilot.kg" "$T/ev" --mde lots >"$T/o" 2>"$T/e"; st=$?
expect_status 2 $st "size with a malformed mde"
expect_grep "mde needs a reduction" "$T/e"
"$KGATE" size "$T/nowhere.kg" "$T/ev" >"$T/o" 2>"$T/e"; st=$?
expect_status 2 $st "size with a missing plan"
expect_grep "nowhere.kg" "$T/e"
exit 0
