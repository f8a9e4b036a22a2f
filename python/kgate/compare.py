"""``kgate.compare``: a campaign from a reference function and candidates, in one call.

::

    import numpy as np, kgate
    from saxpy_ref import saxpy              # def saxpy(X, Y0, alpha): return alpha * X + Y0
    r = kgate.compare(saxpy, {"unrolled": kgate.C("saxpy_unrolled.c")},
                      inputs={"X": ("n", "f32"), "Y0": ("n", "f32")}, sizes={"n": 1 << 16},
                      scalars={"alpha": 2.5})
    r                                        # the verdict of each candidate, with its interval

The plan it builds (docs/python.md, "kgate.compare"): a Python-declared op whose reference is
the function (``reference = python:FILE:FUNCTION``, run by kgate's trusted helper in float64),
the function again as the baseline arm (a library arm: ``builtin = numpy|torch`` with ``call =
python:FILE:FUNCTION``) unless ``baseline=`` names another, the candidates, and an A/A control of
the baseline. kgate then runs and checks it as any plan: the package only writes it.
"""
from __future__ import annotations

import ast
import html
import inspect
import keyword
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._cli import PathLike
from .plan import Plan, PlanError, _check_name
from .runner import RunResult, _run_plan_file
from .summary import summary_lines

__all__ = ["compare", "compare_plan", "C", "CUDA", "Triton", "Image", "Library", "CompareResult", "CompareError"]

#: kgate dtypes of numpy and torch dtypes (by their names).
DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int32": "i32", "int8": "i8",
          "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
KGATE_DTYPES = frozenset(DTYPES.values())
#: Triton pointer types of kgate dtypes.
TRITON_PTR = {"f32": "*fp32", "f16": "*fp16", "bf16": "*bf16", "f64": "*fp64", "i32": "*i32", "i8": "*i8",
              "e4m3": "*fp8e4nv", "e5m2": "*fp8e5"}
#: Names in a size expression that are functions, not variables (src/plan/expr.h).
EXPR_FUNCTIONS = frozenset({"ceildiv", "min", "max", "abs"})


class CompareError(PlanError):
    """kgate.compare cannot build a plan from what it was given; the message says how to
    fix it."""


