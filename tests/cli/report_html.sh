# report.html in a real browser: headless Chromium loads each report, the
# console must stay silent (no error, no blocked script, no blocked load),
# and tests/report_html_check.py checks the DOM it built against the
# folder: an HTML5 document holding no script and no external resource,
# every plot with its data (or a note saying why it has none), the counts
# the evidence calls for, and the results table equal to results.csv.
#  1. a fake campaign: written by run, in SHA256SUMS, verified, rewritten
#     byte for byte by kgate report; a screenshot renders; a plan with
#     axes gets a sweep plot per case and arm with axes;
#  2. the same folder given telemetry with clocks, power and temperature,
#     and given the cpu backend's telemetry (none of the three): plotted,
#     and said so;
#  3. excluded processes: a crashed worker (failed), and a host that was
#     not quiet (contaminated, repeated, the watch's events) then resumed;
#  4. kgate check's folder (no timed sample: every rounds plot says so);
#  5. hostile text: markup in the plan's free text and in the plan's file
#     name is shown as text, nothing of it runs; an arm name cannot hold
#     markup (the parser refuses it);
#  6. the checks are proven to fail: an injected failing script (with and
#     without the page's Content-Security-Policy), an injected external
#     image, a plot whose count lies, an empty plot without its note and a
#     number that differs from results.csv each make the check fail.
# Without Chromium or python3 the test fails in CI (CI set) and skips
# elsewhere.
# kgate-test: first (a headless browser per report)
# kgate-test: no-sanitize (the browser's reading of the page; the page itself is written by the same code under report.sh and the goldens)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="${KGATE_LOCK_DIR:-$T/locks}"
in_ci() { [ -n "${CI:-}" ] && [ "$CI" != false ] && [ "$CI" != 0 ]; }
need() { # what how-to-install
    if in_ci; then die "$1 is not installed: $2 (CI=$CI: a browser test that cannot run fails)"; fi
    echo "SKIP: $1 is not installed ($2); CI would fail here"
    exit 0
}
CHROME=${CHROMIUM:-}
[ -n "$CHROME" ] || CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] && [ -x "$CHROME" ] || need chromium "sh tools/install-deps.sh installs Debian's chromium"
command -v python3 >/dev/null 2>&1 || need python3 "apt-get install python3"

# browse PAGE NAME: loads PAGE headless into $T/NAME.dom; 1 when the console
# printed anything about the page (CONSOLE lines are the page's console,
# errors and blocked actions included), 2 when the browser failed
browse() {
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check \
        --user-data-dir="$T/chrome" --enable-logging=stderr --v=0 --dump-dom "file://$1" \
        >"$T/$2.dom" 2>"$T/$2.log" || { tail -n 20 "$T/$2.log" >&2; return 2; }
    [ -s "$T/$2.dom" ] || { tail -n 20 "$T/$2.log" >&2; return 2; }
    { grep -E 'CONSOLE|Uncaught' "$T/$2.log"; grep ':ERROR:' "$T/$2.log" | grep -F "$1"; } >"$T/$2.console"
    if [ -s "$T/$2.console" ]; then
        sed 's/^/    console: /' "$T/$2.console" >&2
        return 1
    fi
    return 0
}
# page_ok DIR NAME [--text S]...: the report of DIR loads cleanly and its DOM checks
page_ok() {
    d=$1; n=$2; shift 2
    browse "$d/report.html" "$n"; st=$?
    [ $st = 0 ] || die "$n: chromium on $d/report.html: the console spoke or the browser failed ($st)"
    python3 tests/report_html_check.py "$T/$n.dom" "$d" "$@" >"$T/$n.check" 2>&1 ||
        { cat "$T/$n.check" >&2; die "$n: the DOM of $d/report.html does not check"; }
}

# ---- 1. a fake campaign
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "fake-faster run"
[ -s "$T/ev/report.html" ] || die "kgate run wrote no report.html"
grep -q '  report.html$' "$T/ev/SHA256SUMS" || die "report.html is not in SHA256SUMS"
"$KGATE" verify "$T/ev" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "the folder does not verify"; }
expect_report_identical "$T/ev"
# verify recomputes report.html: one byte changed is a mismatch of its own
cp -r "$T/ev" "$T/ev-edit"
sed 's/Gate: PASS/Gate: FAIL/' "$T/ev/report.html" >"$T/ev-edit/report.html"
(cd "$T/ev-edit" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >"$T/sums") &&
    mv "$T/sums" "$T/ev-edit/SHA256SUMS"
"$KGATE" verify "$T/ev-edit" >"$T/ve.out" 2>&1 && die "verify passed an edited report.html under recomputed sums"
expect_grep "report.html: differs from the report recomputed" "$T/ve.out"
page_ok "$T/ev" ev
expect_grep 'id="telemetry-none"' "$T/ev.dom"
timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/chrome" \
    --hide-scrollbars --window-size=1200,1600 --screenshot="$T/shot.png" "file://$T/ev/report.html" >/dev/null 2>&1 ||
    die "chromium could not take a screenshot"
