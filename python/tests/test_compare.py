"""kgate.compare: the plan it builds from a reference function and candidates (the
Python-declared op, the baseline library arm, each kind of candidate, the control), what it
refuses and how it says so, the short answer, and a whole campaign on the cpu backend where
the kgate under test reads Python-declared ops and calls."""
from __future__ import annotations

import importlib.util
import subprocess
import re
import sys
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pytest

import kgate
from kgate.compare import CompareResult
from kgate.pyfunc import CompareError, _check_script, function_file

from conftest import KERNELS

SAXPY_C = r'''#include "kgate/kernel.h"
void saxpy_c(const kg_kargs *a)
{
    const float *x = a->in[0], *y0 = a->in[1];
    float *y = a->out[0];
    int64_t n = kg_var_i(a, "n", 0);
    float alpha = (float)kg_var_r(a, "alpha", 0.0);
    for (int64_t i = 0; i < n; i++) KGATE_STORE(&y[i], alpha * x[i] + y0[i]);
}
'''
# A wrong candidate: alpha ignored past the first 64 elements
SAXPY_WRONG_C = SAXPY_C.replace("saxpy_c", "saxpy_wrong").replace("alpha * x[i]", "(i < 64 ? alpha : 1.0f) * x[i]")

REFS = '''
import numpy as np

def saxpy(X, Y0, alpha):
    return alpha * X + Y0

def rowsum(X):
    return X.sum(axis=1)

def square_mm(A, B):
    return A @ B

def two(X):
    return X + 1, X * 2

def saxpy_out(X, Y0, alpha, out):
    np.multiply(X, alpha, out=out)
    out += Y0
'''


def _module(tmp_path: Path, name: str = "refs_mod", text: str = REFS) -> Any:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def refs(tmp_path: Path) -> Any:
    mod = _module(tmp_path)
    yield mod
    sys.modules.pop("refs_mod", None)


def _split(text: str) -> Any:
    plan = kgate.Plan.from_text(text)
    yield "campaign", plan.campaign
    for n, k in plan.ops.items():
        yield f"op {n}", k
    for n, k in plan.cases.items():
        yield f"case {n}", k
    for n, k in plan.arms.items():
        yield f"arm {n}", k


# ---- the reference function: what kgate can run from a file ----

def test_function_file_accepts_a_module_function(refs: Any) -> None:
    path, name = function_file(refs.saxpy, "the reference")
    assert (path, name) == (str(Path(refs.__file__).resolve()), "saxpy")


def test_function_file_refusals(refs: Any, tmp_path: Path) -> None:
    with pytest.raises(CompareError, match="a lambda has no name"):
        function_file(lambda x: x, "the reference")

    def outer() -> Any:
        k = 2

        def inner(x: Any) -> Any:
            return k * x
        return inner
    with pytest.raises(CompareError, match="inside another function or class"):
        function_file(outer(), "the reference")
    with pytest.raises(CompareError, match="not a Python function defined in a file.*def softmax"):
        function_file(np.add, "the reference")
    with pytest.raises(CompareError, match="not a Python function"):
        function_file(len, "the reference")
    # a notebook cell's function: its file is IPython's cell name
    ns: Dict[str, Any] = {}
    exec(compile("def cell_ref(x):\n    return x\n", "<ipython-input-3-abc>", "exec"), ns)
    with pytest.raises(CompareError, match=r"notebook cell.*%%writefile cell_ref_ref.py"):
        function_file(ns["cell_ref"], "the reference")
    ns = {}
    exec(compile("def cell_ref(x):\n    return x\n", "/tmp/ipykernel_123/456.py", "exec"), ns)
    with pytest.raises(CompareError, match="notebook cell"):
        function_file(ns["cell_ref"], "the reference")


def test_script_with_top_level_kgate_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import kgate\n\ndef f(x):\n    return x\n\nr = kgate.compare(f, {}, inputs={})\n")
    with pytest.raises(CompareError, match=r"bad.py:6 uses kgate at the top level.*if __name__ == \"__main__\""):
        _check_script(bad, "the reference")
    good = tmp_path / "good.py"
    good.write_text("import kgate\nN = 4\n\ndef f(x):\n    return x\n\nif __name__ == '__main__':\n"
                    "    print(kgate.compare(f, {}, inputs={}))\n")
    _check_script(good, "the reference")


