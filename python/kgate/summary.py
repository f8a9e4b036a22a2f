"""A run's verdicts in a few lines: the short answer (as ``kgate run`` prints it) and a
markdown table (for ``$GITHUB_STEP_SUMMARY``), both from results.json."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from .runner import RunResult

__all__ = ["summary_lines", "markdown_table"]


def _fmt_time(ns: Optional[float]) -> str:
    if ns is None or ns != ns:
        return "-"
    for unit, scale in (("ns", 1.0), ("µs", 1e3), ("ms", 1e6)):
        if ns < scale * 1e3:
            return f"{ns / scale:.1f} {unit}"
    return f"{ns / 1e9:.2f} s"


def _pct(x: Optional[float]) -> str:
    return "?" if x is None else f"{100 * x:+.1f}%"


def summary_lines(result: RunResult, title: str) -> List[str]:
    """A run's short answer, as ``kgate run`` prints it: the gate, one line per candidate
    (and case, when there are several): verdict, reduction and its interval, the
    baseline's and the candidate's medians; each control; the folder."""
    state = "PASS" if result.passed else ("INVALID" if result.invalid else "FAIL")
    out = [f"{title}: gate {state}: {result.gate_reason}"]
    vs = result.verdicts
    cases = list(dict.fromkeys(c for c, _ in vs))
    for (c, a), v in vs.items():
        if v.role in ("baseline", "control") or v.state == "absent":
            continue
        where = f"{c}/{a}" if len(cases) > 1 else a
        iv = f"{_pct(v.reduction)} [{_pct(v.reduction_lower)}, {_pct(v.reduction_upper)}]" \
            if v.reduction is not None else ""
        b = vs.get((c, v.baseline)) if v.baseline else None
        times = f"  {v.baseline} {_fmt_time(b.median_ns if b else None)} -> {_fmt_time(v.median_ns)}" \
            if b is not None and v.median_ns is not None else ""
        label = str(v.data.get("label") or v.verdict)
        out.append(f"  {where:<14} {label:<13} {iv:<24}{times}".rstrip())
    for (c, a), v in vs.items():
        if v.role == "control" and v.state != "absent":
            where = f" on {c}" if len(cases) > 1 else ""
            label = str(v.data.get("label") or v.verdict)
            out.append(f"  control {a} (A/A of {v.baseline}){where}: {label}, "
                       f"{_pct(v.reduction)} [{_pct(v.reduction_lower)}, {_pct(v.reduction_upper)}]")
    out.append(f"evidence: {result.evidence} (report.html; kgate verify {result.evidence})")
    return out


def markdown_table(rows: Sequence[Tuple[str, RunResult]]) -> str:
    """A markdown verdict table of (label, result) pairs (``$GITHUB_STEP_SUMMARY``): one row
    per candidate and case, then the gate of each result."""
    out = ["| | case | arm | verdict | reduction | interval | gate |", "|---|---|---|---|---|---|---|"]
    for label, r in rows:
        gate = "PASS" if r.passed else ("INVALID" if r.invalid else "FAIL")
        for (c, a), v in r.verdicts.items():
            if v.role in ("baseline", "control") or v.state == "absent":
                continue
            iv = f"[{_pct(v.reduction_lower)}, {_pct(v.reduction_upper)}]" if v.reduction is not None else ""
            out.append(f"| {_md(label)} | {_md(c)} | {_md(a)} | {v.verdict} | "
                       f"{_pct(v.reduction) if v.reduction is not None else ''} | {iv} | {gate} |")
    return "\n".join(out) + "\n"


def _md(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")
