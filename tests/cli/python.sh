# The Python package (python/, docs/python.md): `pip install ./python` into a fresh virtual
# environment (over the system's numpy, pandas and pytest, offline: no build isolation, no
# dependencies fetched), then its tests (python/tests, pytest) against $KGATE, run from outside
# the tree so that they import the installed package.  tools/install-deps.sh installs what it
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
"$T/venv/bin/pip" install --no-build-isolation --no-deps --no-index --disable-pip-version-check --no-cache-dir -q "$T/pkg" \
    >"$T/pip.txt" 2>&1 || { cat "$T/pip.txt" >&2; die "pip install ./python"; }
cd "$T"
where=$("$T/venv/bin/python" -c 'import kgate; print(kgate.__file__)') || die "the installed package does not import"
case $where in
    "$T/venv/"*) ;;
    *) die "kgate imported from $where, not from the virtual environment" ;;
esac
"$T/venv/bin/python" -c 'import kgate, sys; sys.exit(kgate.__version__ != "0.1.0")' || die "kgate.__version__"

# the tests, from the tree, against the installed package and $KGATE
"$T/venv/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/python/tests" >"$T/pytest.txt" 2>&1; st=$?
tail -n 40 "$T/pytest.txt"
[ $st -eq 0 ] || die "pytest python/tests: exit $st"
grep -Eq '^[0-9]+ passed' "$T/pytest.txt" || die "pytest ran no tests"
echo "python: $(tail -n 1 "$T/pytest.txt")"
