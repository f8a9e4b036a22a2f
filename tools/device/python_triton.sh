#!/bin/sh
# tools/device/python_triton.sh OUT: the Python package (python/, docs/python.md) on a GPU machine
# with Triton, in one device call, with nothing fetched from outside:
#   1. installs ./python without the network: into a virtual environment over the system's
#      packages (python3 -m venv --system-site-packages; pip install --no-build-isolation
#      --no-deps --no-index), else pip install --target, else PYTHONPATH=python;
#   2. runs python/tests with pytest where pytest imports (there the real Triton compile test,
#      test_compile_rowsum, runs instead of being skipped), against the kgate below;
#   3. runs tools/device/python_triton.py: two Triton rowsum candidates compiled by
#      kgate.triton.compile_arm, a plan built with kgate.Plan against a CUDA source baseline and
#      its A/A control, kgate.check, kgate.run on the cuda backend, Evidence.verify, and the
#      evidence read back with kgate.Evidence (where pandas imports).
# Writes OUT/r (summary.txt; python_triton.txt and summary.json from the driver; the plan,
# report.md, the tables as CSV, the evidence folders under r/work; pytest.txt, env.txt) and
# OUT/python_triton.tgz.  Exit 0 when step 3 succeeded (the pytest result is in the
# summary either way).
#
# kgate: $KGATE, else bin/kgate-portable (from .carry/bins.tgz when there), else build/kgate.
# python: $PYTHON, else python3.
set -u
OUT=${1:?usage: python_triton.sh OUT}
ROOT=$(pwd)
R=$OUT/r
W=$OUT/work
mkdir -p "$R" "$W"
[ -f .carry/bins.tgz ] && [ ! -x bin/kgate-portable ] && tar xzf .carry/bins.tgz
K=${KGATE:-}
[ -n "$K" ] || { [ -x "$ROOT/bin/kgate-portable" ] && K=$ROOT/bin/kgate-portable; }
[ -n "$K" ] || K=$ROOT/build/kgate
[ -x "$K" ] || { echo "python_triton: no kgate binary (set KGATE, or build it)" >&2; exit 2; }
export KGATE=$K
export KGATE_INCLUDE=${KGATE_INCLUDE:-$ROOT/include}
export KGATE_LOCK_DIR=${KGATE_LOCK_DIR:-$W/locks}
export PYTHONDONTWRITEBYTECODE=1
PY=${PYTHON:-python3}
say() { echo "$*" | tee -a "$R/summary.txt"; }
: >"$R/summary.txt"
{ "$K" --version; nvidia-smi; "$PY" --version
  "$PY" -c 'import triton; print("triton", triton.__version__)'
  "$PY" -c 'import torch; print("torch", torch.__version__)'
  "$PY" -c 'import numpy, pandas; print("numpy", numpy.__version__, "pandas", pandas.__version__)'
  "$PY" -c 'import pytest; print("pytest", pytest.__version__)'
  date -u; } >"$R/env.txt" 2>&1

# the device's compute capability: 9.0 -> 90
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
[ -n "$cc" ] || cc=90
say "device compute capability $cc"

# 1. pip install ./python (a copy: the build leaves nothing in the tree)
cp -r "$ROOT/python" "$W/pkg" && rm -rf "$W/pkg/build" "$W/pkg"/*.egg-info
PIPOPT="--no-build-isolation --no-deps --no-index --disable-pip-version-check --no-cache-dir -q"
RUNPY=$PY
# a virtual environment sees the system's packages but not the user's (~/.local): where
# Triton or pandas are the user's, the venv cannot import them, and --target is used instead
want="import numpy"
"$PY" -c 'import triton' >/dev/null 2>&1 && want="$want, triton"
"$PY" -c 'import pandas, pytest' >/dev/null 2>&1 && want="$want, pandas, pytest"
if "$PY" -m venv --system-site-packages "$W/venv" >"$R/install.txt" 2>&1 &&
   "$W/venv/bin/python" -m pip install $PIPOPT "$W/pkg" >>"$R/install.txt" 2>&1 &&
   "$W/venv/bin/python" -c "$want" >>"$R/install.txt" 2>&1; then
    RUNPY=$W/venv/bin/python
    say "install: pip install ./python into a virtual environment (--system-site-packages)"
elif "$PY" -m pip install $PIPOPT --target "$W/site" "$W/pkg" >>"$R/install.txt" 2>&1; then
    export PYTHONPATH=$W/site${PYTHONPATH:+:$PYTHONPATH}
    say "install: pip install --target (no venv here); PYTHONPATH=$W/site"
else
    export PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
    say "install: pip could not install ./python (see install.txt); PYTHONPATH=python"
fi
say "kgate package: $(cd "$W" && "$RUNPY" -c 'import kgate; print(kgate.__version__, kgate.__file__)' 2>&1)"

# 2. the package's tests, where pytest is there (the Triton compile test runs here)
if "$RUNPY" -c 'import pytest, pandas' >/dev/null 2>&1; then
    (cd "$W" && "$RUNPY" -m pytest -q -p no:cacheprovider -rA "$ROOT/python/tests") >"$R/pytest.txt" 2>&1
    say "pytest python/tests: exit $? ($(tail -n 1 "$R/pytest.txt"))"
    say "  $(grep -E '^(PASSED|FAILED|SKIPPED|ERROR).*test_compile_rowsum' "$R/pytest.txt" | head -n 1)"
else
    say "pytest python/tests: not run (pytest or pandas does not import here)"
fi

# 3. compile, plan, check, run, verify, read back
(cd "$W" && "$RUNPY" "$ROOT/tools/device/python_triton.py" "$R" --kgate "$K" --arch "$cc") >"$R/driver.txt" 2>&1
status=$?
tail -n 40 "$R/driver.txt"
say "python_triton.py: exit $status ($(grep '^Result:' "$R/python_triton.txt" 2>/dev/null | tail -n 1))"
tar czf "$OUT/python_triton.tgz" -C "$OUT" r
exit $status
