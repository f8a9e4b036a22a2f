"""The Python-declared op that kgate.compare builds: its tensors from example arrays or
shape tuples, its variables (sizes, which held-out shapes vary, and scalars), and its
outputs, from the reference's own results on float64 inputs when not given."""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .pyfunc import CompareError, kwargs_for

#: kgate dtypes of numpy and torch dtypes (by their names).
DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int32": "i32", "int8": "i8",
          "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
KGATE_DTYPES = frozenset(DTYPES.values())
#: Triton pointer types of kgate dtypes.
TRITON_PTR = {"f32": "*fp32", "f16": "*fp16", "bf16": "*bf16", "f64": "*fp64", "i32": "*i32", "i8": "*i8",
              "e4m3": "*fp8e4nv", "e5m2": "*fp8e5"}
#: Names in a size expression that are functions, not variables (src/plan/expr.h).
EXPR_FUNCTIONS = frozenset({"ceildiv", "min", "max", "abs"})


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


def _dtype_word(x: Any) -> Optional[str]:
    """A dtype given as kgate's word ("f32"), numpy's or torch's name ("float32"), or a
    numpy or torch dtype object (np.float32, torch.bfloat16); None for anything else."""
    if isinstance(x, (bool, int)):
        return None
    if not isinstance(x, str):
        text = str(x).replace("torch.", "")
        if text.startswith("<class 'numpy."):
            text = text[len("<class 'numpy."):-2]
        x = text
    return x if x in KGATE_DTYPES or x in DTYPES else None


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
    last = _dtype_word(items[-1])
    if last is not None:
        dtype = DTYPES.get(last, last)
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
    kwargs = kwargs_for(reference, {k: _first(v) for k, v in op.values.items()})
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


def _output_dims(name: str, shape: Tuple[int, ...], op: _Op) -> List[str]:
    for t in op.inputs:  # an output shaped as an input: that input's sizes
        if tuple(_eval_dim(d, op.values) for d in t.dims) == shape:
            return list(t.dims)
    fixed = {int(d) for t in op.inputs for d in t.dims if d.isdigit()}
    dims = []
    for s in shape:
        hits = [v for v in op.size_vars if _eval_dim(v, op.values) == s]
        if len(hits) == 1:
            dims.append(hits[0])
        elif not hits and (s == 1 or s in fixed):   # a fixed size of an input, or 1
            dims.append(str(s))
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


