# Saved outputs (outenc.c, docs/evidence.md "outputs/"): stored as their
# distance from the reference, compressed, shared between identical
# outputs; keep_outputs = replay | failing | all; verify replays every
# row kept and names a damaged one; the report states the folder's size.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
cat >"$T/wrong.c" <<'K'
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
/* one more than the row sum: wrong on every row */
void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) {
        float acc = 1.0f;
        for (int64_t j = 0; j < a->N; j++) acc += kg_load(a->in[0], a->dtype, i * a->N + j);
        KGATE_STORE(&Y[i], acc);
    }
}
K
plan() { # FILE KEEP
    cat >"$1" <<P
[campaign]
name = outputs
backend = cpu
quiet = 0
max_steal = 0
warmup = 1
samples = 3
rounds = 3
processes = 1
keep_outputs = $2
[case r]
op = rowsum
dtype = f32
M = 256
N = 512
[arm naive]
op = rowsum
role = baseline
source = $PWD/kernels/cpu/rowsum_naive.c
[arm naive_copy]
op = rowsum
role = control
of = naive
[arm unrolled]
op = rowsum
role = candidate
source = $PWD/kernels/cpu/rowsum_unrolled.c
[arm wrong]
op = rowsum
role = candidate
source = $T/wrong.c
[gate]
min_reduction = 1%
P
}
replayed() { sed -n 's/.*reports recomputed, \([0-9]*\) saved outputs replayed.*/\1/p' "$1"; }
rows() { cat "$1"/outputs/proc-*.csv | grep -vc '^process,'; }

# ---- replay (the default): compressed, shared, replayed
plan "$T/p.kg" replay
sed -i '/^keep_outputs/d' "$T/p.kg"
"$KGATE" run --report "$T/p.kg" -o "$T/r" >"$T/r.out" 2>"$T/r.err"
[ -f "$T/r/processes.csv" ] || { cat "$T/r.err" >&2; die "replay: no folder"; }
"$KGATE" verify "$T/r" >"$T/rv.out" 2>"$T/rv.err" || { cat "$T/rv.err" >&2; die "replay: does not verify"; }
n=$(rows "$T/r")
[ "$(replayed "$T/rv.out")" = "$n" ] || die "replay: $(replayed "$T/rv.out") replayed of $n rows"
# poison0 and fresh of every arm that passed its checks before timing (wrong fails them: poison0 only)
[ "$(cut -d, -f5 "$T/r"/outputs/proc-*.csv | grep -c '^poison0$')" -ge 8 ] || die "replay: poison0 rows missing"
expect_no_grep ',sampled@' "$T/r/outputs/proc-000.csv"
# every passing output compressed: stored (col 12) well below its bytes (col 9)
awk -F, 'FNR > 1 && $10 == "pass" && !($12 * 3 < $9) { bad = 1 } END { exit bad }' "$T/r"/outputs/proc-*.csv ||
    die "replay: an output stored in a third of its bytes or more"
# naive_copy's output is naive's bytes: one stored copy, two rows
awk -F, 'FNR > 1 { k = FILENAME "," $4 "," $5 "," $8; n[k]++ } END { for (k in n) if (n[k] > 1) s = 1; exit !s }' \
    "$T/r"/outputs/proc-*.csv || die "replay: identical outputs are not shared"
expect_grep "^Evidence folder: [0-9]* files, [0-9.]* MB before the reports" "$T/r/report.md"
expect_grep "Saved outputs (keep_outputs = replay): $n kept" "$T/r/report.md"
expect_report_identical "$T/r"

# ---- all: every replayable check (poison1, snapshot, the sampled executions)
plan "$T/pa.kg" all
"$KGATE" run --report "$T/pa.kg" -o "$T/a" >"$T/a.out" 2>"$T/a.err"
"$KGATE" verify "$T/a" >"$T/av.out" 2>"$T/av.err" || { cat "$T/av.err" >&2; die "all: does not verify"; }
n=$(rows "$T/a")
[ "$(replayed "$T/av.out")" = "$n" ] || die "all: $(replayed "$T/av.out") replayed of $n rows"
for k in poison1 snapshot 'sampled@'; do expect_grep ",$k" "$T/a/outputs/proc-000.csv"; done
[ "$n" -gt "$(rows "$T/r")" ] || die "all keeps no more than replay"

# ---- failing: the failed checks' outputs only
plan "$T/pf.kg" failing
"$KGATE" run --report "$T/pf.kg" -o "$T/f" >"$T/f.out" 2>"$T/f.err"
[ -f "$T/f/plan.kg" ] || { cat "$T/f.err" >&2; die "failing: the campaign made no folder"; }
"$KGATE" verify "$T/f" >"$T/fv.out" 2>"$T/fv.err" || { cat "$T/fv.err" >&2; die "failing: does not verify"; }
n=$(rows "$T/f")
[ "$n" -ge 1 ] || die "failing: the wrong arm's failed outputs were not kept"
[ "$(replayed "$T/fv.out")" = "$n" ] || die "failing: $(replayed "$T/fv.out") replayed of $n rows"
awk -F, 'FNR > 1 && ($3 != "wrong" || $10 != "fail") { bad = 1 } END { exit bad }' "$T/f"/outputs/proc-*.csv ||
    die "failing: a row that is not a failed check of the wrong arm"

# ---- a damaged stored output, SHA256SUMS recomputed: named
rm -rf "$T/t"; cp -r "$T/r" "$T/t"
off=$(awk -F, 'FNR == 2 { print $8 + int($12 / 2) }' "$T/t/outputs/proc-000.csv")
# the byte's complement, so that the write always changes it (a fixed byte
# left it as it was when it already held that value: 1 run in 256)
b=$(od -An -tu1 -j "$off" -N1 "$T/t/outputs/proc-000.bin" | tr -d ' ')
printf "\\$(printf '%03o' $((255 - b)))" | dd of="$T/t/outputs/proc-000.bin" bs=1 seek="$off" count=1 conv=notrunc 2>/dev/null
cmp -s "$T/r/outputs/proc-000.bin" "$T/t/outputs/proc-000.bin" && die "the damage did not change the stored output"
(cd "$T/t" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
"$KGATE" verify "$T/t" >/dev/null 2>"$T/t.err"; st=$?
[ $st = 1 ] || die "damaged output: exit $st"
grep -q "outputs/proc-000.csv:2: \(the stored output\|replay of\)" "$T/t.err" || { cat "$T/t.err" >&2; die "the damaged output is not named"; }
exit 0
