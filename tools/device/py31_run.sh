#!/bin/sh
# Issue 31 on the H200, in one device call, on the carried binary (make portable, stripped, in
# .carry/bins.tgz):
#   1. make test-gpu's script (tests/gpu/run.sh);
#   2. docs/python.md's Triton softmax against torch.softmax, its block extracted and run exactly
#      as written (python softmax.py), then kgate verify of its folder;
#   3. tools/device/triton_layernorm.py: a Triton layernorm against torch's, the same way;
#   4. tools/device/kernelbench_run.sh: the ten KernelBench-style problems imported, checked
#      (honest and wrong candidates) and the honest ones timed.
# The package is pip-installed into a virtual environment, KGATE naming the carried binary.
# Usage, from the repository root on the device: sh tools/device/py31_run.sh OUT [PARTS]
# PARTS: any of gpu, triton (softmax and layernorm), softmax, layernorm, kb (default gpu triton kb;
# one device call holds 10 minutes).  KB_PROBLEMS: the problems kb runs (default all ten), KB_LIMIT
# its wall-clock limit in seconds (default 300); TRITON_LIMIT the softmax's and the layernorm's (240),
# GPU_LIMIT make test-gpu's (300: its sections grew past 220 s).
set -u
OUT=${1:?OUT folder}
PARTS=${2:-gpu triton kb}
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
ROOT=$(pwd)
R=$OUT/r
mkdir -p "$R"
tar xzf .carry/bins.tgz
export KGATE="${KGATE:-$ROOT/bin/kgate-portable}" KGATE_INCLUDE="$ROOT/include"
export KGATE_LOCK_DIR=$(mktemp -d) PYTHONDONTWRITEBYTECODE=1
# the package installed as a user installs it (the reference files import kgate, and kgate's
# helper runs them isolated, python3 -I: PYTHONPATH would not reach it) into the Python that has
# torch and Triton (on the H200 machine a virtual environment of its own), without the network;
# the binary is the carried one (KGATE), so the package's own build is left out (KGATE_BUNDLE=0).
# Where that Python has no pip, a .pth file in its site-packages names the tree's python/ (what an
# editable install does).
PY=$(command -v python3)
if ! KGATE_BUNDLE=0 "$PY" -m pip install --no-build-isolation --no-deps --no-index ./python >"$R/pip.txt" 2>&1; then
    site=$("$PY" -c 'import site; print(site.getsitepackages()[0])')
    echo "$ROOT/python" >"$site/kgate-tree.pth" && echo "no pip: $site/kgate-tree.pth names $ROOT/python" >>"$R/pip.txt"
fi
"$PY" -I -c 'import kgate; print("kgate from", kgate.__file__)' >>"$R/pip.txt" 2>&1
export KGATE_PYTHON="$PY"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uname -a
  "$KGATE" --version; ldd "$KGATE"; python3 --version
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  python3 -c 'import numpy, pandas; print("numpy", numpy.__version__, "pandas", pandas.__version__)'; } >"$R/env.txt" 2>&1

if has gpu; then
    t0=$(date +%s)
    timeout "${GPU_LIMIT:-300}" sh tests/gpu/run.sh >"$R/test-gpu.txt" 2>&1
    echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$R/test-gpu.txt"
fi

W=$(mktemp -d)
awk '/<!-- kgate-doc: triton file softmax.py -->/ { f = 1; next } f && /^```python/ { p = 1; next }
     p && /^```/ { exit } p { print }' docs/python.md >"$W/softmax.py"
cp tools/device/triton_layernorm.py "$W/layernorm.py"
for s in $( (has triton || has softmax) && echo softmax) $( (has triton || has layernorm) && echo layernorm); do
    t0=$(date +%s)
    ( cd "$W" && timeout "${TRITON_LIMIT:-240}" python3 $s.py ) >"$R/$s.txt" 2>&1
    echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$R/$s.txt"
    if [ -d "$W/$s-run/evidence" ]; then
        "$KGATE" verify "$W/$s-run/evidence" >>"$R/$s.txt" 2>&1; echo "verify exit $?" >>"$R/$s.txt"
        mkdir -p "$R/$s-run"
        cp "$W/$s-run/$s.kg" "$W/$s-run/evidence/report.md" "$W/$s-run/evidence/results.json" "$R/$s-run/" 2>/dev/null
    fi
done
cp "$W/softmax.py" "$R/"

if has kb && [ -f tools/device/kernelbench_run.sh ]; then
    t0=$(date +%s)
    # shellcheck disable=SC2086
    timeout "${KB_LIMIT:-300}" sh tools/device/kernelbench_run.sh "$OUT/kb" ${KB_PROBLEMS:-} >"$R/kernelbench.txt" 2>&1
    echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$R/kernelbench.txt"
fi
# the problems' summaries and outputs (kb/r), not their work folders (evidence of every campaign:
# 54 MB for two problems, over the 16 MiB a device call brings back)
tar czf "$OUT/py31.tgz" -C "$OUT" r $( [ -d "$OUT/kb/r" ] && echo kb/r ) 2>/dev/null
rm -rf "$OUT/r" "$OUT/kb"
