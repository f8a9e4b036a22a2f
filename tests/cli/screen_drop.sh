# kgate screen's screening mode (report/screening.h, docs/statistics.md
# "Screening: what a candidate costs").
# On the fake backend (scripted timings): c_fast 10% faster than the
# baseline, c_slow 30% slower, c_wrong faster but wrong (fake_wrong):
#   - c_wrong fails its checks in process 0 and is dropped as INCORRECT:
#     it is never ranked and runs in at most one more process (the one
#     started beside process 0);
#   - c_slow is dropped as futile once the processes give an interval
#     (after process 3 at the earliest), so it runs in fewer processes
#     than c_fast, which runs in all 8 and is chosen;
#   - every process records each arm's own time (screen:cost), and the
#     ranking and report.md give device and wall seconds per candidate;
#   - kgate verify re-derives the drops: the folder verifies; a skip record
#     of c_fast added to a process is refused, and with meta.json's
#     "screen" removed the skip records are refused;
#   - --full runs every candidate in every process (no skip record);
#   - kgate run refuses a plan with screen = yes.
# On the cpu backend, one small run: a wrong candidate (zeros) is dropped
# after its first accepted process, skipped in the later ones, and never
# ranked; the honest one has a cost row in every process.
. tests/cli_lib.sh
src=$(pwd)/kernels/cpu/rowsum_naive.c
mkdir -p "$T/p"
cat >"$T/p/drops.kg" <<PLAN
[campaign]
quiet = 0
screen = yes
name = drops
backend = fake
warmup = 1
samples = 5
rounds = 3
processes = 4
seed = 5
margin = 1%
control_margin = 1%
[case small]
op = rowsum
dtype = f32
M = 4
N = 16
[arm base]
op = rowsum
role = baseline
source = $src
[arm c_fast]
op = rowsum
source = $src
fake_ns = 900
[arm c_slow]
op = rowsum
source = $src
fake_ns = 1300
[arm c_wrong]
op = rowsum
source = $src
fake_ns = 800
fake_wrong = yes
[arm ctrl]
op = rowsum
role = control
of = base
[gate]
min_reduction = 1%
PLAN
"$KGATE" screen "$T/p/drops.kg" -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "the screen"
expect_grep "^| 1 | c_fast | .* | yes | no | " "$T/out"
expect_grep "^| 2 | c_slow | .* | no | futile after process [3-6] | " "$T/out"
expect_grep "^| – | c_wrong | INCORRECT | – | no | INCORRECT after process 0 | " "$T/out"
r="$T/ev/report.md"
expect_grep "^## Screening" "$r"
expect_grep "^Screening mode: .* 3 candidates: 1 dropped as INCORRECT, 1 as futile\. .* The run took [0-9.]* s of wall, builds included: [0-9.]* s per candidate\.$" "$r"
expect_grep "^| c_fast | 8 | no |  | " "$r"
expect_grep "^| c_wrong | [12] | after process 0 | INCORRECT: poison0:Y failed on case small | " "$r"
n_slow=$(sed -n 's/^| c_slow | \([0-9]*\) | after process [0-9]* | futile: upper bound .* on case small | .*/\1/p' "$r")
[ -n "$n_slow" ] && [ "$n_slow" -ge 4 ] && [ "$n_slow" -lt 8 ] || die "c_slow ran in '$n_slow' processes, expected 4 to 7"
# the costs: every process recorded c_fast's own time, and its device
# seconds are positive and at most its wall seconds
[ "$(cat "$T/ev"/checks/proc-*.csv | grep -c ',c_fast,.*screen:cost,')" = 8 ] || die "c_fast: not 8 cost rows"
awk -F' \\| ' '/^\| c_fast \| 8 /{ if (!($5 > 0 && $5 <= $8 + 0.0005)) bad = 1; seen = 1 } END { exit !(seen && !bad) }' "$r" \
    || die "c_fast's device seconds are not positive and within its wall seconds"
