# An op kgate does not ship, declared in the plan ([op NAME], docs/ops.md):
# examples/ops/conv1d.c (two inputs of different dtypes, bf16 X and f32
# F, and a bf16 output), admitted and timed on the cpu backend with no
# change to kgate; a wrong kernel for it rejected; its source hash in the
# canonical plan and the evidence; its module loaded only by kgate's
# trusted processes, never in an arm host; bad declarations refused.
. tests/cli_lib.sh
R=$(pwd)
mkdir -p "$T/ops"
cp examples/ops/conv1d.c "$T/ops/conv1d.c"
plan() { # $1 file, $2 candidate entry, $3 extra case lines
    cat >"$1" <<PLAN
[campaign]
name = conv1d-test
backend = cpu
quiet = 0
warmup = 1
samples = 5
rounds = 2
processes = 1
seed = 11
margin = 1%
timeout = 60

[op conv1d]
source = ops/conv1d.c

[case sig]
op = conv1d
dtype = bf16
B = 8
L = 300
W = 5
${3:-}

[arm naive]
op = conv1d
role = baseline
source = $R/kernels/cpu/conv1d_naive.c
entry = conv1d_naive

[arm cand]
op = conv1d
role = candidate
source = $R/kernels/cpu/$2.c
entry = ${4:-$2}

[gate]
PLAN
}

# ---- 1. admitted and timed; the module loaded by trusted processes only
cat >>"$T/ops/conv1d.c" <<'EOF2'