# ---- candidates ----

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
        return dict({"op": op.name, "role": "candidate", "builtin": self.builtin or op.tensors,
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


# ---- the reference function ----

def function_file(fn: Any, what: str) -> Tuple[str, str]:
    """The ``.py`` file and the name of a module-level function, which kgate's helper runs
    from that file's text; refuses what it cannot run that way, saying how to fix it."""
    name = getattr(fn, "__name__", None)
    fix = (f"write it as a module-level function (def {name if name and name.isidentifier() else 'ref'}(...)) "
           "in a .py file and pass that function")
    if not inspect.isfunction(fn):
        raise CompareError(f"{what}: {fn!r} is not a Python function defined in a file (a builtin, a method or an "
                           f"object): kgate runs the function from its file in its own process; {fix}, e.g. "
                           "def softmax(x): return torch.softmax(x, dim=-1)")
    if name == "<lambda>":
        raise CompareError(f"{what}: a lambda has no name kgate can call from its file: {fix}")
    if fn.__qualname__ != name or fn.__closure__:
        raise CompareError(f"{what}: {fn.__qualname__} is defined inside another function or class (a closure): "
                           f"kgate imports the file and calls the name, so {fix}")
    try:
        src = inspect.getsourcefile(fn)
    except TypeError:
        src = None
    cell = src is None or src.startswith("<") or "ipykernel_" in src or "/ipython-input" in src
    if cell:
        raise CompareError(f"{what}: {name} was defined in a notebook cell or an interactive session, not in a file: "
                           f"kgate runs the reference from a file in its own process; put it in a .py file beside "
                           f"the notebook (%%writefile {name}_ref.py in a cell of its own), then "
                           f"`from {name}_ref import {name}`")
    path = Path(src).resolve()
    if path.suffix != ".py" or not path.is_file():
        raise CompareError(f"{what}: {name} comes from {path}, not a .py file kgate can run: {fix}")
    module = sys.modules.get(fn.__module__)
    if module is not None and getattr(module, name, None) is not fn:
        raise CompareError(f"{what}: {path} does not define {name} at its top level as this function (a decorator "
                           f"or a later definition replaced it): {fix}")
    if fn.__module__ == "__main__":
        _check_script(path, what)
    return str(path), name


def _check_script(path: Path, what: str) -> None:
    """A script's function: kgate's helper runs the script's text as a module (not as
    ``__main__``), so a top-level use of kgate would start another campaign there."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError) as e:
        raise CompareError(f"{what}: cannot read {path}: {e}") from e
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.If) and "__name__" in ast.dump(node.test):
            continue
        if any(isinstance(n, ast.Name) and n.id == "kgate" for n in ast.walk(node)):
            raise CompareError(f"{what}: {path}:{node.lineno} uses kgate at the top level of the script that defines "
                               "the reference; kgate's helper runs that file when the campaign runs, and would run "
                               "this line there too: put the script's code under if __name__ == \"__main__\": or "
                               "move the function to a module of its own")


# ---- the op ----

@dataclass
class _Tensor:
    name: str
    dims: List[str]
    dtype: Optional[str]  # None: the case's dtype

    def decl(self, case_dtype: str) -> str:
        d = f"{self.name}[{', '.join(self.dims)}]"
        return d if self.dtype in (None, case_dtype) else f"{d}:{self.dtype}"


@dataclass
class _Op:
    name: str
    tensors: str
    dtype: str
    inputs: List[_Tensor]
    outputs: List[_Tensor]
    var_kinds: Dict[str, str]       # name -> int, real, bool (declaration order)
    values: Dict[str, Any]          # name -> the case's value (a list: an axis)
    size_vars: List[str]

    def default_args(self) -> List[str]:
        return [t.name for t in self.inputs + self.outputs] + list(self.size_vars)

    def vars_decl(self) -> str:
        return " ".join(n if k == "int" else f"{n}:{k}" for n, k in self.var_kinds.items())


def _dtype_of(x: Any) -> Optional[str]:
    dt = getattr(x, "dtype", None)
    if dt is None:
        return None
    key = str(dt).replace("torch.", "")
    if key not in DTYPES:
        raise CompareError(f"dtype {dt} has no kgate dtype (kgate has {', '.join(sorted(KGATE_DTYPES))})")
    return DTYPES[key]


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


class _Names:
    """Variables for sizes given as numbers: one per distinct size (d0, d1, ...)."""

    def __init__(self, sizes: Dict[str, Any]) -> None:
        self.sizes = sizes
        self.by_value: Dict[int, str] = {}

    def of(self, value: int) -> str:
        if value not in self.by_value:
            n = len(self.by_value)
            while f"d{n}" in self.sizes:
                n += 1
            self.by_value[value] = f"d{n}"
            self.sizes[f"d{n}"] = value
        return self.by_value[value]


def _parse_spec(name: str, spec: Any, names: _Names, what: str) -> _Tensor:
    """An input or output: an example array/tensor (shape and dtype used, each size a
    variable), or a tuple of sizes (ints stay fixed, names are variables) with a dtype last."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise CompareError(f"{what} {name!r}: a tensor's name is a Python identifier")
    if _is_array(spec):
        shape = tuple(int(s) for s in spec.shape)
        if not shape:
            raise CompareError(f"{what} {name}: a 0-d array; kgate's tensors have at least one dimension (shape (1,))")
        return _Tensor(name, [names.of(s) for s in shape], _dtype_of(spec))
    if isinstance(spec, (str, int)):
        spec = (spec,)
    if not isinstance(spec, (tuple, list)) or not spec:
        raise CompareError(f"{what} {name}: give an example array or tensor, or a shape tuple such as ('n', 'f32') "
                           "or (('M', 'N'), 'f16')")
    items = list(spec)
    dtype = None
    if isinstance(items[-1], str) and (items[-1] in KGATE_DTYPES or items[-1] in DTYPES):
        dtype = DTYPES.get(items[-1], items[-1])
        items = items[:-1]
    if len(items) == 1 and isinstance(items[0], (tuple, list)):
        items = list(items[0])
    if not items:
        raise CompareError(f"{what} {name}: no sizes")
    dims = []
    for d in items:
        if isinstance(d, bool) or not isinstance(d, (int, str)):
            raise CompareError(f"{what} {name}: size {d!r} is neither a number nor a variable's name")
        dims.append(str(d))
    return _Tensor(name, dims, dtype)


def _expr_vars(dims: Sequence[str]) -> List[str]:
    out: List[str] = []
    for d in dims:
        for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", d):
            if tok not in EXPR_FUNCTIONS and tok not in out:
                out.append(tok)
    return out


def _first(v: Any) -> Any:
    return v[0] if isinstance(v, (list, tuple)) else v


def _eval_dim(d: str, values: Mapping[str, Any]) -> int:
    env = {k: int(_first(v)) for k, v in values.items() if isinstance(_first(v), int)}
    env.update({"ceildiv": lambda a, b: -(-a // b), "min": min, "max": max, "abs": abs})
    return int(eval(d.replace("/", "//"), {"__builtins__": {}}, env))  # noqa: S307 - the user's size expression


def _probe(reference: Callable[..., Any], op: _Op) -> List[Tuple[int, ...]]:
    """The shapes of the reference's outputs on float64 inputs of the case's (first) sizes,
    in this process: how many outputs there are, and their shapes."""
    import numpy as np
    rng = np.random.default_rng(0)
    arrays = []
    for t in op.inputs:
        shape = tuple(_eval_dim(d, op.values) for d in t.dims)
        a = rng.integers(0, 4, size=shape) if (t.dtype or op.dtype) in ("i32", "i8") else rng.standard_normal(shape)
        arrays.append(a.astype(np.float64))
    if op.tensors == "torch":
        import torch
        arrays = [torch.from_numpy(a) for a in arrays]
    kwargs = _kwargs_for(reference, {k: _first(v) for k, v in op.values.items()})
    try:
        res = reference(*arrays, **kwargs)
    except Exception as e:  # the user's function: any failure is theirs to see
        raise CompareError(f"the reference {reference.__name__} failed on float64 inputs of shapes "
                           f"{[tuple(a.shape) for a in arrays]}: {type(e).__name__}: {e} (pass outputs= to skip "
                           "this call)") from e
    outs = list(res) if isinstance(res, (tuple, list)) else [res]
    shapes = []
    for o in outs:
        if not _is_array(o):
            raise CompareError(f"the reference {reference.__name__} returned a {type(o).__name__}, not an array")
        shapes.append(tuple(int(s) for s in o.shape))
    return shapes


def _kwargs_for(fn: Callable[..., Any], values: Mapping[str, Any]) -> Dict[str, Any]:
    """The variables fn's signature names (all of them when it takes ``**kwargs``)."""
    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return dict(values)
    return {k: v for k, v in values.items() if k in params}


def _output_dims(name: str, shape: Tuple[int, ...], op: _Op) -> List[str]:
    for t in op.inputs:  # an output shaped as an input: that input's sizes
        if tuple(_eval_dim(d, op.values) for d in t.dims) == shape:
            return list(t.dims)
    dims = []
    for s in shape:
        hits = [v for v in op.size_vars if _eval_dim(v, op.values) == s]
        if len(hits) == 1:
            dims.append(hits[0])
        elif not hits and s == 1:
            dims.append("1")
        else:
            why = f"sizes {', '.join(hits)} are all {s}" if hits else f"no size variable is {s}"
            raise CompareError(f"output {name} has shape {shape}: {why}, so kgate cannot tell how it follows the "
                               f"inputs; give outputs={{{name!r}: (SIZE, ...)}} with the sizes as variables or "
                               "expressions (\"n - w + 1\")")
    return dims


def _build_op(name: str, reference: Callable[..., Any], inputs: Mapping[str, Any], outputs: Any,
              sizes: Optional[Mapping[str, Any]], scalars: Optional[Mapping[str, Any]], dtype: Optional[str],
              tensors: str) -> _Op:
    if not inputs:
        raise CompareError("inputs= is required: name -> an example array or a shape tuple, in the order the "
                           "reference takes them")
    size_values: Dict[str, Any] = dict(sizes or {})
    names = _Names(size_values)
    ins = [_parse_spec(k, v, names, "input") for k, v in inputs.items()]
    dt = dtype or next((t.dtype for t in ins if t.dtype in ("f32", "f16", "bf16", "f64")), None) or "f32"
    if dt not in KGATE_DTYPES:
        raise CompareError(f"dtype {dt!r}: one of {', '.join(sorted(KGATE_DTYPES))}")
    size_vars = _expr_vars([d for t in ins for d in t.dims])
    missing = [v for v in size_vars if v not in size_values]
    if missing:
        raise CompareError(f"the sizes {', '.join(missing)} have no value: give sizes={{{missing[0]!r}: 1024, ...}}")
    kinds: Dict[str, str] = {v: "int" for v in size_vars}
    values: Dict[str, Any] = {v: size_values[v] for v in size_vars}
    for k, v in (scalars or {}).items():
        if not k.isidentifier() or k in kinds:
            raise CompareError(f"scalar {k!r}: an identifier that names no size")
        first = _first(v)
        kinds[k] = "bool" if isinstance(first, bool) else "int" if isinstance(first, int) else "real"
        values[k] = v
    unused = [k for k in size_values if k not in kinds]
    if unused:
        raise CompareError(f"sizes {', '.join(unused)} appear in no input's shape (pass a scalar as scalars=)")
    op = _Op(name=name, tensors=tensors, dtype=dt, inputs=ins, outputs=[], var_kinds=kinds, values=values,
             size_vars=size_vars)
    if outputs is None or isinstance(outputs, (str, list)) and all(isinstance(o, str) for o in (
            [outputs] if isinstance(outputs, str) else outputs)):
        given = [outputs] if isinstance(outputs, str) else list(outputs or [])
        shapes = _probe(reference, op)
        if given and len(given) != len(shapes):
            raise CompareError(f"outputs names {len(given)} output(s); the reference returned {len(shapes)}")
        onames = given or (["out"] if len(shapes) == 1 else [f"out{i}" for i in range(len(shapes))])
        op.outputs = [_Tensor(n, _output_dims(n, s, op), None) for n, s in zip(onames, shapes)]
    else:
        if not isinstance(outputs, Mapping):
            outputs = {"out": outputs}
        op.outputs = [_parse_spec(k, v, names, "output") for k, v in outputs.items()]
        extra = [v for v in _expr_vars([d for t in op.outputs for d in t.dims]) if v not in kinds]
        if extra:
            raise CompareError(f"outputs use {', '.join(extra)}, which no input's shape or scalar names")
    dup = {t.name for t in op.inputs} & {t.name for t in op.outputs}
    if dup or len({t.name for t in op.inputs + op.outputs}) != len(op.inputs) + len(op.outputs):
        raise CompareError(f"tensor names must differ: {sorted(dup) or 'a name given twice'}")
    return op


# ---- the plan ----

def _safe(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)[:63]
    return s or "compare"


def compare_plan(reference: Callable[..., Any], candidates: Any, *, inputs: Mapping[str, Any], folder: PathLike,
                 sizes: Optional[Mapping[str, Any]] = None, scalars: Optional[Mapping[str, Any]] = None,
                 outputs: Any = None, dtype: Optional[str] = None, baseline: Any = None, control: bool = True,
                 tensors: Optional[str] = None, bound: Optional[str] = None, rtol: Optional[float] = None,
                 atol: Optional[float] = None, requires: Optional[str] = None, flops: Optional[str] = None,
                 bytes: Optional[str] = None, name: Optional[str] = None, backend: Optional[str] = None,
                 processes: Optional[int] = 6, rounds: Optional[int] = None, samples: Optional[int] = None,
                 warmup: Optional[int] = None, quiet_window: Optional[float] = 0, min_reduction: Any = None,
                 seed: Optional[int] = None, campaign: Optional[Mapping[str, Any]] = None,
                 gate: Optional[Mapping[str, Any]] = None) -> Plan:
    """The plan :func:`compare` runs, its sources written into ``folder`` (which it
    creates); returns the :class:`kgate.Plan` (``plan.write(folder / (plan.name + ".kg"))``
    writes it next to them). The arguments are :func:`compare`'s."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ref_file, ref_func = function_file(reference, "the reference")
    cands = candidates if isinstance(candidates, Mapping) else {"candidate": candidates}
    if not cands:
        raise CompareError("no candidates: give {name: kgate.C(...) | kgate.CUDA(...) | kgate.Triton(...) | ...}")
    arms = {str(k): _as_arm(v) for k, v in cands.items()}
    for k in arms:
        _check_name(k, "candidate name")
    gpu = any(a.gpu for a in arms.values()) or (baseline is not None and _as_arm(baseline).gpu)
    if tensors is None:
        torchy = gpu or any(type(v).__module__.startswith("torch") for v in inputs.values())
        tensors = "torch" if torchy else "numpy"
    if tensors not in ("numpy", "torch"):
        raise CompareError(f"tensors = {tensors!r}: numpy or torch")
    op_name = _safe(name or ref_func)
    op = _build_op(op_name, reference, inputs, outputs, sizes, scalars, dtype, tensors)
    if bound is None:
        bound = "tolerance" if (rtol is not None or atol is not None) else None
    heldout = None if all(k != "int" or v in op.size_vars for v, k in op.var_kinds.items()) else tuple(op.size_vars)
    op_keys = {"reference": f"python:{ref_file}:{ref_func}", "tensors": tensors, "vars": op.vars_decl() or None,
               "inputs": tuple(t.decl(op.dtype) for t in op.inputs),
               "outputs": tuple(t.decl(op.dtype) for t in op.outputs), "requires": requires, "flops": flops,
               "bytes": bytes, "heldout": " ".join(heldout) if heldout else None, "bound": bound, "rtol": rtol,
               "atol": atol}
    plan_arms: Dict[str, Dict[str, Any]] = {}
    if baseline is None:
        base_name = tensors
        plan_arms[base_name] = {"op": op_name, "role": "baseline", "builtin": tensors,
                                "call": f"python:{ref_file}:{ref_func}"}
    elif isinstance(baseline, str) and baseline in arms:
        base_name = baseline
    else:
        base_name = "baseline"
        arms = dict({base_name: _as_arm(baseline)}, **arms)
    for k, a in arms.items():
        keys = a.arm(k, op, folder)
        if k == base_name:
            keys["role"] = "baseline"
        if k in plan_arms:
            raise CompareError(f"candidate {k!r}: the baseline arm has that name; rename the candidate")
        plan_arms[k] = {kk: vv for kk, vv in keys.items() if vv is not None}
    if control:
        ctrl = "control" if "control" not in plan_arms else "aa_control"
        plan_arms[ctrl] = {"op": op_name, "role": "control", "of": base_name}
    camp: Dict[str, Any] = {"name": op_name, "backend": backend or ("cuda" if gpu else "cpu"), "quiet": quiet_window,
                            "processes": processes, "rounds": rounds, "samples": samples, "warmup": warmup,
                            "seed": seed}
    camp.update(campaign or {})
    gate_keys = dict(gate or {})
    if min_reduction is not None:
        gate_keys["min_reduction"] = min_reduction
    case = {"op": op_name, "dtype": op.dtype}
    case.update({k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in op.values.items()})
    return Plan(campaign={k: v for k, v in camp.items() if v is not None},
                ops={op_name: {k: v for k, v in op_keys.items() if v is not None}},
                cases={op_name: case}, arms=plan_arms, gate=gate_keys or None,
                comment=f"kgate.compare: {ref_func} ({ref_file}) against {', '.join(cands)}", base=folder)


# ---- the result ----

@dataclass(repr=False)
class CompareResult(RunResult):
    """The result of :func:`compare`: a :class:`kgate.RunResult` whose repr is the short
    answer (the gate, one line per candidate: verdict, reduction and its interval, the
    baseline's and the candidate's median times; the control) and whose ``_repr_html_`` is
    the campaign's report.html (in a notebook).

    Attributes (besides RunResult's): plan_path (the plan kgate ran), baseline (its arm).
    """

    plan_path: Path = field(default=Path("."))
    baseline: str = ""

    def lines(self) -> List[str]:
        """The short answer, line by line."""
        return summary_lines(self, self.plan_path.stem)

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def __str__(self) -> str:
        return self.__repr__()

    def _repr_html_(self) -> str:
        """report.html in an iframe, so that its styles stay its own."""
        path = Path(self.evidence) / "report.html"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return "<pre>" + html.escape(repr(self)) + "</pre>"
        return ('<iframe style="width:100%;height:42em;border:1px solid #ccc" sandbox="allow-same-origin" '
                f'srcdoc="{html.escape(text, quote=True)}"></iframe>')


def compare(reference: Callable[..., Any], candidates: Any, *, inputs: Mapping[str, Any],
            sizes: Optional[Mapping[str, Any]] = None, scalars: Optional[Mapping[str, Any]] = None,
            outputs: Any = None, out: Optional[PathLike] = None, smoke: bool = False,
            timeout: Optional[float] = None, echo: bool = False, kgate: Optional[PathLike] = None,
            env: Optional[Mapping[str, str]] = None, args: Sequence[str] = (), **options: Any) -> CompareResult:
    """Is each candidate correct, and faster than the reference? One campaign, one call.

    Args:
        reference: a module-level function of a ``.py`` file, ``f(*inputs, **variables)``
            returning the output array (or a tuple of them): numpy, or torch with
            ``tensors="torch"`` (the default when the inputs are tensors or a candidate runs
            on the GPU). kgate's helper runs it in float64 as the op's reference and, unless
            ``baseline=`` is given, as the baseline arm in the case's dtype.
        candidates: name -> :class:`C`, :class:`CUDA`, :class:`Triton`, :class:`Image`, or a
            Python function (a library arm).
        inputs: name -> an example array or tensor (its shape and dtype; each size becomes a
            variable d0, d1, ...; equal sizes one variable) or a tuple of sizes with the dtype
            last (``("M", "N", "f16")``: names are variables that ``sizes`` sets and held-out
            shapes vary; numbers stay fixed). kgate generates the values.
        sizes: variable -> value (a list: an axis, one case per value).
        scalars: further variables passed to every call by keyword (int, float, bool).
        outputs: None (the reference is called once here on float64 inputs to see its
            outputs' shapes; they are named ``out``, or ``out0``...), a list of names, or
            name -> a shape tuple as for inputs.
        out: a folder for the plan, its sources and the evidence (``OUT/NAME.kg``,
            ``OUT/evidence``); default a temporary plan folder and the evidence in
            ``kgate-out/NAME-UTCTIME``.
        smoke: ``kgate run --smoke``: every check, a few samples, no verdict.
        **options: :func:`compare_plan`'s: ``baseline`` (a candidate spec, or a candidate's
            name), ``control`` (an A/A copy of the baseline, default True), ``dtype`` (the
            case's), ``tensors``, ``bound``/``rtol``/``atol``, ``requires``, ``flops``,
            ``bytes``, ``name``, ``backend`` (default cpu, cuda when a candidate is CUDA or
            Triton), ``processes`` (per direction, default 6), ``rounds``, ``samples``,
            ``warmup``, ``quiet_window`` (default 0: no wait for a quiet host),
            ``min_reduction``, ``seed``, ``campaign`` and ``gate`` (further keys).
        timeout, echo, kgate, env, args: as for :func:`kgate.run`.

    Returns:
        A :class:`CompareResult` (a gate FAIL is a result, not an exception).

    Raises:
        CompareError: the arguments do not make a plan (the message says how to fix them).
        KgateError: kgate refused the plan or could not build a kernel (exit 2).
    """
    run_args = list(args) + (["--smoke"] if smoke else [])
    if out is not None:
        folder = Path(out)
        if folder.exists() and any(folder.iterdir()):
            raise CompareError(f"out={str(folder)!r} is not empty: give a new folder (it will hold the plan, its "
                               "sources and evidence/)")
        return _compare_in(folder, folder / "evidence", reference, candidates, inputs, sizes, scalars, outputs,
                           run_args, timeout, echo, kgate, env, options)
    tmp = tempfile.mkdtemp(prefix="kgate-compare-")
    try:
        return _compare_in(Path(tmp), None, reference, candidates, inputs, sizes, scalars, outputs, run_args,
                           timeout, echo, kgate, env, options)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _compare_in(folder: Path, evidence: Optional[Path], reference: Callable[..., Any], candidates: Any,
                inputs: Mapping[str, Any], sizes: Any, scalars: Any, outputs: Any, args: List[str],
                timeout: Optional[float], echo: bool, kgate: Optional[PathLike], env: Optional[Mapping[str, str]],
                options: Dict[str, Any]) -> CompareResult:
    plan = compare_plan(reference, candidates, inputs=inputs, folder=folder, sizes=sizes, scalars=scalars,
                        outputs=outputs, **options)
    path = plan.write(folder / f"{plan.name}.kg")
    r = _run_plan_file(path.name, folder, evidence, plan.name or "compare", args=args, timeout=timeout, echo=echo,
                       kgate=kgate, env=env)
    base = next((k for k, a in plan.arms.items() if a.get("role") == "baseline"), "")
    return CompareResult(returncode=r.returncode, evidence=r.evidence, results=r.results, stdout=r.stdout,
                         stderr=r.stderr, argv=r.argv, plan_path=path if evidence is not None else Path(path.name),
                         baseline=base)
