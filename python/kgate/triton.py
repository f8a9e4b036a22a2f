"""A ``@triton.jit`` kernel compiled to a cubin arm (docs/images.md, "Triton").

:func:`compile_arm` compiles the kernel with Triton's own compiler for the given
constexprs, signature, warps and stages, writes ``NAME.cubin`` (and ``NAME.json``,
Triton's metadata), and returns the ``[arm]`` keys that run it::

    arm = kgate.triton.compile_arm(rowsum_kernel, op="rowsum", grid="M", out_dir="build/triton",
                                   signature={"X": "*fp32", "Y": "*fp32", "M": "i32", "N": "i32"},
                                   constexprs={"BLOCK": 1024}, num_warps=4)
    plan.add_arm("triton", **arm)

What the arm needs comes from the compiled kernel:

- ``entry``: ``metadata.name``, checked against the PTX entry;
- ``block``: ``32 * metadata.num_warps``;
- ``shared``: ``metadata.shared``, the dynamic shared memory every launch must pass;
- ``args``: the kernel's non-constexpr parameters in order, each mapped to the op's
  tensor or the case variable of the same name (or as ``args=`` maps it), with ``:i64``
  / ``:f64`` where the signature says so, then one ``null`` per parameter Triton appends
  after the kernel's own (the global and profile scratch pointers of recent versions),
  counted from the PTX entry's parameters;
- ``image``: the cubin written.

A kernel that needs global or profile scratch memory, more than one CTA per block
(``num_ctas``) or a cluster is refused: kgate passes no scratch buffer and launches one
CTA per block. No divisibility attributes are given (the kernel assumes no alignment of
kgate's buffers or sizes), and integers equal to 1 are not specialised away.

Triton is imported only here and only when compiling: the rest of the package works
without it.
"""
from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._cli import PathLike

__all__ = ["compile_arm", "arm_from_compiled", "TritonArm", "TritonArmError", "ptx_entry_params"]

#: Scalar signature types kgate can pass, and the args suffix each needs.
SCALAR_SUFFIX = {"i32": "", "u32": "", "i64": ":i64", "u64": ":i64", "fp32": "", "fp64": ":f64"}
#: The suffixes that mean the same as no suffix, per scalar type.
_SAME = {"i32": {":i32"}, "u32": {":i32"}, "fp32": {":f32"}}
#: Pointer element types -> the case dtype the image is built for.
POINTER_DTYPE = {"fp32": "f32", "fp16": "f16", "bf16": "bf16", "fp64": "f64", "i32": "i32", "i8": "i8",
                 "fp8e4nv": "e4m3", "fp8e5": "e5m2"}


class TritonArmError(ValueError):
    """The kernel cannot be run as a kgate arm as compiled (scratch memory, clusters, a
    parameter specialised away, a signature kgate cannot pass), or the inputs are wrong."""


class TritonArm(dict):  # type: ignore[type-arg]
    """The ``[arm]`` keys of a compiled Triton kernel (a dict: ``plan.add_arm(name, **arm)``),
    with what was found on the way.

    Attributes:
        cubin: the cubin written.
        metadata: Triton's metadata of the compiled kernel (JSON-able values).
        ptx_params: parameters of the PTX entry; hidden_params: those Triton appended.
        input_dtypes: kernel parameter -> the case dtype its pointer type means (an image is
            the same bytes for every case: run it only on cases of that dtype).
    """

    cubin: Path
    metadata: Dict[str, Any]
    ptx_params: int
    hidden_params: int
    input_dtypes: Dict[str, str]


def _md(md: Any, name: str, default: Any = None) -> Any:
    """A field of Triton's metadata (a named tuple in Triton 3, a dict before)."""
    if isinstance(md, Mapping):
        return md.get(name, default)
    return getattr(md, name, default)


def _md_dict(md: Any) -> Dict[str, Any]:
    if isinstance(md, Mapping):
        items = dict(md)
    elif hasattr(md, "_asdict"):
        items = dict(md._asdict())
    else:
        items = {k: v for k, v in vars(md).items() if not k.startswith("_")}
    out: Dict[str, Any] = {}
    for k, v in items.items():
        try:
            json.dumps(v)
            out[k] = v
        except (TypeError, ValueError):
            out[k] = repr(v)
    return out


