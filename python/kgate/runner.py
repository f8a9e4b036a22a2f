"""``kgate run`` and ``kgate check`` from Python, returning the parsed verdicts.

A gate that fails is an answer, not an error: :func:`run` returns it. Only what is not
a verdict (a plan kgate refuses, a kernel that does not build, a crash: exit 2 or an
unknown status) raises :class:`kgate.KgateError` with kgate's stderr.
"""
from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._cli import EXIT_FAIL, EXIT_INVALID, EXIT_PASS, KgateError, PathLike, run_cli
from .evidence import Evidence, _read_json, count_checks
from .plan import Plan

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["run", "check", "RunResult", "CheckResult", "Verdict"]

PlanLike = Union[PathLike, Plan]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one (case, arm) in results.json.

    ``reduction`` is 1 - arm/baseline (positive: faster); ``reduction_lower`` and
    ``reduction_upper`` its one-sided bounds; None where the arm has no contrast (a
    baseline, or no data). ``data`` is the whole results.json object.
    """

    case: str
    arm: str
    role: str
    state: str
    verdict: str
    contract: Optional[str] = None
    baseline: Optional[str] = None
    median_ns: Optional[float] = None
    reduction: Optional[float] = None
    reduction_lower: Optional[float] = None
    reduction_upper: Optional[float] = None
    gated: Optional[bool] = None
    gate_fail: Optional[str] = None
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Verdict":
        """One row of results.json's ``results``."""
        eff = obj.get("effect") or {}
        return cls(case=str(obj.get("case")), arm=str(obj.get("arm")), role=str(obj.get("role")),
                   state=str(obj.get("state")), verdict=str(obj.get("verdict")), contract=obj.get("contract"),
                   baseline=obj.get("baseline"), median_ns=obj.get("median_ns"), reduction=eff.get("reduction"),
                   reduction_lower=eff.get("reduction_lower"), reduction_upper=eff.get("reduction_upper"),
                   gated=obj.get("gated"), gate_fail=obj.get("gate_fail"), data=dict(obj))


@dataclass
class _Outcome:
    """What one kgate command left: its status, its output and the evidence folder."""

    returncode: int
    evidence: Path
    results: Dict[str, Any]
    stdout: str = field(repr=False)
    stderr: str = field(repr=False)
    argv: List[str] = field(repr=False)

    @property
    def verdicts(self) -> Dict[Tuple[str, str], Verdict]:
        """(case, arm) -> :class:`Verdict`, in the plan's order."""
        return {(v.case, v.arm): v for v in (Verdict.from_json(r) for r in self.results.get("results", []))}

    def verdict(self, case: str, arm: str) -> str:
        """The verdict word of (case, arm): ``FASTER``, ``INCONCLUSIVE``, ``INCORRECT``, ..."""
        try:
            return self.verdicts[(case, arm)].verdict
        except KeyError:
            raise KeyError(f"no result for case {case!r}, arm {arm!r} in {self.evidence}/results.json") from None

    def load(self) -> Evidence:
        """The evidence folder as a :class:`kgate.Evidence` (its tables as DataFrames)."""
        return Evidence(self.evidence)

    def table(self) -> "pd.DataFrame":
        """results.json's rows as a DataFrame (``Evidence.results``)."""
        return self.load().results


@dataclass
class RunResult(_Outcome):
    """The result of :func:`run`.

    Attributes:
        passed: the gate passed (exit 0).
        gate_reason: results.json's reason (``passed``, or the first failure).
        invalid: the campaign is INVALID (exit 3: a failed control, no usable process, a
            host that never became quiet); ``invalid_host`` says why when it was the host.
        verdicts: (case, arm) -> :class:`Verdict`.
        evidence: the folder.
        returncode, stdout (report.md), stderr (the verdict lines), argv.
    """

    @property
    def passed(self) -> bool:
        return bool(self.results.get("gate_pass")) and self.returncode == EXIT_PASS

    @property
    def gate_reason(self) -> str:
        return str(self.results.get("gate_reason", ""))

    @property
    def invalid(self) -> bool:
        return bool(self.results.get("invalid")) or self.returncode == EXIT_INVALID

    @property
    def invalid_host(self) -> str:
        return str(self.results.get("invalid_host") or "")

    def __repr__(self) -> str:
        state = "PASS" if self.passed else ("INVALID" if self.invalid else "FAIL")
        vs = ", ".join(f"{c}/{a}: {v.verdict}" for (c, a), v in self.verdicts.items() if v.role == "candidate")
        return f"RunResult(gate {state}: {self.gate_reason!r}; {vs}; evidence={str(self.evidence)!r})"


