"""kgate.Plan: dicts to kgate's plan format, checked against kgate's own parser."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

import pytest

import kgate
from kgate.plan import format_value

from conftest import KERNELS, ROOT, fake_plan


def test_values() -> None:
    assert format_value("case", "primary", True) == "yes"
    assert format_value("gate", "require_order", False) == "no"
    assert format_value("case", "M", 1024) == "1024"
    assert format_value("campaign", "alpha", 0.05) == "0.05"
    assert format_value("case", "eps", 1e-5) == "1e-05"
    assert format_value("campaign", "margin", "2%") == "2%"
    assert format_value("case", "M", [96, 256]) == "{96, 256}"
    assert format_value("case", "dtype", ["f32", "bf16"]) == "{f32, bf16}"
    assert format_value("arm", "fake_ns", [970.0, 1030]) == "{970.0, 1030}"
    assert format_value("arm", "grid", ("ceildiv(N, 16)", "ceildiv(M, 16)")) == "ceildiv(N, 16), ceildiv(M, 16)"
    assert format_value("arm", "block", (16, 16)) == "16, 16"
    assert format_value("arm", "block", [128, 256]) == "{128, 256}"
    assert format_value("arm", "args", ["X", "Y", "M", "N", "null"]) == "X, Y, M, N, null"
    assert format_value("arm", "cases", ["a", "b[M=1,N=2]"]) == "a,b[M=1,N=2]"
    assert format_value("campaign", "forbid", ["cc1", "nvcc"]) == "cc1,nvcc"
    assert format_value("arm", "cflags", ("-O3", "-march=native")) == "-O3 -march=native"
    assert format_value("arm", "defines", {"TILE": [16, 32], "PIPE": 0, "FAST": True, "OFF": False}) == \
        "TILE={16, 32} PIPE=0 FAST"
    assert format_value("arm", "defines", ("PITCH=36", "-DSPLITS=1")) == "PITCH=36 -DSPLITS=1"
    assert format_value("arm", "block", kgate.Axis([64, 128])) == "{64, 128}"
    # sets of compiler flags, swept: a value with blanks or '=' is quoted
    assert format_value("arm", "cflags", kgate.Axis(["-O2 -march=native", "-O3"])) == \
        '{"-O2 -march=native", -O3}'
    # a declared op's variables (any case key outside kgate's table) take axes too
    assert format_value("case", "S", [512, 1024]) == "{512, 1024}"
    assert format_value("case", "causal", [True, False]) == "{yes, no}"


def test_numpy_scalars() -> None:
    np = pytest.importorskip("numpy")
    assert format_value("case", "M", np.int64(7)) == "7"
    assert format_value("campaign", "alpha", np.float64(0.25)) == "0.25"


@pytest.mark.parametrize("kind,key,value,message", [
    ("campaign", "samples", [1, 2], "takes no axis"),
    ("arm", "source", ["a.c", "b.c"], "takes no axis"),
    ("case", "op", ["rowsum", "rowmax"], "takes no axis"),
    ("campaign", "margin", float("inf"), "no inf or NaN"),
    ("case", "M", [1, 1], "listed twice"),
    ("case", "M", [], "empty axis"),
    ("arm", "defines", {"A": "x y"}, "holds a blank"),
    ("case", "dtype", ['f"32'], "cannot hold"),
    ("arm", "cflags", kgate.Axis(["-O2 -x", "-O2_-x"]), "one variant name"),
    ("case", "M", "", "empty value"),
    ("campaign", "seed", object(), "cannot write"),
    ("arm", "op", {"a": 1}, "only for defines"),
    ("campaign", "alpha", (1, 2), "takes no list"),
])
def test_bad_values(kind: str, key: str, value: object, message: str) -> None:
    with pytest.raises(kgate.PlanError, match=message):
        format_value(kind, key, value)


def _one(**arm: object) -> kgate.Plan:
    keys = {"op": "rowsum", "role": "baseline", "source": "k.c"}
    keys.update(arm)
    return kgate.Plan(cases={"c": {"op": "rowsum", "dtype": "f32", "M": 1, "N": 1}}, arms={"a": keys})


@pytest.mark.parametrize("arm,message", [
    ({"defines": "A=1 ; B"}, "start a comment"),
    ({"defines": "A=1 #B"}, "start a comment"),
    ({"entry": ";x"}, "may not start with"),
    ({"cflags": "-O2\n[gate]"}, "control character or line break"),
    ({"cflags": "-O" + "2" * 170}, "at most 160"),
    ({"of": "nobody"}, "names no arm"),
    ({"cases": "c,d"}, "no case of this plan"),
    ({"parity": "bad name!"}, "bad name"),
    ({"bad-key": 1}, "bad key"),
])
def test_bad_plans(arm: dict, message: str) -> None:
    with pytest.raises(kgate.PlanError, match=message):
        _one(**arm).text()


def test_bad_names() -> None:
    with pytest.raises(kgate.PlanError, match="bad name"):
        kgate.Plan(cases={"a b": {"op": "rowsum", "dtype": "f32"}})
    with pytest.raises(kgate.PlanError, match="bad name"):
        kgate.Plan(arms={"x" * 64: {"op": "rowsum"}})
    with pytest.raises(kgate.PlanError, match="missing dtype"):
        kgate.Plan(cases={"a": {"op": "rowsum"}}, arms={"b": {"op": "rowsum"}}).text()
    with pytest.raises(kgate.PlanError, match="at least one arm"):
        kgate.Plan(cases={"a": {"op": "rowsum", "dtype": "f32"}}).text()
    with pytest.raises(kgate.PlanError, match="duplicate arm"):
        kgate.Plan(arms={"b": {"op": "rowsum"}}).add_arm("b", op="rowsum")
    with pytest.raises(kgate.PlanError, match="bad name"):
        _text_of_named("no spaces")


def _text_of_named(name: str) -> str:
    p = _one()
    p.campaign["name"] = name
    return p.text()


def test_text_layout_and_comments() -> None:
    p = _one()
    p.comment = "generated by a search"
    p.arms["a"]["#"] = ["first line", "second line"]
    p.gate["min_reduction"] = "5%"
    text = p.text()
    assert text.startswith("# generated by a search\n\n[case c]\n")
    assert "[arm a]\n# first line\n# second line\nop = rowsum\n" in text
    assert text.endswith("[gate]\nmin_reduction = 5%\n")
    assert all(len(line) <= 196 for line in text.splitlines())
    p.arms["a"]["#"] = "x" * 500
    assert all(len(line) <= 196 for line in p.text().splitlines())


def test_from_text_round_trip() -> None:
    text = (ROOT / "tests" / "plans" / "fake-faster.kg").read_text()
    p = kgate.Plan.from_text(text)
    assert list(p.cases) == ["small"] and list(p.arms) == ["base", "cand", "ctrl"]
    assert p.campaign["margin"] == "1%" and p.arms["ctrl"]["of"] == "base"
    again = kgate.Plan.from_text(p.text())
    assert again.text() == p.text()


def _canonical_without_paths(text: str) -> str:
    return re.sub(r"^source = .*/", "source = ", text, flags=re.MULTILINE)


def test_same_canonical_plan_as_hand_written(kgate_bin: str, tmp_path: Path) -> None:
    """The plan built from dicts and tests/plans/fake-faster.kg are the same plan: the
    same canonical text (sources aside: the built one names them absolute)."""
    frozen = tmp_path / "ff.frozen"
    cp = kgate.run_cli(["freeze", str(ROOT / "tests/plans/fake-faster.kg"), "-o", str(frozen)])
    assert cp.returncode == 0, cp.stderr
    hand = frozen.read_text().partition("\n")[2]
    built = fake_plan(name="fake-faster")
    digest, text = built.canonical()
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert _canonical_without_paths(text) == _canonical_without_paths(hand)


def test_axes_expand_in_kgate(kgate_bin: str) -> None:
    p = fake_plan(cand_ns=[970, 990])
    p.cases["small"]["M"] = [4, 8]
    p.campaign["processes"] = 4   # four arms: the load-order square
    _, text = p.canonical()
    sections = re.findall(r"^\[(.*)\]$", text, flags=re.MULTILINE)
    assert sections == ["campaign", "case small[M=4]", "case small[M=8]", "arm base", "arm cand[fake_ns=970]",
                        "arm cand[fake_ns=990]", "arm ctrl", "gate"]


def test_axes_over_declared_op_variables(kgate_bin: str, tmp_path: Path) -> None:
    op = tmp_path / "conv1d.c"
    op.write_text((ROOT / "examples" / "ops" / "conv1d.c").read_text())
    p = kgate.Plan(
        campaign={"name": "vars", "backend": "cpu", "quiet": 0},
        ops={"conv1d": {"source": str(op)}},
        cases={"sig": {"op": "conv1d", "dtype": "bf16", "B": [2, 3], "L": 64, "W": [3, 9]}},
        arms={"naive": {"op": "conv1d", "role": "baseline", "source": str(KERNELS / "conv1d_naive.c"),
                        "entry": "conv1d_naive"}},
        gate={},
    )
    _, text = p.canonical()
    sections = re.findall(r"^\[case (.*)\]$", text, flags=re.MULTILINE)
    assert sections == ["sig[B=2,W=3]", "sig[B=2,W=9]", "sig[B=3,W=3]", "sig[B=3,W=9]"]


def test_refused_plan_names_the_line(kgate_bin: str) -> None:
    p = fake_plan()
    p.campaign["samples"] = 0
    with pytest.raises(kgate.KgateError) as e:
        p.canonical()
    assert "samples" in str(e.value) and "out of range" in str(e.value)


def test_write_rebases_relative_paths(kgate_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative sources are the caller's (the current folder's); the written plan names them
    relative to its own folder, as kgate reads them, and kgate check runs it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "cand.c").write_text((KERNELS / "rowsum_unrolled.c").read_text())
    p = fake_plan()
    p.arms["cand"]["source"] = "gen/cand.c"
    path = p.write(tmp_path / "plans" / "deep" / "p.kg")
    text = path.read_text()
    assert "source = ../../gen/cand.c" in text
    assert f"source = {KERNELS}/rowsum_naive.c" in text
    r = kgate.check(path, out=tmp_path / "ck")
    assert r.passed, r.stdout
    assert (tmp_path / "ck" / "sources").is_dir()
    assert p.write(tmp_path / "asis.kg", rebase=False).read_text().count("source = gen/cand.c") == 1
    back = kgate.Plan.from_file(path)
    assert back.base == Path(os.path.abspath(path)).parent
    again = back.write(tmp_path / "elsewhere.kg")
    assert "source = gen/cand.c" in again.read_text()
    assert not list(tmp_path.glob("**/.*.tmp.*"))


PY_OP = {"reference": "python:refs/saxpy_ref.py:saxpy", "tensors": "numpy", "vars": ["n", "alpha:real"],
         "inputs": ["X[n]", "Y0[n]"], "outputs": ("Y[n]",), "requires": "n >= 1", "flops": "2*n",
         "bytes": "12*n", "heldout": "n"}


def _py_plan(op: dict, arm: Optional[dict] = None) -> kgate.Plan:
    return kgate.Plan(ops={"saxpy": op}, cases={"v": {"op": "saxpy", "dtype": "f32", "n": 64, "alpha": 2.5}},
                      arms={"torch": arm or {"op": "saxpy", "role": "baseline", "builtin": "torch",
                                             "call": "python:refs/saxpy_ref.py:saxpy_torch"}})


def test_python_op_keys() -> None:
    text = _py_plan(dict(PY_OP, bound="tolerance", rtol=1e-3, atol=1e-5)).text()
    assert ("[op saxpy]\nreference = python:refs/saxpy_ref.py:saxpy\ntensors = numpy\nvars = n alpha:real\n"
            "inputs = X[n] Y0[n]\noutputs = Y[n]\nrequires = n >= 1\nflops = 2*n\nbytes = 12*n\nheldout = n\n"
            "bound = tolerance\nrtol = 0.001\natol = 1e-05\n") in text
    assert "builtin = torch\ncall = python:refs/saxpy_ref.py:saxpy_torch\n" in text
    back = kgate.Plan.from_text(text)
    assert back.ops["saxpy"]["reference"] == "python:refs/saxpy_ref.py:saxpy"
    assert back.arms["torch"]["call"] == "python:refs/saxpy_ref.py:saxpy_torch"


@pytest.mark.parametrize("op,arm,message", [
    (dict(PY_OP, source="ops/saxpy.c"), None, "source .a C module. and reference .a Python function. both"),
    ({"tensors": "numpy"}, None, "needs source = FILE.c .* or reference = python:FILE.py:FUNCTION"),
    (dict(PY_OP, reference="saxpy_ref.py:saxpy"), None, "write python:FILE.py:FUNCTION"),
    (dict(PY_OP, reference="python:saxpy_ref.py:1f"), None, "write python:FILE.py:FUNCTION"),
    ({k: v for k, v in PY_OP.items() if k != "outputs"}, None, "missing outputs"),
    (dict(PY_OP, tensors="jax"), None, "tensors = 'jax': numpy or torch"),
    (dict(PY_OP, bound="ulp"), None, "library .the default. or tolerance"),
    (dict(PY_OP, rtol=1e-3), None, "rtol go with bound = tolerance"),
    (dict(PY_OP, bound="tolerance"), None, "bound = tolerance needs rtol, atol or both"),
    (dict(PY_OP, inputs="X[n Y0[n]"), None, "unbalanced brackets"),
    ({"source": "ops/saxpy.c", "inputs": "X[n]"}, None, "inputs: keys of a Python-declared op"),
    (PY_OP, {"op": "saxpy", "call": "python:refs/saxpy_ref.py:saxpy_torch"}, "needs builtin = torch or numpy"),
    (PY_OP, {"op": "saxpy", "builtin": "torch", "call": "python:saxpy_ref:saxpy"}, "python:FILE.py:FUNCTION"),
])
def test_bad_python_ops(op: dict, arm: Optional[dict], message: str) -> None:
    with pytest.raises(kgate.PlanError, match=message):
        _py_plan(op, arm).text()


def test_write_rebases_python_files(tmp_path: Path) -> None:
    plan = _py_plan(PY_OP)
    plan.base = tmp_path
    text = plan.write(tmp_path / "plans" / "p.kg").read_text()
    assert "reference = python:../refs/saxpy_ref.py:saxpy\n" in text
    assert "call = python:../refs/saxpy_ref.py:saxpy_torch\n" in text
    text = plan.write(tmp_path / "plans" / "abs.kg", absolute=True).read_text()
    assert f"reference = python:{tmp_path}/refs/saxpy_ref.py:saxpy\n" in text
