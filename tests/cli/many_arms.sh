# A case with more arms than any fixed array the worker once had (64):
# 65 and 80 arms run end to end on the fake backend and every arm is
# timed; the worker's arrays are sized from the plan.
. tests/cli_lib.sh
for n in 65 80; do
    plan="$T/arms$n.kg"
    {
        printf '[campaign]\nquiet = 0\nname = arms%s\nbackend = fake\nwarmup = 0\nsamples = 2\nrounds = 1\n' "$n"
        printf 'processes = 1\nseed = 3\nmargin = 1%%\ntimeout = 60\n\n'
        printf '[case small]\nop = rowsum\ndtype = f32\nM = 2\nN = 8\n\n'
        printf '[arm base]\nop = rowsum\nrole = baseline\nsource = %s/kernels/cpu/rowsum_naive.c\nfake_ns = 1000\n\n' "$PWD"
        i=1
        while [ $i -lt "$n" ]; do
            printf '[arm c%s]\nop = rowsum\nrole = candidate\nsource = %s/kernels/cpu/rowsum_unrolled.c\nfake_ns = 990\n\n' "$i" "$PWD"
            i=$((i + 1))
        done
        printf '[gate]\nrule = interval\nmin_reduction = 0%%\n'
    } > "$plan"
    "$KGATE" run --report "$plan" -o "$T/ev$n" >"$T/out$n" 2>"$T/err$n"; st=$?
    [ "$st" = 0 ] || [ "$st" = 1 ] || { cat "$T/err$n" >&2; die "$n arms: exit status $st"; }
    expect_grep "2 accepted, 0 excluded" "$T/out$n"
    # every arm timed in both processes: n arms x 2 samples x 2 processes
    rows=$(raw_text "$T/ev$n"/raw/proc-*.csv.gz | grep -vc '^process')
    [ "$rows" = $((n * 4)) ] || die "$n arms: $rows raw samples, expected $((n * 4))"
    expect_grep "| small | c$((n - 1)) | candidate |" "$T/out$n"
done
