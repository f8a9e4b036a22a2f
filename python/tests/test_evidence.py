"""kgate.Evidence: an evidence folder's files as typed DataFrames."""
from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kgate

#: The samples table's columns, as kgate declares them (src/report/report_csv.c) and schema.json says.
SAMPLES_COLUMNS = ["process", "slot", "direction", "round", "case", "op", "dtype", "arm", "role", "sample", "ns"]


def _is_cat(s: pd.Series) -> bool:
    return isinstance(s.dtype, pd.CategoricalDtype)


def test_results_frame(fake_run: kgate.RunResult) -> None:
    ev = kgate.Evidence(fake_run.evidence)
    assert ev.schema in range(kgate.SCHEMA_MIN, kgate.SCHEMA_MAX + 1)
    r = ev.results
    assert list(r["arm"]) == ["base", "cand", "ctrl"]
    for col in ("case", "arm", "role", "state", "verdict"):
        assert _is_cat(r[col]), col
    assert list(r["arm"].cat.categories) == ["base", "cand", "ctrl"]
    cand = r.set_index("arm").loc["cand"]
    assert cand["verdict"] == "FASTER" and cand["baseline"] == "base"
    assert r["reduction_lower"].dtype == np.float64 and r["median_ns"].dtype == np.float64
    assert r["wins_fwd"].dtype == np.int64
    assert 0.01 < cand["reduction_lower"] < cand["reduction"] < cand["reduction_upper"]
    # the same numbers as results.csv, which kgate writes from the same analysis
    with open(fake_run.evidence / "results.csv", newline="") as f:
        rows = {row["arm"]: row for row in csv.DictReader(f)}
    assert float(rows["cand"]["reduction_lower"]) == pytest.approx(cand["reduction_lower"], rel=1e-8)
    assert rows["cand"]["verdict"] == cand["verdict"]
    assert ev.gate["gate_pass"] is True and ev.passed
    assert ev.verdict("small", "cand") == "FASTER"
    with pytest.raises(KeyError):
        ev.verdict("small", "nobody")
    vc = ev.variance_components
    assert set(vc["arm"]) == {"base", "cand", "ctrl"} and vc["sd_sample"].dtype == np.float64


def test_samples_tidy(fake_run: kgate.RunResult) -> None:
    ev = kgate.Evidence(fake_run.evidence)
    s = ev.samples
    assert list(s.columns) == SAMPLES_COLUMNS == ev.columns("samples")
    for col in ("direction", "case", "op", "dtype", "arm", "role"):
        assert _is_cat(s[col]), col
    for col in ("process", "slot", "round", "sample"):
        assert s[col].dtype == np.int64, col
    assert s["ns"].dtype == np.float64
    plan = fake_run.load().plan
    c = plan.campaign
    n = 2 * int(c["processes"]) * int(c["rounds"]) * int(c["samples"]) * 3
    assert len(s) == n
    assert set(s["role"]) == {"baseline", "candidate", "control"}
    assert (s["op"] == "rowsum").all() and (s["dtype"] == "f32").all()
    assert list(s["direction"].cat.categories) == ["fwd", "rev"]
    med = s.groupby(["arm", "direction"], observed=True)["ns"].median()
    assert med["cand"].max() < med["base"].min()


def _kgate_samples(folder: Path, kgate_bin: str, out: Path, ev: kgate.Evidence) -> "pd.DataFrame":
    """The table ``kgate report DIR --samples FILE`` writes, typed as Evidence types it."""
    cp = kgate.run_cli(["report", str(folder), "--samples", str(out)], kgate=kgate_bin)
    assert cp.returncode == 0, cp.stderr
    return ev._typed(ev._read_csv(out), "samples", str(out))


