"""The candidates of kgate.compare: kernels (C, CUDA C, Triton, precompiled images) and
Python functions (library arms), each made into the keys of its ``[arm]``."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

from ._cli import PathLike
from .pyfunc import CompareError, function_file
from .pyop import TRITON_PTR, _Op

__all__ = ["C", "CUDA", "Triton", "Image", "Library"]


@dataclass
class _Arm:
    """What every candidate spec holds: further arm keys (``role``, ``cases``, ...)."""

    keys: Dict[str, Any] = field(default_factory=dict)
    gpu = False

    def arm(self, name: str, op: "_Op", folder: Path) -> Dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError


def _is_source_text(s: Any) -> bool:
    return isinstance(s, str) and ("\n" in s or "{" in s)


def _source_key(source: Union[str, PathLike], name: str, ext: str, folder: Path) -> str:
    """A kernel's ``source``: text written to ``folder/NAME.EXT``, a path made absolute."""
    if _is_source_text(source):
        path = folder / f"{name}{ext}"
        path.write_text(str(source), encoding="utf-8")
        return path.name
    p = Path(os.fspath(source))
    if not p.is_file():
        raise CompareError(f"candidate {name}: {p} is not a file (pass the kernel's source text, or a path to it)")
    return str(p.resolve())


_C_ENTRY = re.compile(r"^\s*void\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*const\s+kg_kargs\s*\*", re.MULTILINE)


class C(_Arm):
    """A C kernel for the cpu backend (docs/kernels.md): ``void NAME(const kg_kargs *a)``
    reading the op's inputs as ``a->in[i]``, writing ``a->out[i]`` with ``KGATE_STORE`` and
    the variables with ``kg_var_i(a, "n", 0)`` / ``kg_var_r``; sandboxed in its arm host.

    Args:
        source: the C text, or a path to a ``.c`` file.
        entry: the function (default: ``kernel``, or the one ``kg_kargs`` function the source
            defines).
        cflags, defines: as the arm keys (docs/plan-format.md).
        **keys: further arm keys (``role``, ``cases``, ``requires``, ...).
    """

    def __init__(self, source: Union[str, PathLike], entry: Optional[str] = None, *, cflags: Any = None,
                 defines: Any = None, **keys: Any) -> None:
        super().__init__(dict(keys))
        self.source, self.entry, self.cflags, self.defines = source, entry, cflags, defines

    def arm(self, name: str, op: "_Op", folder: Path) -> Dict[str, Any]:
        src = _source_key(self.source, name, ".c", folder)
        entry = self.entry
        if entry is None:
            text = str(self.source) if _is_source_text(self.source) else Path(os.fspath(self.source)).read_text(
                encoding="utf-8", errors="replace")
            found = sorted(set(_C_ENTRY.findall(text)))
            if "kernel" not in found and len(found) == 1:
                entry = found[0]
            elif "kernel" not in found and len(found) > 1:
                raise CompareError(f"candidate {name}: the source defines {', '.join(found)}: say which with "
                                   "kgate.C(..., entry=NAME)")
        return dict({"op": op.name, "role": "candidate", "source": src, "entry": entry, "cflags": self.cflags,
                     "defines": self.defines}, **self.keys)


class CUDA(_Arm):
    """A CUDA C kernel for the cuda backend, compiled by kgate with NVRTC.

    Args:
        source: the CUDA C text, or a path to a ``.cu`` file.
        kernel: the ``__global__`` function (the arm's ``entry``).
        grid, block: the launch, as expressions over the variables (``"ceildiv(n, 256)"``,
            ``256``, or tuples of them).
        args: the kernel's parameters, in order: names of the op's tensors and variables
            (default: the inputs, the outputs, then the size variables).
        shared: dynamic shared memory bytes.
        **keys: further arm keys.
    """

    gpu = True

    def __init__(self, source: Union[str, PathLike], kernel: Optional[str] = None, *, grid: Any, block: Any,
                 args: Optional[Sequence[str]] = None, shared: Any = None, **keys: Any) -> None:
        super().__init__(dict(keys))
        self.source, self.kernel, self.grid, self.block, self.args, self.shared = source, kernel, grid, block, args, shared

    def arm(self, name: str, op: "_Op", folder: Path) -> Dict[str, Any]:
        args = list(self.args) if self.args is not None else op.default_args()
        return dict({"op": op.name, "role": "candidate", "source": _source_key(self.source, name, ".cu", folder),
                     "entry": self.kernel, "grid": _launch(self.grid), "block": _launch(self.block),
                     "shared": self.shared, "args": tuple(args)}, **self.keys)