def ptx_entry_params(ptx: str, entry: str) -> int:
    """The number of parameters of ``.entry ENTRY(...)`` in PTX text.

    Raises:
        TritonArmError: the PTX has no such entry.
    """
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\(([^)]*)\)", ptx)
    if m is None:
        raise TritonArmError(f"the PTX has no entry {entry!r}")
    return len(re.findall(r"\.param\b", m.group(1)))


def _arg(param: str, ty: str, mapped: str) -> str:
    """One ``args`` item for kernel parameter ``param`` of signature type ``ty``."""
    name, colon, suffix = mapped.partition(":")
    suffix = colon + suffix
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise TritonArmError(f"parameter {param}: {mapped!r} is not an op tensor, variable or null")
    if ty.startswith("*"):
        if suffix:
            raise TritonArmError(f"parameter {param} is a pointer ({ty}): {mapped!r} takes no suffix")
        return name
    if ty not in SCALAR_SUFFIX:
        raise TritonArmError(f"parameter {param}: kgate cannot pass a {ty!r} scalar "
                             f"(it passes {', '.join(sorted(SCALAR_SUFFIX))} and pointers)")
    if name == "null":
        raise TritonArmError(f"parameter {param}: null is a pointer, and {param} is a {ty}")
    want = SCALAR_SUFFIX[ty]
    if suffix and suffix != want and suffix not in _SAME.get(ty, set()):
        raise TritonArmError(f"parameter {param} is {ty}: {mapped!r} passes another type")
    return name + want


def arm_from_compiled(compiled: Any, *, params: Sequence[str], signature: Mapping[str, str], op: str,
                      grid: Union[str, Sequence[Any]], image: PathLike, args: Optional[Mapping[str, str]] = None,
                      role: str = "candidate", warp_size: int = 32, note: str = "",
                      keys: Optional[Mapping[str, Any]] = None) -> TritonArm:
    """The ``[arm]`` keys of a compiled kernel: the part of :func:`compile_arm` that needs
    no Triton (it reads ``compiled.metadata`` and ``compiled.asm["ptx"]``).

    Args:
        compiled: what ``triton.compile`` returned (or anything with the same
            ``metadata`` and ``asm``).
        params: the kernel's runtime (non-constexpr) parameters, in order.
        signature: parameter -> Triton type (``*fp32``, ``i32``, ...).
        op, grid, role: the arm's keys.
        image: the cubin's path, as the plan will name it.
        args: kernel parameter -> the op's name for it (a tensor, a case variable,
            ``null``); a parameter not named maps to itself.
        warp_size: threads per warp (32 on NVIDIA GPUs).
        note: a comment for the arm's section (``#``), before the metadata summary.
        keys: further plan keys of the arm (``cases``, ``requires``, ``precision``, ...).

    Raises:
        TritonArmError: see the module's docstring.
    """
    md = compiled.metadata
    entry = _md(md, "name")
    if not entry:
        raise TritonArmError("the compiled kernel's metadata has no name")
    for f in ("global_scratch_size", "profile_scratch_size"):
        size = _md(md, f, 0) or 0
        if size > 0:
            raise TritonArmError(f"the kernel needs {size} bytes of {f.replace('_size', '').replace('_', ' ')} "
                                 "memory, which kgate does not provide: simplify it")
    num_ctas = _md(md, "num_ctas", 1) or 1
    if num_ctas != 1:
        raise TritonArmError(f"num_ctas = {num_ctas}: kgate launches one CTA per block (compile with num_ctas=1)")
    cluster = _md(md, "cluster_dims", None)
    if cluster is not None and any(int(c) != 1 for c in cluster):
        raise TritonArmError(f"cluster_dims = {tuple(cluster)}: kgate launches no clusters")
    ptx = compiled.asm.get("ptx") if hasattr(compiled.asm, "get") else compiled.asm["ptx"]
    if not ptx:
        raise TritonArmError("the compiled kernel has no PTX to count its parameters from")
    n_ptx = ptx_entry_params(ptx, entry)
    hidden = n_ptx - len(params)
    if hidden < 0:
        raise TritonArmError(f"the entry {entry} has {n_ptx} parameters, fewer than the kernel's {len(params)} "
                             f"({', '.join(params)}): Triton specialised one away")
    mapping = dict(args or {})
    unknown = set(mapping) - set(params)
    if unknown:
        raise TritonArmError(f"args maps {sorted(unknown)}, which are not runtime parameters of the kernel "
                             f"({', '.join(params)})")
    items = [_arg(p, signature[p], mapping.get(p, p)) for p in params] + ["null"] * hidden
    num_warps = int(_md(md, "num_warps", 4))
    shared = int(_md(md, "shared", 0) or 0)
    grid_text = grid if isinstance(grid, str) else ", ".join(str(g) for g in grid)
    summary = (f"Triton kernel {entry}: num_warps {num_warps}, num_stages {_md(md, 'num_stages', '?')}, "
               f"shared {shared} bytes, {hidden} trailing parameter(s) passed as null")
    comment = [line for part in (note, summary) if part for line in textwrap.wrap(part, 180)]
    arm = TritonArm()
    arm["#"] = comment
    arm.update({"op": op, "role": role, "image": os.fspath(image), "entry": entry, "grid": grid_text,
                "block": warp_size * num_warps, "shared": shared, "args": ", ".join(items)})
    for k, v in (keys or {}).items():
        arm[k] = v
    arm.cubin = Path(image)
    arm.metadata = _md_dict(md)
    arm.ptx_params = n_ptx
    arm.hidden_params = hidden
    arm.input_dtypes = {p: POINTER_DTYPE.get(signature[p][1:], signature[p][1:])
                        for p in params if signature[p].startswith("*")}
    return arm


