#!/usr/bin/env python3
"""python_triton.py OUTDIR --kgate K [--arch CC]: the Python package end to end on a GPU
machine (tools/device/python_triton.sh runs it).

1. compiles the Triton rowsum of kernels/triton/rowsum.py twice with kgate.triton.compile_arm
   (BLOCK 1024 with 4 warps, BLOCK 2048 with 8 warps): two generated candidates;
2. builds the plan with kgate.Plan: rowsum f32 8192 x 8192 on the cuda backend, the warp-per-row
   source kernel of kernels/cuda/reduce_sum.cu as the baseline (NVRTC) with an A/A control;
3. kgate.check, then kgate.run, then Evidence.verify;
4. reads the evidence with kgate.Evidence (when pandas imports) and checks that each Triton
   arm was loaded with the block and dynamic shared memory its compiled metadata gave.

Writes OUTDIR/summary.json, python_triton.txt (what it printed), the plan, the arms' metadata
and the tables as CSV; the evidence folders are under OUTDIR/work.
Exit 0 when the arms compiled, were admitted (no failed check), timed to a verdict, the
folder verified and the loaded resources matched.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import traceback
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[2]


def load_rowsum_kernel() -> Any:
    """kernels/triton/rowsum.py's @triton.jit rowsum_kernel (X, Y, M, N, BLOCK)."""
    spec = importlib.util.spec_from_file_location("kgate_triton_rowsum", ROOT / "kernels" / "triton" / "rowsum.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.rowsum_kernel


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--kgate", required=True)
    ap.add_argument("--arch", type=int, default=None, help="compute capability as an integer (90); default: the device's")
    ap.add_argument("--backend", default="cuda",
                    help="cuda; fake for a dry run of this script without a GPU (no resources are recorded there)")
    o = ap.parse_args()
    out = Path(o.outdir)
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    summary: Dict[str, Any] = {"ok": False, "steps": {}}
    lines: List[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    try:
        import kgate
        import kgate.triton
        import triton
        summary["kgate_package"] = {"version": kgate.__version__, "file": kgate.__file__}
        summary["triton"] = triton.__version__
        say(f"kgate package {kgate.__version__} from {kgate.__file__}; Triton {triton.__version__}")

        # 1. two candidates from one kernel, compiled for this device
        kernel = load_rowsum_kernel()
        arms: Dict[str, Any] = {}
        for name, block, warps in (("triton_b1024_w4", 1024, 4), ("triton_b2048_w8", 2048, 8)):
            arm = kgate.triton.compile_arm(kernel, op="rowsum", name=name, out_dir=work / "triton",
                                           signature={"X": "*fp32", "Y": "*fp32", "M": "i32", "N": "i32"},
                                           constexprs={"BLOCK": block}, num_warps=warps, grid="M", arch=o.arch)
            arms[name] = arm
            say(f"{name}: entry {arm['entry']}, block {arm['block']}, shared {arm['shared']}, args {arm['args']} "
                f"({arm.hidden_params} hidden parameter(s) of {arm.ptx_params} in the PTX entry)")
            summary["steps"][f"compile {name}"] = {k: v for k, v in arm.items() if k != "#"}
        summary["steps"]["compile"] = "ok"

        # 2. the plan, from dicts
        plan = kgate.Plan(
            comment="tools/device/python_triton.py: Triton candidates compiled by kgate.triton.compile_arm",
            campaign={"name": "python-triton", "backend": o.backend, "quiet": 5, "warmup": 3, "samples": 10,
                      "rounds": 4, "processes": 4, "pack": 4, "margin": "5%", "equivalence": "2%",
                      "control_margin": "2%", "order_min": "2%", "timeout": 300},
            cases={"f32_8192x8192": {"op": "rowsum", "dtype": "f32", "M": 8192, "N": 8192}},
            arms={"warp_rows": {"op": "rowsum", "role": "baseline", "source": str(ROOT / "kernels/cuda/reduce_sum.cu"),
                                "defines": {"RED_T": 32, "RED_P": 1, "RED_L": 1}, "grid": "M", "block": 32,
                                "shared": 0},
                  "warp_rows_copy": {"op": "rowsum", "role": "control", "of": "warp_rows"},
                  **arms},
            gate={"min_reduction": "5%"},
        )
        path = plan.write(work / "python-triton.kg")
        digest, _ = plan.canonical(kgate=o.kgate)
        summary["plan_sha256"] = digest
        (out / "python-triton.kg").write_text(path.read_text())
        say(f"plan {path} (canonical sha256 {digest[:16]}...)")

        # 3. check, run, verify
        ck = kgate.check(path, out=work / "check", kgate=o.kgate)
        say(f"kgate check: passed={ck.passed}, {ck.n_checks} checks, {len(ck.failed)} failed; states {ck.states}")
        summary["steps"]["check"] = {"passed": ck.passed, "checks": ck.n_checks, "failed": ck.failed[:20],
                                     "states": {f"{c}/{a}": s for (c, a), s in ck.states.items()}}
        run = kgate.run(path, out=work / "run", kgate=o.kgate, echo=True)
        say(f"kgate run: exit {run.returncode}, gate {'PASS' if run.passed else 'FAIL'}: {run.gate_reason}")
        verdicts = {f"{c}/{a}": {"verdict": v.verdict, "state": v.state, "reduction": v.reduction,
                                 "lower": v.reduction_lower, "upper": v.reduction_upper, "median_ns": v.median_ns}
                    for (c, a), v in run.verdicts.items()}
        for k, v in verdicts.items():
            say(f"  {k}: {v['verdict']} ({v['state']}), median {v['median_ns']} ns, reduction {v['reduction']} "
                f"[{v['lower']}, {v['upper']}]")
        summary["steps"]["run"] = {"returncode": run.returncode, "gate_pass": run.passed,
                                   "gate_reason": run.gate_reason, "verdicts": verdicts}
        (out / "report.md").write_text((run.evidence / "report.md").read_text())
        ev = kgate.Evidence(run.evidence, kgate=o.kgate)
        ver = ev.verify()
        say(f"kgate verify: {'verified' if ver else 'MISMATCH'}")
        summary["steps"]["verify"] = {"ok": ver.ok, "mismatches": ver.mismatches}

        # 4. the evidence in pandas
        ok_tables = True
        if importlib.util.find_spec("pandas") is None:
            say("pandas is not installed here: the DataFrame part is left out")
            summary["steps"]["pandas"] = "not installed"
        else:
            ev.results.to_csv(out / "results_frame.csv", index=False)
            s = ev.samples
            med = s.groupby(["arm", "direction"], observed=True)["ns"].median().unstack()
            med.to_csv(out / "samples_median.csv")
            say("median ns per arm and direction (Evidence.samples):\n" + med.to_string())
            res = ev.resources
            res.to_csv(out / "resources.csv", index=False)
            for name, arm in arms.items():
                rows = res[res["arm"] == name]
                if rows.empty and o.backend != "cuda":
                    say(f"{name}: no resources recorded (backend {o.backend})")
                    continue
                shared = sorted(set(rows["dynamic_shared"]))
                blocks = sorted(set(rows["block"]))
                match = shared == [arm["shared"]] and blocks == [f"{arm['block']}x1x1"]
                ok_tables &= bool(match)
                say(f"{name}: loaded with block {blocks}, dynamic shared {shared}, registers "
                    f"{sorted(set(rows['registers']))}: {'as compiled' if match else 'NOT as compiled'}")
            tel = ev.telemetry
            if not tel.empty:
                clk = tel.groupby("arm", observed=True)["sm_mhz"].median()
                say("median SM clock per arm (Evidence.telemetry):\n" + clk.to_string())
            summary["steps"]["pandas"] = {"samples": len(s), "resources_match": ok_tables}
        summary["ok"] = bool(ck.passed and run.returncode in (0, 1) and ver.ok and ok_tables)
    except Exception:  # a report, not a crash: the summary says what failed
        tb = traceback.format_exc()
        say("FAILED:\n" + tb)
        summary["error"] = tb
    say(f"Result: {'ok' if summary['ok'] else 'FAILED'}")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    (out / "python_triton.txt").write_text("\n".join(lines) + "\n")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
