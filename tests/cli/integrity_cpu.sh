# Verify of a quickstart-like CPU folder: the quickstart plan, shortened
# (one case, fewer processes, rounds and samples), run on the CPU backend; the folder
# verifies (hashes, recomputed reports, saved outputs replayed against
# fresh float64 references), the receipt names the built objects, and a
# corrupted saved output is caught by the replay even with SHA256SUMS
# recomputed.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
mkdir -p "$T/p"
sed -e "s|^source = \.\./|source = $PWD/|" -e 's/^rounds = .*/rounds = 2/' -e 's/^samples = .*/samples = 2/' \
    -e 's/^warmup = .*/warmup = 1/' -e 's/^processes = .*/processes = 1/' examples/quickstart.kg |
    awk '/^\[case / { keep = ($0 == "[case f32_128]") } /^\[(arm|gate|campaign)/ { keep = 1 } keep' >"$T/p/qs.kg"
[ "$(grep -c '^\[case ' "$T/p/qs.kg")" = 1 ] || die "the shortened plan should have one case"
# no quiet host asked for (a private forbidden list is not enough: the
# quickstart's window also watches the host's CPU, which other work loads):
# the test must not depend on what else runs here
"$KGATE" run --report "$T/p/qs.kg" -o "$T/ev" --quiet-window 0 >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || { cat "$T/err" >&2; die "quickstart-like campaign: exit $st"; }
expect_grep '"build_sha256"' "$T/ev/environment.json"
expect_grep '"compiler"' "$T/ev/environment.json"
grep -A3 '"build_sha256"' "$T/ev/environment.json" | grep -q '[0-9a-f]\{64\}' || die "no build object hashed"
"$KGATE" verify "$T/ev" >"$T/v.out" 2>"$T/v.err"; st=$?
[ $st = 0 ] || { cat "$T/v.err" >&2; die "verify: exit $st"; }
n=$(sed -n 's/.*reports recomputed, \([0-9]*\) saved outputs replayed.*/\1/p' "$T/v.out")
# every saved output replayed: at least 2 processes x 1 case x 3 arms x
# (poison0 + fresh)
rows=$(cat "$T/ev"/outputs/proc-*.csv | grep -vc '^process')
[ "$n" = "$rows" ] || die "expected $rows replayed outputs (the saved ones), got '$n'"
[ "$rows" -ge 12 ] || die "expected at least 12 saved outputs, got $rows"
rm -rf "$T/t"; cp -r "$T/ev" "$T/t"
printf '\177\177\177\177' | dd of="$T/t/outputs/proc-001.bin" bs=1 seek=64 count=4 conv=notrunc 2>/dev/null
(cd "$T/t" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
"$KGATE" verify "$T/t" >/dev/null 2>"$T/t.err"; st=$?
[ $st = 1 ] || die "corrupted output: exit $st"
grep -q "outputs/proc-001.csv:[0-9]*: \(replay of\|the stored output\)" "$T/t.err" || { cat "$T/t.err" >&2; die "the corrupted output is not named"; }
exit 0
