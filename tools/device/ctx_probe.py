#!/usr/bin/env python3
"""tools/device/ctx_probe.py [N ...]: what a CUDA context per process costs on this GPU, and how many
can live at once, the way kgate's cuda arm hosts hold them (one process, cuInit, the device's primary
context, two non-blocking streams (the timed one and the gate's), a 32 MiB allocation, then idle until released).

For each N (default 64 132) and each setting of CUDA_DEVICE_MAX_CONNECTIONS (the driver's
default, and 2: the hardware work queues a context opens; an arm host uses two streams, and its
gate needs them on different queues), starts N such
processes at once, and prints one line: how many reached their stream, how many failed and with which
CUDA error, the wall until the last was ready, the median and largest time a process took to be ready,
the system and user CPU seconds the N spent (from their own getrusage at the end), and the wall to
close them all.  CONNS (environment, default "default,2"): the settings to try, in order, "default"
being the driver's own.  Reads nothing but libcuda; writes only to stdout.
"""
import ctypes
import os
import subprocess
import sys
import time

CHILD = r"""
import ctypes, os, sys, time, resource
t0 = time.monotonic()
cu = ctypes.CDLL("libcuda.so.1")
def call(name, *a):
    r = getattr(cu, name)(*a)
    if r != 0:
        s = ctypes.c_char_p()
        cu.cuGetErrorName(r, ctypes.byref(s))
        print("fail %s %s %.3f" % (name, (s.value or b"?").decode(), time.monotonic() - t0), flush=True)
        sys.stdin.readline()
        sys.exit(1)
call("cuInit", 0)
dev = ctypes.c_int()
call("cuDeviceGet", ctypes.byref(dev), 0)
ctx = ctypes.c_void_p()
call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
call("cuCtxSetCurrent", ctx)
st = ctypes.c_void_p()
call("cuStreamCreate", ctypes.byref(st), 1)
side = ctypes.c_void_p()
call("cuStreamCreate", ctypes.byref(side), 1)
p = ctypes.c_uint64()
call("cuMemAlloc_v2", ctypes.byref(p), 32 << 20)
call("cuMemsetD8Async", p, 0, 32 << 20, st)
call("cuStreamSynchronize", st)
print("ready %.3f" % (time.monotonic() - t0), flush=True)
sys.stdin.readline()
u = resource.getrusage(resource.RUSAGE_SELF)
print("usage %.3f %.3f" % (u.ru_utime, u.ru_stime), flush=True)
"""


def one(n, conn):
    env = dict(os.environ)
    if conn is None:
        env.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
    else:
        env["CUDA_DEVICE_MAX_CONNECTIONS"] = str(conn)
    t0 = time.monotonic()
    ps = [subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           env=env, text=True) for _ in range(n)]
    ready, fails, why = [], 0, {}
    for p in ps:
        line = p.stdout.readline().split()
        if line and line[0] == "ready":
            ready.append(float(line[1]))
        else:
            fails += 1
            key = " ".join(line[1:3]) if len(line) >= 3 else "no answer"
            why[key] = why.get(key, 0) + 1
    t_ready = time.monotonic() - t0
    t1 = time.monotonic()
    ut = stt = 0.0
    for p in ps:
        try:
            p.stdin.write("\n")
            p.stdin.flush()
        except BrokenPipeError:
            pass
    for p in ps:
        out = p.stdout.read().split()
        if len(out) == 3 and out[0] == "usage":
            ut += float(out[1])
            stt += float(out[2])
        p.wait()
    t_close = time.monotonic() - t1
    ready.sort()
    med = ready[len(ready) // 2] if ready else float("nan")
    top = ready[-1] if ready else float("nan")
    print("N %d connections %s: %d ready, %d failed %s; all ready after %.2f s (a process: median %.2f s, "
          "largest %.2f s); cpu user %.1f s sys %.1f s; closed in %.2f s"
          % (n, "default" if conn is None else conn, len(ready), fails, why or "", t_ready, med, top, ut, stt,
             t_close), flush=True)


def main():
    ns = [int(a) for a in sys.argv[1:]] or [64, 132]
    conns = [None if c == "default" else int(c) for c in os.environ.get("CONNS", "default,2").split(",")]
    for n in ns:
        for conn in conns:
            one(n, conn)
            time.sleep(1)


if __name__ == "__main__":
    main()
