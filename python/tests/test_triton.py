"""kgate.triton: a compiled Triton kernel to a cubin arm.

The arm's keys are made from what ``triton.compile`` returns (its metadata and PTX): those
tests run everywhere, on stand-ins shaped as Triton's compiled kernels. The real compile
runs where Triton is installed (the GPU machine: tools/device/python_triton.sh)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict

import pytest

import kgate
from kgate.triton import TritonArmError, arm_from_compiled, compile_arm, ptx_entry_params

from conftest import KERNELS

HAVE_TRITON = importlib.util.find_spec("triton") is not None

SIG = {"X": "*fp32", "Y": "*fp32", "M": "i32", "N": "i32"}


def _ptx(entry: str, n: int) -> str:
    params = ",\n".join(f"\t.param .u64 .ptr .global .align 1 {entry}_param_{i}" for i in range(n))
    return f"//\n.version 8.7\n.target sm_90a\n.visible .entry {entry}(\n{params}\n)\n.reqntid 128\n{{\n\tret;\n}}\n"


def _compiled(n_params: int = 6, **md: Any) -> SimpleNamespace:
    meta: Dict[str, Any] = {"name": "rowsum_kernel", "num_warps": 4, "num_stages": 3, "shared": 16,
                            "global_scratch_size": 0, "profile_scratch_size": 0, "num_ctas": 1,
                            "cluster_dims": (1, 1, 1)}
    meta.update(md)
    # Triton 3 gives a named tuple; older versions a dict: both are read
    return SimpleNamespace(metadata=SimpleNamespace(**meta),
                           asm={"ptx": _ptx(str(meta["name"]), n_params), "cubin": b"\x7fELF"})


def test_ptx_params() -> None:
    assert ptx_entry_params(_ptx("k", 6), "k") == 6
    assert ptx_entry_params(_ptx("k", 0), "k") == 0
    with pytest.raises(TritonArmError, match="no entry"):
        ptx_entry_params(_ptx("k", 2), "other")


def test_arm_keys_from_the_compiled_kernel() -> None:
    arm = arm_from_compiled(_compiled(), params=["X", "Y", "M", "N"], signature=SIG, op="rowsum", grid="M",
                            image="/tmp/x/rowsum_kernel.cubin", note="Triton 3.6.0, sm_90")
    assert arm["entry"] == "rowsum_kernel"
    assert arm["block"] == 128 and arm["shared"] == 16 and arm["grid"] == "M"
    assert arm["args"] == "X, Y, M, N, null, null"
    assert arm["image"] == "/tmp/x/rowsum_kernel.cubin" and arm["role"] == "candidate" and arm["op"] == "rowsum"
    assert arm.hidden_params == 2 and arm.ptx_params == 6
    assert arm.input_dtypes == {"X": "f32", "Y": "f32"}
    assert arm.metadata["shared"] == 16
    assert any("2 trailing parameter(s) passed as null" in line for line in arm["#"])
    assert arm["#"][0].startswith("Triton 3.6.0")


def test_versions_with_fewer_hidden_parameters() -> None:
    for n, tail in ((4, ""), (5, ", null")):
        arm = arm_from_compiled(_compiled(n), params=["X", "Y", "M", "N"], signature=SIG, op="rowsum", grid="M",
                                image="k.cubin")
        assert arm["args"] == "X, Y, M, N" + tail
    md = {"name": "rowsum_kernel", "num_warps": 8, "shared": 0}  # a dict, as older Triton gives
    arm = arm_from_compiled(SimpleNamespace(metadata=md, asm={"ptx": _ptx("rowsum_kernel", 4)}),
                            params=["X", "Y", "M", "N"], signature=SIG, op="rowsum", grid=("M", 1), image="k.cubin")
    assert arm["block"] == 256 and arm["grid"] == "M, 1"


def test_mapping_and_suffixes() -> None:
    sig = {"src": "*bf16", "dst": "*fp32", "rows": "i64", "cols": "i32", "eps": "fp32", "w": "fp64", "scratch": "*fp32"}
    arm = arm_from_compiled(_compiled(7), params=list(sig), signature=sig, op="rowsum", grid="M",
                            image="k.cubin", args={"src": "X", "dst": "Y", "rows": "M", "cols": "N:i32",
                                                   "eps": "eps", "w": "alpha", "scratch": "null"})
    assert arm["args"] == "X, Y, M:i64, N, eps, alpha:f64, null"
    assert arm.input_dtypes["src"] == "bf16"


@pytest.mark.parametrize("kwargs,message", [
    ({"md": {"global_scratch_size": 128}}, "global scratch"),
    ({"md": {"profile_scratch_size": 64}}, "profile scratch"),
    ({"md": {"num_ctas": 2}}, "num_ctas"),
    ({"md": {"cluster_dims": (2, 1, 1)}}, "cluster"),
    ({"n": 3}, "specialised one away"),
    ({"args": {"Z": "X"}}, "not runtime parameters"),
    ({"args": {"M": "M:i64"}}, "passes another type"),
    ({"args": {"X": "X:i64"}}, "takes no suffix"),
    ({"args": {"M": "null"}}, "null is a pointer"),
    ({"args": {"M": "2 + M"}}, "not an op tensor"),
    ({"sig": {"M": "fp16"}}, "cannot pass"),
])
def test_refusals(kwargs: Dict[str, Any], message: str) -> None:
    sig = dict(SIG)
    sig.update(kwargs.get("sig", {}))
    with pytest.raises(TritonArmError, match=message):
        arm_from_compiled(_compiled(kwargs.get("n", 6), **kwargs.get("md", {})), params=["X", "Y", "M", "N"],
                          signature=sig, op="rowsum", grid="M", image="k.cubin", args=kwargs.get("args"))


def test_the_arm_is_a_plan_section(tmp_path: Path) -> None:
    """The returned dict goes into a Plan as it is, and kgate checks the plan (the fake
    backend takes a cubin arm without loading it)."""
    cubin = tmp_path / "rowsum_kernel.cubin"
    cubin.write_bytes(b"\x7fELF")
    arm = arm_from_compiled(_compiled(), params=["X", "Y", "M", "N"], signature=SIG, op="rowsum", grid="M",
                            image=cubin, note="Triton 3.6.0, sm_90", keys={"cases": ["r"]})
    plan = kgate.Plan(campaign={"name": "tri", "backend": "fake", "quiet": 0, "samples": 3, "rounds": 2,
                                "processes": 2},
                      cases={"r": {"op": "rowsum", "dtype": "f32", "M": 64, "N": 64}},
                      arms={"base": {"op": "rowsum", "role": "baseline", "source": str(KERNELS / "rowsum_naive.c")},
                            "triton": arm})
    text = plan.text()
    assert "[arm triton]\n# Triton 3.6.0, sm_90\n# Triton kernel rowsum_kernel" in text
    assert "args = X, Y, M, N, null, null\n" in text and "cases = r\n" in text
    r = kgate.check(plan, out=tmp_path / "ck")
    assert r.passed, r.stdout[-1500:]
    assert "negative: not applicable (precompiled image" in r.stdout
    env = kgate.Evidence(r.evidence).environment
    assert env["sources"]["triton"]["image"] == "cubin"


@pytest.mark.skipif(HAVE_TRITON, reason="Triton is installed here")
def test_compile_needs_triton(tmp_path: Path) -> None:
    with pytest.raises(ImportError, match="needs Triton"):
        compile_arm(lambda: None, op="rowsum", signature=SIG, grid="M", out_dir=tmp_path)


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton is not installed (it is on the GPU machine)")
def test_compile_rowsum(tmp_path: Path) -> None:
    """A real compile for sm_90 (no GPU needed: the target is given)."""
    import triton
    import triton.language as tl

    @triton.jit
    def rowsum_kernel(X, Y, M, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        base = X + row.to(tl.int64) * N
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, N, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(base + cols, mask=cols < N, other=0.0)
        tl.store(Y + row, tl.sum(acc, axis=0))

    arm = compile_arm(rowsum_kernel, op="rowsum", signature=SIG, constexprs={"BLOCK": 1024}, grid="M",
                      num_warps=4, out_dir=tmp_path, arch=90)
    assert Path(arm["image"]).read_bytes()[:4] == b"\x7fELF"
    assert arm["entry"] == "rowsum_kernel" and arm["block"] == 128
    assert arm["args"].startswith("X, Y, M, N")
    assert arm["args"].count("null") == arm.hidden_params
    assert (tmp_path / "rowsum_kernel.json").is_file()
    with pytest.raises(TritonArmError, match="need a value"):
        compile_arm(rowsum_kernel, op="rowsum", signature=SIG, grid="M", out_dir=tmp_path, arch=90)
    with pytest.raises(TritonArmError, match="signature lacks"):
        compile_arm(rowsum_kernel, op="rowsum", signature={"X": "*fp32"}, constexprs={"BLOCK": 1024}, grid="M",
                    out_dir=tmp_path, arch=90)


# ---- compile_arm against a stand-in for Triton's compiler (its calls, not its code) ----

class _Constexpr:
    """Stands in for tl.constexpr (an annotation)."""


def _stub_triton(monkeypatch: pytest.MonkeyPatch, *, old_api: bool = False, hidden: int = 2) -> Dict[str, Any]:
    """Installs modules named triton, triton.language, triton.compiler and
    triton.backends.compiler that record what compile_arm asks of them and return a
    compiled stand-in. ``old_api``: an ASTSource that takes the signature and the
    constants by position (Triton 3.0, 3.1)."""
    import inspect
    import sys
    import types

    seen: Dict[str, Any] = {}

    class JITFunction:
        def __init__(self, fn: Any) -> None:
            self.fn = fn
            self.__name__ = fn.__name__
            sig = inspect.signature(fn)
            self.arg_names = list(sig.parameters)
            self.params = [SimpleNamespace(name=n, is_constexpr=p.annotation in (_Constexpr, "_Constexpr"))
                           for n, p in sig.parameters.items()]

    class ASTSource:
        if old_api:
            def __init__(self, fn: Any, signature: Dict[int, str], constants: Any = None, attrs: Any = None) -> None:
                assert all(isinstance(k, int) for k in signature)
                seen["source"] = ("old", dict(signature), dict(constants or {}))
                self.fn = fn
        else:
            def __init__(self, fn: Any, signature: Dict[str, str], constexprs: Any = None, attrs: Any = None) -> None:
                assert all(isinstance(k, str) for k in signature)
                seen["source"] = ("new", dict(signature), dict(constexprs or {}))
                self.fn = fn

    class GPUTarget:
        def __init__(self, backend: str, arch: int, warp_size: int) -> None:
            seen["target"] = (backend, arch, warp_size)

    def compile(src: Any, target: Any = None, options: Any = None) -> Any:
        seen["options"] = dict(options)
        fn = src.fn
        n = sum(1 for p in fn.params if not p.is_constexpr) + hidden
        md = SimpleNamespace(name=fn.__name__, num_warps=options["num_warps"], num_stages=options["num_stages"],
                             shared=8 * options["num_warps"], global_scratch_size=0, profile_scratch_size=0,
                             num_ctas=1, cluster_dims=(1, 1, 1))
        return SimpleNamespace(metadata=md, asm={"ptx": _ptx(fn.__name__, n), "cubin": b"\x7fELF-stub"})

    triton = types.ModuleType("triton")
    triton.__version__ = "0.0-stub"  # type: ignore[attr-defined]
    triton.jit = JITFunction  # type: ignore[attr-defined]
    triton.compile = compile  # type: ignore[attr-defined]
    lang = types.ModuleType("triton.language")
    lang.constexpr = _Constexpr  # type: ignore[attr-defined]
    comp = types.ModuleType("triton.compiler")
    comp.ASTSource = ASTSource  # type: ignore[attr-defined]
    backends = types.ModuleType("triton.backends")
    bcomp = types.ModuleType("triton.backends.compiler")
    bcomp.GPUTarget = GPUTarget  # type: ignore[attr-defined]
    triton.language, triton.compiler, triton.backends = lang, comp, backends  # type: ignore[attr-defined]
    backends.compiler = bcomp  # type: ignore[attr-defined]
    for name, mod in (("triton", triton), ("triton.language", lang), ("triton.compiler", comp),
                      ("triton.backends", backends), ("triton.backends.compiler", bcomp)):
        monkeypatch.setitem(sys.modules, name, mod)
    seen["jit"] = JITFunction
    return seen


def _kernel(jit: Any) -> Any:
    def scale_rows(X, Y, M, N, BLOCK: _Constexpr, UNROLL: _Constexpr):  # noqa: N803
        pass
    return jit(scale_rows)


@pytest.mark.parametrize("old_api", [False, True])
def test_compile_arm_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, old_api: bool) -> None:
    seen = _stub_triton(monkeypatch, old_api=old_api)
    k = _kernel(seen["jit"])
    arm = compile_arm(k, op="rowsum", signature={"X": "*fp32", "Y": "*fp32", "M": "i32", "N": "i64"},
                      constexprs={"BLOCK": 512, "UNROLL": 2}, grid=("M", 1), num_warps=8, num_stages=2,
                      out_dir=tmp_path / "t", arch=90, cases="r", requires="N % 4 == 0")
    if old_api:
        assert seen["source"] == ("old", {0: "*fp32", 1: "*fp32", 2: "i32", 3: "i64"}, {4: 512, 5: 2})
    else:
        assert seen["source"] == ("new", {"X": "*fp32", "Y": "*fp32", "M": "i32", "N": "i64", "BLOCK": "constexpr",
                                          "UNROLL": "constexpr"}, {"BLOCK": 512, "UNROLL": 2})
    assert seen["target"] == ("cuda", 90, 32)
    assert seen["options"] == {"num_warps": 8, "num_stages": 2}
    assert arm["args"] == "X, Y, M, N:i64, null, null"
    assert arm["block"] == 256 and arm["shared"] == 64 and arm["grid"] == "M, 1"
    assert arm["cases"] == "r" and arm["requires"] == "N % 4 == 0"
    cubin = tmp_path / "t" / "scale_rows.cubin"
    assert arm["image"] == str(cubin.resolve()) and cubin.read_bytes() == b"\x7fELF-stub"
    record = json.loads((tmp_path / "t" / "scale_rows.json").read_text())
    assert record["triton"] == "0.0-stub" and record["hidden_params"] == 2 and record["constexprs"]["BLOCK"] == 512
    assert "sm_90" in arm["#"][0] and "BLOCK=512" in arm["#"][0]
    named = compile_arm(k, op="rowsum", signature=SIG, constexprs={"BLOCK": 64, "UNROLL": 1}, grid="M",
                        out_dir=tmp_path / "t", arch=90, name="v2", args={"M": "M", "N": "N"})
    assert Path(named["image"]).name == "v2.cubin"


@pytest.mark.parametrize("kwargs,message", [
    ({"constexprs": {"BLOCK": 1}}, r"\['UNROLL'\] need a value"),
    ({"constexprs": {"BLOCK": 1, "UNROLL": 1, "NOPE": 2}}, "not parameters"),
    ({"signature": {"X": "*fp32"}}, "signature lacks"),
    ({"signature": dict(SIG, Z="i32")}, "not runtime parameters"),
])
def test_compile_arm_input_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kwargs: Dict[str, Any],
                                  message: str) -> None:
    seen = _stub_triton(monkeypatch)
    args: Dict[str, Any] = {"signature": SIG, "constexprs": {"BLOCK": 1, "UNROLL": 1}}
    args.update(kwargs)
    with pytest.raises(TritonArmError, match=message):
        compile_arm(_kernel(seen["jit"]), op="rowsum", grid="M", out_dir=tmp_path, arch=90, **args)
    with pytest.raises(TritonArmError, match="not a @triton.jit"):
        compile_arm(lambda X: None, op="rowsum", signature=SIG, grid="M", out_dir=tmp_path, arch=90)