/* the test's witness: every process that loads the module says who it is */
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
__attribute__((constructor)) static void witness(void)
{
    const char *f = getenv("KG_TEST_OP_WITNESS");
    if (f == NULL) return;
    char buf[512];
    int in = open("/proc/self/cmdline", O_RDONLY);
    ssize_t n = in >= 0 ? read(in, buf, sizeof buf - 1) : 0;
    if (in >= 0) close(in);
    if (n < 0) n = 0;
    for (ssize_t i = 0; i < n; i++) if (buf[i] == '\0') buf[i] = ' ';
    buf[n] = '\n';
    int out = open(f, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (out >= 0) { ssize_t w = write(out, buf, (size_t)n + 1); (void)w; close(out); }
}
EOF2
plan "$T/good.kg" conv1d_tiled
export KG_TEST_OP_WITNESS="$T/witness.txt"
"$KGATE" run --report "$T/good.kg" -o "$T/good" --no-progress >"$T/good.out" 2>"$T/good.err"; st=$?
[ $st -le 1 ] || { cat "$T/good.err" >&2; die "the declared op's campaign: exit $st"; }
grep -q "| sig | cand | candidate |" "$T/good.out" || die "no result row for the candidate"
expect_honest "$T/good" "the declared op"
grep -q "| sig | naive | baseline |" "$T/good.out" || die "no baseline row"
# (verify runs the folder's module confined, where the witness's write is a denied
# call that fails verification: tests/cli/verify_confine.sh)
unset KG_TEST_OP_WITNESS
"$KGATE" verify "$T/good" >"$T/good.verify" 2>&1 || { cat "$T/good.verify" >&2; die "the folder does not verify"; }
sha=$(sha256sum "$T/ops/conv1d.c" | cut -d' ' -f1)
grep -q "^sha256 = $sha$" "$T/good/plan.kg" || die "the canonical plan does not carry the op source's sha256"
cmp -s "$T/ops/conv1d.c" "$T/good/sources/op-conv1d.c" || die "the evidence does not keep the op's source"
[ -s "$T/witness.txt" ] || die "no process loaded the op module"
grep -q " worker " "$T/witness.txt" || { cat "$T/witness.txt" >&2; die "the worker did not load the op module"; }
grep -q "armhost" "$T/witness.txt" && { cat "$T/witness.txt" >&2; die "an arm host loaded the op module"; }

# ---- 2. a wrong kernel for it is rejected
plan "$T/wrong.kg" conv1d_naive "" conv1d_flipped
"$KGATE" run --report "$T/wrong.kg" -o "$T/wrong" --no-progress >"$T/wrong.out" 2>"$T/wrong.err"; st=$?
[ $st = 1 ] || { cat "$T/wrong.err" >&2; die "the wrong kernel's campaign: exit $st (1 expected: gate FAIL)"; }
grep "| sig | cand | candidate |" "$T/wrong.out" | grep -q "INCORRECT" || die "the flipped filter was not INCORRECT"

# ---- 2b. a kernel right only at the plan's shape is rejected: the held-out
# shapes vary the declared op's integer variables (B, L and W) by name
cat >"$T/fixed.c" <<'EOF2'
/* conv1d for B = 8, L = 300, W = 5 only: the shape read from the plan, not the case */
#include "kgate/kernel.h"
void conv1d_fixed(const kg_kargs *a)
{
    const uint16_t *x = a->in[0];
    const float *f = a->in[1];
    uint16_t *y = a->out[0];
    const int64_t B = 8, L = 300, W = 5, n = L - W + 1;
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < n; i++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < W; k++) acc += kg_bf16_to_f32(x[b * L + i + k]) * f[k];
            KGATE_STORE(&y[b * n + i], kg_f32_to_bf16(acc));
        }
}
EOF2
plan "$T/fixed.kg" conv1d_naive "" conv1d_fixed
sed -i "s|^source = $R/kernels/cpu/conv1d_naive.c\$|&|; /^\[arm cand\]/,/^entry/ s|^source = .*|source = $T/fixed.c|" "$T/fixed.kg"
"$KGATE" run --report "$T/fixed.kg" -o "$T/fixed" --no-progress >"$T/fixed.out" 2>"$T/fixed.err"; st=$?
[ $st = 1 ] || { cat "$T/fixed.err" >&2; die "the shape-specific kernel's campaign: exit $st (1 expected: gate FAIL)"; }
grep "| sig | cand | candidate |" "$T/fixed.out" | grep -q "INCORRECT" || { cat "$T/fixed.out" >&2; die "a kernel right only at the plan's shape was not INCORRECT"; }
grep -h ',heldout\[B=[0-9]* L=[0-9]* W=[0-9]*\]:' "$T/fixed"/checks/*.csv | grep ',cand,' | grep -q ',fail,' ||
    die "no failed held-out check of the declared op's variables"
# the honest baseline passes the same held-out shapes
grep -h ',heldout\[B=' "$T/fixed"/checks/*.csv | grep ',naive,' | grep -q ',fail,' && die "the baseline failed a held-out shape"
grep -h ',heldout\[B=' "$T/fixed"/checks/*.csv | grep ',naive,' | grep -q ',pass,' || die "no held-out check of the baseline"

# ---- 3. the op source is in the plan hash, and the folder's copy is checked
"$KGATE" freeze "$T/good.kg" -o "$T/a.frozen" >/dev/null 2>&1 || die "freeze"
echo "/* an edit */" >>"$T/ops/conv1d.c"
"$KGATE" freeze "$T/good.kg" -o "$T/b.frozen" >/dev/null 2>&1 || die "freeze after an edit"
[ "$(head -n 1 "$T/a.frozen")" != "$(head -n 1 "$T/b.frozen")" ] || die "editing the op source left the plan hash as it was"
chmod u+w "$T/good/sources/op-conv1d.c"
echo "/* tampered */" >>"$T/good/sources/op-conv1d.c"
"$KGATE" verify "$T/good" >"$T/tamper.verify" 2>&1 && die "verify accepted an edited op source"
grep -q "op-conv1d.c" "$T/tamper.verify" || { cat "$T/tamper.verify" >&2; die "verify did not name the edited op source"; }

# ---- 3b. a folder whose plan names its op by an absolute path: editing that file after the
# campaign changes nothing for report and verify, which take the folder's copy
cp examples/ops/conv1d.c "$T/ops/abs.c"
sed "s|^source = ops/conv1d.c\$|source = $T/ops/abs.c|" "$T/good.kg" >"$T/abs.kg"
"$KGATE" run --report "$T/abs.kg" -o "$T/abs" --no-progress >"$T/abs.out" 2>"$T/abs.err"; st=$?
[ $st -le 1 ] || { cat "$T/abs.err" >&2; die "the absolute-path op's campaign: exit $st"; }
echo "/* edited after the campaign */" >>"$T/ops/abs.c"
"$KGATE" report "$T/abs" >"$T/abs.report" 2>"$T/abs.report.err"; st=$?
[ $st -le 1 ] || { cat "$T/abs.report.err" >&2; die "report of a folder whose absolute op source was edited since: exit $st"; }
"$KGATE" verify "$T/abs" >"$T/abs.verify" 2>&1 || { cat "$T/abs.verify" >&2; die "verify of a folder whose absolute op source was edited since"; }

