"""kgate from Python: compare candidates with a reference function in one call, run and
check campaigns, build plans from dicts, read evidence folders into pandas, compile Triton
kernels to precompiled arms, and gate a pytest test on a campaign (the ``kgate_gate`` fixture).

>>> import kgate
>>> r = kgate.compare(saxpy, {"c": kgate.C("saxpy.c")}, inputs={"X": ("n", "f32")}, sizes={"n": 4096})  # doctest: +SKIP
>>> r = kgate.run("examples/quickstart.kg", out="out/qs")      # doctest: +SKIP
>>> r.passed, r.verdict("f32_128", "blocked")                  # doctest: +SKIP
>>> kgate.Evidence(r.evidence).samples.head()                  # doctest: +SKIP

Every call runs the kgate binary (:func:`find_kgate`: an argument, ``$KGATE``, the binary
``pip install`` bundled, ``kgate`` on ``PATH``, or the source tree's ``bin/kgate``).
docs/python.md is the tutorial.
"""
from typing import Optional, Sequence

from ._cli import EXIT_FAIL, EXIT_INVALID, EXIT_PASS, EXIT_USAGE, KgateError, KgateNotFound, PathLike, find_kgate, run_cli
from .evidence import SCHEMA_MAX, SCHEMA_MIN, Evidence, EvidenceError, SchemaError, VerifyResult
from .plan import Axis, Plan, PlanError
from .runner import CheckResult, RunResult, Verdict, check, run
from .compare import C, CUDA, CompareError, CompareResult, Image, Library, Triton, compare, compare_plan

__version__ = "0.1.0"

__all__ = [
    "Axis", "C", "CUDA", "CheckResult", "CompareError", "CompareResult", "Image", "Library", "Triton", "compare",
    "compare_plan", "Evidence", "EvidenceError", "EXIT_FAIL", "EXIT_INVALID", "EXIT_PASS", "EXIT_USAGE",
    "KgateError", "KgateNotFound", "Plan", "PlanError", "RunResult", "SCHEMA_MAX", "SCHEMA_MIN", "SchemaError",
    "Verdict", "VerifyResult", "check", "find_kgate", "run", "run_cli", "verify", "__version__",
]


def verify(folder: PathLike, key: Optional[PathLike] = None, *, kgate: Optional[PathLike] = None,
           allow_env: Sequence[str] = ()) -> VerifyResult:
    """``kgate verify FOLDER [--key PUB] [--allow-env NAME,...]`` (see :meth:`Evidence.verify`)."""
    return Evidence(folder, kgate=kgate).verify(key, allow_env=allow_env)
