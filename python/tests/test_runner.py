"""kgate.run and kgate.check: verdicts returned, errors raised, the binary found."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import kgate
from kgate._cli import _source_tree_candidates

from conftest import ROOT, cpu_plan, fake_plan


def test_run_pass(fake_run: kgate.RunResult) -> None:
    r = fake_run
    assert r.returncode == 0 and r.passed and not r.invalid
    assert r.gate_reason == "passed"
    assert r.verdict("small", "cand") == "FASTER"
    v = r.verdicts[("small", "cand")]
    assert v.role == "candidate" and v.baseline == "base" and v.state == "ok"
    assert v.reduction is not None and v.reduction_lower is not None and 0.01 < v.reduction_lower < v.reduction
    assert list(r.verdicts) == [("small", "base"), ("small", "cand"), ("small", "ctrl")]
    assert r.verdicts[("small", "base")].reduction is None
    assert r.stdout.startswith("# kgate report: py-fake")
    assert "gate PASS" in r.stderr
    assert (r.evidence / "SHA256SUMS").is_file()
    assert "FASTER" in repr(r)
    t = r.table()
    assert list(t["arm"]) == ["base", "cand", "ctrl"]
    with pytest.raises(KeyError):
        r.verdict("small", "nobody")


def test_run_gate_fail_is_a_result(tmp_path: Path) -> None:
    r = kgate.run(fake_plan(cand_ns=1030), out=tmp_path / "slow")
    assert r.returncode == 1 and not r.passed and not r.invalid
    assert r.verdict("small", "cand") == "SLOWER"
    assert "lower bound of reduction" in r.gate_reason
    assert "gate FAIL" in r.stderr


def test_run_plan_file_and_backend_override(tmp_path: Path) -> None:
    """A plan file as it is, its backend overridden (cpu -> fake: scripted timings)."""
    path = cpu_plan().write(tmp_path / "cpu.kg")
    r = kgate.run(path, out=tmp_path / "ev", backend="fake")
    assert r.returncode in (0, 1)
    assert kgate.Evidence(r.evidence).meta["backend"] == "fake"
    assert set(r.verdicts) == {("r", "naive"), ("r", "unrolled")}


def test_run_default_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = kgate.run(fake_plan(name="where"))
    assert r.evidence.is_dir() and r.evidence.parent.name == "kgate-out"
    assert r.evidence.name.startswith("where-")


def test_run_errors_raise_with_stderr(tmp_path: Path) -> None:
    with pytest.raises(kgate.KgateError) as e:
        kgate.run(tmp_path / "missing.kg", out=tmp_path / "x")
    assert e.value.returncode == 2 and "cannot open plan" in str(e.value)
    assert "missing.kg" in e.value.stderr
    bad = tmp_path / "bad.kg"
    bad.write_text("[campaign]\nsamples = 0\n")
    with pytest.raises(kgate.KgateError, match="samples"):
        kgate.run(bad, out=tmp_path / "y")
    with pytest.raises(kgate.KgateError, match="exit 2"):
        kgate.run(fake_plan(), out=tmp_path / "z", args=["--no-such-option"])
    # a kernel that does not compile is an input error, not a verdict
    broken = tmp_path / "broken.c"
    broken.write_text("this is not C\n")
    p = cpu_plan()
    p.arms["unrolled"]["source"] = str(broken)
    with pytest.raises(kgate.KgateError) as e2:
        kgate.run(p, out=tmp_path / "w")
    assert e2.value.returncode == 2


def test_check_pass_and_fail(tmp_path: Path) -> None:
    ok = kgate.check(fake_plan(), out=tmp_path / "ok")
    assert ok.passed and ok.returncode == 0 and ok.n_checks > 0 and not ok.failed
    assert set(ok.states.values()) == {"ok"}
    wrong = kgate.check(fake_plan(fake_wrong=True), out=tmp_path / "wrong")
    assert not wrong.passed and wrong.returncode == 1
    assert wrong.states[("small", "cand")] == "incorrect" and wrong.states[("small", "base")] == "ok"
    assert wrong.failed and all(row["arm"] == "cand" for row in wrong.failed)
    assert wrong.verdict("small", "cand") == "INCORRECT"
    assert "failed" in repr(wrong)


def test_check_negative(tmp_path: Path) -> None:
    """The numerical negative of the candidate: every output check must fail, and does."""
    r = kgate.check(cpu_plan(), out=tmp_path / "neg", negative="unrolled")
    assert r.passed, r.stdout[-2000:]


def test_check_default_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = kgate.check(fake_plan(name="chk"))
    assert r.evidence.is_dir() and (r.evidence / "checks" / "proc-000.csv").is_file()


def test_find_kgate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kgate_bin: str) -> None:
    assert kgate.find_kgate(kgate_bin) == os.path.abspath(kgate_bin)
    with pytest.raises(kgate.KgateNotFound, match="not executable"):
        kgate.find_kgate(tmp_path / "nothing")
    monkeypatch.setenv("KGATE", str(tmp_path / "nothing"))
    with pytest.raises(kgate.KgateNotFound, match=r"\$KGATE"):
        kgate.find_kgate()
    monkeypatch.setenv("KGATE", kgate_bin)
    assert kgate.find_kgate() == os.path.abspath(kgate_bin)
    # without $KGATE: the bundled binary, when the package was installed with one
    monkeypatch.delenv("KGATE")
    import kgate._cli as cli
    fake_pkg = tmp_path / "pkg" / "_bin" / "bin"
    fake_pkg.mkdir(parents=True)
    (fake_pkg / "kgate").symlink_to(kgate_bin)
    monkeypatch.setattr(cli, "bundled_kgate", lambda: fake_pkg / "kgate")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "kgate").symlink_to(kgate_bin)
    monkeypatch.setenv("PATH", str(bindir))
    assert kgate.find_kgate() == str(fake_pkg / "kgate")
    # then kgate on PATH, passing over a script of that name (the package's console script)
    monkeypatch.setattr(cli, "bundled_kgate", lambda: tmp_path / "none" / "kgate")
    assert kgate.find_kgate() == str(bindir / "kgate")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "kgate").write_text("#!/bin/sh\nexit 9\n")
    (scripts / "kgate").chmod(0o755)
    monkeypatch.setenv("PATH", f"{scripts}{os.pathsep}{bindir}")
    assert kgate.find_kgate() == str(bindir / "kgate")
    # nothing at all: the message says what was tried
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    if not any(c.is_file() for c in _source_tree_candidates()):
        with pytest.raises(kgate.KgateNotFound, match="tried"):
            kgate.find_kgate()


def test_source_tree_fallback() -> None:
    """From the source tree (python/kgate), the tree's bin/kgate is the first candidate; an
    installed package has none."""
    cands = _source_tree_candidates()
    here = Path(kgate.__file__).resolve()
    if (ROOT / "python" / "kgate") == here.parent:
        assert cands[0] == ROOT / "bin" / "kgate"
    else:
        assert cands == [] or all(not str(c).startswith(str(ROOT)) for c in cands)


def test_run_cli_env_and_timeout(tmp_path: Path) -> None:
    cp = kgate.run_cli(["--version"])
    assert cp.returncode == 0 and "kgate" in cp.stdout + cp.stderr
    slow = fake_plan(name="slow")
    slow.arms["cand"]["fake_hang"] = 0
    slow.campaign["timeout"] = 30
    path = slow.write(tmp_path / "slow.kg")
    with pytest.raises(kgate.KgateError, match="timeout"):
        kgate.run_cli(["run", str(path), "-o", str(tmp_path / "h"), "--no-progress"], timeout=1)