def _import_triton() -> Any:
    try:
        import triton
    except ImportError as e:
        raise ImportError("kgate.triton.compile_arm needs Triton (pip install triton): it compiles with "
                          "Triton's own compiler. Plans and evidence work without it.") from e
    return triton


def _kernel_params(kernel: Any) -> Tuple[List[str], Optional[List[str]]]:
    """The kernel's parameter names, and those it declares constexpr (None when this
    Triton does not say)."""
    names = getattr(kernel, "arg_names", None)
    if names is None:
        raise TritonArmError(f"{kernel!r} is not a @triton.jit function (it has no arg_names)")
    names = list(names)
    params = getattr(kernel, "params", None)
    if params is None:
        return names, None
    return names, [p.name for p in params if getattr(p, "is_constexpr", False)]


def _source(kernel: Any, names: List[str], signature: Mapping[str, str],
            constexprs: Mapping[str, Any]) -> Any:
    from triton.compiler import ASTSource
    try:
        # Triton >= 3.2: the signature by name, constexprs named in it and given apart
        sig = {n: ("constexpr" if n in constexprs else signature[n]) for n in names}
        return ASTSource(fn=kernel, signature=sig, constexprs=dict(constexprs))
    except TypeError as first:
        # Triton 3.0 and 3.1: the signature and the constants by position
        sig_pos = {i: signature[n] for i, n in enumerate(names) if n not in constexprs}
        consts = {names.index(n): v for n, v in constexprs.items()}
        try:
            return ASTSource(fn=kernel, signature=sig_pos, constants=consts)
        except TypeError:
            raise first from None


