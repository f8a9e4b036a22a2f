# kgate's Python ops helper (docs/ops.md, "Ops in Python"): embedded in
# the kgate binary (the Makefile makes it a string, src/ops/pyops.c starts
# it as `python3 -I -B`), never read from disk by kgate.
#
# It runs the reference of an op declared in Python, FUNCTION(*inputs,
# **variables), for the process that needs references (a worker, the
# supervisor, verify's op server): kgate sends the reference's source text
# (a memfd; its sha256 checked here against the plan's), then for each
# call the inputs as memfds of float64 and one memfd of float64 per output
# to write.  mode "ref" calls the function on float64 copies; mode "lib"
# on the same values in the case's dtypes (bf16 as float32 under numpy,
# which has no bf16; the 8-bit floats as float32; torch has bfloat16),
# the "library" evaluation the library bound is built from; mode "libp" as
# "lib" on inputs moved by one unit of roundoff of that dtype, up or down.
#
# Protocol: kgate's framing (src/base/frame.h): every message one frame of
# a SOCK_SEQPACKET socket on descriptor 3, header "<IIII" (magic KGF1,
# kind, tag = the request's sequence number, payload length), payload a
# JSON object; a reply carries "status" (0 ok, 1 failed) and, failed, an
# "error".  Kinds: HELLO (sent first: versions), LOAD, CALL, QUIT.
#
# With --confine yes (verify's op server) the helper, once numpy (and
# torch) are imported and before any reference code runs, installs a
# seccomp filter of its own (ctypes, below) that kills it on exec, fork,
# a socket, a ptrace, a mount or an open for writing; the process was
# started confined already (kgate's sandbox: namespaces, limits, the key
# folders hidden, a first filter).
import hashlib
import json
import mmap
import os
import socket
import struct
import sys

MAGIC = 0x3146474B  # "KGF1"
HEADER = struct.Struct("<IIII")
HELLO, LOAD, CALL, QUIT = 1, 2, 3, 4
OK, FAIL = 0, 1
MAX_BYTES = 65536
MAX_FDS = 12


def parse_args(argv):
    a = {"torch": "no", "confine": "no"}
    i = 1
    while i + 1 < len(argv):
        a[argv[i].lstrip("-")] = argv[i + 1]
        i += 2
    return a


ARGS = parse_args(sys.argv)
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
SOCK = socket.socket(fileno=3)


def send(kind, tag, status, obj):
    text = json.dumps(dict(obj, status=status), sort_keys=True).encode()
    if len(text) > MAX_BYTES:
        text = json.dumps({"error": "reply too long", "status": FAIL}).encode()
    SOCK.send(HEADER.pack(MAGIC, kind, tag, len(text)) + text)


def recv():
    data, fds, flags, _ = socket.recv_fds(SOCK, HEADER.size + MAX_BYTES + 1, MAX_FDS)
    if not data and not fds:
        return None
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(data) < HEADER.size:
        raise SystemExit("kgate pyops helper: a message that is not one whole frame")
    magic, kind, tag, n = HEADER.unpack_from(data)
    if magic != MAGIC or n > MAX_BYTES or len(data) != HEADER.size + n:
        raise SystemExit("kgate pyops helper: not a kgate frame")
    return kind, tag, json.loads(data[HEADER.size:]) if n else {}, fds


# ---- the second filter (--confine yes) ----

