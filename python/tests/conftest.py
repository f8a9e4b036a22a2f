"""Fixtures of the kgate package's tests: the binary ($KGATE, else the tree's bin/kgate),
the source tree (kernels and plans), and small campaigns on the fake and cpu backends run
once per session."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

import kgate

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "kernels" / "cpu"


@pytest.fixture(scope="session", autouse=True)
def _lock_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Campaigns lock a folder of their own unless the caller chose one (tests/cli's
    scripts set KGATE_LOCK_DIR)."""
    if os.environ.get("KGATE_LOCK_DIR"):
        yield
        return
    os.environ["KGATE_LOCK_DIR"] = str(tmp_path_factory.mktemp("locks"))
    yield
    del os.environ["KGATE_LOCK_DIR"]


@pytest.fixture(scope="session")
def kgate_bin() -> str:
    """The binary under test."""
    return kgate.find_kgate()


def fake_plan(name: str = "py-fake", cand_ns: Any = 970, **arm: Any) -> kgate.Plan:
    """tests/plans/fake-faster.kg as a Plan: a scripted 3% faster candidate and an A/A control."""
    cand: Dict[str, Any] = {"op": "rowsum", "role": "candidate", "source": str(KERNELS / "rowsum_unrolled.c"),
                            "fake_ns": cand_ns, "fake_noise": 0.01}
    cand.update(arm)
    return kgate.Plan(
        campaign={"quiet": 0, "name": name, "backend": "fake", "warmup": 1, "samples": 5, "rounds": 4,
                  "processes": 3, "seed": 7, "margin": "1%", "equivalence": "0.5%", "control_margin": "1%",
                  "timeout": 30},
        cases={"small": {"op": "rowsum", "dtype": "f32", "M": 4, "N": 16}},
        arms={"base": {"op": "rowsum", "role": "baseline", "source": str(KERNELS / "rowsum_naive.c"),
                       "fake_ns": 1000, "fake_noise": 0.01},
              "cand": cand,
              "ctrl": {"op": "rowsum", "role": "control", "of": "base"}},
        gate={"rule": "interval", "min_reduction": "1%"},
    )


def cpu_plan() -> kgate.Plan:
    """A small rowsum campaign on the cpu backend (a few seconds): the unrolled kernel
    against the naive loop, no quiet window (the host is shared)."""
    return kgate.Plan(
        campaign={"name": "py-cpu", "backend": "cpu", "quiet": 0, "warmup": 1, "samples": 3, "rounds": 2,
                  "processes": 2, "timeout": 120, "margin": "1%"},
        cases={"r": {"op": "rowsum", "dtype": "f32", "M": 32, "N": 256}},
        arms={"naive": {"op": "rowsum", "role": "baseline", "source": str(KERNELS / "rowsum_naive.c")},
              "unrolled": {"op": "rowsum", "source": str(KERNELS / "rowsum_unrolled.c")}},
    )


@pytest.fixture(scope="session")
def fake_run(tmp_path_factory: pytest.TempPathFactory) -> kgate.RunResult:
    """The fake campaign, run once: gate PASS."""
    out = tmp_path_factory.mktemp("fake") / "ev"
    return kgate.run(fake_plan(), out=out)


@pytest.fixture(scope="session")
def cpu_run(tmp_path_factory: pytest.TempPathFactory) -> kgate.RunResult:
    """The cpu campaign, run once (telemetry and resources rows, real kernels)."""
    out = tmp_path_factory.mktemp("cpu") / "ev"
    return kgate.run(cpu_plan(), out=out)


@pytest.fixture
def fake_copy(fake_run: kgate.RunResult, tmp_path: Path) -> Path:
    """A copy of the fake campaign's folder that a test may change."""
    dst = tmp_path / "copy"
    shutil.copytree(fake_run.evidence, dst)
    return dst