def test_samples_equal_kgates_table(fake_copy: Path, kgate_bin: str, tmp_path: Path) -> None:
    """No raw/samples.csv in the folder (schema 9): the table is made from the raw files, row
    for row the one kgate writes on demand; a folder that kept raw/samples.csv (schemas 6 to
    8) is read from it."""
    assert not (fake_copy / "raw" / "samples.csv").exists()
    assert all(p.name.endswith(".csv.gz") for p in (fake_copy / "raw").iterdir())
    ev = kgate.Evidence(fake_copy)
    pd.testing.assert_frame_equal(ev.samples, _kgate_samples(fake_copy, kgate_bin, tmp_path / "s.csv", ev))
    # a schema-8 folder's table, as that kgate kept it: read from the file
    d = json.loads((fake_copy / "schema.json").read_text())
    [k for k in d["files"] if k["kind"] == "samples"][0]["file"] = "raw/samples.csv"
    (fake_copy / "schema.json").write_text(json.dumps(d))
    kept = ev.samples.copy()
    kept["ns"] = kept["ns"] * 2
    out = kept.copy()
    out["ns"] = out["ns"].map(lambda x: f"{x:.3f}")
    out.to_csv(fake_copy / "raw" / "samples.csv", index=False)
    pd.testing.assert_frame_equal(kgate.Evidence(fake_copy).samples, kept)


def test_samples_leave_out_contaminated_rows(fake_copy: Path, kgate_bin: str, tmp_path: Path) -> None:
    """A sample that ran on another CPU than its process's (cpu != process_cpu) is in ``raw``
    and not in ``samples``, as kgate leaves it out of the analysis and its table."""
    p = fake_copy / "raw" / "proc-001.csv.gz"
    lines = gzip.decompress(p.read_bytes()).decode().splitlines()
    for i in (3, 7):
        f = lines[i].split(",")
        f[-2:] = ["1", "0"]
        lines[i] = ",".join(f)
    p.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    ev = kgate.Evidence(fake_copy)
    assert len(ev.raw) == 360 and len(ev.samples) == 358
    pd.testing.assert_frame_equal(ev.samples, _kgate_samples(fake_copy, kgate_bin, tmp_path / "s.csv", ev))


def test_merged_samples(kgate_bin: str, tmp_path: Path) -> None:
    """A merged folder's samples: its shards' in turn, processes and slots offset as kgate
    offsets them, equal to kgate's own table of the merged folder."""
    from conftest import fake_plan
    plan = fake_plan("py-merge")
    plan.cases["big"] = {"op": "rowsum", "dtype": "f32", "M": 8, "N": 16}
    path = tmp_path / "plan.kg"
    plan.write(path)
    for i in range(2):
        cp = kgate.run_cli(["run", str(path), "--shard", f"{i}/2", "--campaign", "c", "-q", "-o",
                                 str(tmp_path / f"s{i}")], kgate=kgate_bin)
        assert cp.returncode in (0, 1), cp.stderr
    cp = kgate.run_cli(["merge", str(tmp_path / "m"), str(tmp_path / "s0"), str(tmp_path / "s1"), "-q"],
                            kgate=kgate_bin)
    assert cp.returncode in (0, 1), cp.stderr
    ev = kgate.Evidence(tmp_path / "m")
    s = ev.samples
    assert len(s) == 2 * 360 and set(s["case"]) == {"small", "big"}
    assert s["process"].max() == 11 and s["slot"].max() == 11
    pd.testing.assert_frame_equal(s, _kgate_samples(tmp_path / "m", kgate_bin, tmp_path / "m.csv", ev))


