# Parameter axes (docs/plan-format.md, "Axes"): {a, b} lists in case and
# arm keys expand a section into variants named BASE[AXIS=VALUE,...].
#   - the expansion's names and order (first axis slowest), its values,
#     the canonical plan (kgate freeze) and a fixed hash; the canonical
#     plan parses to itself;
#   - every rule's error message (duplicate and empty lists, the cap,
#     name collisions, keys that take no axis, unnamed lists, ...);
#   - a cpu campaign with an axis case and a two-axis arm runs end to end
#     (quoted names in the CSV rows, the report's axes line, verify);
#   - kgate screen over an axis arm's variants writes a confirmation plan
#     with the best variant, which runs.
. tests/cli_lib.sh
src=$(pwd)/kernels/cpu/rowsum_naive.c
mkdir -p "$T/p"

# ---- expansion, canonical form, hash ----
cat >"$T/p/sweep.kg" <<PLAN
[campaign]
name = sweep
backend = fake
seed = 5
[case sq]
op = gemm_bt
dtype = {f32, bf16}
M = {96, 256}
N = 64
K = 32
[case tail]
op = gemm_bt
dtype = f32
M = 33
N = 64
K = 32
[arm base]
op = gemm_bt
role = baseline
builtin = ref
[arm fma]
op = gemm_bt
builtin = ref
defines = PITCH={36, 40} PIPE=0 -DSPLITS={1,2}
cases = sq
[arm slow]
op = gemm_bt
builtin = ref
fake_ns = {1100,1200}
[gate]
PLAN
"$KGATE" freeze "$T/p/sweep.kg" -o "$T/p/sweep.canon" >"$T/fz" 2>"$T/fz.err"; st=$?
expect_status 0 $st "freeze of an axis plan"
grep '^\[' "$T/p/sweep.canon" >"$T/headers"
cat >"$T/want" <<'W'
[campaign]
[case sq[dtype=f32,M=96]]
[case sq[dtype=f32,M=256]]
[case sq[dtype=bf16,M=96]]
[case sq[dtype=bf16,M=256]]
[case tail]
[arm base]
[arm fma[PITCH=36,SPLITS=1]]
[arm fma[PITCH=36,SPLITS=2]]
[arm fma[PITCH=40,SPLITS=1]]
[arm fma[PITCH=40,SPLITS=2]]
[arm slow[fake_ns=1100]]
[arm slow[fake_ns=1200]]
[gate]
W
cmp -s "$T/headers" "$T/want" || { diff "$T/want" "$T/headers" >&2; die "the expansion's sections differ"; }
# each variant holds its values; the cases list keeps the base name
awk '/^\[arm fma\[PITCH=40,SPLITS=1\]\]/{f=1;next} /^\[/{f=0} f' "$T/p/sweep.canon" >"$T/fma"
expect_grep "^defines = PITCH=40 PIPE=0 -DSPLITS=1$" "$T/fma"
expect_grep "^cases = sq$" "$T/fma"
awk '/^\[case sq\[dtype=bf16,M=96\]\]/{f=1;next} /^\[/{f=0} f' "$T/p/sweep.canon" >"$T/sq"
expect_grep "^dtype = bf16$" "$T/sq"
expect_grep "^M = 96$" "$T/sq"
awk '/^\[arm slow\[fake_ns=1200\]\]/{f=1;next} /^\[/{f=0} f' "$T/p/sweep.canon" >"$T/slow"
expect_grep "^fake_ns = 1200$" "$T/slow"
# the hash is fixed: same text, same hash, on every machine
hash=$(cut -d' ' -f1 "$T/fz")
want=2356e399fdd7ecb4f6145d6d2e0d4fb917b8c11239548714b0f8e4d1256bdf15
[ "$hash" = "$want" ] || die "axis plan hash $hash, expected $want"
# the frozen file: a header line naming the hash, then the canonical text
expect_grep "^# kgate frozen plan sha256 $hash$" "$T/p/sweep.canon"
[ "$(sed 1d "$T/p/sweep.canon" | sha256sum | cut -d' ' -f1)" = "$hash" ] || die "the hash is not the canonical text's"
# the canonical plan (variants by their expanded names) parses to itself
"$KGATE" freeze "$T/p/sweep.canon" -o "$T/p/again.canon" >"$T/fz2" 2>&1 || die "the canonical plan does not parse: $(cat "$T/fz2")"
cmp -s "$T/p/sweep.canon" "$T/p/again.canon" || die "the canonical plan does not parse to itself"
[ "$(cut -d' ' -f1 "$T/fz2")" = "$hash" ] || die "the canonical plan's hash differs"