# ---- the plan ----

def test_saxpy_plan(refs: Any, tmp_path: Path) -> None:
    plan = kgate.compare_plan(refs.saxpy, {"unrolled": kgate.C(SAXPY_C)}, inputs={"X": ("n", "f32"), "Y0": ("n", "f32")},
                              sizes={"n": 1 << 16}, scalars={"alpha": 2.5}, folder=tmp_path / "p",
                              min_reduction="5%", processes=2)
    ref = f"python:{Path(refs.__file__).resolve()}:saxpy"
    s = dict(_split(plan.text()))
    assert s["campaign"] == {"name": "saxpy", "backend": "cpu", "quiet": "0", "processes": "2"}
    assert s["op saxpy"] == {"reference": ref, "tensors": "numpy", "vars": "n alpha:real", "inputs": "X[n] Y0[n]",
                             "outputs": "out[n]"}
    assert s["case saxpy"] == {"op": "saxpy", "dtype": "f32", "n": "65536", "alpha": "2.5"}
    assert s["arm numpy"] == {"op": "saxpy", "role": "baseline", "builtin": "numpy", "call": ref}
    # by default at least 6 processes per direction, a multiple of the arms (baseline, control, 2 candidates)
    two = kgate.compare_plan(refs.saxpy, {"a": kgate.C(SAXPY_C), "b": kgate.C(SAXPY_C)},
                             inputs={"X": ("n", "f32"), "Y0": ("n", "f32")}, sizes={"n": 64}, scalars={"alpha": 2.5},
                             folder=tmp_path / "p2")
    assert dict(_split(two.text()))["campaign"]["processes"] == "8"
    # the C text written next to the plan, its one kg_kargs function the entry
    assert s["arm unrolled"] == {"op": "saxpy", "role": "candidate", "source": "unrolled.c", "entry": "saxpy_c"}
    assert (tmp_path / "p" / "unrolled.c").read_text() == SAXPY_C
    assert s["arm control"] == {"op": "saxpy", "role": "control", "of": "numpy"}
    assert plan.gate == {"min_reduction": "5%"}
    # written into its folder, the reference stays where it is (absolute); relative sources stay relative
    text = plan.write(tmp_path / "p" / "saxpy.kg").read_text()
    assert f"reference = {ref}\n" in text and "source = unrolled.c\n" in text


def test_example_arrays_name_their_sizes(refs: Any, tmp_path: Path) -> None:
    x = np.zeros((64, 128), np.float32)
    plan = kgate.compare_plan(refs.rowsum, {"c": kgate.C(KERNELS / "rowsum_naive.c", entry="kernel")},
                              inputs={"X": x}, folder=tmp_path)
    op = plan.ops["rowsum_py"]                           # rowsum is a kgate op: the declared one is rowsum_py
    assert op["vars"] == "d0 d1" and op["inputs"] == ("X[d0, d1]",) and op["outputs"] == ("out[d0]",)
    assert plan.cases["rowsum"] == {"op": "rowsum_py", "dtype": "f32", "d0": 64, "d1": 128}
    assert plan.arms["c"]["source"] == str((KERNELS / "rowsum_naive.c").resolve())
    # equal sizes are one variable; a dtype of another input is written on it
    a = np.zeros((32, 32), np.float32)
    plan = kgate.compare_plan(refs.square_mm, {"c": kgate.C(SAXPY_C)}, inputs={"A": a, "B": a.astype(np.float16)},
                              folder=tmp_path / "mm")
    assert plan.ops["square_mm"]["inputs"] == ("A[d0, d0]", "B[d0, d0]:f16")
    assert plan.ops["square_mm"]["outputs"] == ("out[d0, d0]",)
    # two outputs, named by the caller; fixed sizes stay numbers; an axis of sizes
    plan = kgate.compare_plan(refs.two, {"c": kgate.C(SAXPY_C)}, inputs={"X": (8, "n", "bf16")}, outputs=["P", "Q"],
                              sizes={"n": [256, 1024]}, folder=tmp_path / "two")
    assert plan.ops["two"]["outputs"] == ("P[8, n]", "Q[8, n]")
    # dtypes as numpy's objects and names too
    for dt, word in ((np.float16, "f16"), (np.dtype("float32"), "f32"), ("float64", "f64"), ("bf16", "bf16")):
        p = kgate.compare_plan(refs.rowsum, {"c": kgate.C(SAXPY_C)}, inputs={"X": (4, "n", dt)},
                               sizes={"n": 8}, folder=tmp_path / "dt")
        assert p.cases["rowsum"]["dtype"] == word and p.ops["rowsum_py"]["inputs"] == ("X[4, n]",)
    assert plan.cases["two"]["dtype"] == "bf16" and plan.cases["two"]["n"] == [256, 1024]
    assert "n = {256, 1024}" in plan.text()