[ "$(wc -c <"$T/shot.png")" -gt 20000 ] || die "the screenshot is nearly empty"

# ---- 1b. a plan with axes: a sweep plot per case and arm with axes, a point per variant and column
cat >"$T/axes.kg" <<'PLAN'
[campaign]
name = sweep
backend = fake
warmup = 1
samples = 5
rounds = 3
processes = 4
seed = 5
[case sq]
op = gemm_bt
dtype = f32
M = {64, 96}
N = 64
K = 32
[arm base]
op = gemm_bt
role = baseline
builtin = ref
[arm fma]
op = gemm_bt
builtin = ref
fake_ns = {900, 950, 1100}
[gate]
PLAN
"$KGATE" run --report "$T/axes.kg" -o "$T/ax" >"$T/ax.out" 2>"$T/ax.err"; st=$?
[ $st -le 1 ] || { cat "$T/ax.err" >&2; die "the axis campaign: exit $st"; }
page_ok "$T/ax" ax
expect_grep 'id="sweep-c0"' "$T/ax.dom"
expect_grep 'id="sweep-a1"' "$T/ax.dom"
grep -o 'id="sweep-a1"[^>]*data-points="6"' "$T/ax.dom" >/dev/null || die "the arm sweep has not 6 points (3 variants x 2 cases)"

# ---- 2. telemetry: clocks, power and temperature per sample (the fake
# backend reads none: written from raw/ as a cuda worker would), then the
# cpu backend's rows (-1 and nan: none of the three)
telemetry() { # folder cpu|gpu
    mkdir -p "$1/telemetry"
    for f in "$1"/raw/proc-*.csv.gz; do
        raw_text "$f" | awk -F, -v k="$2" 'NR == 1 { print "process,case,round,arm,sample,sm_mhz,mem_mhz,power_w,temp_c,clock_event_reasons,foreign_procs,escaped,event_ns,host_ns"; next }
            k == "cpu" { printf "%s,%s,%s,%s,%s,-1,-1,nan,-1,0x0,-1,0,%.0f,%.0f\n", $1, $5, $3, $4, $6, $7, $7; next }
            { printf "%s,%s,%s,%s,%s,%d,2619,%.1f,%d,0x0,0,0,%.0f,%.0f\n", $1, $5, $3, $4, $6, 1980 - 15 * ($3 % 3),
                     280 + NR % 7, 40 + int(NR / 20), $7, $7 }' >"$1/telemetry/$(basename "$f" .gz)"
    done
}
cp -r "$T/ev" "$T/tel"
telemetry "$T/tel" gpu
"$KGATE" report "$T/tel" >/dev/null 2>"$T/tel.err" || { cat "$T/tel.err" >&2; die "report of the folder with telemetry"; }
page_ok "$T/tel" tel
expect_grep 'id="telemetry-c0"' "$T/tel.dom"
expect_grep 'SM clock (MHz)' "$T/tel.dom"
expect_grep 'temperature (°C)' "$T/tel.dom"
cp -r "$T/ev" "$T/cputel"
telemetry "$T/cputel" cpu
"$KGATE" report "$T/cputel" >/dev/null 2>"$T/cputel.err" || { cat "$T/cputel.err" >&2; die "report with cpu telemetry"; }
page_ok "$T/cputel" cputel
expect_grep 'data-empty="no telemetry: 360 telemetry rows, none with an SM clock, power or temperature' "$T/cputel.dom"

# ---- 3. excluded processes: a crashed worker; a host that is not quiet
"$KGATE" run --report tests/plans/fake-crash.kg -o "$T/crash" >/dev/null 2>&1
[ -s "$T/crash/report.html" ] || die "the crashed campaign wrote no report.html"
page_ok "$T/crash" crash
expect_grep 'data-status="failed"' "$T/crash.dom"
sed "s#\.\./\.\./kernels/#$PWD/kernels/#" tests/plans/fake-faster.kg >"$T/hw.tmp"
{ sed -n '1,2p' "$T/hw.tmp"; echo "quiet_timeout = 1"; echo "repeats = 1"; sed -n '3,$p' "$T/hw.tmp"; } >"$T/hw.kg"
HOG=kghtml$$   # a name of this run alone
cp "$(command -v sleep)" "$T/$HOG" || die "cannot copy sleep"
"$T/$HOG" 60 &
hog=$!
KGATE_FAKE_SLEEP_MS=5 "$KGATE" run --report "$T/hw.kg" -o "$T/hw" --quiet-window 0.2 --forbid $HOG >/dev/null 2>"$T/hw.err"; st=$?
kill $hog 2>/dev/null; wait $hog 2>/dev/null
expect_status 3 $st "a host that never becomes quiet"
page_ok "$T/hw" hw-invalid
expect_grep 'data-status="contaminated"' "$T/hw-invalid.dom"
expect_grep 'never-quiet' "$T/hw-invalid.dom"
KGATE_FAKE_SLEEP_MS=5 "$KGATE" run --report --resume "$T/hw" "$T/hw.kg" --quiet-window 0.2 --forbid $HOG >/dev/null 2>"$T/hw.err"; st=$?
[ $st -le 1 ] || { cat "$T/hw.err" >&2; die "resume on a quiet host: exit $st"; }
page_ok "$T/hw" hw
expect_grep 'data-status="contaminated"' "$T/hw.dom"
expect_grep 'data-status="accepted"' "$T/hw.dom"