# ---- the rules, each with its message ----
base() { # extra lines of [arm cand]
    cat <<PLAN
[campaign]
backend = fake
[case rows]
op = rowsum
dtype = f32
M = 4
N = 16
[arm base]
op = rowsum
role = baseline
source = $src
[arm cand]
op = rowsum
source = $src
PLAN
}
bad() { # message-pattern: the plan in $T/p/b.kg is refused with it
    "$KGATE" freeze "$T/p/b.kg" -o "$T/p/b.out" >"$T/bad.out" 2>"$T/bad.err"; st=$?
    expect_status 2 $st "bad plan ($1)"
    expect_grep "$1" "$T/bad.err"
}
{ base; echo "fake_ns = {900, 900}"; } >"$T/p/b.kg"
bad "b.kg:15: duplicate value in an axis: '900' (fake_ns: each value once"
{ base; echo "fake_ns = { }"; } >"$T/p/b.kg"
bad "b.kg:15: empty axis: 'fake_ns = { }' (fake_ns: give one or more values"
{ base; echo "fake_ns = {900,,1000}"; } >"$T/p/b.kg"
bad "empty value in an axis"
{ base; echo "defines = A={1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17} B={1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}"; } >"$T/p/b.kg"
bad "b.kg:12: a section expands to too many variants: '\[arm cand\]' (its axes give more than 256 combinations"
{ base; echo "fake_ns = {900, 1000}"; echo "[arm cand[fake_ns=900]]"; echo "op = rowsum"; echo "source = $src"; } >"$T/p/b.kg"
bad "b.kg:16: duplicate arm: 'cand\[fake_ns=900\]' (the sections on lines 12 and 16 both give this name"
{ base; echo "role = {candidate, reference}"; } >"$T/p/b.kg"
bad "this key takes no axis: 'role = {candidate, reference}' ('role' takes one value; {a, b} lists go in case keys (and the op's variables) dtype M N K splits eps scale; arm keys entry defines cflags grid block shared args specialize precision tolerance fake_\*"
base | sed 's/^op = rowsum$/op = {rowsum, rowmax}/' >"$T/p/b.kg"
bad "b.kg:4: this key takes no axis: 'op = {rowsum, rowmax}'"
{ base; echo "requires = N % {4, 8} == 0"; } >"$T/p/b.kg"
bad "this key takes no axis: 'requires"
base | sed "s|^source = $src\$|source = {a.c, b.c}|" >"$T/p/b.kg"
bad "this key takes no axis: 'source = {a.c, b.c}'"
base | sed 's/^backend = fake$/samples = {5, 10}/' >"$T/p/b.kg"
bad "b.kg:2: this key takes no axis: 'samples = {5, 10}'"
{ base; echo "defines = X {1, 2}"; } >"$T/p/b.kg"
bad "axis without a name: 'defines = X {1, 2}' (a list inside a value follows its name, NAME={a, b}"
{ base; echo "defines = X={1, 2"; } >"$T/p/b.kg"
bad "unclosed '{'"
{ base; echo "defines = X=1}"; } >"$T/p/b.kg"
bad "'}' without '{'"
{ base; echo "defines = X={1, {2}}"; } >"$T/p/b.kg"
bad "'{' inside an axis"
{ base; echo "defines = X={1, 2}Y"; } >"$T/p/b.kg"
bad "text right after an axis"
{ base; echo "defines = X={1, a b}"; } >"$T/p/b.kg"
bad "bad value in an axis: 'a b' (X: a value is letters, digits, '_', '.', '-' or '+' (it becomes part of the names); quote one"
{ base; echo 'cflags = {"-O2 -march=native, -O3}'; } >"$T/p/b.kg"
bad "unclosed '\"' in an axis"
{ base; echo 'cflags = {"-O2 x"y, -O3}'; } >"$T/p/b.kg"
bad "bad quoted value in an axis"
{ base; echo 'cflags = {"", -O3}'; } >"$T/p/b.kg"
bad "bad quoted value in an axis"
{ base; echo 'cflags = {"-O2 -x", -O2_-x}'; } >"$T/p/b.kg"
bad "duplicate value in an axis: '-O2_-x' (cflags: each value once; two variants would have one name"