def compile_arm(kernel: Any, *, op: str, signature: Mapping[str, str], grid: Union[str, Sequence[Any]],
                out_dir: PathLike, constexprs: Optional[Mapping[str, Any]] = None,
                args: Optional[Mapping[str, str]] = None, num_warps: int = 4, num_stages: int = 3,
                name: Optional[str] = None, arch: Optional[int] = None, role: str = "candidate",
                options: Optional[Mapping[str, Any]] = None, **keys: Any) -> TritonArm:
    """Compiles a ``@triton.jit`` kernel to a cubin and returns its ``[arm]`` keys.

    Args:
        kernel: the ``@triton.jit`` function.
        op: the kgate op the arm implements (``rowsum``, ``gemm_bt``, a declared op).
        signature: Triton type of every non-constexpr parameter (``{"X": "*fp32", "M": "i32"}``).
            Scalars kgate passes: ``i32``, ``i64``, ``fp32``, ``fp64`` (and ``u32``/``u64``);
            pointers to its buffers of the case dtype.
        grid: the launch grid over the case variables (``"M"``, ``("ceildiv(N, 64)", "M")``),
            one program per block.
        out_dir: where ``NAME.cubin`` and ``NAME.json`` (Triton's metadata) are written.
        constexprs: value of every ``tl.constexpr`` parameter.
        args: kernel parameter -> the op's tensor or case variable (or ``null``) it receives;
            unnamed parameters map to themselves.
        num_warps, num_stages: Triton's options; ``options`` adds others (not ``num_ctas`` > 1).
        name: the files' stem (default the kernel's name).
        arch: compute capability as an integer (90 for sm_90: H100, H200); default the
            current device's (needs a GPU and its driver).
        role: the arm's role.
        **keys: further plan keys of the arm (``cases``, ``requires``, ``precision``, ...).

    Raises:
        ImportError: Triton is not installed.
        TritonArmError: the inputs do not fit the kernel, or the compiled kernel cannot run
            as a kgate arm (see the module's docstring).
    """
    triton = _import_triton()
    names, declared = _kernel_params(kernel)
    consts = dict(constexprs or {})
    unknown = set(consts) - set(names)
    if unknown:
        raise TritonArmError(f"constexprs {sorted(unknown)} are not parameters of {kernel.__name__}")
    if declared is not None:
        missing = [n for n in declared if n not in consts]
        if missing:
            raise TritonArmError(f"constexpr parameter(s) {missing} need a value (constexprs=)")
    runtime = [n for n in names if n not in consts]
    missing = [n for n in runtime if n not in signature]
    if missing:
        raise TritonArmError(f"signature lacks the type of {missing} (e.g. '*fp32' or 'i32')")
    extra = set(signature) - set(runtime)
    if extra:
        raise TritonArmError(f"signature names {sorted(extra)}, which are not runtime parameters "
                             f"({', '.join(runtime)})")
    from triton.backends.compiler import GPUTarget
    if arch is None:
        target = triton.runtime.driver.active.get_current_target()
        arch = int(target.arch)
        warp_size = int(getattr(target, "warp_size", 32))
    else:
        target = GPUTarget("cuda", int(arch), 32)
        warp_size = 32
    opts: Dict[str, Any] = {"num_warps": num_warps, "num_stages": num_stages}
    opts.update(options or {})
    compiled = triton.compile(_source(kernel, names, signature, consts), target=target, options=opts)
    stem = name or getattr(kernel, "__name__", "triton_kernel")
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    cubin = folder / f"{stem}.cubin"
    note = (f"Triton {getattr(triton, '__version__', '?')}, sm_{arch}; constexprs "
            + (", ".join(f"{k}={v}" for k, v in consts.items()) or "none")
            + "; signature " + ", ".join(f"{n}: {signature[n]}" for n in runtime))
    arm = arm_from_compiled(compiled, params=runtime, signature=signature, op=op, grid=grid,
                            image=cubin.resolve(), args=args, role=role, warp_size=warp_size, note=note,
                            keys=keys)
    cubin.write_bytes(compiled.asm["cubin"])
    record = {"triton": getattr(triton, "__version__", None), "arch": arch, "kernel": getattr(kernel, "__name__", None),
              "signature": dict(signature), "constexprs": {k: repr(v) if not isinstance(v, (int, float, bool, str))
                                                            else v for k, v in consts.items()},
              "options": {k: v if isinstance(v, (int, float, bool, str)) else repr(v) for k, v in opts.items()},
              "ptx_params": arm.ptx_params, "hidden_params": arm.hidden_params, "metadata": arm.metadata,
              "arm": {k: v for k, v in arm.items() if k != "#"}}
    (folder / f"{stem}.json").write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    return arm