def test_merged_by_process_samples(kgate_bin: str, tmp_path: Path) -> None:
    """A one-case campaign in 2 shards by process: the merged folder's samples are the
    schedule's, in process order, equal to kgate's own table and to the unsharded run's."""
    from conftest import fake_plan
    path = tmp_path / "plan.kg"
    fake_plan("py-merge-proc").write(path)
    cp = kgate.run_cli(["run", str(path), "-q", "-o", str(tmp_path / "whole")], kgate=kgate_bin)
    assert cp.returncode in (0, 1), cp.stderr
    for i in range(2):
        cp = kgate.run_cli(["run", str(path), "--shard", f"{i}/2", "--campaign", "p", "-q", "-o",
                            str(tmp_path / f"s{i}")], kgate=kgate_bin)
        assert cp.returncode in (0, 1), cp.stderr
    assert kgate.Evidence(tmp_path / "s1").meta["shard"]["slots"] == [2, 3]
    cp = kgate.run_cli(["merge", str(tmp_path / "m"), str(tmp_path / "s1"), str(tmp_path / "s0"), "-q"],
                       kgate=kgate_bin)
    assert cp.returncode in (0, 1), cp.stderr
    ev = kgate.Evidence(tmp_path / "m")
    s = ev.samples
    assert len(s) == 360 and list(s["process"].unique()) == list(range(6))
    pd.testing.assert_frame_equal(s, _kgate_samples(tmp_path / "m", kgate_bin, tmp_path / "m.csv", ev))
    pd.testing.assert_frame_equal(s, kgate.Evidence(tmp_path / "whole").samples)


def test_samples_leave_out_excluded_processes(fake_copy: Path) -> None:
    p = fake_copy / "processes.csv"
    lines = p.read_text().splitlines()
    head, rows = lines[0], lines[1:]
    fields = next(csv.reader([rows[1]]))
    fields[3] = "0"  # process 1 not accepted
    fields[2] = "contaminated"
    buf = []
    w = csv.writer(_Lines(buf), lineterminator="\n")
    w.writerow(fields)
    rows[1] = buf[0].rstrip("\n")
    p.write_text("\n".join([head] + rows) + "\n")
    (fake_copy / "raw" / "samples.csv").unlink(missing_ok=True)
    ev = kgate.Evidence(fake_copy)
    assert 1 not in set(ev.samples["process"])
    assert 1 in set(ev.raw["process"])
    assert not ev.raw.loc[ev.raw["process"] == 1, "accepted"].any()
    assert ev.accepted_processes() == [0, 2, 3, 4, 5]


class _Lines:
    def __init__(self, out: list) -> None:
        self.out = out

    def write(self, s: str) -> None:
        self.out.append(s)


def test_checks_processes_watch_outputs(fake_run: kgate.RunResult) -> None:
    ev = kgate.Evidence(fake_run.evidence)
    ch = ev.checks
    assert len(ch) > 0 and ch["passed"].all() and ch["accepted"].all()
    assert _is_cat(ch["phase"]) and list(ch["phase"].cat.categories) == ["pre", "post"]
    assert ch["max_abs"].dtype == np.float64 and str(ch["nbad"].dtype) == "Int64"
    assert {"poison0:Y", "fresh:Y"} <= set(ch["check"])
    pr = ev.processes
    assert list(pr["process"]) == list(range(6))
    assert pr["accepted"].dtype == bool and pr["accepted"].all()
    assert list(pr["direction"]) == ["fwd", "rev"] * 3
    assert str(pr["start_utc"].dtype).startswith("datetime64")
    assert pr["telemetry_sha256"].isna().all()  # the fake backend writes no telemetry
    assert set(ev.watch["event"]) >= {"session", "end"}
    out = ev.outputs
    assert out["seed"].dtype == np.uint64 and (out["encoding"] == "ulp-zstd").all()
    assert ev.telemetry.empty and list(ev.telemetry.columns)[:5] == ["process", "case", "round", "arm", "sample"]
    assert ev.resources.empty


def test_meta_plan_environment(fake_run: kgate.RunResult) -> None:
    ev = kgate.Evidence(fake_run.evidence)
    assert ev.meta["backend"] == "fake"
    assert ev.plan_text.startswith("[campaign]\nname = py-fake\n")
    assert len(ev.plan_sha256) == 64 and ev.plan_sha256 == ev.results_json["plan_sha256"]
    assert ev.cases == ["small"] and ev.arms == ["base", "cand", "ctrl"]
    assert ev.plan.arms["ctrl"]["of"] == "base"
    assert ev.environment["plan_sha256"] == ev.plan_sha256
    assert ev.peaks is not None and ev.peaks["backend"] == "fake"
    assert ev.report.startswith("# kgate report: py-fake")