# ---- 4. kgate check: no timed sample, every rounds plot says so
"$KGATE" check tests/plans/fake-faster.kg -o "$T/chk" >/dev/null 2>&1 || die "kgate check"
[ -s "$T/chk/report.html" ] || die "kgate check wrote no report.html"
page_ok "$T/chk" chk
expect_grep 'id="rounds-c0-a1".*data-empty="no timed samples of cand on case small' "$T/chk.dom"

# ---- 5. hostile text
inject='<script>throw new Error("injected")</script><img src=x onerror=alert(1)>&amp;'
mkdir -p "$T/h"
hplan="$T/h/<svg onload=alert(2)>.kg"
{ sed -n '1,2p' "$T/hw.tmp"; echo "selected_from = $inject"; sed -n '3,$p' "$T/hw.tmp"; } >"$hplan"
"$KGATE" run --report "$hplan" -o "$T/hev" >/dev/null 2>"$T/hev.err" || { cat "$T/hev.err" >&2; die "the hostile plan's run"; }
if grep -Eiq '<script|<img|<svg onload' "$T/hev/report.html"; then die "markup from the plan reached report.html unescaped"; fi
expect_grep '&lt;script&gt;throw new Error(&quot;injected&quot;)&lt;/script&gt;' "$T/hev/report.html"
page_ok "$T/hev" hev --text "$inject" --text "<svg onload=alert(2)>.kg"
sed 's/^\[arm cand\]$/[arm <script>]/' "$T/hw.tmp" >"$T/badname.kg"
"$KGATE" check "$T/badname.kg" -o "$T/badname" >"$T/badname.out" 2>&1; st=$?
expect_status 2 $st "an arm named <script>"
expect_grep "bad section name: '\[arm <script>\]'" "$T/badname.out"

# ---- 6. the checks fail where they must
mkdir -p "$T/neg"
neg() { # name sed-script: a copy of ev's report.html, changed
    sed "$2" "$T/ev/report.html" >"$T/neg/$1.html"
}
neg script-nocsp 's|<meta http-equiv="Content-Security-Policy"[^>]*>||; s|</body>|<script>undefinedFunction();</script></body>|'
browse "$T/neg/script-nocsp.html" script-nocsp 2>/dev/null; st=$?
[ $st = 1 ] || die "a failing script did not fail the console check ($st)"
grep -q 'Uncaught' "$T/script-nocsp.console" || die "the failing script's error was not what the console said"
neg script-csp 's|</body>|<script>undefinedFunction();</script></body>|'
browse "$T/neg/script-csp.html" script-csp 2>/dev/null; st=$?
[ $st = 1 ] || die "an injected script under the page's policy did not fail the console check ($st)"
neg image 's|</body>|<img src="http://example.invalid/x.png" alt=""></body>|'
browse "$T/neg/image.html" image 2>/dev/null; st=$?
[ $st = 1 ] || die "an external image did not fail the console check ($st)"
python3 tests/report_html_check.py "$T/image.dom" "$T/ev" >/dev/null 2>&1 && die "the DOM check passed an external image"
dom_fails() { # name sed-script what
    neg "$1" "$2"
    browse "$T/neg/$1.html" "$1" || die "$1: the browser failed on a changed copy"
    if python3 tests/report_html_check.py "$T/$1.dom" "$T/ev" >"$T/$1.check" 2>&1; then die "the DOM check passed $3"; fi
}
dom_fails count '0,/data-points="[1-9][0-9]*"/s//data-points="999"/' "a plot whose data-points lies"
dom_fails marks 's|<path class="m box" data-n="1"[^>]*><title>[^<]*</title></path>||' "a rounds plot without its boxes"
dom_fails noteless 's/ data-empty="[^"]*"//' "an empty plot without its note"
dom_fails number '0,/data-col="reduction" data-v="[^"]*"/s//data-col="reduction" data-v="0.5"/' \
    "a reduction that is not results.csv's"
echo "ok: report.html checked in $("$CHROME" --version 2>/dev/null | tail -n 1)"
