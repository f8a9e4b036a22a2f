# The Python package (python/, docs/python.md): `pip install ./python` into a fresh virtual
# environment (over the system's numpy, pandas and pytest, offline: no build isolation, no
# dependencies fetched), whose build step makes the tree's build/kgate (current here: nothing
# is rebuilt) and bundles it with the headers; the console script and kgate.run with no KGATE
# set and no kgate on PATH (the bundled binary, its headers found next to it); a build that
# cannot run says what to install; then the package's tests (python/tests, pytest) against
# $KGATE, run from outside the tree so that they import the installed package.  tools/install-deps.sh installs what it
# needs (Debian's python3-venv, -setuptools, -wheel, -numpy, -pandas, -pytest); Debian's
# /usr/bin/python3 is preferred over another python3 on PATH.
# kgate-test: first (a virtual environment and the package's tests)
# kgate-test: no-sanitize (the Python package's own code and tests; the kgate runs they start are what the other scenarios run under the sanitizers)
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
export PYTHONDONTWRITEBYTECODE=1
# the package's tests read a cpu campaign's measured peaks: measured here
unset KGATE_PEAKS
ROOT=$(pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || die "no python3 (sh tools/install-deps.sh)"
"$PY" -c 'import numpy, pandas, pytest, setuptools, venv' >"$T/imports.txt" 2>&1 ||
    { cat "$T/imports.txt" >&2; die "$PY lacks numpy, pandas, pytest, setuptools or venv (sh tools/install-deps.sh)"; }

# a copy of python/, so the build leaves nothing in the tree
cp -r "$ROOT/python" "$T/pkg"
rm -rf "$T/pkg/build" "$T/pkg"/*.egg-info
"$PY" -m venv --system-site-packages "$T/venv" >"$T/venv.txt" 2>&1 || { cat "$T/venv.txt" >&2; die "python3 -m venv"; }
PIP="$T/venv/bin/pip install --no-build-isolation --no-deps --no-index --disable-pip-version-check --no-cache-dir"
# no compiler: the build refuses, naming the script that installs what it needs
cp -r "$T/pkg" "$T/pkg-nocc"
CC=kgate-no-such-cc KGATE_SOURCE_TREE="$ROOT" $PIP "$T/pkg-nocc" >"$T/nocc.txt" 2>&1 && die "pip install without a compiler succeeded"
expect_grep "no kgate-no-such-cc on PATH to build the kgate binary: install the build dependencies with .sh tools/install-deps.sh." "$T/nocc.txt"
# not inside a kgate tree (an unpacked copy of python/ alone): says so
KGATE_SOURCE_TREE="$T/pkg" $PIP "$T/pkg-nocc" >"$T/notree.txt" 2>&1 && die "pip install outside a kgate tree succeeded"
expect_grep "is not a kgate source tree, so the kgate binary cannot be built" "$T/notree.txt"
KGATE_SOURCE_TREE="$ROOT" $PIP -q "$T/pkg" >"$T/pip.txt" 2>&1 || { cat "$T/pip.txt" >&2; die "pip install ./python"; }
cd "$T"
where=$("$T/venv/bin/python" -c 'import kgate; print(kgate.__file__)') || die "the installed package does not import"
case $where in
    "$T/venv/"*) ;;
    *) die "kgate imported from $where, not from the virtual environment" ;;
esac
"$T/venv/bin/python" -c 'import kgate, sys; sys.exit(kgate.__version__ != "0.1.0")' || die "kgate.__version__"

# the bundled binary and headers; the console script and kgate.run with nothing set
site=$(dirname "$where")
[ -x "$site/_bin/bin/kgate" ] || die "pip install bundled no executable kgate/_bin/bin/kgate"
[ -f "$site/_bin/include/kgate/kernel.h" ] && [ -f "$site/_bin/include/kgate/op.h" ] || die "pip install bundled no headers"
cmp -s "$site/_bin/bin/kgate" "$ROOT/build/kgate" || die "the bundled kgate is not the tree's build/kgate"
mkdir -p "$T/bare" && cd "$T/bare"
env -u KGATE PATH="$T/venv/bin:/usr/bin:/bin" kgate --version >"$T/script.txt" 2>&1 || { cat "$T/script.txt" >&2; die "the kgate console script"; }
expect_grep '^kgate 0\.1\.0' "$T/script.txt"
sed "s#@K@#$ROOT/kernels/cpu#" >"$T/one.py" <<'EOF'
import kgate
assert kgate.find_kgate().endswith("/kgate/_bin/bin/kgate"), kgate.find_kgate()
plan = kgate.Plan(campaign={"name": "installed", "backend": "cpu", "quiet": 0, "warmup": 1, "samples": 3,
                            "rounds": 2, "processes": 2, "timeout": 120},
                  cases={"r": {"op": "rowsum", "dtype": "f32", "M": 8, "N": 64}},
                  arms={"naive": {"op": "rowsum", "role": "baseline", "source": "@K@/rowsum_naive.c"},
                        "unrolled": {"op": "rowsum", "source": "@K@/rowsum_unrolled.c"}})
r = kgate.run(plan, out="ev")
assert r.verdicts[("r", "unrolled")].state == "ok", r.verdicts
assert r.load().meta["argv"][1] == "installed.kg", r.load().meta["argv"]
print("installed:", r)
EOF
env -u KGATE PATH="$T/venv/bin:/usr/bin:/bin" "$T/venv/bin/python" "$T/one.py" >"$T/one.txt" 2>&1 || { cat "$T/one.txt" >&2; die "kgate.run with the bundled binary"; }
expect_grep '^installed: RunResult(gate' "$T/one.txt"

# make install PREFIX=DIR: DIR/bin/kgate finds DIR/include (a cpu kernel compiles against it,
# outside the tree); make uninstall removes what it installed
make -s -C "$ROOT" BUILD=build install PREFIX="$T/prefix" >"$T/install.txt" 2>&1 || { cat "$T/install.txt" >&2; die "make install"; }
[ -x "$T/prefix/bin/kgate" ] && [ -f "$T/prefix/include/kgate/kernel.h" ] || die "make install: no bin/kgate or include/kgate"
printf '[campaign]\nname = prefix\nbackend = cpu\nquiet = 0\n\n[case r]\nop = rowsum\ndtype = f32\nM = 8\nN = 64\n\n[arm naive]\nop = rowsum\nrole = baseline\nsource = %s/kernels/cpu/rowsum_naive.c\n' "$ROOT" >"$T/bare/prefix.kg"
env -u KGATE "$T/prefix/bin/kgate" check prefix.kg -o "$T/prefix-check" >"$T/prefix.txt" 2>&1 || { cat "$T/prefix.txt" >&2; die "the installed kgate: check a cpu plan"; }
make -s -C "$ROOT" BUILD=build uninstall PREFIX="$T/prefix" >"$T/uninstall.txt" 2>&1 || { cat "$T/uninstall.txt" >&2; die "make uninstall"; }
left=$(find "$T/prefix" -type f | wc -l)
[ "$left" = 0 ] || { find "$T/prefix" -type f >&2; die "make uninstall left $left files"; }
cd "$T"

# the tests, from the tree, against the installed package and $KGATE
"$T/venv/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/python/tests" >"$T/pytest.txt" 2>&1; st=$?
tail -n 40 "$T/pytest.txt"
[ $st -eq 0 ] || die "pytest python/tests: exit $st"
grep -Eq '^[0-9]+ passed' "$T/pytest.txt" || die "pytest ran no tests"
echo "python: $(tail -n 1 "$T/pytest.txt")"
