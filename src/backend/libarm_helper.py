# libarm_helper.py: kgate's library-arm helper (src/backend/libarm.h).
#
# A `builtin = torch` or `builtin = numpy` arm is a library call that this
# trusted helper makes on kgate's own buffers.  The worker writes this file
# (embedded in kgate) into the helper's private folder and runs it with the
# campaign's Python; it speaks the hostlink protocol on descriptor 3, a
# SOCK_SEQPACKET socket: every request and reply is one message holding one
# frame of kgate's one framing (src/base/frame.h): a 16-byte header of four
# little-endian 32-bit words, magic "KGF1" | kind | tag | payload length,
# then the payload.  The kind is the request's, the tag its sequence number
# (a reply repeats it; the hello's is 0), the payload one JSON object of at
# most --max-bytes bytes; a reply's has its "status" (OK, FAIL, REFUSED) and,
# unless OK, its "error".  A message that is not one whole frame of that
# magic, or a frame over the limit, ends the helper (the worker sees it go).
#
#   HELLO   (sent at start) the library's name and versions
#   LOAD    one case: the op, the call, the dtype, the variables and the
#           tensors; the reply gives the expression run and the provenance
#   BIND    the buffers: memfds (SCM_RIGHTS) on the cpu, CUDA IPC handles
#           of the worker's allocations on the GPU; on the GPU the pack
#           operations are captured as one CUDA graph here
#   RUN     one operation whose result lands in kgate's output buffers
#   TIME    one timed sample of pack operations: CUDA events around one
#           graph replay (and the host's monotonic clock around it, with
#           the device synchronised), or on the cpu the monotonic clock
#           around pack calls
#   UNLOAD  a loaded case (its slot) goes, with its mappings
#   QUIT    exits
# Several cases may be loaded at once (the worker loads an arm for its
# case and for held-out shapes side by side): LOAD replies a slot that
# the other requests name.
#
# The call is timed as a user makes it: where it cannot write kgate's
# output buffer itself (it returns a new tensor), its result is copied
# there outside the timing: in checked runs, and after each timed sample
# (the last operation's, as a native arm leaves it), so that the checks of
# timed executions (sampled, snapshot) see what the call computed.
import hashlib
import inspect
import json
import os
import socket
import struct
import sys
import threading
import time
import types
import warnings

MAGIC = 0x3146474B  # "KGF1"
HEADER = struct.Struct("<IIII")  # magic, kind, tag, payload length
MAX_FDS = 64  # descriptors of one BIND (libarm.h KG_LA_MAX_FDS)
HELLO, LOAD, BIND, RUN, TIME, QUIT, UNLOAD = 1, 2, 3, 4, 5, 6, 7
OK, FAIL, REFUSED = 0, 1, 3


def parse_args(argv):
    a = {"max_bytes": 16384, "library": "numpy", "device": "cpu", "threads": 1, "list": ""}
    i = 1
    while i + 1 < len(argv):
        k = argv[i].lstrip("-").replace("-", "_")
        a[k] = argv[i + 1]
        i += 2
    a["max_bytes"] = int(a["max_bytes"])
    a["threads"] = int(a["threads"])
    return a


ARGS = parse_args(sys.argv)
# one thread, as kgate's own cpu arms run: set before numpy or torch load a BLAS
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = str(ARGS["threads"])

LISTING = ARGS["list"] == "yes"   # --list yes: print the table of calls and exit (no socket, no library)
SOCK = None if LISTING else socket.socket(fileno=3)


def frame(kind, tag, payload):
    """One frame: the header, then the payload."""
    return HEADER.pack(MAGIC, kind, tag, len(payload)) + payload


def unframe(data, flags, max_bytes):
    """The (kind, tag, payload) of one received message, or a SystemExit
    naming why it is not one whole frame of at most max_bytes."""
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
        raise SystemExit("kgate libarm helper: a message longer than a frame of %d bytes (or with more than %d "
                         "descriptors)" % (max_bytes, MAX_FDS))
    if len(data) < HEADER.size:
        raise SystemExit("kgate libarm helper: a message of %d bytes, shorter than a frame's header" % len(data))
    magic, kind, tag, n = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise SystemExit("kgate libarm helper: not a kgate frame (magic %08x)" % magic)
    if n > max_bytes:
        raise SystemExit("kgate libarm helper: a frame of %d bytes, over the %d it takes" % (n, max_bytes))
    if len(data) != HEADER.size + n:
        raise SystemExit("kgate libarm helper: a message of %d bytes whose frame says %d" % (len(data), n))
    return kind, tag, data[HEADER.size:]


def send(kind, tag, status, obj):
    text = json.dumps(dict(obj, status=status), sort_keys=True).encode()
    if len(text) > ARGS["max_bytes"]:
        text = json.dumps({"error": "reply too long (%d bytes)" % len(text), "status": FAIL}).encode()
    SOCK.send(frame(kind, tag, text))


def recv():
    data, fds, flags, _addr = socket.recv_fds(SOCK, HEADER.size + ARGS["max_bytes"] + 1, MAX_FDS)
    if not data and not fds:
        return None
    try:
        kind, tag, text = unframe(data, flags, ARGS["max_bytes"])
    except SystemExit:
        for f in fds:
            os.close(f)
        raise
    return kind, tag, (json.loads(text) if text else {}), fds


class Refused(Exception):
    """The call does not take this case (a dtype, a missing feature)."""