def test_cpu_telemetry_and_resources(cpu_run: kgate.RunResult) -> None:
    ev = kgate.Evidence(cpu_run.evidence)
    t = ev.telemetry
    assert len(t) == len(ev.samples)
    assert t["power_w"].isna().all() and (t["sm_mhz"] == -1).all()
    assert t["event_ns"].dtype == np.float64 and t["clock_event_reasons"].dtype == np.int64
    assert t["escaped"].dtype == bool
    # joined to the samples by (process, case, round, arm, sample)
    j = ev.samples.merge(t, on=["process", "case", "round", "arm", "sample"], how="inner")
    assert len(j) == len(t)
    res = ev.resources
    assert set(res["arm"]) == {"naive", "unrolled"} and (res["arch"] == "cpu").all()
    assert res["image_bytes"].min() > 0 and res["sandbox"].str.contains("seccomp").all()
    assert ev.peaks is not None and ev.peaks["status"] == "measured"


def test_verify_and_tamper(fake_copy: Path) -> None:
    ev = kgate.Evidence(fake_copy)
    v = ev.verify()
    assert v and v.ok and v.returncode == 0 and not v.mismatches
    raw = fake_copy / "raw" / "proc-000.csv.gz"
    text = gzip.decompress(raw.read_bytes()).decode()
    raw.write_bytes(gzip.compress(text.replace(",fwd,0,cand,small,0,", ",fwd,0,cand,small,0,1", 1).encode()))
    bad = kgate.verify(fake_copy)
    assert not bad and bad.returncode == 1 and bad.mismatches
    assert any("raw/proc-000.csv.gz" in m for m in bad.mismatches)


def test_verify_allow_env_reaches_kgate(fake_copy: Path) -> None:
    # --allow-env accepts variables of a signed statement: without a key kgate refuses it (exit 2)
    with pytest.raises(kgate.KgateError) as e:
        kgate.verify(fake_copy, allow_env=["LD_PRELOAD", "KGATE_CC"])
    assert e.value.returncode == 2 and "--allow-env" in e.value.argv
    assert "LD_PRELOAD,KGATE_CC" in e.value.argv


def test_verify_refuses_a_non_folder(tmp_path: Path) -> None:
    (tmp_path / "meta.json").write_text(json.dumps({"schema": 5}))
    with pytest.raises(kgate.KgateError):
        kgate.Evidence(tmp_path).verify()


def test_not_an_evidence_folder(tmp_path: Path) -> None:
    with pytest.raises(kgate.EvidenceError, match="no such folder"):
        kgate.Evidence(tmp_path / "none")
    with pytest.raises(kgate.EvidenceError, match="no meta.json"):
        kgate.Evidence(tmp_path)
    (tmp_path / "meta.json").write_text("{")
    with pytest.raises(kgate.EvidenceError, match="JSON"):
        kgate.Evidence(tmp_path)


def _set_schema(folder: Path, schema: object, name: str = "meta.json") -> None:
    p = folder / name
    d = json.loads(p.read_text())
    d["schema"] = schema
    p.write_text(json.dumps(d))


@pytest.mark.parametrize("schema", list(range(kgate.SCHEMA_MIN, kgate.SCHEMA_MAX + 1)))
def test_known_schemas_are_read(fake_copy: Path, schema: int) -> None:
    _set_schema(fake_copy, schema)
    assert kgate.Evidence(fake_copy).schema == schema


def test_newer_schema_is_refused(fake_copy: Path) -> None:
    _set_schema(fake_copy, kgate.SCHEMA_MAX + 1)
    with pytest.raises(kgate.SchemaError, match=f"schema {kgate.SCHEMA_MAX + 1}, newer"):
        kgate.Evidence(fake_copy)
    _set_schema(fake_copy, kgate.SCHEMA_MAX)
    _set_schema(fake_copy, kgate.SCHEMA_MAX + 1, "results.json")
    ev = kgate.Evidence(fake_copy)
    with pytest.raises(kgate.SchemaError):
        ev.results
    for bad in (0, "5", None, True):
        _set_schema(fake_copy, bad)
        with pytest.raises(kgate.EvidenceError, match="not an evidence schema"):
            kgate.Evidence(fake_copy)