def test_outputs_that_cannot_be_told(refs: Any, tmp_path: Path) -> None:
    with pytest.raises(CompareError, match=r"sizes M, N are all 16.*outputs="):
        kgate.compare_plan(refs.rowsum, {"c": kgate.C(SAXPY_C)}, inputs={"X": ("M", "N", "f32")},
                           sizes={"M": 16, "N": 16}, folder=tmp_path)
    plan = kgate.compare_plan(refs.rowsum, {"c": kgate.C(SAXPY_C)}, inputs={"X": ("M", "N", "f32")},
                              sizes={"M": 16, "N": 16}, outputs={"Y": ("M",)}, folder=tmp_path)
    assert plan.ops["rowsum_py"]["outputs"] == ("Y[M]",)
    with pytest.raises(CompareError, match="failed on float64 inputs"):
        kgate.compare_plan(refs.saxpy, {"c": kgate.C(SAXPY_C)}, inputs={"X": ("n", "f32"), "Y0": ("m", "f32")},
                           sizes={"n": 4, "m": 5}, scalars={"alpha": 1.0}, folder=tmp_path)
    with pytest.raises(CompareError, match=r"the sizes n have no value: give sizes="):
        kgate.compare_plan(refs.rowsum, {"c": kgate.C(SAXPY_C)}, inputs={"X": ("n", "f32")}, folder=tmp_path)
    with pytest.raises(CompareError, match="appear in no input's shape"):
        kgate.compare_plan(refs.rowsum, {"c": kgate.C(SAXPY_C)}, inputs={"X": (4, "n")}, sizes={"n": 4, "k": 2},
                           folder=tmp_path)