# a skipped arm is not loaded: no layout row of c_wrong after process 1
for f in "$T/ev"/checks/proc-00[2-7].csv; do
    expect_grep ",c_wrong,.*screen:dropped," "$f"
    expect_no_grep ",c_wrong,.*,layout," "$f"
done
"$KGATE" verify "$T/ev" >"$T/v" 2>&1; st=$?
expect_status 0 $st "verify of the screen"
# a producer that hides a rival: a skip record of c_fast, which no process drops
cp "$T/ev/checks/proc-004.csv" "$T/checks4"
grep ",c_wrong,pre,screen:dropped," "$T/checks4" | sed 's/,c_wrong,/,c_fast,/' >>"$T/ev/checks/proc-004.csv"
"$KGATE" verify "$T/ev" >"$T/v1" 2>&1; st=$?
[ $st -ne 0 ] || die "verify accepted a skip record that no earlier process justifies"
expect_grep "checks/proc-004.csv: arm c_fast was not run, but the evidence before that process does not drop it" "$T/v1"
cp "$T/checks4" "$T/ev/checks/proc-004.csv"
sed 's/"screen": true,//; s/, *"screen": true//' "$T/ev/meta.json" >"$T/meta" && cp "$T/meta" "$T/ev/meta.json"
"$KGATE" verify "$T/ev" >"$T/v2" 2>&1; st=$?
[ $st -ne 0 ] || die "verify accepted skip records of a folder that is no screen"
expect_grep "was dropped by a screen, but the folder is no screen" "$T/v2"
# --full: every candidate in every process
"$KGATE" screen --full "$T/p/drops.kg" -o "$T/full" --confirm "$T/p/full-confirm.kg" >"$T/out3" 2>&1; st=$?
expect_status 0 $st "the screen with --full"
if cat "$T/full"/checks/proc-*.csv | grep -q "screen:dropped"; then die "--full dropped a candidate"; fi
expect_no_grep "^## Screening" "$T/full/report.md"
"$KGATE" run "$T/p/drops.kg" -o "$T/run" >"$T/out4" 2>&1; st=$?
expect_status 2 $st "kgate run of a screen's plan"
expect_grep "screen = yes: an exploration plan" "$T/out4"

# the cpu backend: a wrong candidate dropped after process 0
cat >"$T/p/zeros.c" <<'C'
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    float *y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) KGATE_STORE(&y[i], 0.0f);
}
C
cat >"$T/p/cpu.kg" <<PLAN
[campaign]
screen = yes
name = cpudrop
backend = cpu
warmup = 1
samples = 3
rounds = 2
processes = 2
margin = 1%
control_margin = 50%
[case small]
op = rowsum
dtype = f32
M = 8
N = 64
[arm base]
op = rowsum
role = baseline
source = $src
[arm honest]
op = rowsum
source = $(pwd)/kernels/cpu/rowsum_unrolled.c
[arm zeros]
op = rowsum
source = zeros.c
PLAN
"$KGATE" screen --quiet-window 0 "$T/p/cpu.kg" -o "$T/cpu" >"$T/out5" 2>"$T/err5"; st=$?
[ $st -le 1 ] || { cat "$T/err5" >&2; die "cpu screen: exit status $st"; }
# (a process the host watch excluded is repeated: the drop may come a
# process later, and the processes are counted from processes.csv)
expect_grep "^| – | zeros | INCORRECT | – | no | INCORRECT after process [01] | " "$T/out5"
last=$(ls "$T/cpu"/checks/proc-*.csv | tail -n 1)
expect_grep ",zeros,.*screen:dropped," "$last"
nproc=$(($(wc -l <"$T/cpu/processes.csv") - 1))
[ "$(cat "$T/cpu"/checks/proc-*.csv | grep -c ',honest,.*screen:cost,')" = "$nproc" ] || die "honest: not one cost row per process"
"$KGATE" verify "$T/cpu" >"$T/v3" 2>&1; st=$?
expect_status 0 $st "verify of the cpu screen"
echo "screen_drop: ok"