@dataclass
class CheckResult(_Outcome):
    """The result of :func:`check`.

    Attributes:
        passed: every check passed (exit 0); with ``negative=ARM``: every output check of
            the numerical negative failed, as it must.
        n_checks: the check rows written; failed: the failed rows (dicts of checks/'s columns).
        states: (case, arm) -> the admission state (``ok``, ``incorrect``, ``inadmissible``,
            ``weak case``).
    """

    n_checks: int = 0
    failed: List[Dict[str, str]] = field(default_factory=list, repr=False)

    @property
    def passed(self) -> bool:
        return self.returncode == EXIT_PASS

    @property
    def states(self) -> Dict[Tuple[str, str], str]:
        return {k: v.state for k, v in self.verdicts.items()}

    def __repr__(self) -> str:
        return (f"CheckResult(passed={self.passed}, {self.n_checks} checks, {len(self.failed)} failed, "
                f"evidence={str(self.evidence)!r})")


def _plan_file(plan: PlanLike, tmp: Optional[str]) -> Tuple[str, Optional[str]]:
    """The plan argument and the folder to run kgate in: a :class:`Plan` is written to
    ``tmp/NAME.kg`` (paths absolute) and kgate runs in ``tmp``, so that the evidence names
    the plan ``NAME.kg``, the name the plan gave, and not a temporary path."""
    if isinstance(plan, Plan):
        assert tmp is not None
        path = plan.write(Path(tmp) / f"{plan.name or 'plan'}.kg", absolute=True)
        return path.name, tmp
    return str(plan), None


#: Options of ``kgate run`` and ``check`` whose value is a path (made absolute when kgate
#: runs in the plan's temporary folder).
_PATH_OPTIONS = ("--key", "--frozen", "--junit", "--resume", "--ledger", "-o", "--out")


def _args(args: Sequence[Any], cwd: Optional[str]) -> List[str]:
    """Further options as strings; with ``cwd``, the paths they name made absolute."""
    out = [str(a) for a in args]
    if cwd is None:
        return out
    for i, a in enumerate(out):
        if i > 0 and out[i - 1] in _PATH_OPTIONS and not a.startswith("-"):
            out[i] = os.path.abspath(a)
        for opt in _PATH_OPTIONS:
            if opt.startswith("--") and a.startswith(opt + "="):
                out[i] = opt + "=" + os.path.abspath(a[len(opt) + 1:])
    return out


def _out_arg(name: Optional[str], out: Optional[PathLike], cwd: Optional[str], suffix: str) -> Optional[str]:
    """``-o``'s value: absolute when kgate runs in another folder, where kgate's own default
    (``kgate-out/NAME-UTCTIME``) is made in this folder instead."""
    if out is not None:
        return os.path.abspath(out) if cwd is not None else str(out)
    if cwd is None:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    name = name or "plan"
    return os.path.abspath(os.path.join("kgate-out", f"{name}-{stamp}{suffix}"))


def _evidence_path(out: Optional[PathLike], text: str, pattern: str, cp: Any) -> Path:
    """The folder: ``out`` when given, else the one kgate named in ``text``."""
    if out is not None:
        return Path(out)
    m = re.search(pattern, text, re.MULTILINE)
    if m is None:
        raise KgateError("kgate did not say where it wrote the evidence (pass out=DIR)", returncode=cp.returncode,
                         argv=cp.args, stdout=cp.stdout, stderr=cp.stderr)
    return Path(m.group(1).strip())


def _results(folder: Path, cp: Any) -> Dict[str, Any]:
    try:
        return _read_json(folder / "results.json")
    except (FileNotFoundError, ValueError) as e:
        raise KgateError(f"kgate exited {cp.returncode} without a readable {folder}/results.json: {e}",
                         returncode=cp.returncode, argv=cp.args, stdout=cp.stdout, stderr=cp.stderr) from e