def test_candidate_kinds(refs: Any, tmp_path: Path) -> None:
    cu = "extern \"C\" __global__ void saxpy(const float *x, const float *y0, float *y, long n, double a) {}\n"
    so = tmp_path / "k.so"
    so.write_bytes(b"\x7fELF")
    plan = kgate.compare_plan(
        refs.saxpy,
        {"cuda": kgate.CUDA(cu, "saxpy", grid="ceildiv(n, 256)", block=256),
         "cubin": kgate.Image(so.with_suffix(".so"), "k", role="reference"),
         "lib": refs.saxpy_out},
        inputs={"X": ("n", "f32"), "Y0": ("n", "f32")}, sizes={"n": 4096}, scalars={"alpha": 2.0},
        folder=tmp_path / "k")
    assert plan.campaign["backend"] == "cuda" and plan.ops["saxpy"]["tensors"] == "torch"
    assert plan.arms["torch"]["builtin"] == "torch"
    assert plan.arms["cuda"] == {"op": "saxpy", "role": "candidate", "source": "cuda.cu", "entry": "saxpy",
                                 "grid": "ceildiv(n, 256)", "block": "256", "args": ("X", "Y0", "out", "n")}
    assert (tmp_path / "k" / "cuda.cu").read_text() == cu
    assert plan.arms["cubin"]["image"] == str(so.resolve()) and plan.arms["cubin"]["role"] == "reference"
    assert plan.arms["lib"] == {"op": "saxpy", "role": "reference", "builtin": "torch",
                                "call": f"python:{Path(refs.__file__).resolve()}:saxpy_out"}
    # baseline= another arm; the control replicates it
    plan = kgate.compare_plan(refs.saxpy, {"c": kgate.C(SAXPY_C)}, baseline=kgate.C(SAXPY_WRONG_C),
                              inputs={"X": ("n", "f32"), "Y0": ("n", "f32")}, sizes={"n": 64},
                              scalars={"alpha": 2.0}, folder=tmp_path / "b", control=True)
    assert list(plan.arms) == ["baseline", "c", "control"]
    assert plan.arms["baseline"]["role"] == "baseline" and plan.arms["baseline"]["entry"] == "saxpy_wrong"
    assert plan.arms["control"]["of"] == "baseline" and plan.campaign["backend"] == "cpu"
    # baseline= a candidate's name: that candidate is the baseline
    plan = kgate.compare_plan(refs.saxpy, {"a": kgate.C(SAXPY_C), "b": kgate.C(SAXPY_WRONG_C)}, baseline="a",
                              inputs={"X": ("n", "f32"), "Y0": ("n", "f32")}, sizes={"n": 64},
                              scalars={"alpha": 2.0}, folder=tmp_path / "named")
    assert [(k, a["role"]) for k, a in plan.arms.items()] == [("a", "baseline"), ("b", "candidate"),
                                                              ("control", "control")]
    assert plan.arms["control"]["of"] == "a"
    with pytest.raises(CompareError, match="kgate.C, kgate.CUDA, kgate.Triton"):
        kgate.compare_plan(refs.saxpy, {"c": 3}, inputs={"X": ("n", "f32")}, sizes={"n": 4}, folder=tmp_path)
    two = SAXPY_C + SAXPY_WRONG_C
    with pytest.raises(CompareError, match="defines saxpy_c, saxpy_wrong: say which"):
        kgate.compare_plan(refs.saxpy, {"c": kgate.C(two)}, inputs={"X": ("n", "f32"), "Y0": ("n", "f32")},
                           sizes={"n": 4}, scalars={"alpha": 1.0}, folder=tmp_path / "two")


def test_triton_candidate(refs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Triton kernel through kgate.triton's compile path (a stand-in compiler): its
    parameters matched to the op's tensors and variables by name, then by order."""
    pytest.importorskip("torch")
    from test_triton import _Constexpr, _stub_triton
    seen = _stub_triton(monkeypatch)

    def softmax_kernel(X, Y, M, N, BLOCK: _Constexpr):  # noqa: N803
        pass

    def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK: _Constexpr):
        pass
    mod = _module(tmp_path, "tri_refs", REFS + "\ndef softmax(x):\n    return np.exp(x) / np.exp(x).sum(-1, keepdims=True)\n")
    plan = kgate.compare_plan(mod.softmax, {"triton": kgate.Triton(seen["jit"](softmax_kernel), grid="M", BLOCK=1024,
                                                                   arch=90)},
                              inputs={"x": ("M", "N", "f16")}, outputs=["y"], sizes={"M": 4096, "N": 1000},
                              folder=tmp_path / "t")
    arm = plan.arms["triton"]
    assert seen["source"][1] == {"X": "*fp16", "Y": "*fp16", "M": "i32", "N": "i32", "BLOCK": "constexpr"}
    assert arm["args"] == "x, y, M, N, null, null" and arm["grid"] == "M" and arm["block"] == 128
    assert Path(arm["image"]).name == "triton.cubin" and plan.campaign["backend"] == "cuda"
    # a function named after a built-in op: the declared op takes another name, the campaign keeps it
    assert list(plan.ops) == ["softmax_py"] and list(plan.cases) == ["softmax"] and plan.campaign["name"] == "softmax"
    assert plan.ops["softmax_py"]["tensors"] == "torch" and plan.arms["torch"]["role"] == "baseline"
    # Triton's tutorial names: x_ptr, y_ptr, output_ptr, n_elements (mapped with args=)
    plan = kgate.compare_plan(mod.saxpy, {"t": kgate.Triton(seen["jit"](add_kernel), grid="ceildiv(n, 1024)",
                                                            args={"n_elements": "n"}, BLOCK=1024, arch=90)},
                              inputs={"X": ("n", "f32"), "Y0": ("n", "f32")}, sizes={"n": 1 << 20},
                              scalars={"alpha": 1.0}, folder=tmp_path / "a")
    assert plan.arms["t"]["args"] == "X, Y0, out, n, null, null"
    with pytest.raises(Exception, match="receives nothing kgate knows.*args="):
        kgate.compare_plan(mod.saxpy, {"t": kgate.Triton(seen["jit"](add_kernel), grid="n", BLOCK=1024, arch=90)},
                           inputs={"X": ("n", "f32"), "Y0": ("n", "f32")}, sizes={"n": 64}, scalars={"alpha": 1.0},
                           folder=tmp_path / "b")
    sys.modules.pop("tri_refs", None)