# ------------------------------------------------------------ libraries

LIB = ARGS["library"]
ON_GPU = ARGS["device"] != "cpu"
np = None
torch = None
try:
    if LISTING:
        pass
    else:
        import numpy as np  # noqa: E402
    if LIB == "torch" and not LISTING:
        import torch  # noqa: E402
        torch.set_num_threads(ARGS["threads"])
        # float32 is float32: torch lets cuDNN's convolutions (and, where asked, cuBLAS's
        # matmuls) round f32 inputs to TF32, which the f32 contract does not admit (its
        # Conv1d on the H200 came out 11.5 times the library bound); an arm whose contract
        # is tf32 gets it back at its LOAD (set_tf32)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
except Exception as e:  # the hello says why; the worker fails the arm
    send(HELLO, 0, FAIL, {"error": "cannot import %s: %s: %s" % (LIB, type(e).__name__, e)})
    sys.exit(1)

NP_DT = {"f32": "float32", "f16": "float16", "f64": "float64", "i32": "int32", "i8": "int8"}
TORCH_DT = {}
if torch is not None:
    TORCH_DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
                "i32": torch.int32, "i8": torch.int8}
    # the 8-bit floats where this torch has them (a case of them is refused otherwise)
    for _k, _n in (("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2")):
        if hasattr(torch, _n):
            TORCH_DT[_k] = getattr(torch, _n)

DEV = None
CU = None
GATE = None  # the timed stream's gate (GPU), made at the first capture
if ON_GPU and not LISTING:
    import ctypes

    try:
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        want = ARGS["device"]
        idx = None
        for i in range(torch.cuda.device_count()):
            u = getattr(torch.cuda.get_device_properties(i), "uuid", None)
            if u is not None and ("GPU-" + str(u)) == want:
                idx = i
        if idx is None:
            if torch.cuda.device_count() != 1:
                raise RuntimeError("no device of UUID %s among torch's %d" % (want, torch.cuda.device_count()))
            idx = 0
        torch.cuda.set_device(idx)
        DEV = torch.device("cuda", idx)
        torch.zeros(1, device=DEV)  # the primary context, current on this thread
        CU = ctypes.CDLL("libcuda.so.1")
    except Exception as e:
        send(HELLO, 0, FAIL, {"error": "cannot open the GPU: %s: %s" % (type(e).__name__, e)})
        sys.exit(1)

    class IpcHandle(ctypes.Structure):
        # bytes, not c_char: a c_char array field is assigned up to its first NUL
        _fields_ = [("reserved", ctypes.c_ubyte * 64)]

    _open = getattr(CU, "cuIpcOpenMemHandle_v2", None) or CU.cuIpcOpenMemHandle
    _open.argtypes = [ctypes.POINTER(ctypes.c_uint64), IpcHandle, ctypes.c_uint]
    _close = CU.cuIpcCloseMemHandle
    _close.argtypes = [ctypes.c_uint64]

    CU.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
    _setcur = CU.cuCtxSetCurrent
    _setcur.argtypes = [ctypes.c_void_p]
    _MAPPED = {}  # handle (hex) -> [device address, references]: one mapping per allocation per process

    def ipc_map(hexh):
        m = _MAPPED.get(hexh)
        if m is not None:
            m[1] += 1
            return m[0]
        ptr = ctypes.c_uint64(0)
        h = IpcHandle.from_buffer_copy(bytes.fromhex(hexh))
        r = _open(ctypes.byref(ptr), h, 1)
        if r == 201:  # CUDA_ERROR_INVALID_CONTEXT: make the primary context current, as torch uses it
            ctx = ctypes.c_void_p()
            if CU.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), DEV.index) == 0 and _setcur(ctx) == 0:
                r = _open(ctypes.byref(ptr), h, 1)
        if r != 0:
            raise RuntimeError("cuIpcOpenMemHandle failed: CUresult %d" % r)
        _MAPPED[hexh] = [ptr.value, 1]
        return ptr.value

    def ipc_unmap(hexh):
        m = _MAPPED.get(hexh)
        if m is None:
            return
        m[1] -= 1
        if m[1] == 0:
            _close(m[0])
            del _MAPPED[hexh]

    def _cu(*names):
        for n in names:
            f = getattr(CU, n, None)
            if f is not None:
                return f
        return None

    class Gate:
        # The cuda backend's gate (cuda_timing.c): the timed stream waits on
        # a device flag while the first event, the replay and the last event
        # are enqueued, and the flag then opens it, so that the time the
        # interpreter takes between those calls is not inside the events.
        # Its own non-blocking streams (a blocking one would wait behind the
        # legacy stream).  A driver without stream memory operations, or
        # one that refuses them in the self-test, leaves it ungated (`gated`
        # in the record).
        def __init__(self):
            self.gated = False
            self.count = 0
            self.flag = torch.zeros(16, dtype=torch.int32, device=DEV)
            self.ptr = ctypes.c_uint64(self.flag.data_ptr())
            self.wait = _cu("cuStreamWaitValue32_v2", "cuStreamWaitValue32")
            self.write = _cu("cuStreamWriteValue32_v2", "cuStreamWriteValue32")
            create = _cu("cuStreamCreate")
            handles = []
            for _ in range(2):
                h = ctypes.c_void_p()
                if create is None or create(ctypes.byref(h), ctypes.c_uint(1)) != 0:
                    raise RuntimeError("cuStreamCreate failed")
                handles.append(h.value)
            self.timed = torch.cuda.ExternalStream(handles[0], device=DEV)
            self.side = ctypes.c_void_p(handles[1])
            self.th = ctypes.c_void_p(handles[0])
            if self.wait is None or self.write is None:
                return
            for f in (self.wait, self.write):
                f.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint, ctypes.c_uint]
            # written before it is waited on: a refusal cannot leave the stream waiting
            if self.write(self.side, self.ptr, 1, 0) != 0:
                return
            torch.cuda.synchronize(DEV)
            if self.wait(self.th, self.ptr, 1, 0) != 0:
                return
            torch.cuda.synchronize(DEV)
            self.count = 1
            self.gated = True

        def sample(self, graph, ev0, ev1):
            torch.cuda.synchronize(DEV)
            h0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            with torch.cuda.stream(self.timed):
                w = self.wait(self.th, self.ptr, self.count + 1, 0) if self.gated else 0
                try:
                    if w != 0:
                        raise RuntimeError("cuStreamWaitValue32 failed: CUresult %d" % w)
                    ev0.record(self.timed)
                    graph.replay()
                    ev1.record(self.timed)
                finally:
                    # the gate opens whatever happened above
                    if self.gated:
                        self.count += 1
                        if self.write(self.side, self.ptr, self.count, 0) != 0:
                            self.flag.fill_(self.count)
            torch.cuda.synchronize(DEV)
            h1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            return ev0.elapsed_time(ev1) * 1e6, float(h1 - h0)

    class NoGate:
        # no gate could be made (why): events around the replay on the current stream
        gated = False

        def __init__(self, why):
            self.why = why

        def sample(self, graph, ev0, ev1):
            torch.cuda.synchronize(DEV)
            h0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            ev0.record()
            graph.replay()
            ev1.record()
            torch.cuda.synchronize(DEV)
            h1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            return ev0.elapsed_time(ev1) * 1e6, float(h1 - h0)

    class _Cai:
        def __init__(self, ptr, n):
            self.__cuda_array_interface__ = {"shape": (n,), "typestr": "|u1", "data": (ptr, False),
                                             "version": 2, "strides": None}