# quoted values hold blanks and '=': sets of compiler flags, swept; the
# variant's name holds '_' for them, its cflags the set as written, and
# the canonical plan (with the variants) parses to the same hash
{ base; echo 'cflags = {"-O2 -march=native", -O3, "-O1 -fno-tree-vectorize"}'; } >"$T/p/q.kg"
"$KGATE" freeze "$T/p/q.kg" -o "$T/p/q.frozen" >"$T/q.out" 2>"$T/q.err" || die "quoted axis values: $(cat "$T/q.err")"
expect_grep '^\[arm cand\[cflags=-O2_-march_native\]\]$' "$T/p/q.frozen"
expect_grep '^cflags = -O2 -march=native$' "$T/p/q.frozen"
expect_grep '^\[arm cand\[cflags=-O1_-fno-tree-vectorize\]\]$' "$T/p/q.frozen"
expect_grep '^cflags = -O1 -fno-tree-vectorize$' "$T/p/q.frozen"
expect_grep '^\[arm cand\[cflags=-O3\]\]$' "$T/p/q.frozen"
"$KGATE" freeze "$T/p/q.frozen" -o "$T/p/q2.frozen" >"$T/q2.out" 2>&1 || die "the canonical plan of quoted values does not parse"
[ "$(cut -d' ' -f1 "$T/q.out")" = "$(cut -d' ' -f1 "$T/q2.out")" ] || die "the canonical plan of quoted values hashes differently"
"$KGATE" run "$T/p/q.kg" -o "$T/q" -q >"$T/q.run" 2>&1; st=$?
[ $st -le 1 ] || { cat "$T/q.run" >&2; die "a campaign over quoted values: exit $st"; }
grep -c ',cand\[cflags=' "$T/q/results.csv" | grep -qx 3 || { cat "$T/q/results.csv" >&2; die "results.csv: not the 3 variants"; }
"$KGATE" verify "$T/q" >"$T/q.verify" 2>&1 || { cat "$T/q.verify" >&2; die "a campaign over quoted values does not verify"; }
{ base; echo "defines = X={1, 2} -DX={3}"; } >"$T/p/b.kg"
bad "axis named twice: 'defines = X={1, 2} -DX={3}' (axis 'X' is already a list on line 15"
{ base; echo "defines = A_VERY_LONG_DEFINE_NAME_X={1, 2} ANOTHER_VERY_LONG_DEFINE_NAME={3, 4}"; } >"$T/p/b.kg"
bad "expanded name too long: 'cand\[A_VERY_LONG_DEFINE_NAME_X=1,ANOTHER_VERY_LONG_DEFINE_NAME=3\]' (a variant's name"
{ base | sed 's/^\[arm cand\]$/[arm cand[X=1]]/'; echo "fake_ns = {1, 2}"; } >"$T/p/b.kg"
bad "axis in a section with an expanded name"
{ base; echo "fake_ns = {1, 2}"; echo "[arm p]"; echo "op = rowsum"; echo "source = $src"; echo "parity = cand"; } >"$T/p/b.kg"
bad "unknown arm: 'cand' ('parity' must name another arm of this plan; arm 'cand' has axes: name one variant, e.g. cand\[fake_ns=1\])"
{ base; echo "fake_ns = {1, 2}"; echo "[arm p]"; echo "op = rowsum"; echo "source = $src"; echo "parity = cand[fake_ns=2]"; } >"$T/p/b.kg"
"$KGATE" freeze "$T/p/b.kg" -o "$T/p/b.out" >"$T/bad.out" 2>"$T/bad.err" || die "parity naming a variant: $(cat "$T/bad.err")"
{ base; echo "cases = nosuch"; } >"$T/p/b.kg"
bad "unknown case: 'nosuch'"

