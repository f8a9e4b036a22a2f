# The fake backend's noise-model keys (src/backend/fake.c), each shown in
# the raw samples of a small campaign.  With fake_noise = 0 and
# fake_proc_sd = 0 every sample of an arm in a process is the same number,
# so each key's effect is exact; the checks are deterministic.
. tests/cli_lib.sh
src=$(pwd)/kernels/cpu/rowsum_naive.c

# plan FILE PROCESSES SAMPLES BASE_KEYS CAND_KEYS [CTRL_KEYS]: a plan with
# a baseline, a candidate and (when CTRL_KEYS is given) a control; keys are
# ';'-separated "key = value" lines
plan() {
    {
        printf '[campaign]\nquiet = 0\nbackend = fake\nwarmup = 1\nsamples = %s\nrounds = 4\n' "$3"
        printf 'processes = %s\nseed = 11\ntimeout = 30\n' "$2"
        printf '[case small]\nop = rowsum\ndtype = f32\nM = 4\nN = 16\n'
        printf '[case wide]\nop = rowsum\ndtype = f32\nM = 4\nN = 32\n'
        printf '[arm base]\nop = rowsum\nrole = baseline\nsource = %s\n' "$src"
        printf '%s\n' "$4" | tr ';' '\n'
        printf '[arm cand]\nop = rowsum\nrole = candidate\nsource = %s\n' "$src"
        printf '%s\n' "$5" | tr ';' '\n'
        if [ $# -ge 6 ]; then
            printf '[arm ctrl]\nop = rowsum\nrole = control\nof = base\n'
            printf '%s\n' "$6" | tr ';' '\n'
        fi
    } >"$1"
}
run() { # plan folder: the campaign, and its raw rows as text in folder.raw/ (proc-NNN.csv)
    "$KGATE" run --report "$1" -o "$2" >"$T/out" 2>"$T/err"
    [ -f "$2/raw/proc-000.csv.gz" ] || { cat "$T/err" >&2; die "$1: no raw samples"; }
    mkdir -p "$2.raw"
    for f in "$2"/raw/proc-*.csv.gz; do raw_text "$f" >"$2.raw/$(basename "$f" .gz)"; done
}
# ns values of (process, arm, case) in folder, one a line
values() { # folder process arm case
    awk -F, -v p="$2" -v a="$3" -v c="$4" '$1 == p && $4 == a && $5 == c { print $7 }' "$1".raw/proc-*.csv
}
median() { # folder process arm case
    values "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# expect_near WHAT GOT WANT TOL: |GOT - WANT| <= TOL
expect_near() {
    awk -v g="$2" -v w="$3" -v t="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }' ||
        die "$1: $2, expected $3 +- $4"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.9f\n", a / b }'; }
direction() { # folder process
    awk -F, -v p="$2" '$1 == p { print $2 }' "$1/processes.csv"
}
quiet_keys='fake_noise = 0;fake_proc_sd = 0'

# 1. Defaults: tests/plans/fake-aa.kg times exactly as before the new keys
# existed (the sorted raw rows without the plan hash column hash to the
# value the binary without them wrote: 3af04d7), and so does the same
# plan with every new key written out at its default value.
run tests/plans/fake-aa.kg "$T/aa"
got=$(cat "$T"/aa.raw/proc-*.csv | grep -v '^process,' | cut -d, -f1-7 | LC_ALL=C sort | sha256sum | cut -d' ' -f1)
[ "$got" = 44143d47f04c353e0e55536bb2fd894e3103e047f9d93015e0174fc40b7f0535 ] ||
    die "fake-aa.kg's raw samples changed (sorted rows hash to $got)"
cmp -s "$T/aa/results.csv" tests/golden/fake-aa.results.csv || die "fake-aa results.csv differs from the golden file"
defaults='fake_proc_sd = 0.0025;fake_round_sd = 0;fake_outliers = 0;fake_outlier_scale = 0;fake_tails = normal'
defaults="$defaults;fake_slot = 0;fake_slot_linear = 0;fake_place = 0;fake_offset = 0"
awk -v d="$defaults" -v k="$(pwd)/kernels" '{ sub(/\.\.\/\.\.\/kernels/, k); print }
    /^fake_noise = 0\.01$|^of = base$/ { n = split(d, l, ";"); for (i = 1; i <= n; i++) print l[i] }' \
    tests/plans/fake-aa.kg >"$T/aa-explicit.kg"
grep -q '^fake_place = 0$' "$T/aa-explicit.kg" || die "the explicit-defaults plan lacks the keys"
run "$T/aa-explicit.kg" "$T/aa2"
cut -d, -f1-7 "$T"/aa.raw/proc-*.csv >"$T/aa.cut"
cut -d, -f1-7 "$T"/aa2.raw/proc-*.csv >"$T/aa2.cut"
cmp -s "$T/aa.cut" "$T/aa2.cut" || die "explicit default keys changed the raw samples"

# 2. fake_offset: a fixed log-time offset, the median ratio e^offset in
# every process and case.
plan "$T/off.kg" 1 5 "$quiet_keys" "$quiet_keys;fake_offset = 0.01"
run "$T/off.kg" "$T/off"
for p in 0 1; do
    for c in small wide; do
        r=$(ratio "$(median "$T/off" $p cand $c)" "$(median "$T/off" $p base $c)")
        expect_near "fake_offset 0.01: cand/base, process $p case $c" "$r" 1.010050167 0.00001
    done
done

# 3. fake_slot: +5% for the arm loaded first in its process.  The forward
# process loads the arms in plan order, the reverse one in reverse order
# (processes.csv says which process is which).
plan "$T/slot.kg" 1 5 "$quiet_keys;fake_slot = 0.05" "$quiet_keys;fake_slot = 0.05"
run "$T/slot.kg" "$T/slot"
for p in 0 1; do
    r=$(ratio "$(median "$T/slot" $p base small)" "$(median "$T/slot" $p cand small)")
    case $(direction "$T/slot" $p) in
        fwd) expect_near "fake_slot 0.05, forward process $p: base (loaded first) / cand" "$r" 1.051271096 0.00001 ;;
        rev) expect_near "fake_slot 0.05, reverse process $p: base (loaded last) / cand" "$r" 0.951229425 0.00001 ;;
        *) die "process $p has no direction in processes.csv" ;;
    esac
