"""kgate's pytest plugin (the ``pytest11`` entry point ``kgate``): the ``kgate_gate`` fixture.

::

    def test_saxpy_is_faster(kgate_gate):
        kgate_gate.compare(saxpy, {"unrolled": kgate.C("saxpy.c")}, inputs={"X": ("n", "f32")},
                           sizes={"n": 1 << 16})

``kgate_gate(result)`` asserts a campaign's gate (a :class:`kgate.RunResult`, the
:class:`kgate.CompareResult` of ``kgate.compare`` or a :class:`kgate.CheckResult`);
``kgate_gate.compare(...)`` and ``kgate_gate.run(plan, ...)`` run one and assert it. The test
fails when the gate fails or the campaign is INVALID, with the short answer as the message.
Each verdict is recorded as a property of the test (as ``record_property`` does: pytest's
JUnit file holds it), the verdicts appear in the terminal summary (section "kgate"), and when
``$GITHUB_STEP_SUMMARY`` names a file, a markdown verdict table is appended to it at the end
of the session.
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Optional, Tuple

import pytest

__all__ = ["KgateGate"]

_RESULTS = "_kgate_results"


def _results(config: Any) -> List[Tuple[str, Any]]:
    found = getattr(config, _RESULTS, None)
    if found is None:
        found = []
        setattr(config, _RESULTS, found)
    return found


class KgateGate:
    """The ``kgate_gate`` fixture's value (see the module's docstring)."""

    def __init__(self, nodeid: str, record: Callable[[str, object], None], config: Any) -> None:
        self._nodeid = nodeid
        self._record = record
        self._config = config

    def __call__(self, result: Any, *, label: Optional[str] = None) -> Any:
        """Records ``result``'s verdicts and fails the test unless its gate passed (for a
        CheckResult: unless every check passed). Returns the result."""
        from .runner import CheckResult
        from .summary import summary_lines
        tag = label or self._nodeid
        if isinstance(result, CheckResult):
            self._record("kgate_check", "passed" if result.passed else f"{len(result.failed)} failed")
            self._record("kgate_evidence", str(result.evidence))
            _results(self._config).append((tag, result))
            if not result.passed:
                pytest.fail(f"kgate check: {len(result.failed)} of {result.n_checks} checks failed "
                            f"(evidence: {result.evidence})", pytrace=False)
            return result
        state = "PASS" if result.passed else ("INVALID" if result.invalid else "FAIL")
        self._record("kgate_gate", f"{state}: {result.gate_reason}")
        self._record("kgate_evidence", str(result.evidence))
        for (case, arm), v in result.verdicts.items():
            if v.role in ("baseline", "control"):
                continue
            text = v.verdict
            if v.reduction is not None:
                text += f" {100 * v.reduction:+.1f}%"
                if v.reduction_lower is not None and v.reduction_upper is not None:
                    text += f" [{100 * v.reduction_lower:+.1f}%, {100 * v.reduction_upper:+.1f}%]"
            self._record(f"kgate_verdict[{case}/{arm}]", text)
        _results(self._config).append((tag, result))
        if not result.passed:
            pytest.fail("kgate " + "\n".join(summary_lines(result, f"gate {state} in")), pytrace=False)
        return result

    def compare(self, *args: Any, **kwargs: Any) -> Any:
        """:func:`kgate.compare`, then the gate asserted."""
        from .compare import compare
        return self(compare(*args, **kwargs))

    def run(self, plan: Any, *args: Any, **kwargs: Any) -> Any:
        """:func:`kgate.run`, then the gate asserted."""
        from .runner import run
        return self(run(plan, *args, **kwargs))

    def check(self, plan: Any, *args: Any, **kwargs: Any) -> Any:
        """:func:`kgate.check`, then every check asserted."""
        from .runner import check
        return self(check(plan, *args, **kwargs))


@pytest.fixture
def kgate_gate(request: Any) -> KgateGate:
    """Asserts a kgate campaign's gate: ``kgate_gate(result)``, ``kgate_gate.compare(...)``,
    ``kgate_gate.run(plan)``, ``kgate_gate.check(plan)``. The verdicts are the test's
    properties (what ``record_property`` adds, without its warning under pytest's default
    ``junit_family``)."""
    node = request.node
    return KgateGate(node.nodeid, lambda name, value: node.user_properties.append((name, value)), request.config)


def _lines(config: Any) -> List[str]:
    from .runner import CheckResult
    from .summary import summary_lines
    out: List[str] = []
    for tag, r in _results(config):
        if isinstance(r, CheckResult):
            out.append(f"{tag}: check {'passed' if r.passed else 'FAILED'}: {r.n_checks} checks, "
                       f"{len(r.failed)} failed (evidence: {r.evidence})")
        else:
            out.extend(summary_lines(r, tag))
    return out


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    lines = _lines(config)
    if not lines:
        return
    terminalreporter.section("kgate")
    for line in lines:
        terminalreporter.write_line(line)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    from .runner import CheckResult
    from .summary import markdown_table
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    rows = [(t, r) for t, r in _results(session.config) if not isinstance(r, CheckResult)]
    if not target or not rows or hasattr(session.config, "workerinput"):
        return
    with open(target, "a", encoding="utf-8") as f:
        f.write("### kgate verdicts (pytest)\n\n" + markdown_table(rows) + "\n")