# ---- the short answer ----

def test_compare_result_short_answer(fake_run: kgate.RunResult) -> None:
    r = CompareResult(returncode=fake_run.returncode, evidence=fake_run.evidence, results=fake_run.results,
                      stdout="", stderr="", argv=[], plan_path=Path("py-fake.kg"), baseline="base")
    lines = repr(r).splitlines()
    assert lines[0] == "py-fake: gate PASS: passed"
    assert lines[1].startswith("  cand           FASTER        +") and "base 1.0 µs -> 9" in lines[1]
    assert lines[2].startswith("  control ctrl (A/A of base): control: EQUIVALENT within")
    assert lines[-1] == f"evidence: {fake_run.evidence} (report.html; kgate verify {fake_run.evidence})"
    html = r._repr_html_()
    assert html.startswith("<iframe ") and "srcdoc=\"&lt;!DOCTYPE html&gt;" in html and "<script" not in html


# ---- whole campaigns: where this kgate reads Python-declared ops and calls ----

def _python_ops(kgate_bin: str, plan: kgate.Plan, folder: Path) -> None:
    """Skips unless kgate reads this plan's [op] reference and arm call keys."""
    path = plan.write(folder / "probe.kg")
    cp = subprocess.run([kgate_bin, "freeze", str(path), "-o", str(folder / "probe.frozen")],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if cp.returncode != 0:
        msg = cp.stderr.strip()
        if any(w in msg for w in ("'reference'", "'call'", "python:", "unknown key")):
            pytest.skip(f"this kgate does not read Python-declared ops or calls yet: {msg}")
        raise AssertionError(f"kgate freeze refused compare's plan: {msg}")


def test_compare_runs_on_cpu(refs: Any, tmp_path: Path, kgate_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kw: Dict[str, Any] = dict(inputs={"X": ("n", "f32"), "Y0": ("n", "f32")}, sizes={"n": 4096},
                              scalars={"alpha": 2.5}, processes=4, rounds=2, samples=3, warmup=1, min_reduction="1%")
    both = {"c": kgate.C(SAXPY_C), "wrong": kgate.C(SAXPY_WRONG_C)}   # 4 arms with the baseline and control
    _python_ops(kgate_bin, kgate.compare_plan(refs.saxpy, both, folder=tmp_path / "probe", **kw), tmp_path / "probe")
    out = tmp_path / "cmp"
    r = kgate.compare(refs.saxpy, {"c": kgate.C(SAXPY_C), "wrong": kgate.C(SAXPY_WRONG_C)}, out=out, **kw)
    assert isinstance(r, CompareResult) and r.evidence == out / "evidence"
    assert (out / "saxpy.kg").is_file() and (out / "c.c").is_file()
    assert r.verdicts[("saxpy", "c")].state == "ok"
    assert r.verdicts[("saxpy", "wrong")].verdict == "INCORRECT"
    assert not r.passed                                  # an INCORRECT candidate fails the gate
    assert r.load().meta["argv"][1] == "saxpy.kg"        # the plan's own name, not a temporary path
    lines = repr(r).splitlines()
    # FAIL (the INCORRECT candidate) or INVALID (a loaded host's timing): never PASS
    assert re.match(r"saxpy: gate (FAIL|INVALID): ", lines[0]), lines[0]
    assert any(line.startswith("  wrong          INCORRECT") for line in lines)
    assert "<iframe" in r._repr_html_()
    kw["processes"] = 3                                  # 3 arms from here on
    with pytest.raises(CompareError, match="is not empty"):
        kgate.compare(refs.saxpy, {"c": kgate.C(SAXPY_C)}, out=out, **kw)
    # without out: a temporary plan folder, the evidence in kgate-out/ here
    monkeypatch.chdir(tmp_path)
    r2 = kgate.compare(refs.saxpy, {"c": kgate.C(SAXPY_C)}, smoke=True, **kw)
    assert r2.verdicts[("saxpy", "c")].verdict == "SMOKE" and r2.evidence.parent.name == "kgate-out"
    assert r2.evidence.is_dir() and r2.load().meta["argv"][1] == "saxpy.kg"


def test_compare_folders_and_result(refs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """compare's own part, on a fake campaign in place of the plan it builds: the plan
    written into out= (or a temporary folder, removed after), run under its own name, the
    evidence where it says, the result's short answer."""
    from conftest import fake_plan
    cmp = sys.modules["kgate.compare"]      # (kgate.compare is also the function)
    made: Dict[str, Any] = {}

    def plan_of(reference: Any, candidates: Any, *, folder: Any, **kw: Any) -> kgate.Plan:
        made["folder"], made["kw"] = Path(folder), kw
        p = fake_plan(name="cmpwrap")
        p.base = Path(folder)
        return p
    monkeypatch.setattr(cmp, "compare_plan", plan_of)
    r = kgate.compare(refs.saxpy, {"c": kgate.C(SAXPY_C)}, inputs={"X": ("n", "f32")}, sizes={"n": 8},
                      out=tmp_path / "o", processes=2)
    assert made["folder"] == tmp_path / "o" and made["kw"]["processes"] == 2 and made["kw"]["sizes"] == {"n": 8}
    assert isinstance(r, kgate.CompareResult) and r.passed and r.evidence == tmp_path / "o" / "evidence"
    assert r.plan_path == tmp_path / "o" / "cmpwrap.kg" and r.plan_path.is_file()
    assert r.load().meta["argv"][1] == "cmpwrap.kg" and r.baseline == "base"
    assert repr(r).splitlines()[0] == "cmpwrap: gate PASS: passed"
    monkeypatch.chdir(tmp_path)
    r2 = kgate.compare(refs.saxpy, {"c": kgate.C(SAXPY_C)}, inputs={"X": ("n", "f32")}, sizes={"n": 8}, smoke=True)
    assert not made["folder"].exists()                       # the temporary plan folder is gone
    assert r2.evidence.parent == tmp_path / "kgate-out" and r2.evidence.name.startswith("cmpwrap-")
    assert r2.plan_path == Path("cmpwrap.kg") and r2.verdicts[("small", "cand")].verdict == "SMOKE"


def test_helper_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """KGATE_PYTHON: this Python, unless set or unless python3 on PATH is this one's."""
    from kgate.compare import _helper_python
    monkeypatch.delenv("KGATE_PYTHON", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert _helper_python(None) == {"KGATE_PYTHON": sys.executable}
    assert _helper_python({"KGATE_PYTHON": "/x/python3"}) == {"KGATE_PYTHON": "/x/python3"}
    monkeypatch.setenv("KGATE_PYTHON", "/y/python3")
    assert _helper_python({"A": "1"}) == {"A": "1"}
    monkeypatch.delenv("KGATE_PYTHON")
    here = tmp_path / "bin"
    here.mkdir()
    (here / "python3").symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", str(here / "python"))
    monkeypatch.setenv("PATH", str(here))
    assert _helper_python(None) == {}