# ---- a cpu campaign with axes, end to end ----
cat >"$T/p/cpu.kg" <<PLAN
[campaign]
quiet = 0
name = axes-cpu
backend = cpu
warmup = 1
samples = 5
rounds = 2
processes = 3
seed = 7
margin = 1%
control_margin = 3%
max_steal = 0
max_foreign_cpu = 0
timeout = 60
[case rows]
op = rowsum
dtype = f32
M = {4, 8}
N = 16
[arm base]
op = rowsum
role = baseline
source = $src
[arm cand]
op = rowsum
source = $src
defines = REP={1, 2} PAD={0}
[gate]
min_reduction = 3%
PLAN
"$KGATE" run --report "$T/p/cpu.kg" -o "$T/ev" >"$T/run.out" 2>"$T/run.err"; st=$?
[ $st -le 1 ] || { cat "$T/run.err" >&2; die "the cpu axis campaign: exit status $st"; }
expect_grep '^- case `rows`: M = 4, 8 (2 variants)$' "$T/ev/report.md"
expect_grep '^- arm `cand`: REP = 1, 2; PAD = 0 (2 variants)$' "$T/ev/report.md"
expect_grep '^| rows\[M=8\] | cand\[REP=2,PAD=0\] | candidate | ' "$T/ev/report.md"
# the rows of one base stay together, in the order of the expansion
grep '^| rows\[M=4\] | [^|]* | \(baseline\|candidate\|control\|reference\) |' "$T/ev/report.md" | head -n 3 | cut -d'|' -f3 | tr -d ' ' | tr '\n' ' ' >"$T/order"
[ "$(cat "$T/order")" = "base cand[REP=1,PAD=0] cand[REP=2,PAD=0] " ] || die "result rows out of order: $(cat "$T/order")"
# the sweeps: a table per base with axes, a row per variant, its axis values as columns
expect_grep '^## Sweeps$' "$T/ev/report.md"
awk '/^Arm `cand`:$/{on=1;next} on && /^\|/{print} on && /^$/ && seen++{exit}' "$T/ev/report.md" >"$T/sweep.arm"
[ "$(sed -n 1p "$T/sweep.arm")" = "| REP | PAD | rows[M=4] | rows[M=8] |" ] || { cat "$T/sweep.arm" >&2; die "the arm sweep's header"; }
[ "$(grep -c '^| [12] | 0 | ' "$T/sweep.arm")" = 2 ] || { cat "$T/sweep.arm" >&2; die "the arm sweep's rows"; }
# each cell is the Results row's reduction [interval] and verdict
red=$(grep '^| rows\[M=8\] | cand\[REP=2,PAD=0\] | candidate | ' "$T/ev/report.md" | head -n 1 | awk -F'|' '{gsub(/^ +| +$/, "", $10); gsub(/^ +| +$/, "", $11); print $10 " " $11}')
grep -F "| 2 | 0 | " "$T/sweep.arm" | awk -F'|' '{gsub(/^ +| +$/, "", $5); print $5}' >"$T/cell"
[ "$(cat "$T/cell")" = "$red" ] || die "the sweep cell '$(cat "$T/cell")' is not the Results row's '$red'"
awk '/^Case `rows`:$/{on=1;next} on && /^\|/{print} on && /^$/ && seen++{exit}' "$T/ev/report.md" >"$T/sweep.case"
[ "$(sed -n 1p "$T/sweep.case")" = "| M | base | cand[REP=1,PAD=0] | cand[REP=2,PAD=0] |" ] || { cat "$T/sweep.case" >&2; die "the case sweep's header"; }
grep -q '^| 4 | [0-9.]* µs (baseline) | ' "$T/sweep.case" || { cat "$T/sweep.case" >&2; die "the case sweep's baseline cell"; }
# a name with a comma is a quoted CSV field, read back as it was
raw_text "$T/ev/raw/proc-000.csv.gz" >"$T/raw0"
expect_grep ',"cand\[REP=1,PAD=0\]",rows\[M=4\],' "$T/raw0"
expect_grep '^rows\[M=8\],"cand\[REP=2,PAD=0\]",candidate,' "$T/ev/results.csv"
[ -f "$T/ev/build/cand[REP=2,PAD=0].so" ] || die "no build of a variant in the evidence"
expect_report_identical "$T/ev"
"$KGATE" verify "$T/ev" >"$T/verify.out" 2>&1 || { cat "$T/verify.out" >&2; die "verify of the axis campaign"; }