def confine():
    """Kills this process on exec, fork, sockets, ptrace, mounts and opens
    for writing: a classic BPF program over seccomp_data (x86_64 only;
    elsewhere the helper refuses to run confined)."""
    import ctypes
    import platform
    if platform.machine() != "x86_64":
        raise RuntimeError("the confined helper runs on x86_64 only")
    LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
    KILL, ALLOW, ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
    ARCH, NR, ARG0, ARG1, ARG2 = 4, 0, 16, 24, 32
    deny = [59, 322, 57, 58, 41, 42, 43, 49, 50, 53, 101, 165, 166, 155, 175, 313, 246, 320, 304, 310, 311, 62, 200,
            234, 129, 297, 86, 88, 265, 266, 90, 91, 92, 93, 94, 260, 268, 76, 77, 82, 264, 316, 83, 258, 84, 87,
            263, 133, 259]
    # execve execveat fork vfork socket connect accept bind listen socketpair ptrace mount umount2 pivot_root
    # init_module finit_module kexec_load kexec_file_load open_by_handle_at process_vm_readv process_vm_writev kill
    # tkill tgkill rt_sigqueueinfo rt_tgsigqueueinfo link symlink linkat symlinkat chmod fchmod fchown lchown
    # fchownat fchmodat truncate ftruncate rename renameat renameat2 mkdir mkdirat rmdir unlink unlinkat
    # mknod mknodat
    wr = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY O_RDWR O_CREAT O_TRUNC O_APPEND
    prog = [(LD_W_ABS, 0, 0, ARCH), (JEQ_K, 1, 0, 0xC000003E), (RET_K, 0, 0, KILL), (LD_W_ABS, 0, 0, NR)]
    for nr in deny:
        prog += [(JEQ_K, 0, 1, nr), (RET_K, 0, 0, KILL)]
    # clone: threads only (CLONE_THREAD); clone3: ENOSYS, so that libc falls back to clone
    prog += [(JEQ_K, 0, 3, 56), (LD_W_ABS, 0, 0, ARG0), (JSET_K, 1, 0, 0x10000), (RET_K, 0, 0, KILL)]
    prog += [(LD_W_ABS, 0, 0, NR), (JEQ_K, 0, 1, 435), (RET_K, 0, 0, ERRNO | 38)]
    # open(path, flags): flags arg1; openat(dir, path, flags): arg2; creat
    prog += [(JEQ_K, 0, 1, 85), (RET_K, 0, 0, KILL)]
    prog += [(JEQ_K, 0, 3, 2), (LD_W_ABS, 0, 0, ARG1), (JSET_K, 0, 1, wr), (RET_K, 0, 0, KILL)]
    prog += [(LD_W_ABS, 0, 0, NR), (JEQ_K, 0, 3, 257), (LD_W_ABS, 0, 0, ARG2), (JSET_K, 0, 1, wr),
             (RET_K, 0, 0, KILL)]
    prog += [(LD_W_ABS, 0, 0, NR), (JEQ_K, 0, 1, 437), (RET_K, 0, 0, KILL)]  # openat2: its flags are in a struct
    prog += [(RET_K, 0, 0, ALLOW)]

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    arr = (Filter * len(prog))(*[Filter(*f) for f in prog])
    p = Prog(len(prog), arr)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(22, 2, ctypes.byref(p), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


# ---- the references ----

NP_LIB = {"f32": "float32", "f16": "float16", "bf16": "float32", "f64": "float64", "i32": "int32", "i8": "int8",
          "e4m3": "float32", "e5m2": "float32"}
TORCH_LIB = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "i32": "int32", "i8": "int8",
             "e4m3": "float32", "e5m2": "float32"}


