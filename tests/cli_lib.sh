# tests/cli_lib.sh: helpers for the CLI scenario tests (sourced).
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
# a private lock folder: a script never waits on another's device lock
# (tests/run.sh runs scripts in parallel) or on another user's campaign
export KGATE_LOCK_DIR="$T/locks"
# the cpu backend's peaks from a fixture, not measured in every campaign
# (physics.sh, the test of the peaks, unsets it and measures)
export KGATE_PEAKS="$(pwd)/tests/fixtures/peaks-cpu.json"
# a compile cache of the suite's own (tests/run.sh shares one among its
# tests), never the user's; compile_cache.sh tests the cache itself
export KGATE_CACHE_DIR="${KGATE_TEST_CACHE:-$T/cache}"
fails=0
die() { echo "FAIL: $*" >&2; exit 1; }
expect_status() { # expected actual what
    [ "$1" = "$2" ] || die "$3: exit status $2, expected $1"
}
expect_grep() { # pattern file
    grep -q -- "$1" "$2" || { echo "--- $2:" >&2; head -n 60 "$2" >&2; die "expected '$1' in $2"; }
}
expect_no_grep() {
    if grep -q -- "$1" "$2"; then die "did not expect '$1' in $2"; fi
}
# A plan (standard input) without the sections named ("case r" "arm np" ...), or with only them
# (plan_keep), on standard output: the smaller campaigns scenarios derive from a shared plan
plan_sections() { # keep section...: keep 1 passes only the sections named, 0 all but them
    _ps_keep=$1; shift
    awk -v k="$_ps_keep" -v names="$(printf '%s\n' "$@")" 'BEGIN { n = split(names, v, "\n"); for (i = 1; i <= n; i++) s["[" v[i] "]"] = 1 }
        /^\[/ { skip = (($0 in s) != k) } !skip'
}
plan_drop() { plan_sections 0 "$@"; }
plan_keep() { plan_sections 1 "$@"; }
# The raw rows of the files named (raw/proc-NNN.csv.gz: gzip), each file's
# header line included, as one text on stdout
raw_text() { # file...
    for f in "$@"; do gzip -dc "$f" || die "$f: not a gzip file"; done
}
# A raw file edited as text: sed's script over its rows, gzip'ed again
raw_edit() { # sed-script file
    gzip -dc "$2" | sed "$1" | gzip -n >"$2.edit" && mv "$2.edit" "$2" || die "cannot edit $2"
}
# report DIR regenerates every report file byte for byte
expect_report_identical() {
    d=$1
    mkdir -p "$T/before"
    cp "$d/report.md" "$d/results.json" "$d/results.csv" "$d/report.html" "$T/before/"
    "$KGATE" report "$d" >"$T/report.out" 2>"$T/report.err" || true
    for f in report.md results.json results.csv report.html; do
        cmp -s "$d/$f" "$T/before/$f" || die "kgate report changed $f"
    done
    cmp -s "$T/report.out" "$d/report.md" || die "kgate report stdout differs from report.md"
}
# report.md against a golden file, with the lines that name the run
# (kgate's git SHA, the host, the start time) masked
expect_report_golden() { # folder golden
    # (and the host watch's section, whose times and durations are the run's, and the
    # folder's size, which depends on the run's paths and times)
    mask='s/^| kgate | .*/| kgate | -/; s/^| host | .*/| host | -/; s/^| started | .*/| started | -/
          /^Evidence folder: /{N;d}
          /^## Host watch/,/^## /{/^## /!d}'
    sed "$mask" "$1/report.md" >"$T/report.masked"
    sed "$mask" "$2" >"$T/golden.masked"
    cmp -s "$T/report.masked" "$T/golden.masked" || { diff "$T/golden.masked" "$T/report.masked" >&2; die "report.md differs from $2"; }
}
# The failed check rows of an evidence folder whose arms are all honest.  Under
# the sanitizers (BUILD=build-san) an instrumented arm host can exceed the
# timing-integrity bounds honestly (tests/cli/attacks.sh says why), so
# timing:escape is left out there; everything else counts everywhere.
failed_checks() { # folder
    case ${BUILD:-build} in
    *san*) awk -F, 'FNR > 1 && $7 == "fail" && $6 != "timing:escape"' "$1"/checks/*.csv 2>/dev/null ;;
    *) awk -F, 'FNR > 1 && $7 == "fail"' "$1"/checks/*.csv 2>/dev/null ;;
    esac
}
# Dies when an honest arm failed a check (failed_checks), naming the rows.
expect_honest() { # folder what
    failed_checks "$1" >"$T/honest.fail"
    [ -s "$T/honest.fail" ] && { head -n 20 "$T/honest.fail" >&2; die "$2: honest kernels failed checks"; }
    return 0
}
# The stand-in CUDA driver ($FAKE) copied into $T beside a settings file of
# NAME=VALUE lines (LIB.env, tests/unit/fake_libcuda.c), which its copies in
# the cuda arm hosts read too (their environment is kgate's own); FAKE then
# names the copy.
fake_cuda_copy() { # NAME=VALUE...
    mkdir -p "$T/fake"
    cp "$FAKE" "$T/fake/libcuda_fake.so"
    FAKE=$T/fake/libcuda_fake.so
    : >"$FAKE.env"
    for kv in "$@"; do echo "$kv" >>"$FAKE.env"; done
}
