#!/bin/sh
# Installs what kgate needs to build and test on Debian or Ubuntu.
#   sh tools/install-deps.sh [all|build|test]
# build: what `make` needs (the compiler and the libraries); test: what the test suite needs beyond
# it (Slurm, Python with numpy, pandas, pytest and torch, Chromium); all (the default): both.
# .ci/run installs the build part, then the test part beside the builds.
set -eu
WHAT=${1:-all}
case $WHAT in all | build | test) ;; *) echo "usage: sh tools/install-deps.sh [all|build|test]" >&2; exit 2 ;; esac
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if [ "$WHAT" != test ]; then
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential pkg-config \
    libinih-dev libjansson-dev libssl-dev libgsl-dev libopenblas-dev libseccomp-dev libarchive-dev zlib1g-dev libzstd-dev \
    python3 libxml2-utils >/dev/null
fi
if [ "$WHAT" = build ]; then
    echo "kgate: $WHAT dependencies installed"
    exit 0
fi
# (the test part alone reads the package lists itself)
if [ "$WHAT" = test ]; then $SUDO apt-get update -qq; fi
# a single-node Slurm for tests/cli/slurm.sh (slurmctld, slurmd, munged; the test configures and starts them)
$SUDO apt-get install -y -qq --no-install-recommends slurm-wlm slurmctld slurmd slurm-client munge >/dev/null ||
    echo "kgate: slurm-wlm and munge not installed (tests/cli/slurm.sh skips unless CI=true)"

# the Python package (python/, tests/cli/python.sh): pip install into a throwaway virtual
# environment over Debian's numpy, pandas and pytest, built offline with its setuptools and wheel;
# jsonschema validates results.json against docs/results.schema.json (tests/cli/formats.sh)
$SUDO apt-get install -y -qq --no-install-recommends \
    python3 python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-pandas python3-pytest \
    python3-jsonschema >/dev/null
# Debian's PyTorch, CPU only: ops declared in Python with tensors = torch (tests/cli/pyops.sh),
# the library arms' torch calls (tests/cli/pycall.sh) and `kgate import kernelbench`
# (tests/cli/kernelbench.sh); each leaves its torch part out where /usr/bin/python3 has no torch
$SUDO apt-get install -y -qq --no-install-recommends python3-torch >/dev/null ||
    echo "kgate: no python3-torch package (pyops.sh, pycall.sh and kernelbench.sh leave their torch parts out)"
# tests/cli/report_html.sh loads report.html in headless Chromium (Debian's chromium package)
# and checks its DOM with python3; where there is no such package (Ubuntu's is a snap), set
# CHROMIUM to a Chromium or Chrome binary
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
    echo "kgate: no chromium package (tests/cli/report_html.sh fails in CI without a browser: set CHROMIUM)"
command -v python3 >/dev/null 2>&1 || $SUDO apt-get install -y -qq --no-install-recommends python3 >/dev/null
# securesystemslib checks the signed envelopes with reference tooling (tests/attest_check.py);
# Debian's Python refuses a plain pip install outside a virtual environment
if command -v python3 >/dev/null 2>&1; then
    python3 -m pip --version >/dev/null 2>&1 || $SUDO apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
    $SUDO python3 -m pip install -q 'securesystemslib[crypto]' 2>/dev/null ||
        $SUDO python3 -m pip install -q --break-system-packages 'securesystemslib[crypto]' ||
        echo "kgate: securesystemslib not installed (tests/cli/attest.sh skips its check)"
fi
echo "kgate: $WHAT dependencies installed"
