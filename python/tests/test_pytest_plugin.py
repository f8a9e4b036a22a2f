"""The pytest plugin (kgate.pytest_plugin): a pytest run of its own, in a subprocess, whose
tests gate on fake campaigns (one passes, one fails); its exit status, terminal summary,
JUnit file and $GITHUB_STEP_SUMMARY are checked."""
from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import kgate

from conftest import fake_plan


def _plugin_installed() -> bool:
    eps = importlib.metadata.entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    return any(ep.name == "kgate" and ep.value == "kgate.pytest_plugin" for ep in group)


def test_plugin_gates_records_and_summarises(tmp_path: Path, kgate_bin: str) -> None:
    passing = fake_plan(name="plug-pass").write(tmp_path / "pass.kg")
    failing = fake_plan(name="plug-fail", cand_ns=1000).write(tmp_path / "fail.kg")
    (tmp_path / "test_inner.py").write_text(f'''
import kgate

def test_faster(kgate_gate):
    r = kgate_gate.run({str(passing)!r}, out={str(tmp_path / "ev-pass")!r})
    assert r.passed

def test_not_faster(kgate_gate):
    kgate_gate(kgate.run({str(failing)!r}, out={str(tmp_path / "ev-fail")!r}))

def test_check(kgate_gate):
    kgate_gate.check({str(passing)!r}, out={str(tmp_path / "ev-check")!r})
''')
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    env = dict(os.environ, KGATE=kgate_bin, GITHUB_STEP_SUMMARY=str(summary),
               PYTHONPATH=str(Path(kgate.__file__).resolve().parents[1]))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", str(tmp_path / "j.xml"),
            "-W", "error::pytest.PytestWarning", str(tmp_path / "test_inner.py")]
    if not _plugin_installed():
        argv[3:3] = ["-p", "kgate.pytest_plugin"]
    cp = subprocess.run(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                        timeout=300)
    out = cp.stdout
    assert cp.returncode == 1, out
    assert "1 failed, 2 passed" in out, out
    # the failure's message is the short answer; the terminal summary has every verdict
    assert "kgate gate FAIL in: gate FAIL" in out, out
    section = out[out.index("= kgate ="):]
    assert "test_inner.py::test_faster: gate PASS: passed" in section
    assert "cand           FASTER" in section and "base 1.0 µs" in section
    assert "test_inner.py::test_not_faster: gate FAIL" in section
    assert "test_inner.py::test_check: check passed" in section
    # JUnit: the verdicts as properties of each test case
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["test_faster"].iter("property")}
    assert props["kgate_gate"] == "PASS: passed"
    assert props["kgate_verdict[small/cand]"].startswith("FASTER +3.0% [")
    assert props["kgate_evidence"] == str(tmp_path / "ev-pass")
    failed = {p.get("name"): p.get("value") for p in cases["test_not_faster"].iter("property")}
    assert failed["kgate_gate"].startswith("FAIL: ") and cases["test_not_faster"].find("failure") is not None
    # $GITHUB_STEP_SUMMARY: appended, one row per gated candidate
    text = summary.read_text()
    assert text.startswith("earlier step\n### kgate verdicts (pytest)")
    rows = [line for line in text.splitlines() if line.startswith("| test_inner.py")]
    assert len(rows) == 2, text
    assert rows[0].startswith("| test_inner.py::test_faster | small | cand | FASTER | +3.0% |") and \
        rows[0].endswith("| PASS |")
    assert rows[1].endswith("| FAIL |")


def test_gate_object_without_pytest_run(fake_run: kgate.RunResult) -> None:
    """The fixture's value on its own: a passing result is returned, properties recorded."""
    from kgate.pytest_plugin import KgateGate

    class Config:
        pass

    seen = []
    cfg = Config()
    gate = KgateGate("t::x", lambda k, v: seen.append((k, v)), cfg)
    assert gate(fake_run) is fake_run
    assert ("kgate_gate", "PASS: passed") in seen
    assert getattr(cfg, "_kgate_results") == [("t::x", fake_run)]