def set_tf32(on):
    """TF32 for this arm's f32 convolutions and matmuls: only under a tf32 contract."""
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


def versions():
    v = {"library": LIB, "python": sys.version.split()[0], "python_executable": sys.executable, "numpy": np.__version__ if np is not None else None}
    if torch is not None:
        v["torch"] = torch.__version__
        v["torch_cuda"] = torch.version.cuda
        v["cudnn"] = None
        v["cublas"] = None
        v["torch_threads"] = torch.get_num_threads()
        if ON_GPU:
            try:
                v["cudnn"] = torch.backends.cudnn.version()
            except Exception:
                v["cudnn"] = None
            v["cublas"] = cublas_version()
            p = torch.cuda.get_device_properties(DEV)
            v["device_name"] = p.name
            v["device_uuid"] = "GPU-" + str(getattr(p, "uuid", "")) if getattr(p, "uuid", None) else None
            v["tf32_matmul"] = bool(torch.backends.cuda.matmul.allow_tf32)
            v["tf32_cudnn"] = bool(torch.backends.cudnn.allow_tf32)
    else:
        try:
            cfg = np.show_config(mode="dicts")
            blas = cfg.get("Build Dependencies", {}).get("blas", {})
            v["numpy_blas"] = "%s %s" % (blas.get("name", "?"), blas.get("version", "?"))
        except Exception:
            v["numpy_blas"] = None
    v["threads"] = ARGS["threads"]
    return v


def cublas_version():
    """cuBLAS's own version, asked of the libcublas this process loaded (None where none is)."""
    import ctypes
    try:
        torch.mm(torch.zeros(2, 2, device=DEV), torch.zeros(2, 2, device=DEV))
        path = None
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if "libcublas.so" in p and "Lt" not in os.path.basename(p):
                    path = p
                    break
        if path is None:
            return None
        lib = ctypes.CDLL(path)
        out = ctypes.c_int(0)
        if lib.cublasGetProperty(0, ctypes.byref(out)) != 0:
            return None
        parts = [out.value]
        for k in (1, 2):
            lib.cublasGetProperty(k, ctypes.byref(out))
            parts.append(out.value)
        return "%d.%d.%d" % tuple(parts)
    except Exception:
        return None


# --------------------------------------------------------------- calls
#
# CALLS[library][op] = (call name, expression, function).  A function gets
# the inputs as arrays or tensors in the op's shapes, the outputs likewise,
# and the case's variables; it writes into the outputs and returns None,
# or returns what the call returned, which RUN copies into output 0.
# The names and expressions must match src/backend/libarm.c's table
# (tests/cli/libarm.sh compares them).


def _np_f32(x):
    return x if x.dtype == np.float32 else x.astype(np.float32)


def np_rowsum(i, o, v):
    np.sum(i[0], axis=1, dtype=np.float32, out=o[0])


def np_rowmax(i, o, v):
    np.max(i[0], axis=1, out=o[0])


def np_softmax(i, o, v):
    # a new array, as numpy code writes it: the result lands in kgate's
    # buffer the way a returned torch tensor's does
    x = _np_f32(i[0])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_layernorm(i, o, v):
    x = _np_f32(i[0])
    mu = x.mean(axis=1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=1, keepdims=True)
    np.multiply(d / np.sqrt(var + np.float32(v["eps"])), _np_f32(i[1]), out=o[0])
    np.add(o[0], _np_f32(i[2]), out=o[0])