# ---- 4. variables checked against the op's declaration
cp examples/ops/conv1d.c "$T/ops/conv1d.c"
plan "$T/typo.kg" conv1d_tiled "Wd = 3"
"$KGATE" check "$T/typo.kg" -o "$T/typo" >"$T/typo.out" 2>&1 && die "a variable the op does not declare was accepted"
grep -q "unknown key 'Wd': op conv1d has no such variable" "$T/typo.out" || { cat "$T/typo.out" >&2; die "no message for the stray variable"; }
sed '/^W = 5$/d' "$T/good.kg" >"$T/nowidth.kg"
"$KGATE" check "$T/nowidth.kg" -o "$T/nowidth" >"$T/nowidth.out" 2>&1 && die "a missing variable was accepted"
grep -q "op conv1d needs W" "$T/nowidth.out" || { cat "$T/nowidth.out" >&2; die "no message for the missing variable"; }
sed 's/^W = 5$/W = 301/' "$T/good.kg" >"$T/wide.kg"
"$KGATE" check "$T/wide.kg" -o "$T/wide" >"$T/wide.out" 2>&1
grep -q "inadmissible" "$T/wide.out" || grep -q "wider than the signal" "$T/wide.out" ||
    { cat "$T/wide.out" >&2; die "a filter wider than the signal was not inadmissible"; }

# ---- 5. bad declarations
bad() { # $1 what, $2 module text, $3 expected message
    printf '%s\n' "$2" >"$T/ops/conv1d.c"
    "$KGATE" check "$T/good.kg" -o "$T/bad" >"$T/bad.out" 2>&1 && die "$1: accepted"
    grep -q "$3" "$T/bad.out" || { cat "$T/bad.out" >&2; die "$1: no message '$3'"; }
    rm -rf "$T/bad"
}
bad "a module without kgate_op" '#include "kgate/op.h"
int unrelated(void) { return 0; }' "defines no kgate_op"
bad "a module that does not compile" 'this is not C' "failed to compile"
bad "a module of another name" '#include "kgate/op.h"
const kg_op kgate_op = { .abi = KG_OP_ABI, .name = "other" };' "is named 'other'"
bad "a module of another ABI" '#include "kgate/op.h"
const kg_op kgate_op = { .abi = 99, .name = "conv1d" };' "abi = 99"
cp examples/ops/conv1d.c "$T/ops/conv1d.c"
sed 's/^\[op conv1d\]$/[op rowsum]/; s/^op = conv1d$/op = rowsum/' "$T/good.kg" >"$T/taken.kg"
"$KGATE" check "$T/taken.kg" -o "$T/taken" >"$T/taken.out" 2>&1 && die "a declared op with a built-in op's name was accepted"
grep -q "is a built-in op" "$T/taken.out" || { cat "$T/taken.out" >&2; die "no message for the built-in name"; }
sed 's#^source = ops/conv1d.c$#source = ops/none.c#' "$T/good.kg" >"$T/missing.kg"
"$KGATE" check "$T/missing.kg" -o "$T/missing" >"$T/missing.out" 2>&1 && die "a missing op source was accepted"
grep -q "op source not found" "$T/missing.out" || { cat "$T/missing.out" >&2; die "no message for a missing op source"; }

# ---- 6. kgate new op NAME: a module that compiles and checks as printed,
# with the plan lines and a CPU kernel in its comment
mkdir -p "$T/new/ops"
"$KGATE" new op vadd >"$T/new/ops/vadd.c" || die "kgate new op vadd"
sed -n '/and a CPU kernel/,/^ \*\/$/p' "$T/new/ops/vadd.c" | grep '^ \*     ' | sed 's/^ \*     //' >"$T/new/vadd_naive.c"
{ printf '[campaign]\nbackend = cpu\nquiet = 0\nwarmup = 1\nsamples = 5\nrounds = 2\nprocesses = 1\nseed = 3\n'
  sed -n '/In the plan:/,/and a CPU kernel/p' "$T/new/ops/vadd.c" | grep '^ \*     ' | sed 's/^ \*     //'
  printf '\n[gate]\n'; } >"$T/new/plan.kg"
"$KGATE" check "$T/new/plan.kg" -o "$T/new/ck" >"$T/new.out" 2>&1 || { cat "$T/new.out" >&2; die "the printed op does not check"; }
grep -q " 0 failed" "$T/new.out" || { cat "$T/new.out" >&2; die "the printed op's checks failed"; }
"$KGATE" new op rowsum >/dev/null 2>"$T/new.err" && die "kgate new op took a built-in op's name"
grep -q "is a built-in op" "$T/new.err" || die "no message for a built-in name"
"$KGATE" new op 'a b' >/dev/null 2>&1 && die "kgate new op took a bad name"
exit 0