done
# the same with the default sample noise and process effects: the arm
# loaded first is still measurably slower in each process
plan "$T/slotn.kg" 1 10 "fake_slot = 0.05" "fake_slot = 0.05"
run "$T/slotn.kg" "$T/slotn"
for p in 0 1; do
    r=$(ratio "$(median "$T/slotn" $p base small)" "$(median "$T/slotn" $p cand small)")
    case $(direction "$T/slotn" $p) in
        fwd) awk -v r="$r" 'BEGIN { exit !(r > 1.03) }' || die "fake_slot 0.05 with noise, process $p: base/cand $r, not > 1.03" ;;
        rev) awk -v r="$r" 'BEGIN { exit !(r < 0.97) }' || die "fake_slot 0.05 with noise, process $p: base/cand $r, not < 0.97" ;;
    esac
done
# fake_slot_linear: +2% per load slot, 3 arms (slots 0, 1, 2 in the
# forward process, 2, 1, 0 in the reverse one)
lin="$quiet_keys;fake_slot_linear = 0.02"
plan "$T/lin.kg" 1 5 "$lin" "$lin" "$lin"
run "$T/lin.kg" "$T/lin"
for p in 0 1; do
    rc=$(ratio "$(median "$T/lin" $p cand small)" "$(median "$T/lin" $p base small)")
    rt=$(ratio "$(median "$T/lin" $p ctrl small)" "$(median "$T/lin" $p base small)")
    case $(direction "$T/lin" $p) in
        fwd) expect_near "fake_slot_linear 0.02, forward process $p: cand/base" "$rc" 1.020201340 0.00001
             expect_near "fake_slot_linear 0.02, forward process $p: ctrl/base" "$rt" 1.040810774 0.00001 ;;
        rev) expect_near "fake_slot_linear 0.02, reverse process $p: cand/base" "$rc" 0.980198673 0.00001
             expect_near "fake_slot_linear 0.02, reverse process $p: ctrl/base" "$rt" 0.960789439 0.00001 ;;
    esac