class Image(_Arm):
    """A precompiled kernel (docs/images.md): a ``.so`` on the cpu backend, a ``.cubin``,
    ``.ptx`` or ``.fatbin`` on the cuda backend.

    Args:
        path: the image.
        entry, grid, block, args, shared: as the arm keys (grid, block and args for cuda).
        **keys: further arm keys.
    """

    def __init__(self, path: PathLike, entry: Optional[str] = None, *, grid: Any = None, block: Any = None,
                 args: Optional[Sequence[str]] = None, shared: Any = None, **keys: Any) -> None:
        super().__init__(dict(keys))
        self.path, self.entry, self.grid, self.block, self.args, self.shared = path, entry, grid, block, args, shared
        self.gpu = not os.fspath(path).endswith(".so")

    def arm(self, name: str, op: "_Op", folder: Path) -> Dict[str, Any]:
        p = Path(os.fspath(self.path))
        if not p.is_file():
            raise CompareError(f"candidate {name}: no image {p}")
        args = None if self.args is None else tuple(self.args)
        if args is None and self.gpu:
            args = tuple(op.default_args())
        return dict({"op": op.name, "role": "candidate", "image": str(p.resolve()), "entry": self.entry,
                     "grid": _launch(self.grid), "block": _launch(self.block), "shared": self.shared, "args": args},
                    **self.keys)


class Triton(_Arm):
    """A ``@triton.jit`` kernel, compiled to a cubin by Triton's own compiler
    (:func:`kgate.triton.compile_arm`) and run on the cuda backend as device code.

    Args:
        fn: the ``@triton.jit`` function.
        grid: one program per block, over the variables (``"M"``, ``("ceildiv(n, 1024)",)``).
        num_warps, num_stages: Triton's options.
        args: kernel parameter -> the op's tensor or variable it receives, for parameters
            whose names say neither (names match case-insensitively, ``x_ptr`` as ``x``; the
            pointers left over take the inputs, then the outputs, in order).
        arch: compute capability (90 for the H200; default the current device's).
        **meta: the ``tl.constexpr`` parameters' values (``BLOCK=1024``).
    """

    gpu = True

    def __init__(self, fn: Any, grid: Any, *, num_warps: int = 4, num_stages: int = 3,
                 args: Optional[Mapping[str, str]] = None, arch: Optional[int] = None,
                 keys: Optional[Mapping[str, Any]] = None, **meta: Any) -> None:
        super().__init__(dict(keys or {}))
        self.fn, self.grid, self.num_warps, self.num_stages = fn, grid, num_warps, num_stages
        self.args, self.arch, self.meta = dict(args or {}), arch, meta

    def signature(self, op: "_Op") -> Tuple[Dict[str, str], Dict[str, str]]:
        """The Triton signature of the kernel's runtime parameters and what each receives."""
        from .triton import TritonArmError, _kernel_params
        names, constexprs = _kernel_params(self.fn)
        runtime = [n for n in names if n not in (constexprs if constexprs is not None else self.meta)]
        tensors = {t.name: t for t in op.inputs + op.outputs}
        by_lower = {k.lower(): k for k in list(tensors) + list(op.var_kinds)}
        mapped: Dict[str, str] = {}
        for p in runtime:
            if p in self.args:
                mapped[p] = self.args[p]
                continue
            low = p.lower()
            for cand in (low, low[:-4] if low.endswith("_ptr") else None):
                if cand and cand in by_lower:
                    mapped[p] = by_lower[cand]
                    break
        left = [t for t in tensors if t not in mapped.values()]
        for p in runtime:
            if p not in mapped and p.lower().endswith("_ptr") and left:
                mapped[p] = left.pop(0)
        for p in runtime:
            if p not in mapped and left and not any(p.lower() == v.lower() for v in op.var_kinds):
                mapped[p] = left.pop(0)
        sig: Dict[str, str] = {}
        for p in runtime:
            m = mapped.get(p)
            if m is None:
                raise TritonArmError(f"Triton kernel parameter {p!r} receives nothing kgate knows: the op's tensors "
                                     f"are {', '.join(tensors)}, its variables {', '.join(op.var_kinds) or 'none'}; "
                                     f"map it with kgate.Triton(..., args={{{p!r}: NAME}})")
            if m in tensors:
                sig[p] = TRITON_PTR[tensors[m].dtype or op.dtype]
            elif m == "null":
                sig[p] = "*fp32"
            else:
                sig[p] = {"real": "fp32", "bool": "i32"}.get(op.var_kinds.get(m, "int"), "i32")
        return sig, mapped

    def arm(self, name: str, op: "_Op", folder: Path) -> Dict[str, Any]:
        from .triton import compile_arm
        sig, mapped = self.signature(op)
        keys = dict(self.keys)
        keys.setdefault("role", "candidate")
        arm = compile_arm(self.fn, op=op.name, signature=sig, grid=_launch(self.grid), out_dir=folder,
                          constexprs=self.meta, args=mapped, num_warps=self.num_warps, num_stages=self.num_stages,
                          name=name, arch=self.arch, **keys)
        return dict(arm)