def np_rmsnorm(i, o, v):
    x = _np_f32(i[0])
    r = np.float32(1.0) / np.sqrt((x * x).mean(axis=1, keepdims=True) + np.float32(v["eps"]))
    np.multiply(x * r, _np_f32(i[1]), out=o[0])


def np_gemm_bt(i, o, v):
    np.matmul(_np_f32(i[0]), _np_f32(i[1]).T, out=o[0])


def np_gemm_nt(i, o, v):
    np.matmul(_np_f32(i[0]), _np_f32(i[1]), out=o[0])


def _t_mm(a, b, y):
    if a.dtype == torch.float32:
        torch.mm(a, b, out=y)
        return None
    try:
        return torch.mm(a, b, out_dtype=torch.float32)
    except TypeError:
        raise Refused("this torch has no torch.mm(..., out_dtype=torch.float32) for %s inputs: its %s result "
                      "would not meet the op's float32 output contract" % (a.dtype, a.dtype))


def t_rowsum(i, o, v):
    torch.sum(i[0], dim=1, dtype=torch.float32, out=o[0])


def t_rowmax(i, o, v):
    return torch.amax(i[0], dim=1)


def t_softmax(i, o, v):
    return torch.softmax(i[0], dim=1, dtype=torch.float32)


def t_layernorm(i, o, v):
    n = i[0].shape[1]
    return torch.nn.functional.layer_norm(i[0].float(), (n,), i[1].float(), i[2].float(), v["eps"])


def t_rmsnorm(i, o, v):
    n = i[0].shape[1]
    return torch.nn.functional.rms_norm(i[0].float(), (n,), i[1].float(), v["eps"])


def t_gemm_bt(i, o, v):
    return _t_mm(i[0], i[1].t(), o[0])


def t_gemm_nt(i, o, v):
    return _t_mm(i[0], i[1], o[0])


CALLS = {
    "numpy": {
        "rowsum": ("numpy.sum", "numpy.sum(X, axis=1, dtype=float32, out=Y)", np_rowsum),
        "rowmax": ("numpy.max", "numpy.max(X, axis=1, out=Y)", np_rowmax),
        "softmax": ("numpy.softmax", "Y = exp(X - max(X, axis=1)); Y /= sum(Y, axis=1) (float32)", np_softmax),
        "layernorm": ("numpy.layer_norm", "(X - mean) / sqrt(var + eps) * gamma + beta (float32)", np_layernorm),
        "rmsnorm": ("numpy.rms_norm", "X / sqrt(mean(X^2) + eps) * weight (float32)", np_rmsnorm),
        "gemm_bt": ("numpy.matmul", "numpy.matmul(A, B.T, out=C) (float32)", np_gemm_bt),
        "gemm_splitk": ("numpy.matmul", "numpy.matmul(A, B.T, out=C) (float32)", np_gemm_bt),
        "gemm_nt": ("numpy.matmul", "numpy.matmul(A, B, out=C) (float32)", np_gemm_nt),
    },
    "torch": {
        "rowsum": ("torch.sum", "torch.sum(X, dim=1, dtype=torch.float32, out=Y)", t_rowsum),
        "rowmax": ("torch.amax", "torch.amax(X, dim=1)", t_rowmax),
        "softmax": ("torch.softmax", "torch.softmax(X, dim=1, dtype=torch.float32)", t_softmax),
        "layernorm": ("torch.nn.functional.layer_norm",
                      "torch.nn.functional.layer_norm(X.float(), (N,), gamma.float(), beta.float(), eps)",
                      t_layernorm),
        "rmsnorm": ("torch.nn.functional.rms_norm",
                    "torch.nn.functional.rms_norm(X.float(), (N,), weight.float(), eps)", t_rmsnorm),
        "gemm_bt": ("torch.mm", "torch.mm(A, B.t(), out_dtype=torch.float32)", t_gemm_bt),
        "gemm_splitk": ("torch.mm", "torch.mm(A, B.t(), out_dtype=torch.float32)", t_gemm_bt),
        "gemm_nt": ("torch.mm", "torch.mm(A, B, out_dtype=torch.float32)", t_gemm_nt),
    },
}

# the op's tensor shapes from its variables
SHAPES = {
    "rowsum": (lambda v: [(v["M"], v["N"])], lambda v: [(v["M"],)]),
    "rowmax": (lambda v: [(v["M"], v["N"])], lambda v: [(v["M"],)]),
    "softmax": (lambda v: [(v["M"], v["N"])], lambda v: [(v["M"], v["N"])]),
    "layernorm": (lambda v: [(v["M"], v["N"]), (v["N"],), (v["N"],)], lambda v: [(v["M"], v["N"])]),
    "rmsnorm": (lambda v: [(v["M"], v["N"]), (v["N"],)], lambda v: [(v["M"], v["N"])]),
    "gemm_bt": (lambda v: [(v["M"], v["K"]), (v["N"], v["K"])], lambda v: [(v["M"], v["N"])]),
    "gemm_splitk": (lambda v: [(v["M"], v["K"]), (v["N"], v["K"])], lambda v: [(v["M"], v["N"])]),
    "gemm_nt": (lambda v: [(v["M"], v["K"]), (v["K"], v["N"])], lambda v: [(v["M"], v["N"])]),
}


