# kgate verify replays the references of ops declared in Python through
# the op server: the folder's sources/op-NAME.py runs in kgate's Python
# helper, started by the server before it confines itself, confined in
# its child before the exec (namespaces, limits, the key folders and
# $HOME hidden, a first filter: no socket, no write open, no ptrace or
# mount) and by a second filter the helper stacks itself before any
# reference code runs (no exec, no fork).  docs/security.md, "Ops declared
# in Python".  The attacks, each from the reference while it runs for
# verify, armed by a file written after the campaign:
#   exit0    os._exit(0)
#   write    a file written, then the right values returned
#   socket   a socket opened, then the right values returned
#   exec     os.system, then the right values returned
#   key      the signing key read under $HOME
#   loop     a reference that never returns
#   garbage  bytes that are no frame written on the helper's socket
# Each must end NOT verified, exit 1, and leave nothing behind.
. tests/cli_lib.sh
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "pyops_confine: skipped (/usr/bin/python3 has no numpy)"; exit 0; }
unset KGATE_PYTHON
R=$(pwd)
mkdir -p "$T/home"
export HOME="$T/home"
unset XDG_CONFIG_HOME
"$KGATE" key init >/dev/null 2>&1 || die "kgate key init"
KEYDIR="$HOME/.config/kgate"
KEY=$(ls "$KEYDIR"/*.pem 2>/dev/null | grep -v pub | head -n 1)
[ -n "$KEY" ] && [ -f "$KEY" ] || die "no signing key under $KEYDIR"
ATTACK="$T/attack"
cat >"$T/saxpy_ref.py" <<EOF
import os
import socket

import numpy as np


def saxpy(X, Y0, alpha):
    try:
        with open("$ATTACK") as f:
            a = f.read().strip()
    except OSError:
        a = ""
    if a == "exit0":
        os._exit(0)
    elif a == "write":
        with open("$T/mark", "w") as f:
            f.write("written")
    elif a == "socket":
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    elif a == "exec":
        os.system("echo started > '$T/mark'")
    elif a == "key":
        with open("$KEY", "rb") as f:
            f.read()
    elif a == "loop":
        while True:
            pass
    elif a == "garbage":
        os.write(3, b"this is not a frame of kgate's at all")
    return alpha * X + Y0
EOF
cat >"$T/plan.kg" <<PLAN
[campaign]
name = pyops-confine
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = 1
seed = 5
margin = 1%
timeout = 60

[op saxpy]
reference = python:saxpy_ref.py:saxpy
vars = n alpha:real
inputs = X[n] Y0[n]
outputs = Y[n]

[case s]
op = saxpy
dtype = f32
n = 1000
alpha = 0.5

[arm plain]
op = saxpy
role = baseline
source = $R/kernels/cpu/saxpy.c
entry = saxpy

[arm fma]
op = saxpy
role = candidate
source = $R/kernels/cpu/saxpy.c
entry = saxpy_fma

[gate]
PLAN
"$KGATE" run --report "$T/plan.kg" -o "$T/ev" --no-progress --quiet-window 0 >"$T/run.out" 2>"$T/run.err"; st=$?
[ $st -le 1 ] || { cat "$T/run.err" >&2; die "the campaign: exit $st"; }
[ -f "$T/ev/sources/op-saxpy.py" ] || die "the reference is not in the folder as sources/op-saxpy.py"
PUB=$(ls "$KEYDIR"/*pub* | head -n 1)

# ---- 0. without an attack the folder verifies, its outputs replayed
"$KGATE" verify --key "$PUB" "$T/ev" >"$T/v0.out" 2>"$T/v0.err"; st=$?
[ $st = 0 ] || { cat "$T/v0.out" "$T/v0.err" >&2; die "the honest folder: verify exit $st"; }
expect_grep ": verified$" "$T/v0.out"
grep -q " 0 saved outputs replayed" "$T/v0.out" && die "the honest folder: no saved output was replayed"

attack() { # name [verify options...]: NOT verified, exit 1, no file left
    a=$1; shift
    rm -f "$T/mark"
    echo "$a" >"$ATTACK"
    "$KGATE" verify --key "$PUB" "$@" "$T/ev" >"$T/v-$a.out" 2>"$T/v-$a.err"; st=$?
    rm -f "$ATTACK"
    [ $st = 1 ] || { cat "$T/v-$a.out" "$T/v-$a.err" >&2; die "attack '$a': verify exit $st (1 expected: NOT verified)"; }
    grep -q "NOT verified" "$T/v-$a.err" || { cat "$T/v-$a.err" >&2; die "attack '$a': not said NOT verified"; }
    grep -q ": verified$" "$T/v-$a.out" && die "attack '$a': verify also printed verified"
    [ -e "$T/mark" ] && die "attack '$a': the reference left '$(cat "$T/mark")' in a file during verify"
    echo "ok   attack '$a': $(grep -m1 'MISMATCH' "$T/v-$a.err" | cut -c1-300)"
}
says() { # attack pattern
    grep -q -- "$2" "$T/v-$1.err" || { cat "$T/v-$1.err" >&2; die "attack '$1': verify did not say '$2'"; }
}
attack exit0
says exit0 "Python helper ended in the call: ended with status 0"
for a in write socket exec; do
    attack "$a"
    says "$a" "killed by signal 31 (a forbidden system call)"
done
attack key
says key "Error: \[Errno [0-9]*\] [A-Za-z ]*: .*signing-key"
attack garbage
says garbage "broke the protocol"
t0=$(date +%s)
attack loop --op-timeout 3
says loop "did not answer within 3 s"
[ $(( $(date +%s) - t0 )) -lt 60 ] || die "attack 'loop': verify took $(( $(date +%s) - t0 )) s"
echo "pyops_confine: ok"