# ---- axes over a declared op's variables ----
root=$(pwd)
cat >"$T/p/vars.kg" <<PLAN
[campaign]
name = vars
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = 1
seed = 9
[op conv1d]
source = $root/examples/ops/conv1d.c
[case sig]
op = conv1d
dtype = bf16
B = {2, 3}
L = 64
W = {3, 9}
[arm naive]
op = conv1d
role = baseline
source = $root/kernels/cpu/conv1d_naive.c
entry = conv1d_naive
[arm tiled]
op = conv1d
source = $root/kernels/cpu/conv1d_tiled.c
entry = conv1d_tiled
[gate]
PLAN
"$KGATE" freeze "$T/p/vars.kg" -o "$T/p/vars.canon" >"$T/fz" 2>"$T/fz.err"; st=$?
expect_status 0 $st "freeze of a plan with axes over op variables"
grep '^\[case' "$T/p/vars.canon" >"$T/headers"
printf '%s\n' '[case sig[B=2,W=3]]' '[case sig[B=2,W=9]]' '[case sig[B=3,W=3]]' '[case sig[B=3,W=9]]' >"$T/want"
cmp -s "$T/headers" "$T/want" || { diff "$T/want" "$T/headers" >&2; die "variable axes: names and order"; }
# each variant carries its own values, the others as written
awk '/^\[case sig\[B=3,W=9\]\]/{on=1;next} /^\[/{on=0} on' "$T/p/vars.canon" >"$T/v39"
expect_grep '^B = 3$' "$T/v39"
expect_grep '^L = 64$' "$T/v39"
expect_grep '^W = 9$' "$T/v39"
# the canonical plan parses to itself and its hash is that of the plan
"$KGATE" freeze "$T/p/vars.canon" -o "$T/p/vars.canon2" >"$T/fz2" 2>&1 || die "freeze of the canonical variable-axis plan"
cmp -s "$T/p/vars.canon" "$T/p/vars.canon2" || die "the canonical variable-axis plan is not a fixed point"
[ "$(cut -d' ' -f1 "$T/fz")" = "$(cut -d' ' -f1 "$T/fz2")" ] || die "the variable-axis plan's hash changed on re-freezing"
# a cpu campaign over the variants: every variant checked and timed
"$KGATE" run --report "$T/p/vars.kg" -o "$T/vev" >"$T/vout" 2>"$T/verr"; st=$?
[ $st -le 1 ] || { cat "$T/verr" >&2; die "campaign over op-variable axes (status $st)"; }
for v in 'sig[B=2,W=3]' 'sig[B=2,W=9]' 'sig[B=3,W=3]' 'sig[B=3,W=9]'; do
    grep -F "\"$v\",tiled,candidate,ok," "$T/vev/results.csv" >/dev/null || die "no result row of tiled on $v"