def table():
    return {lib: {op: [c[0], c[1]] for op, c in ops.items()} for lib, ops in CALLS.items()}


# --------------------------------------------------------- python calls
#
# call = python:FILE:FUNCTION (docs/library-arms.md): the LOAD brings the
# text of FILE (the evidence folder's copy) as a sealed memfd with its
# sha256; it is compiled under FILE's name, run once per helper as a
# module of its own, and FUNCTION is called as FUNCTION(*inputs,
# **variables) on arrays over kgate's buffers in the op's shapes and
# dtypes.  It returns its outputs (one array, or a tuple or list in output
# order), copied into kgate's buffers outside the timing, or, when it
# takes a keyword `out`, writes them there (a tuple when there are
# several) and returns None.  The call runs here, beside the helper's
# clock: it is trusted as the plan is.

PY_MODULES = {}   # sha256 -> the module run from that text
PY_FILES = set()  # the names the calls' code was compiled under (for messages)
TRUST = "python call, timed in kgate's helper: trusted as the plan"


class Wrong(Exception):
    """What a python call returned does not meet the op's contract."""


def where(e):
    """ " (FILE:LINE)" of the innermost frame of a python call's file in e's traceback, or ""."""
    if isinstance(e, SyntaxError) and e.filename in PY_FILES:
        return " (%s:%s)" % (e.filename, e.lineno)
    tb, at = e.__traceback__, ""
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in PY_FILES:
            at = " (%s:%d)" % (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return at


def py_module(info, fds):
    if len(fds) != 1:
        raise RuntimeError("a python call's LOAD brings its file as one descriptor, not %d" % len(fds))
    parts, off = [], 0
    while True:
        b = os.pread(fds[0], 1 << 20, off)
        if not b:
            break
        parts.append(b)
        off += len(b)
    text = b"".join(parts)
    sha = hashlib.sha256(text).hexdigest()
    if sha != info["sha256"]:
        raise RuntimeError("the call's file hashes to %s, not the plan's %s" % (sha[:12], info["sha256"][:12]))
    mod = PY_MODULES.get(sha)
    if mod is None:
        name = info["file"]
        PY_FILES.add(name)
        stem = os.path.splitext(os.path.basename(name))[0]
        mod = types.ModuleType(stem)
        mod.__file__ = name
        try:
            exec(compile(text, name, "exec", dont_inherit=True), mod.__dict__)
        except Exception as e:
            raise RuntimeError("%s cannot be run%s: %s: %s" % (name, where(e), type(e).__name__, e))
        PY_MODULES[sha] = mod
    return mod


class PyCall:
    """A python call on one case: the function, the variables it takes,
    whether it takes out=, and what it must return."""

    def __init__(self, req, fds, case_vars):
        info = req["python"]
        mod = py_module(info, fds)
        func, fname = info["function"], info["file"]
        fn = mod.__dict__.get(func)
        if fn is None:
            defs = sorted(k for k, v in mod.__dict__.items() if inspect.isfunction(v) and not k.startswith("_"))
            raise RuntimeError("%s defines no %s (its functions: %s)" % (fname, func, ", ".join(defs) or "none"))
        if not callable(fn):
            raise RuntimeError("%s in %s is a %s, not a function" % (func, fname, type(fn).__name__))
        self.fn, self.func, self.file = fn, func, fname
        self.in_names, self.out_names = req["in_names"], req["out_names"]
        nin = len(self.in_names)
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = None   # no signature (a builtin): the inputs only
        kw, self.takes_out = {}, False
        if params is not None:
            P = inspect.Parameter
            positional = [n for n, p in params.items() if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
            named = {n for n, p in params.items() if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)}
            named -= set(positional[:nin])
            var_kw = any(p.kind == P.VAR_KEYWORD for p in params.values())
            self.takes_out = "out" in named
            kw = {k: v for k, v in case_vars.items() if k != "out" and (var_kw or k in named)}
            try:
                inspect.signature(fn).bind(*range(nin), **dict(kw, **({"out": None} if self.takes_out else {})))
            except TypeError as e:
                raise RuntimeError("%s%s cannot take the op's %d inputs (%s) and its variables (%s): %s"
                                   % (func, inspect.signature(fn), nin, ", ".join(self.in_names),
                                      ", ".join(sorted(case_vars)), e))
        self.kw = kw
        args = list(self.in_names) + ["%s=%s" % (k, k) for k in sorted(kw)]
        if self.takes_out:
            args.append("out=" + (self.out_names[0] if len(self.out_names) == 1 else
                                  "(" + ", ".join(self.out_names) + ")"))
        self.expression = "%s(%s) from %s" % (func, ", ".join(args), fname)
        self.record = {"file": fname, "function": func, "sha256": info["sha256"], "out": self.takes_out,
                       "trust": TRUST}

    def out_arg(self, outs):
        return outs[0] if len(outs) == 1 else tuple(outs)

    def results(self, r, outs, dts):
        """The arrays r holds, one per output, each checked against its
        output's shape and dtype; [] when the call wrote out=."""
        if self.takes_out:
            if r is None or r is self.kw.get("out") or (isinstance(r, (tuple, list)) and len(r) == len(outs)
                                                         and all(a is b for a, b in zip(r, outs))):
                return []
            raise Wrong("%s takes out=: it writes its outputs there and returns None, but it returned %s"
                        % (self.func, what(r)))
        if isinstance(r, (tuple, list)):
            rs = list(r)
        else:
            rs = [r]
        if len(rs) != len(outs):
            raise Wrong("%s returned %s: the op has %d output%s (%s), returned %s"
                        % (self.func, what(r), len(outs), "s" if len(outs) > 1 else "", ", ".join(self.out_names),
                           "as a tuple or list in that order" if len(outs) > 1 else "as one array"))
        for k, (x, o) in enumerate(zip(rs, outs)):
            want = "%s %s" % (dts[k], tuple(o.shape))
            if LIB == "numpy":
                ok_type = isinstance(x, np.ndarray)
            else:
                ok_type = isinstance(x, torch.Tensor)
            if not ok_type or tuple(x.shape) != tuple(o.shape) or x.dtype != o.dtype or \
                    (LIB == "torch" and x.device != o.device):
                raise Wrong("output %s (%s): %s returned %s" % (self.out_names[k], want, self.func, what(x)))
        return rs


def what(x):
    """What a call returned, in a message."""
    if x is None:
        return "None"
    if np is not None and isinstance(x, np.ndarray):
        return "a numpy array of %s %s" % (x.dtype, tuple(x.shape))
    if torch is not None and isinstance(x, torch.Tensor):
        return "a torch tensor of %s %s on %s" % (str(x.dtype).replace("torch.", ""), tuple(x.shape), x.device)
    if isinstance(x, (tuple, list)):
        return "a %s of %d: %s" % (type(x).__name__, len(x), ", ".join(what(y) for y in x[:4]))
    return "a %s" % type(x).__name__


def threads_left(n0, fn):
    """A python call that left threads running: its work after it
    returned would not be timed."""
    if threading.active_count() > n0:
        names = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
        raise Wrong("%s left %d thread%s running after it returned (%s): work done after a call returns is not "
                    "timed; finish it before returning" % (fn, threading.active_count() - n0,
                                                            "s" if threading.active_count() - n0 > 1 else "",
                                                            ", ".join(names[:4])))


# --------------------------------------------------------------- state

class Case:
    def __init__(self, req, fds=()):
        self.py = None
        if str(req.get("call") or "").startswith("python:"):
            self.init_python(req, fds)
            return
        op = req["op"]
        if op not in CALLS[LIB]:
            raise Refused("no %s call for op '%s'" % (LIB, op))
        name, expr, fn = CALLS[LIB][op]
        call = req.get("call") or name
        if call != name:
            raise Refused("op '%s' has the %s call '%s', not '%s'" % (op, LIB, name, call))
        self.op, self.call, self.expr, self.fn = op, call, expr, fn
        self.vars = dict(req["vars"])
        self.vars["eps"] = req.get("eps", 0.0)
        self.in_dt = req["in_dtypes"]
        self.out_dt = req["out_dtypes"]
        for d in self.in_dt + self.out_dt:
            if LIB == "numpy" and d not in NP_DT:
                raise Refused("numpy has no %s dtype" % d)
            if LIB == "torch" and d not in TORCH_DT:
                raise Refused("torch has no %s dtype" % d)
        ins, outs = SHAPES[op]
        self.in_shapes = ins(self.vars)
        self.out_shapes = outs(self.vars)
        self.compile = bool(req.get("compile"))
        self.prov = {"call": call, "expression": expr, "output": None, "compile": None, "cache": None}
        if self.compile:
            self.setup_compile(req)
        self.maps = []
        self.warm_in = []   # on the GPU: each input buffer's bytes, read before a warm sample
        self.warmed = (0.0, 0)
        self.graph = None
        self.graph_out = None
        self.sets = []      # per input set: the input arrays or tensors
        self.outs = []
        self.pack = 1
        self.nop = 0
        self.static_result = None

    def init_python(self, req, fds):
        self.op, self.call = req["op"], req["call"]
        self.in_dt = req["in_dtypes"]
        self.out_dt = req["out_dtypes"]
        for d in self.in_dt + self.out_dt:
            if LIB == "numpy" and d not in NP_DT:
                raise Refused("numpy has no %s dtype" % d)
            if LIB == "torch" and d not in TORCH_DT:
                raise Refused("this torch has no %s dtype" % d)
        self.in_shapes = [tuple(x) for x in req["in_shapes"]]
        self.out_shapes = [tuple(x) for x in req["out_shapes"]]
        case_vars = dict(req["vars"])
        case_vars.setdefault("eps", req.get("eps", 0.0))
        self.py = PyCall(req, fds, case_vars)
        self.vars = dict(self.py.kw)
        user = self.py.fn
        self.fn = lambda i, o, v: user(*i, **v)
        self.compile = bool(req.get("compile"))
        self.expr = self.py.expression
        self.prov = {"call": self.call, "expression": self.expr, "output": None, "compile": None, "cache": None,
                     "python": self.py.record}
        if self.compile:
            self.setup_compile(req)
        self.maps = []
        self.warm_in = []   # on the GPU: each input buffer's bytes, read before a warm sample
        self.warmed = (0.0, 0)
        self.graph = None
        self.graph_out = None
        self.sets = []
        self.outs = []
        self.pack = 1
        self.nop = 0
        self.static_result = None

    def setup_compile(self, req):
        if LIB != "torch":
            raise Refused("compile = yes needs builtin = torch")
        cache = req.get("cache_dir")
        os.makedirs(cache, exist_ok=True)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
        torch._dynamo.reset()
        self.cache_dir = cache
        self.fn = torch.compile(self.fn, fullgraph=True, dynamic=False)
        self.prov["compile"] = {"mode": "default", "fullgraph": True, "dynamic": False,
                                "cache_dir_fresh": True, "selected_config": None}

    def compile_record(self):
        """What torch.compile left in its fresh cache: the generated files by hash (its identity)."""
        files = []
        for root, _dirs, names in os.walk(self.cache_dir):
            for n in sorted(names):
                if n.endswith((".py", ".cubin", ".json")):
                    p = os.path.join(root, n)
                    with open(p, "rb") as f:
                        files.append([os.path.relpath(p, self.cache_dir), hashlib.sha256(f.read()).hexdigest()])
        configs = []
        for rel, _h in files:
            if rel.endswith(".json") and "triton" in rel:
                try:
                    with open(os.path.join(self.cache_dir, rel)) as f:
                        meta = json.load(f)
                    if isinstance(meta, dict) and "num_warps" in meta:
                        configs.append({"kernel": meta.get("name"), "num_warps": meta.get("num_warps"),
                                        "num_stages": meta.get("num_stages"), "shared": meta.get("shared")})
                except Exception:
                    pass
        self.prov["cache"] = {"files": files[:40], "nfiles": len(files)}
        self.prov["compile"]["selected_config"] = configs if configs else None

    # ---- buffers

    def release(self):
        self.graph = None
        self.graph_out = None
        self.static_result = None
        self.sets, self.outs = [], []
        self.warm_in = []
        if ON_GPU:
            torch.cuda.synchronize(DEV)
        for m in self.maps:
            if ON_GPU:
                ipc_unmap(m)
            else:
                try:
                    m.close()
                except BufferError:
                    pass
        self.maps = []

    def view(self, raw, dt, shape):
        n = 1
        for s in shape:
            n *= s
        if LIB == "numpy":
            return np.frombuffer(raw, dtype=NP_DT[dt], count=n).reshape(shape)
        if ON_GPU:
            t = torch.as_tensor(raw, device=DEV)
        else:
            # an input is mapped read-only (PROT_READ): torch warns that it
            # cannot mark the tensor so; a write to it faults the helper
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="The given buffer is not writable")
                t = torch.frombuffer(raw, dtype=torch.uint8)
        size = torch.tensor([], dtype=TORCH_DT[dt]).element_size()
        return t[: n * size].view(TORCH_DT[dt]).view(shape)

    def bind(self, req, fds):
        import mmap
        self.release()
        bufs = req["bufs"]
        self.pack = int(req["pack"])
        self.nop = int(req["nop"])
        sets = [[None] * len(self.in_shapes) for _ in range(1 + self.nop)]
        outs = [None] * len(self.out_shapes)
        for j, b in enumerate(bufs):
            if ON_GPU:
                ptr = ipc_map(b["ipc"])
                self.maps.append(b["ipc"])
                raw = _Cai(ptr, int(b["bytes"]))
            else:
                writable = b["role"] != "in"
                m = mmap.mmap(fds[j], int(b["bytes"]), mmap.MAP_SHARED,
                              mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0))
                self.maps.append(m)
                raw = m
            if b["role"] == "in":
                sets[b["set"]][b["index"]] = self.view(raw, self.in_dt[b["index"]], self.in_shapes[b["index"]])
                if ON_GPU:
                    self.warm_in.append(torch.as_tensor(raw, device=DEV))
            elif b["role"] == "out":
                outs[b["index"]] = self.view(raw, self.out_dt[b["index"]], self.out_shapes[b["index"]])
        for f in fds:
            os.close(f)
        if any(x is None for s in sets for x in s) or any(x is None for x in outs):
            raise RuntimeError("a tensor of the op was not bound")
        self.sets, self.outs = sets, outs
        if self.py is not None:
            if self.py.takes_out:
                self.vars["out"] = self.py.kw["out"] = self.py.out_arg(outs)
            n0 = threading.active_count()
            r = self.fn(self.sets[0], self.outs, self.vars)
            threads_left(n0, self.py.func)
            self.land(r)
            self.prov["output"] = ("written into kgate's output buffer by the call (out=)" if self.py.takes_out else
                                   "returned by the call, copied into kgate's output buffer in checked runs and "
                                   "after each timed sample (not timed)")
            if ON_GPU:
                self.capture()
            return
        # one untimed call: it says whether the call writes kgate's buffer itself
        r = self.fn(self.sets[0], self.outs, self.vars)
        self.prov["output"] = ("written into kgate's output buffer by the call" if r is None else
                               "returned by the call, copied into kgate's output buffer in checked runs and "
                               "after each timed sample (not timed)")
        if ON_GPU:
            self.capture()

    def op_set(self, i, n):
        j = n - 2 - i
        return self.sets[j + 1] if 0 <= j < self.nop else self.sets[0]

    def capture(self):
        # the call's first runs (and torch.compile's compilation) outside the graph, on a side stream
        s = torch.cuda.Stream(device=DEV)
        s.wait_stream(torch.cuda.current_stream(DEV))
        with torch.cuda.stream(s):
            for _ in range(3):
                self.fn(self.sets[0], self.outs, self.vars)
        torch.cuda.current_stream(DEV).wait_stream(s)
        torch.cuda.synchronize(DEV)
        if self.compile:
            self.compile_record()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(self.pack):
                r = self.fn(self.op_set(i, self.pack), self.outs, self.vars)
        # the last operation's returned tensor (the graph's own memory,
        # rewritten by every replay), or None when the call writes kgate's
        self.graph_out = r
        self.graph = g
        self.ev0 = torch.cuda.Event(enable_timing=True)
        self.ev1 = torch.cuda.Event(enable_timing=True)
        global GATE
        if GATE is None:
            try:
                GATE = Gate()
            except Exception as e:
                GATE = NoGate("%s: %s" % (type(e).__name__, e))
        self.prov["gate"] = ("the stream waits on a device flag while the events and the replay are enqueued "
                             "(cuStreamWaitValue32), as the cuda backend's samples do" if GATE.gated else
                             "ungated: %s" % (getattr(GATE, "why", None) or
                                              "this driver refused stream memory operations"))

    # ---- runs

    def land(self, r):
        # a returned result into kgate's output buffer (outside any timing)
        if self.py is not None:
            for x, o in zip(self.py.results(r, self.outs, self.out_dt), self.outs):
                if LIB == "numpy":
                    np.copyto(o, x)
                else:
                    o.copy_(x)
            return
        if r is None:
            return
        if LIB == "numpy":
            np.copyto(self.outs[0], r)
        else:
            self.outs[0].copy_(r)

    def run(self):
        n0 = threading.active_count()
        r = self.fn(self.sets[0], self.outs, self.vars)
        if self.py is not None:
            threads_left(n0, self.py.func)
        self.land(r)
        if ON_GPU:
            torch.cuda.synchronize(DEV)

    def warm_l2(self):
        # l2 = warm: every input set's bytes read on the device (a reduction
        # over each buffer) just before the sample, in this process, whose
        # sample synchronises first; the host's time for it and the bytes
        h0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
        n = 0
        for t in self.warm_in:
            torch.amax(t)
            n += t.numel()
        torch.cuda.synchronize(DEV)
        return float(time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW) - h0), n

    def time(self, pack, warm=False):
        if pack != self.pack:
            raise RuntimeError("TIME of pack %d on a binding of pack %d" % (pack, self.pack))
        self.warmed = (0.0, 0)
        if ON_GPU:
            if warm:
                self.warmed = self.warm_l2()
            ev_ns, host_ns = GATE.sample(self.graph, self.ev0, self.ev1)
            if self.graph_out is not None or self.py is not None:
                self.land(self.graph_out)
                torch.cuda.synchronize(DEV)
            return ev_ns, host_ns
        fn, outs, v = self.fn, self.outs, self.vars
        r = None
        n0 = threading.active_count()
        if self.nop == 0:
            x = self.sets[0]
            t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            for _ in range(pack):
                r = fn(x, outs, v)
            t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
        else:
            xs = [self.op_set(i, pack) for i in range(pack)]
            t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            for x in xs:
                r = fn(x, outs, v)
            t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
        if self.py is not None:
            threads_left(n0, self.py.func)
        self.land(r)
        return float(t1 - t0), float(t1 - t0)