done

# 4. fake_outliers: with no other noise every sample is the arm's level
# or above it; a fraction near fake_outliers of the candidate's samples is
# more than 5% above its process minimum, none of the baseline's.
plan "$T/out.kg" 2 25 "$quiet_keys" "$quiet_keys;fake_outliers = 20%;fake_outlier_scale = 1"
run "$T/out.kg" "$T/outl"
count_above() { # folder arm: samples above 1.05 x their process's minimum, of how many
    awk -F, -v a="$2" 'FNR > 1 && $4 == a { n++; v[n] = $7; p[n] = $1; if (!(($1) in m) || $7 < m[$1]) m[$1] = $7 }
        END { k = 0; for (i = 1; i <= n; i++) if (v[i] > 1.05 * m[p[i]]) k++; print k, n }' "$1".raw/proc-*.csv
}
set -- $(count_above "$T/outl" cand)
awk -v k="$1" -v n="$2" 'BEGIN { exit !(n == 800 && k >= 0.10 * n && k <= 0.30 * n) }' ||
    die "fake_outliers 20%: $1 of $2 candidate samples above the threshold, expected 10-30% of 800"
set -- $(count_above "$T/outl" base)
[ "$1" = 0 ] || die "fake_outliers on the candidate only: $1 baseline samples above the threshold"

# 5. fake_tails = t3: the same campaign with normal and with t3 sample
# noise; t3 is scaled to unit variance, so the SD of log time stays near
# fake_noise, while its kurtosis is well above the normal's 3.
moments() { # folder arm: SD and kurtosis of log time about each process's mean
    awk -F, -v a="$2" 'FNR > 1 && $4 == a { n++; x[n] = log($7); p[n] = $1; s[$1] += log($7); c[$1]++ }
        END { for (i = 1; i <= n; i++) { d = x[i] - s[p[i]] / c[p[i]]; m2 += d * d; m4 += d * d * d * d }
              m2 /= n; m4 /= n; printf "%.6f %.3f\n", sqrt(m2), m4 / (m2 * m2) }' "$1".raw/proc-*.csv
}
plan "$T/norm.kg" 2 50 "fake_proc_sd = 0" "fake_proc_sd = 0"
plan "$T/t3.kg" 2 50 "fake_proc_sd = 0" "fake_proc_sd = 0;fake_tails = t3"
run "$T/norm.kg" "$T/norm"
run "$T/t3.kg" "$T/t3"
set -- $(moments "$T/norm" cand) $(moments "$T/t3" cand)
awk -v sn="$1" -v kn="$2" -v st="$3" -v kt="$4" 'BEGIN { exit !(sn > 0.009 && sn < 0.011 && kn < 3.5 &&
    st > 0.006 && st < 0.02 && kt > 5) }' ||
    die "fake_tails: normal SD $1 kurtosis $2, t3 SD $3 kurtosis $4 (expected SD near 0.01, kurtosis < 3.5 and > 5)"
cmp -s "$T/norm.raw/proc-000.csv" "$T/t3.raw/proc-000.csv" && die "fake_tails = t3 changed no sample"
cut -d, -f1-7 "$T"/norm.raw/proc-*.csv | awk -F, '$4 == "base"' >"$T/nb"
cut -d, -f1-7 "$T"/t3.raw/proc-*.csv | awk -F, '$4 == "base"' >"$T/tb"
cmp -s "$T/nb" "$T/tb" || die "fake_tails on the candidate changed the baseline's samples"