done
"$KGATE" verify "$T/vev" >"$T/verify.out" 2>&1 || { cat "$T/verify.out" >&2; die "verify of the variable-axis campaign"; }
# errors: a list inside a variable's value, a bad value in the list
sed 's/^B = {2, 3}$/B = 2{1,2}/' "$T/p/vars.kg" >"$T/p/b.kg"
bad "b.kg:15: an op variable's axis is its whole value: 'B = 2{1,2}' (write B = {a, b, c}: one list"
sed 's/^L = 64$/L = {64, x}/' "$T/p/vars.kg" >"$T/p/b.kg"
bad "bad value: 'L = {64, x}' (op variable 'L': an integer, a real or yes/no"
sed 's/^L = 64$/L = {64, 64}/' "$T/p/vars.kg" >"$T/p/b.kg"
bad "duplicate value in an axis: '64' (L: each value once"

# ---- kgate screen over the variants of an axis arm ----
# The confirmation plan has a fresh random seed, and its control's drift
# test is a 1% test: at fake_noise 0.01 about 1 run in 130 was INVALID
# (control drifted). At 0.001 the drift stays far under the 0.25% floor
# (0 of 400 seeds), so the confirmation's outcome does not depend on it.
cat >"$T/p/screen.kg" <<PLAN
[campaign]
quiet = 0
name = sweep
backend = fake
warmup = 1
samples = 5
rounds = 4
processes = 5
seed = 3
margin = 1%
control_margin = 1%
[case small]
op = rowsum
dtype = f32
M = 4
N = 16
[arm base]
op = rowsum
fake_noise = 0.001
role = baseline
source = $src
[arm c]
op = rowsum
fake_noise = 0.001
source = $src
fake_ns = {990, 900, 1000}
[arm ctrl]
op = rowsum
fake_noise = 0.001
role = control
of = base
[gate]
min_reduction = 1%
PLAN
# an evidence folder whose path does not fit a plan value (160 characters): the
# confirmation plan names it shortened from the left, and still parses
sev="$T/screen-evidence-folder-whose-path-is-longer-than-the-160-characters-a-plan-value-may-hold"
"$KGATE" screen "$T/p/screen.kg" -o "$sev" >"$T/sout" 2>"$T/serr"; st=$?
[ $st = 0 ] || { cat "$T/serr" >&2; die "screen of an axis arm: exit status $st, expected 0"; }
expect_grep "| 1 | c\[fake_ns=900\] | " "$T/sout"
c="$T/p/screen-confirm.kg"
[ -f "$c" ] && [ -f "$c.frozen" ] || die "no confirmation plan"
expect_grep "^\[arm c\[fake_ns=900\]\]$" "$c"
# 5 processes complete the screen's square of 5 arms; the confirmation keeps 3
# (base, the chosen variant, ctrl), and its processes are raised to complete theirs
expect_grep "^processes = 6$" "$c"
expect_no_grep "^\[arm c\[fake_ns=990\]\]$" "$c"
expect_grep "^selected_from = c\[fake_ns=900\] chosen by kgate screen from a family of 3 candidates" "$c"
expect_grep "^selected_from = .*, evidence \.\.\..*-may-hold)$" "$c"
"$KGATE" run --report --frozen "$c.frozen" "$c" -o "$T/conf" >"$T/conf.md" 2>"$T/conf.err"; st=$?
[ $st = 0 ] || { cat "$T/conf.err" >&2; die "the confirmation run of the best variant: exit status $st, expected 0"; }
echo "axes: ok"
