#!/bin/sh
# Installs what kgate needs to build and test on Debian or Ubuntu.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential pkg-config \
    libinih-dev libjansson-dev libssl-dev libgsl-dev libopenblas-dev libseccomp-dev libarchive-dev zlib1g-dev >/dev/null
echo "kgate: build dependencies installed"
