"""tools/device/tf32_probe.py: how the GPU's TF32 matrix products convert their f32 inputs.

kgate's tf32 contract admits f32 inputs rounded to nearest (cvt.rna) or truncated to TF32, each
operand either way (docs/admission.md; before 18092d9 it admitted rounding only, and
docs/measurements/cpu-2026-12-05-tf32-truncation/ showed truncation failing it on rows of one
sign). This probe says which of the two the hardware does: it compares (1) torch's f32 matmul with
TF32 allowed (cuBLAS) and (2) kgate's own Hopper kernel, kernels/cuda/splitk_wgmma.cu with f32
inputs (wgmma .tf32 on the raw operands in shared memory, compiled by NVRTC for sm_90a and
launched through the driver API; skipped on another GPU), against float64 models of the same product, inputs
rounded to nearest, truncated, or exact (f32), on rows of one sign (where the models differ by a
bias that grows with K) and on mixed signs. Prints, per shape and sign, the mean signed difference
and the mean absolute difference of the GPU result to each model, relative to sum|t|: the model
whose differences are near the f32 accumulation's noise is what the hardware does.

Usage (a GPU with torch), from the repository root:
    python3 tools/device/tf32_probe.py
"""
import sys

import numpy as np
import torch


def tf32(x, mode):
    """x (float32 array) with its 13 low mantissa bits rounded to nearest (ties away) or dropped."""
    u = x.view(np.uint32).copy()
    finite = (u & 0x7F800000) != 0x7F800000
    if mode == "rna":
        u[finite] += np.uint32(0x1000)
    u[finite] &= np.uint32(0xFFFFE000)
    return u.view(np.float32)


def compare(name, c, a, b, out):
    """Lines of c's mean signed and absolute difference to each model of a @ b.T."""
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)).T
    for mode in ("rna", "trunc", "f32"):
        aa = a if mode == "f32" else tf32(a, mode)
        bb = b if mode == "f32" else tf32(b, mode)
        d = c - aa.astype(np.float64) @ bb.astype(np.float64).T
        out.append("%s vs %-5s: mean %+.2e  mean|.| %.2e (of sum|t|)" %
                   (name, mode, np.mean(d / scale), np.mean(np.abs(d) / scale)))


def _nvrtc_cubin(src, opts):
    """src compiled by NVRTC (libnvrtc) to a cubin: (bytes, None) or (None, why)."""
    import ctypes
    lib = None
    for name in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        return None, "no libnvrtc"
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"splitk_wgmma.cu", 0, None, None)
    o = [x.encode() for x in opts]
    r = lib.nvrtcCompileProgram(prog, len(o), (ctypes.c_char_p * len(o))(*o))
    if r != 0:
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        return None, "nvrtc %d: %s" % (r, log.value.decode()[:300])
    n = ctypes.c_size_t()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    cubin = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return cubin.raw, None


def wgmma_gemm():
    """A function (a, b) -> a @ b.T by splitk_wgmma.cu's f32 form (one split, BN 64, cp.async,
    partials + splitk_accum: the tensor cores read the raw f32 operands), launched through the
    driver API in torch's context; or None with the reason printed."""
    import ctypes
    if torch.cuda.get_device_capability(0) != (9, 0):
        print("wgmma: skipped (compute capability %s, not 9.0)" % (torch.cuda.get_device_capability(0),))
        return None
    stages = 4
    opts = ["--gpu-architecture=sm_90a", "-Iinclude", "-Ikernels/cuda", "-DKG_DTYPE=0", "-DBN=64",
            "-DSTAGES=%d" % stages, "-DRED=0", "-DMT=1", "-DLOAD=0"]
    cubin, why = _nvrtc_cubin(open("kernels/cuda/splitk_wgmma.cu").read(), opts)
    if cubin is None:
        print("wgmma: skipped (%s)" % why)
        return None
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        print("wgmma: skipped (%s)" % e)
        return None
    torch.zeros(1, device="cuda")  # torch's (primary) context is current on this thread
    mod, fwg, facc = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    r = cu.cuModuleLoadData(ctypes.byref(mod), cubin)
    r = r or cu.cuModuleGetFunction(ctypes.byref(fwg), mod, b"splitk_wgmma")
    r = r or cu.cuModuleGetFunction(ctypes.byref(facc), mod, b"splitk_accum")
    smem = stages * (64 + 64) * 128 + 1024
    r = r or cu.cuFuncSetAttribute(fwg, 8, smem)  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    if r != 0:
        print("wgmma: skipped (driver error %d loading the module)" % r)
        return None

    def launch(f, grid, block, shared, args):
        vals = [ctypes.c_void_p(x.data_ptr()) if isinstance(x, torch.Tensor) else ctypes.c_int(x) for x in args]
        params = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        rc = cu.cuLaunchKernel(f, grid[0], grid[1], grid[2], block, 1, 1, shared, None, params, None)
        if rc != 0:
            raise RuntimeError("cuLaunchKernel: error %d" % rc)

    def run(a, b):
        m, k = a.shape
        n = b.shape[0]
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        ws = torch.zeros((m, n), dtype=torch.float32, device="cuda")
        c = torch.zeros((m, n), dtype=torch.float32, device="cuda")
        torch.cuda.synchronize()
        launch(fwg, (n // 64, (m + 63) // 64, 1), 128, smem, (ta, tb, ws, m, n, k))
        launch(facc, ((m * n + 1023) // 1024, 1, 1), 256, 0, (ws, c, m, n, 1))
        torch.cuda.synchronize()
        return c.cpu().numpy().astype(np.float64)
    return run


def main():
    if not torch.cuda.is_available():
        print("tf32_probe: no CUDA device")
        return 2
    dev = torch.device("cuda")
    print("device", torch.cuda.get_device_name(0), "torch", torch.__version__)
    rng = np.random.default_rng(20261205)
    wgmma = wgmma_gemm()
    for (m, n, k) in [(48, 64, 1024), (96, 128, 2048), (32, 64, 4096)]:
        for sign in ("negative", "mixed"):
            a = rng.uniform(0.5, 2.0, size=(m, k)).astype(np.float32)
            b = rng.uniform(0.5, 2.0, size=(n, k)).astype(np.float32)
            if sign == "negative":
                a, b = -a, -b
            else:
                a *= rng.choice([-1.0, 1.0], size=a.shape).astype(np.float32)
                b *= rng.choice([-1.0, 1.0], size=b.shape).astype(np.float32)
            row = []
            for allow in (True, False):
                torch.backends.cuda.matmul.allow_tf32 = allow
                c = (torch.from_numpy(a).to(dev) @ torch.from_numpy(b).to(dev).T).cpu().numpy().astype(np.float64)
                compare("torch allow_tf32=%s" % allow, c, a, b, row)
            if wgmma is not None:
                try:
                    compare("splitk_wgmma .tf32", wgmma(a, b), a, b, row)
                except Exception as e:  # noqa: BLE001
                    row.append("splitk_wgmma .tf32: failed (%s)" % str(e).splitlines()[0][:200])
            print("%dx%dx%d %s" % (m, n, k, sign))
            for r in row:
                print("   ", r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