def main():
    if LISTING:
        print(json.dumps(table(), sort_keys=True))
        return 0
    send(HELLO, 0, OK, {"versions": versions()})
    cases = {}
    next_slot = 0
    while True:
        m = recv()
        if m is None:
            return 0
        typ, seq, req, fds = m
        if typ == QUIT:
            send(QUIT, seq, OK, {})
            return 0
        try:
            if typ == LOAD:
                try:
                    set_tf32(bool(req.get("tf32")))
                    case = Case(req, fds)
                    if torch is not None and ON_GPU:
                        case.prov["tf32"] = ("allowed (the arm's precision contract is tf32)" if req.get("tf32") else
                                             "off: torch.backends.cudnn.allow_tf32 and "
                                             "torch.backends.cuda.matmul.allow_tf32 False (an f32 contract)")
                finally:
                    for f in fds:
                        os.close(f)
                cases[next_slot] = case
                send(LOAD, seq, OK, {"provenance": case.prov, "slot": next_slot})
                next_slot += 1
                continue
            case = cases.get(req.get("slot"))
            if case is None:
                for f in fds:
                    os.close(f)
                raise RuntimeError("no case loaded in slot %r" % (req.get("slot"),))
            if typ == UNLOAD:
                case.release()
                del cases[req["slot"]]
                send(UNLOAD, seq, OK, {})
            elif typ == BIND:
                case.bind(req, fds)
                send(BIND, seq, OK, {"provenance": case.prov})
            elif typ == RUN:
                case.run()
                send(RUN, seq, OK, {})
            elif typ == TIME:
                ns, host_ns = case.time(int(req["pack"]), bool(req.get("warm", False)))
                send(TIME, seq, OK, {"ns": ns, "host_ns": host_ns, "warm_ns": case.warmed[0],
                                     "warm_bytes": case.warmed[1]})
            else:
                send(typ, seq, FAIL, {"error": "unknown request %d" % typ})
        except Refused as e:
            send(typ, seq, REFUSED, {"error": str(e)})
        except Wrong as e:
            send(typ, seq, FAIL, {"error": str(e)})
        except Exception as e:
            send(typ, seq, FAIL, {"error": "%s: %s%s" % (type(e).__name__, e, where(e))})


if __name__ == "__main__":
    sys.exit(main())
