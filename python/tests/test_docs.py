"""docs/python.md's tutorial, run as written: the code blocks after a marker line
``<!-- kgate-doc: VARIANT file NAME -->`` are written to NAME, those after ``<!--
kgate-doc: VARIANT run -->`` are run in order in one namespace, in a fresh folder. The CPU
variant runs whole (where this kgate reads Python-declared ops); the Triton variant's plan
is built with a stand-in for Triton's compiler (the GPU run is the coordinator's)."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import kgate

from conftest import ROOT

DOC = ROOT / "docs" / "python.md"
MARK = re.compile(r"^<!-- kgate-doc: (\w+) (file (\S+)|run) -->\n```[a-z]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(variant: str) -> List[Tuple[str, str]]:
    """(file name or "", code) of the variant's marked blocks, in the doc's order."""
    text = DOC.read_text(encoding="utf-8")
    found = [(m.group(3) or "", m.group(4)) for m in MARK.finditer(text) if m.group(1) == variant]
    assert found, f"no blocks marked kgate-doc: {variant} in {DOC}"
    return found


def test_the_markers_are_what_the_doc_shows() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text.count("<!-- kgate-doc: ") == len(MARK.findall(text)), "a marker not right before a code block"
    names = [n for n, _ in blocks("cpu")]
    assert names == ["saxpy_ref.py", "saxpy.c", "", "test_saxpy.py"]
    assert [n for n, _ in blocks("triton")] == ["softmax.py"]
    for name, code in blocks("cpu") + blocks("triton"):
        if not name.endswith(".c"):
            ast.parse(code, name or "run block")


def _write(variant: str, folder: Path) -> List[str]:
    runs = []
    for name, code in blocks(variant):
        if name:
            (folder / name).write_text(code, encoding="utf-8")
        else:
            runs.append(code)
    return runs


def test_cpu_variant_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kgate_bin: str) -> None:
    runs = _write("cpu", tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("saxpy_ref", None)
    ns: Dict[str, Any] = {"__name__": "__doc__"}
    try:
        for code in runs:
            exec(compile(code, str(DOC), "exec", dont_inherit=True), ns)
    except kgate.KgateError as e:
        if "'reference'" in e.stderr or "python:" in e.stderr:
            pytest.skip(f"this kgate does not read Python-declared ops or calls yet: {e.stderr.strip()}")
        raise
    finally:
        sys.modules.pop("saxpy_ref", None)
    r = ns["r"]
    assert isinstance(r, kgate.CompareResult)
    v = r.verdicts[("saxpy", "unrolled")]
    assert v.state == "ok" and v.verdict != "INCORRECT" and v.baseline == "numpy"
    assert repr(r).startswith("saxpy: gate ") and "unrolled" in repr(r)
    assert (tmp_path / "saxpy-run" / "saxpy.kg").is_file() and r.evidence == Path("saxpy-run") / "evidence"
    assert r.evidence.is_dir() and (r.evidence / "report.html").is_file()
    assert any(f.name.startswith("op-") for f in (r.evidence / "sources").iterdir())


def test_triton_variant_builds_its_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """softmax.py with a stand-in Triton: the reference's outputs, the kernel's parameters
    matched to the op's tensors and variables, the plan the GPU run will run."""
    pytest.importorskip("torch")
    from test_triton import _stub_triton
    seen = _stub_triton(monkeypatch)
    _write("triton", tmp_path)
    src = (tmp_path / "softmax.py").read_text()
    import types
    mod = types.ModuleType("softmax_doc")
    mod.__file__ = str(tmp_path / "softmax.py")
    monkeypatch.setitem(sys.modules, "softmax_doc", mod)
    exec(compile(src, mod.__file__, "exec", dont_inherit=True), mod.__dict__)
    main = next(n for n in ast.parse(src).body if isinstance(n, ast.If))
    call = main.body[0].value.args[0]                     # print(kgate.compare(...))
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "kgate.compare"
    plans: List[kgate.Plan] = []

    def compare(*a: Any, out: Any = None, **kw: Any) -> None:
        plans.append(kgate.compare_plan(*a, folder=tmp_path / "plan", **kw))

    shim = types.SimpleNamespace(compare=compare, Triton=lambda *a, **k: kgate.Triton(*a, arch=90, **k))
    eval(compile(ast.Expression(call), "softmax.py", "eval"), dict(mod.__dict__, kgate=shim))
    plan = plans[0]
    op = plan.ops["softmax_py"]                      # softmax is a kgate op: the declared one is softmax_py
    assert op["tensors"] == "torch" and op["inputs"] == ("x[M, N]",) and op["vars"] == "M N"
    assert op["outputs"] == ("out[M, N]",) and plan.cases["softmax"]["dtype"] == "f16"
    assert seen["source"][1] == {"X": "*fp16", "Y": "*fp16", "M": "i32", "N": "i32", "BLOCK": "constexpr"}
    assert seen["source"][2] == {"BLOCK": 1024}
    arm = plan.arms["triton"]
    assert arm["args"] == "x, out, M, N, null, null" and arm["grid"] == "M" and arm["block"] == 128
    assert plan.campaign["backend"] == "cuda" and plan.arms["torch"]["builtin"] == "torch"
    assert plan.arms["torch"]["call"] == f"python:{(tmp_path / 'softmax.py').resolve()}:softmax"