def test_old_layouts(fake_copy: Path) -> None:
    """A schema-1 processes.csv (7 columns) reads with slot = process and attempt 0; the
    11-column outputs index of schemas 2 to 4 with stored = bytes and encoding raw."""
    _set_schema(fake_copy, 1)
    p = fake_copy / "processes.csv"
    with open(p, newline="") as f:
        rows = list(csv.reader(f))
    with open(p, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(r[:7] for r in rows)
    for o in (fake_copy / "outputs").glob("proc-*.csv"):
        with open(o, newline="") as f:
            rows = list(csv.reader(f))
        with open(o, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(r[:11] for r in rows)
    (fake_copy / "raw" / "samples.csv").unlink(missing_ok=True)
    shutil.rmtree(fake_copy / "telemetry", ignore_errors=True)
    (fake_copy / "watch.csv").unlink()
    ev = kgate.Evidence(fake_copy)
    pr = ev.processes
    assert list(pr["slot"]) == list(pr["process"]) and (pr["attempt"] == 0).all()
    assert "chain" not in pr.columns
    out = ev.outputs
    assert (out["stored"] == out["bytes"]).all() and (out["encoding"] == "raw").all()
    assert len(ev.samples) == 360 and ev.watch.empty


def test_a_damaged_file_is_named(fake_copy: Path) -> None:
    p = fake_copy / "checks" / "proc-002.csv"
    lines = p.read_text().splitlines()
    f = next(csv.reader([lines[7]]))
    f[0] = "two"
    lines[7] = ",".join(f[:11]) + ',"' + f[11] + '"'
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(kgate.EvidenceError, match="checks/proc-NNN.csv: column process"):
        kgate.Evidence(fake_copy).checks


def test_types_come_from_schema_json(fake_copy: Path) -> None:
    """The tables are typed by the folder's schema.json, not by a copy in the package: a
    column's type changed there changes the frame; a folder without it says how to get one."""
    ev = kgate.Evidence(fake_copy)
    assert ev.samples["ns"].dtype == np.float64
    assert ev.kind("checks")["file"] == "checks/proc-NNN.csv"
    assert ev.columns("raw") == ["process", "direction", "round", "arm", "case", "sample", "ns", "plan", "cpu",
                                 "process_cpu"]
    assert list(ev.checks["phase"].cat.categories) == ev._values("checks", "phase") == ["pre", "post"]
    p = fake_copy / "schema.json"
    d = json.loads(p.read_text())
    samples = [k for k in d["files"] if k["kind"] == "samples"][0]
    [c for c in samples["columns"] if c["name"] == "ns"][0]["type"] = "text"
    for k in d["files"]:
        if k["kind"] == "checks":
            k["file"] = "checks/none-NNN.csv"
    p.write_text(json.dumps(d))
    again = kgate.Evidence(fake_copy)
    assert again.samples["ns"].dtype == object
    assert again.checks.empty and list(again.checks.columns)[:3] == ["process", "direction", "case"]
    p.unlink()
    with pytest.raises(kgate.EvidenceError, match="no schema.json.*kgate report DIR writes it"):
        kgate.Evidence(fake_copy).samples
    assert kgate.Evidence(fake_copy).verdict("small", "cand") == "FASTER"   # results.json alone


def test_check_folder(fake_run: kgate.RunResult, tmp_path: Path) -> None:
    from conftest import fake_plan
    r = kgate.check(fake_plan(), out=tmp_path / "ck")
    ev = r.load()
    assert ev.samples.empty and list(ev.samples.columns) == SAMPLES_COLUMNS
    assert len(ev.checks) == r.n_checks and ev.checks["passed"].all()
    assert set(ev.results["verdict"]) == {"NO DATA"}