UNIT = {"float64": 2.0 ** -52, "float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def perturbed(a, k, dtype):
    """a (float64) with every element moved by one unit of float32's
    roundoff (float64's for float64 evaluations), up or down at random (a
    fixed stream per input k): the library evaluation's sensitivity, what a
    kernel whose float32 intermediates round elsewhere errs by.  A kernel's
    inputs are exact, so the unit is that of its intermediates, never the
    16-bit storage type's: at an ill-conditioned point (a constant row of a
    layernorm) a 16-bit unit admits errors no correct kernel makes.
    Integer inputs stay."""
    import numpy as np
    if UNIT.get(dtype) is None:
        return a
    u = UNIT["float64"] if dtype == "float64" else UNIT["float32"]
    s = np.random.default_rng(20261204 + k).integers(0, 2, size=a.shape) * 2 - 1
    return a * (1 + u * s)


SHORT = ("f16", "bf16", "e4m3", "e5m2")
LONG = ("f32", "f64")


def perturbed_dtype(dtypes):
    """The type the perturbed evaluation computes in, from the storage
    dtypes of the case's inputs: float32 where every floating input is
    stored in 16 bits or fewer (the moved inputs are exact in float32; their
    own type would round the move away), else float64 (float32 would
    quantise the move of a float32 input to whole units, and the mean of a
    constant row lands on some of them: the sensitivity vanishes at half the
    row).  None where no input is floating."""
    floats = [d for d in dtypes if d in SHORT or d in LONG]
    if not floats:
        return None
    return "float64" if any(d in LONG for d in floats) else "float32"


class Op:
    def __init__(self, req, fds):
        if len(fds) != 1:
            raise RuntimeError("LOAD takes one descriptor (the source)")
        with os.fdopen(fds[0], "rb") as f:
            text = f.read()
        got = hashlib.sha256(text).hexdigest()
        if got != req["sha256"]:
            raise RuntimeError("the source hashes to %s, the plan says %s" % (got[:12], req["sha256"][:12]))
        self.name, self.function, self.torch = req["name"], req["function"], bool(req["torch"])
        mod = {"__name__": "kgate_op_" + self.name, "__file__": req["file"], "__builtins__": __builtins__}
        exec(compile(text, req["file"], "exec"), mod)
        fn = mod.get(self.function)
        if not callable(fn):
            raise RuntimeError("%s defines no function %s (def %s(...): the reference)" % (req["file"],
                                                                                          self.function,
                                                                                          self.function))
        self.fn = fn
        import inspect
        try:
            sig = inspect.signature(fn)
            self.kwargs_all = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
            self.params = set(sig.parameters)
        except (TypeError, ValueError):
            self.kwargs_all, self.params = True, set()

    def call(self, req, fds):
        import numpy as np
        ins, outs = req["in"], req["out"]
        if len(fds) != len(ins) + len(outs):
            raise RuntimeError("CALL takes %d descriptors" % (len(ins) + len(outs)))
        lib = req["mode"] == "lib"
        ref = req["mode"] == "ref"
        pdt = perturbed_dtype([d["dtype"] for d in ins]) if req["mode"] == "libp" else None
        args = []
        try:
            for k, d in enumerate(ins):
                n = 1
                for x in d["shape"]:
                    n *= x
                with mmap.mmap(fds[k], n * 8, prot=mmap.PROT_READ) as mm:
                    a = np.frombuffer(mm, dtype="<f8", count=n).reshape(d["shape"]).copy()
                if req["mode"] == "libp":
                    # moved by a float32 unit and evaluated in pdt; integers keep their type
                    libt = TORCH_LIB[d["dtype"]] if self.torch else NP_LIB[d["dtype"]]
                    a = perturbed(a, k, libt).astype(libt if UNIT.get(libt) is None else pdt)
                elif lib:
                    a = a.astype(NP_LIB[d["dtype"]]) if not self.torch else a
                if self.torch:
                    import torch
                    a = torch.from_numpy(a)
                    if lib:
                        a = a.to(getattr(torch, TORCH_LIB[d["dtype"]]))
                args.append(a)
            kw = {}
            for k, v in req["vars"].items():
                if self.kwargs_all or k in self.params:
                    kw[k] = v
            r = self.fn(*args, **kw)
            if not isinstance(r, (tuple, list)):
                r = (r,)
            if len(r) != len(outs):
                raise RuntimeError("returned %d arrays, the op declares %d outputs" % (len(r), len(outs)))
            for o, (x, d) in enumerate(zip(r, outs)):
                if self.torch:
                    import torch
                    if not isinstance(x, torch.Tensor):
                        raise RuntimeError("output %s is a %s, not a torch.Tensor" % (d["name"], type(x).__name__))
                    if not ref and x.dtype == torch.bfloat16:
                        x = x.float()
                    x = x.detach().cpu().numpy()
                elif not isinstance(x, np.ndarray) and not np.isscalar(x):
                    raise RuntimeError("output %s is a %s, not a numpy.ndarray" % (d["name"], type(x).__name__))
                x = np.asarray(x)
                if list(x.shape) != list(d["shape"]):
                    raise RuntimeError("output %s has shape %s, the op declares %s" % (d["name"], list(x.shape),
                                                                                    list(d["shape"])))
                if x.dtype.kind not in "fiub":
                    raise RuntimeError("output %s has dtype %s (a real array is due)" % (d["name"], x.dtype))
                if ref and x.dtype != np.float64:
                    raise RuntimeError("output %s is %s: the reference gets float64 inputs and must return float64 "
                                       "(compute in float64)" % (d["name"], x.dtype))
                os.pwrite(fds[len(ins) + o], np.ascontiguousarray(x, dtype="<f8").tobytes(), 0)
        finally:
            for f in fds:
                os.close(f)


def versions():
    v = {"python": sys.version.split()[0]}
    import numpy
    v["numpy"] = numpy.__version__
    if ARGS["torch"] == "yes":
        import torch
        torch.set_num_threads(1)
        v["torch"] = torch.__version__
    return v


def main():
    try:
        v = versions()
        if ARGS["confine"] == "yes":
            confine()
    except Exception as e:
        send(HELLO, 0, FAIL, {"error": "cannot import %s: %s" % ("torch" if ARGS["torch"] == "yes" else "numpy", e)
                              if isinstance(e, ImportError) else "%s: %s" % (type(e).__name__, e)})
        return 1
    send(HELLO, 0, OK, {"versions": v})
    ops = {}
    while True:
        m = recv()
        if m is None:
            return 0
        kind, tag, req, fds = m
        if kind == QUIT:
            return 0
        try:
            if kind == LOAD:
                ops[req["name"]] = Op(req, fds)
                send(LOAD, tag, OK, {})
            elif kind == CALL:
                op = ops.get(req.get("name"))
                if op is None:
                    for f in fds:
                        os.close(f)
                    raise RuntimeError("no op %r loaded" % (req.get("name"),))
                op.call(req, fds)
                send(CALL, tag, OK, {})
            else:
                for f in fds:
                    os.close(f)
                send(kind, tag, FAIL, {"error": "unknown request %d" % kind})
        except Exception as e:
            import traceback
            tb = traceback.extract_tb(e.__traceback__)
            where = ""
            for fr in reversed(tb):
                if fr.filename != __file__ and not fr.filename.endswith("kgate_pyops.py"):
                    where = " (%s:%d)" % (os.path.basename(fr.filename), fr.lineno)
                    break
            send(kind, tag, FAIL, {"error": "%s: %s%s" % (type(e).__name__, e, where)})


if __name__ == "__main__":
    sys.exit(main())
