"""``kgate.compare``: a campaign from a reference function and candidates, in one call.

::

    import kgate
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

import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ._cli import KgateNotFound, PathLike, find_kgate
from .candidates import C, CUDA, Image, Library, Triton, _as_arm
from .plan import Plan, _check_name
from .pyfunc import CompareError, function_file
from .pyop import _build_op
from .runner import RunResult, _run_plan_file
from .summary import summary_lines

__all__ = ["compare", "compare_plan", "C", "CUDA", "Triton", "Image", "Library", "CompareResult", "CompareError"]

# ---- the plan ----

def _safe(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)[:63]
    return s or "compare"


_BUILTIN_OPS: Optional[frozenset] = None


def builtin_ops() -> frozenset:
    """The names of kgate's built-in ops, from ``kgate list`` (empty where no kgate is found):
    a declared op may not take one."""
    global _BUILTIN_OPS
    if _BUILTIN_OPS is None:
        names: set = set()
        try:
            cp = subprocess.run([str(find_kgate()), "list"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=60)
            section = ""
            for line in cp.stdout.splitlines():
                if line and not line[0].isspace():
                    section = line.rstrip(":")           # "ops:", then the backends' section
                m = re.match(r"^  ([A-Za-z_][A-Za-z0-9_]*)  +\S", line)
                if m and section == "ops":
                    names.add(m.group(1))
        except (KgateNotFound, OSError, subprocess.SubprocessError):
            pass
        _BUILTIN_OPS = frozenset(names)
    return _BUILTIN_OPS


def compare_plan(reference: Callable[..., Any], candidates: Any, *, inputs: Mapping[str, Any], folder: PathLike,
                 sizes: Optional[Mapping[str, Any]] = None, scalars: Optional[Mapping[str, Any]] = None,
                 outputs: Any = None, dtype: Optional[str] = None, baseline: Any = None, control: bool = True,
                 tensors: Optional[str] = None, bound: Optional[str] = None, rtol: Optional[float] = None,
                 atol: Optional[float] = None, requires: Optional[str] = None, flops: Optional[str] = None,
                 bytes: Optional[str] = None, name: Optional[str] = None, backend: Optional[str] = None,
                 processes: Optional[int] = None, rounds: Optional[int] = None, samples: Optional[int] = None,
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
    named_base = isinstance(baseline, str) and baseline in arms
    gpu = any(a.gpu for a in arms.values()) or (baseline is not None and not named_base and _as_arm(baseline).gpu)
    if tensors is None:
        torchy = gpu or any(type(v).__module__.startswith("torch") for v in inputs.values())
        tensors = "torch" if torchy else "numpy"
    if tensors not in ("numpy", "torch"):
        raise CompareError(f"tensors = {tensors!r}: numpy or torch")
    title = _safe(name or ref_func)          # the campaign, its case and its plan file
    op_name = title
    if name is None and op_name in builtin_ops():
        op_name += "_py"          # a function named after a kgate op (softmax): the declared op's own name
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
    elif named_base:
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
    if processes is None:
        # at least 6 per direction, a multiple of the arms so that the load-order square is whole
        processes = len(plan_arms) * -(-6 // len(plan_arms))
    camp: Dict[str, Any] = {"name": title, "backend": backend or ("cuda" if gpu else "cpu"), "quiet": quiet_window,
                            "processes": processes, "rounds": rounds, "samples": samples, "warmup": warmup,
                            "seed": seed}
    camp.update(campaign or {})
    gate_keys = dict(gate or {})
    if min_reduction is None and "min_reduction" not in gate_keys:
        # a claim of 2%: six processes per direction resolve it on a GPU or a quiet host, where
        # kgate's own default (the margin, 0.5%) needs far more
        min_reduction = "2%"
    if min_reduction is not None:
        gate_keys["min_reduction"] = min_reduction
    case = {"op": op_name, "dtype": op.dtype}
    case.update({k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in op.values.items()})
    return Plan(campaign={k: v for k, v in camp.items() if v is not None},
                ops={op_name: {k: v for k, v in op_keys.items() if v is not None}},
                cases={title: case}, arms=plan_arms, gate=gate_keys or None,
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
            Triton), ``processes`` (per direction; default the least multiple
            of the arm count that is at least 6, which completes the load-order square), ``rounds``, ``samples``,
            ``warmup``, ``quiet_window`` (default 0: no wait for a quiet host),
            ``min_reduction`` (default 2%), ``seed``, ``campaign`` and ``gate`` (further keys).
        timeout, echo, kgate, env, args: as for :func:`kgate.run`.

    Returns:
        A :class:`CompareResult` (a gate FAIL is a result, not an exception).

    Raises:
        CompareError: the arguments do not make a plan (the message says how to fix them).
        KgateError: kgate refused the plan or could not build a kernel (exit 2).
    """
    run_args = list(args) + (["--smoke"] if smoke else [])
    env = _helper_python(env)
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


def _helper_python(env: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """``KGATE_PYTHON`` = this Python, unless set, or unless ``python3`` on PATH is this
    Python's environment's: kgate's helper then imports the reference with the packages that
    imported it here (a virtual environment that is not activated, a notebook's kernel)."""
    out = dict(env or {})
    if "KGATE_PYTHON" in out or os.environ.get("KGATE_PYTHON"):
        return out
    on_path = shutil.which("python3")
    if on_path is None or os.path.dirname(os.path.abspath(on_path)) != os.path.dirname(os.path.abspath(sys.executable)):
        out["KGATE_PYTHON"] = sys.executable
    return out


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