class Library(_Arm):
    """A Python function as a library arm (docs/library-arms.md): kgate's trusted helper
    calls it on kgate's own buffers (numpy arrays on the cpu backend, torch tensors on the
    device on cuda), timed and checked as the other arms. A plain function among
    ``candidates`` is this. The function lives in a ``.py`` file (as the reference).

    It is trusted code (the helper is kgate's process, not a sandbox), so its role is
    ``reference`` by default: compared with the baseline (verdict and interval), not gated.
    ``role="candidate"`` gates it, for code whose author you trust.

    Args:
        fn: a module-level function of a ``.py`` file.
        builtin: ``numpy`` or ``torch`` (default: the op's ``tensors``).
        **keys: further arm keys.
    """

    def __init__(self, fn: Callable[..., Any], builtin: Optional[str] = None, **keys: Any) -> None:
        super().__init__(dict(keys))
        self.fn, self.builtin = fn, builtin

    def arm(self, name: str, op: "_Op", folder: Path) -> Dict[str, Any]:
        path, func = function_file(self.fn, f"candidate {name}")
        return dict({"op": op.name, "role": "reference", "builtin": self.builtin or op.tensors,
                     "call": f"python:{path}:{func}"}, **self.keys)


def _launch(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return tuple(str(x) for x in v)
    return str(v)


def _as_arm(spec: Any) -> _Arm:
    if isinstance(spec, _Arm):
        return spec
    if callable(spec) and type(spec).__name__ == "JITFunction":
        raise CompareError("a @triton.jit kernel needs its grid: kgate.Triton(kernel, grid=..., BLOCK=...)")
    if callable(spec):
        return Library(spec)
    if isinstance(spec, (str, os.PathLike)):
        s = os.fspath(spec)
        if s.endswith(".c") or _is_source_text(s):
            return C(s)
        if s.endswith(".so"):
            return Image(s)
    raise CompareError(f"cannot make a candidate of {spec!r}: use kgate.C, kgate.CUDA, kgate.Triton, kgate.Image, "
                       "or a Python function")