def run(plan: PlanLike, out: Optional[PathLike] = None, *, backend: Optional[str] = None,
        args: Sequence[str] = (), kgate: Optional[PathLike] = None, env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None, echo: bool = False) -> RunResult:
    """Runs ``kgate run PLAN -o OUT`` and returns its verdicts.

    Args:
        plan: a plan file, or a :class:`kgate.Plan` (written to a temporary file with its
            relative paths made absolute; the folder keeps the canonical plan.kg).
        out: the evidence folder (new or empty); default kgate's ``kgate-out/NAME-UTCTIME``.
        backend: ``--backend`` (``cpu``, ``fake``, ``cuda``, ``auto``) overriding the plan's.
        args: further options (``["--key", "k.pem"]``, ``["--frozen", "p.frozen"]``, ...).
        kgate: the binary (see :func:`kgate.find_kgate`).
        env: variables added to kgate's environment.
        timeout: seconds (see :func:`kgate.run_cli`).
        echo: copy kgate's stderr (progress off, verdict lines) to ours as it comes.

    Returns:
        A :class:`RunResult` for exit 0 (gate PASS), 1 (gate FAIL or inconclusive) and 3
        (an INVALID campaign), each with its evidence folder.

    Raises:
        KgateError: any other exit status (2: a usage or input error, a kernel that does
            not build or load), with kgate's stderr.
    """
    with tempfile.TemporaryDirectory(prefix="kgate-plan-") as tmp:
        path, cwd = _plan_file(plan, tmp)
        return _run_plan_file(path, cwd, out, plan.name if isinstance(plan, Plan) else None, backend=backend,
                              args=args, kgate=kgate, env=env, timeout=timeout, echo=echo)


def _run_plan_file(path: str, cwd: Optional[PathLike], out: Optional[PathLike], name: Optional[str], *,
                   backend: Optional[str] = None, args: Sequence[str] = (), kgate: Optional[PathLike] = None,
                   env: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
                   echo: bool = False) -> RunResult:
    """``kgate run PATH`` in folder ``cwd`` (None: this one); see :func:`run`."""
    cwd_s = None if cwd is None else os.fspath(cwd)
    out_arg = _out_arg(name, out, cwd_s, "")
    argv = ["run", path, "--no-progress", "--report"]
    if out_arg is not None:
        argv += ["-o", out_arg]
    if backend is not None:
        argv += ["--backend", backend]
    argv += _args(args, cwd_s)
    cp = run_cli(argv, kgate=kgate, env=env, timeout=timeout, echo=echo, cwd=cwd_s)
    if cp.returncode not in (EXIT_PASS, EXIT_FAIL, EXIT_INVALID):
        raise KgateError(f"kgate run failed (exit {cp.returncode})", returncode=cp.returncode, argv=cp.args,
                         stdout=cp.stdout, stderr=cp.stderr)
    folder = Path(out) if out is not None else _evidence_path(out_arg, cp.stderr, r"^kgate: evidence in (.+)$", cp)
    return RunResult(returncode=cp.returncode, evidence=folder, results=_results(folder, cp), stdout=cp.stdout,
                     stderr=cp.stderr, argv=list(cp.args))


def check(plan: PlanLike, out: Optional[PathLike] = None, *, backend: Optional[str] = None,
          negative: Optional[str] = None, args: Sequence[str] = (), kgate: Optional[PathLike] = None,
          env: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None) -> CheckResult:
    """Runs ``kgate check PLAN -o OUT``: every admission check of every arm on every case,
    in one worker process, nothing timed.

    Args:
        plan, out, backend, args, kgate, env, timeout: as for :func:`run`.
        negative: ``--negative ARM``: ARM rebuilt as its numerical negative, whose every
            output check must fail (``passed`` then means they all did).

    Returns:
        A :class:`CheckResult` for exit 0 (every check passed) and 1 (some failed).

    Raises:
        KgateError: any other exit status, with kgate's stderr.
    """
    with tempfile.TemporaryDirectory(prefix="kgate-plan-") as tmp:
        path, cwd = _plan_file(plan, tmp)
        out_arg = _out_arg(plan.name if isinstance(plan, Plan) else None, out, cwd, "-check")
        argv = ["check", path]
        if out_arg is not None:
            argv += ["-o", out_arg]
        if backend is not None:
            argv += ["--backend", backend]
        if negative is not None:
            argv += ["--negative", negative]
        argv += _args(args, cwd)
        cp = run_cli(argv, kgate=kgate, env=env, timeout=timeout, cwd=cwd)
    if cp.returncode not in (EXIT_PASS, EXIT_FAIL):
        raise KgateError(f"kgate check failed (exit {cp.returncode})", returncode=cp.returncode, argv=cp.args,
                         stdout=cp.stdout, stderr=cp.stderr)
    folder = Path(out) if out is not None else _evidence_path(out_arg, cp.stdout, r"Evidence: (.+)$", cp)
    n, failed = count_checks(folder)
    return CheckResult(returncode=cp.returncode, evidence=folder, results=_results(folder, cp), stdout=cp.stdout,
                       stderr=cp.stderr, argv=list(cp.args), n_checks=n, failed=failed)
