"""kgate.triton: a compiled Triton kernel to a cubin arm.

The arm's keys are made from what ``triton.compile`` returns (its metadata and PTX): those
tests run everywhere, on stand-ins shaped as Triton's compiled kernels. The real compile
runs where Triton is installed (the GPU machine: tools/device/python_triton.sh)."""
from __future__ import annotations

import importlib.util
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