# 6. fake_round_sd: an arm x round effect, so with no other noise the
# candidate has one level per round (4 per process), the baseline one.
plan "$T/round.kg" 1 5 "$quiet_keys" "$quiet_keys;fake_round_sd = 0.05"
run "$T/round.kg" "$T/round"
nc=$(values "$T/round" 0 cand small | sort -u | wc -l)
nb=$(values "$T/round" 0 base small | sort -u | wc -l)
[ "$nc" -eq 4 ] && [ "$nb" -eq 1 ] || die "fake_round_sd: $nc distinct candidate values, $nb baseline (expected 4 and 1)"

# 7. fake_proc_sd: independent of fake_noise; with fake_noise = 0 and
# fake_proc_sd = 0.05 the candidate/baseline ratio moves between processes
# and cases, with fake_proc_sd = 0 it is exactly 1 (test 2's baseline).
plan "$T/proc.kg" 1 5 "$quiet_keys" "fake_noise = 0;fake_proc_sd = 0.05"
run "$T/proc.kg" "$T/proc"
r0=$(ratio "$(median "$T/proc" 0 cand small)" "$(median "$T/proc" 0 base small)")
r1=$(ratio "$(median "$T/proc" 1 cand small)" "$(median "$T/proc" 1 base small)")
r2=$(ratio "$(median "$T/proc" 0 cand wide)" "$(median "$T/proc" 0 base wide)")
[ "$r0" != "$r1" ] && [ "$r0" != "$r2" ] && [ "$r0" != 1.000000000 ] ||
    die "fake_proc_sd 0.05: ratios $r0 $r1 $r2 (expected three different values)"
nv=$(values "$T/proc" 0 cand small | sort -u | wc -l)
[ "$nv" -eq 1 ] || die "fake_proc_sd: $nv distinct values within a process and case (expected 1)"

# 8. fake_place: a placement offset drawn from the worker's placement pad
# seed (kg_sample_ctx.place_seed: one per arm, case and process, as the
# buffers are placed anew for every case), so it differs between the
# cases of a process and between processes.
plan "$T/place.kg" 1 5 "$quiet_keys" "$quiet_keys;fake_place = 0.05"
run "$T/place.kg" "$T/place"
a0=$(ratio "$(median "$T/place" 0 cand small)" "$(median "$T/place" 0 base small)")
b0=$(ratio "$(median "$T/place" 0 cand wide)" "$(median "$T/place" 0 base wide)")
a1=$(ratio "$(median "$T/place" 1 cand small)" "$(median "$T/place" 1 base small)")
[ "$a0" != "$b0" ] && [ "$a0" != "$a1" ] && [ "$a0" != 1.000000000 ] ||
    die "fake_place 0.05: ratios $a0 (process 0, small), $b0 (process 0, wide), $a1 (process 1, small)"

# 9. Reproducible: the same plan twice, the same samples.
plan "$T/all.kg" 1 5 "fake_outliers = 0.1;fake_outlier_scale = 0.2;fake_round_sd = 0.01" \
    "fake_tails = t3;fake_place = 0.01;fake_slot = 0.01;fake_offset = -0.001"
run "$T/all.kg" "$T/all1"
run "$T/all.kg" "$T/all2"
cat "$T"/all1.raw/proc-*.csv >"$T/all1.csv"
cat "$T"/all2.raw/proc-*.csv >"$T/all2.csv"
cmp -s "$T/all1.csv" "$T/all2.csv" || die "the same plan and seed gave different samples"

# 10. fake_proc_sd below 0 other than -1 (fake_noise / 4) is refused.
plan "$T/bad.kg" 1 5 "fake_proc_sd = -0.5" ""
"$KGATE" run --report "$T/bad.kg" -o "$T/bad" >"$T/out" 2>"$T/err"; st=$?
[ "$st" -ne 0 ] || die "fake_proc_sd = -0.5 was accepted"
grep -q 'fake_proc_sd = -0.5' "$T/bad/processes.csv" || die "fake_proc_sd = -0.5: no reason in processes.csv"
exit 0
