"""An evidence folder (docs/evidence.md) as pandas DataFrames.

``Evidence(folder)`` reads what ``kgate run`` or ``kgate check`` wrote; nothing here
writes into the folder. Every table is read on first use and kept:

===============  ==================================================  ========================
attribute        one row per                                          from
===============  ==================================================  ========================
``results``      (case, arm): verdict, reduction, interval, ...      results.json
``samples``      timed sample of an accepted process, tidy           the raw files (and the
                                                                      plan); raw/samples.csv
                                                                      where kept (schemas 6-8)
``raw``          timed sample of any process that completed          raw/proc-NNN.csv.gz
                                                                      (raw/proc-NNN.csv before 9)
``checks``       correctness check                                   checks/proc-NNN.csv
``telemetry``    timed sample's device reading (cpu, cuda)           telemetry/proc-NNN.csv
``resources``    launch of a loaded arm (cpu, cuda)                  telemetry/resources-NNN.csv
``processes``    worker process (and held-back slot attempt)        processes.csv
``watch``        host-watch event                                    watch.csv
``outputs``      saved checked output                                outputs/proc-NNN.csv
===============  ==================================================  ========================

Every CSV table is typed from the folder's ``schema.json``, which kgate writes from the
tables its own writers and readers use: this package keeps no copy of the columns. Names
(case, arm, direction, phase, role, verdict, ...) are categoricals, cases and arms in plan
order, the others in the order schema.json gives their values; times are floats; indices
are integers (nullable ``Int64`` where a column may be empty).

pandas is imported when a table is first read, so the rest of the package (running
campaigns, building plans) works without it.
"""
from __future__ import annotations

import csv
import json
import os
import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ._cli import EXIT_FAIL, EXIT_PASS, KgateError, PathLike, run_cli
from .plan import Plan, PlanError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Evidence", "EvidenceError", "SchemaError", "VerifyResult", "SCHEMA_MIN", "SCHEMA_MAX"]

#: The oldest evidence schema this package reads (docs/evidence.md: readers accept schema 1).
SCHEMA_MIN = 1
#: The newest evidence schema this package knows (9: the raw rows gzip'ed, raw/proc-NNN.csv.gz,
#: and no raw/samples.csv; 8: the cpu and process_cpu columns of the raw rows; 7: the library
#: column of resources.csv).
SCHEMA_MAX = 9

#: How each column type of schema.json becomes a pandas column (``_typed``).
_CONVERT = {"integer": "int", "uint64": "uint64", "number": "float", "hex": "hex", "flag": "bool", "utc": "utc",
            "sha256": "sha", "case": "case", "arm": "arm", "enum": "cat", "name": "cat", "text": "str",
            "dim3": "str"}


class EvidenceError(ValueError):
    """Not an evidence folder, or a file of it this package cannot read."""


class SchemaError(EvidenceError):
    """The folder's schema is one this package does not know (newer than SCHEMA_MAX)."""


class VerifyResult:
    """What ``kgate verify`` said: truthy when the folder verified (exit 0).

    Attributes:
        ok: verified.
        returncode: 0 verified, 1 a mismatch.
        stdout: the summary; stderr: one ``MISMATCH`` line per problem.
        mismatches: those lines.
    """

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode = returncode
        self.ok = returncode == EXIT_PASS
        self.stdout = stdout
        self.stderr = stderr
        self.mismatches = [line for line in stderr.splitlines() if "MISMATCH" in line]

    @property
    def output(self) -> str:
        """stdout and stderr together."""
        return self.stdout + self.stderr

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return f"VerifyResult(ok={self.ok}, mismatches={len(self.mismatches)})"


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - pandas is a dependency
        raise ImportError("kgate.Evidence's tables need pandas (pip install pandas)") from e
    return pd


def _read_json(path: Path) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:
        raise EvidenceError(f"{path}: cannot read it as JSON: {e}") from e
    if not isinstance(data, dict):
        raise EvidenceError(f"{path}: not a JSON object")
    return data


def _proc_files(folder: Path, prefix: str) -> List[Tuple[int, Path]]:
    """(process, path) of FOLDER/PREFIXNNN.csv.gz or FOLDER/PREFIXNNN.csv (the raw rows of
    schema 9 and of older folders), in process order; the .gz where a process has both, as
    kgate reads it."""
    if not folder.is_dir():
        return []
    pat = re.compile(re.escape(prefix) + r"(\d{3,})\.csv(\.gz)?")
    found: Dict[int, Path] = {}
    for p in folder.iterdir():
        m = pat.fullmatch(p.name)
        if m and p.is_file() and (m.group(2) or int(m.group(1)) not in found):
            found[int(m.group(1))] = p
    return sorted(found.items())


class Evidence:
    """An evidence folder of ``kgate run`` or ``kgate check``.

    Args:
        folder: the folder (``-o DIR``).
        kgate: the binary :meth:`verify` runs (see :func:`kgate.find_kgate`).

    Raises:
        EvidenceError: the folder has no readable ``meta.json``.
        SchemaError: its schema is newer than this package knows (SCHEMA_MAX).
    """

    def __init__(self, folder: PathLike, *, kgate: Optional[PathLike] = None) -> None:
        self.path = Path(folder)
        self._kgate = kgate
        if not self.path.is_dir():
            raise EvidenceError(f"{self.path}: no such folder")
        try:
            self.meta: Dict[str, Any] = _read_json(self.path / "meta.json")
        except FileNotFoundError:
            raise EvidenceError(f"{self.path}: not an evidence folder (no meta.json)") from None
        self.schema = self._check_schema(self.meta.get("schema"), "meta.json")

    def _check_schema(self, schema: Any, where: str) -> int:
        if not isinstance(schema, int) or isinstance(schema, bool) or schema < SCHEMA_MIN:
            raise EvidenceError(f"{self.path}/{where}: schema {schema!r} is not an evidence schema "
                                f"({SCHEMA_MIN} to {SCHEMA_MAX})")
        if schema > SCHEMA_MAX:
            raise SchemaError(f"{self.path}/{where}: evidence schema {schema}, newer than this kgate package "
                              f"reads ({SCHEMA_MIN} to {SCHEMA_MAX}): install the package of the kgate that "
                              f"wrote it (pip install ./python from that tree)")
        return schema

    def __repr__(self) -> str:
        return f"Evidence({str(self.path)!r}, schema={self.schema})"

    # ---- the files as they are ----

    @cached_property
    def environment(self) -> Dict[str, Any]:
        """environment.json (empty for a folder without it: schema 1, or unfinished)."""
        p = self.path / "environment.json"
        return _read_json(p) if p.is_file() else {}

    @cached_property
    def peaks(self) -> Optional[Dict[str, Any]]:
        """peaks.json, or None (``kgate check`` measures none)."""
        p = self.path / "peaks.json"
        return _read_json(p) if p.is_file() else None

    @cached_property
    def results_json(self) -> Dict[str, Any]:
        """results.json as it is."""
        p = self.path / "results.json"
        if not p.is_file():
            raise EvidenceError(f"{self.path}: no results.json (an unfinished campaign: kgate report DIR "
                                "writes the reports, kgate run --resume DIR PLAN continues it)")
        data = _read_json(p)
        self._check_schema(data.get("schema"), "results.json")
        return data

    @cached_property
    def schema_json(self) -> Dict[str, Any]:
        """schema.json: every CSV kind of the folder, its file and its columns (name, type,
        values, whether it may be empty, meaning), as the kgate that wrote the reports declares
        them."""
        p = self.path / "schema.json"
        if not p.is_file():
            raise EvidenceError(f"{self.path}: no schema.json (a folder of an older kgate, or an unfinished "
                                "campaign): kgate report DIR writes it with the reports")
        data = _read_json(p)
        if not isinstance(data.get("files"), list):
            raise EvidenceError(f"{p}: no list of files")
        return data

    def kind(self, kind: str) -> Dict[str, Any]:
        """schema.json's description of one kind of rows (``raw``, ``checks``, ``telemetry``,
        ``resources``, ``processes``, ``outputs``, ``watch``, ``results``, ``samples``)."""
        for k in self.schema_json["files"]:
            if k.get("kind") == kind:
                return k
        raise EvidenceError(f"{self.path}/schema.json: no kind {kind!r}")

    def columns(self, kind: str) -> List[str]:
        """The column names of a kind, in file order (schema.json)."""
        return [c["name"] for c in self.kind(kind)["columns"]]

    def _values(self, kind: str, column: str) -> List[str]:
        """The values of an enum column (schema.json)."""
        for c in self.kind(kind)["columns"]:
            if c["name"] == column:
                return list(c.get("values", []))
        return []

    @property
    def gate(self) -> Dict[str, Any]:
        """The campaign's outcome from results.json: ``gate_pass``, ``gate_reason``, ``invalid``,
        ``invalid_host``, ``control_valid``, ``order_ok``, ``processes_accepted``, ... (every
        field but the per-pair rows)."""
        return {k: v for k, v in self.results_json.items() if k not in ("results", "variance_components")}

    @property
    def passed(self) -> bool:
        """Whether the gate passed."""
        return bool(self.results_json.get("gate_pass"))

    @cached_property
    def plan_text(self) -> str:
        """plan.kg: the canonical plan that ran."""
        return (self.path / "plan.kg").read_text(encoding="utf-8")

    @cached_property
    def plan_sha256(self) -> str:
        """plan.sha256's hash."""
        return (self.path / "plan.sha256").read_text(encoding="ascii").strip()

    @cached_property
    def plan(self) -> Plan:
        """plan.kg read into a :class:`kgate.Plan` (values as strings)."""
        return Plan.from_text(self.plan_text)

    @cached_property
    def report(self) -> str:
        """report.md."""
        return (self.path / "report.md").read_text(encoding="utf-8")

    @property
    def cases(self) -> List[str]:
        """The plan's cases, in order (variants by their expanded names)."""
        return list(self.plan.cases)

    @property
    def arms(self) -> List[str]:
        """The plan's arms, in order."""
        return list(self.plan.arms)

    def verdict(self, case: str, arm: str) -> str:
        """The verdict of (case, arm) in results.json (``FASTER``, ``INCONCLUSIVE``, ...)."""
        for r in self.results_json.get("results", []):
            if r.get("case") == case and r.get("arm") == arm:
                return str(r.get("verdict"))
        raise KeyError(f"no result for case {case!r}, arm {arm!r}")

    # ---- typing ----

    def _order(self, kind: str) -> List[str]:
        try:
            return self.cases if kind == "case" else self.arms
        except (OSError, PlanError):  # a folder without a readable plan.kg: names in file order
            return []

    def _categorical(self, values: "pd.Series", order: Sequence[str]) -> "pd.Series":
        pd = _pandas()
        v = values.where(values != "", None) if values.dtype == object else values
        seen = [x for x in pd.unique(v.dropna()) if x not in set(order)]
        cats = list(order) + sorted(str(x) for x in seen)
        return pd.Series(pd.Categorical(v, categories=cats), index=values.index, name=values.name)

    def _typed(self, df: "pd.DataFrame", kind: str, where: str) -> "pd.DataFrame":
        """Applies the column types of ``kind`` (schema.json) to a frame of strings; columns
        the schema does not name stay strings."""
        pd = _pandas()
        spec = {c["name"]: c for c in self.kind(kind)["columns"]}
        out = df.copy()
        for col in out.columns:
            c = spec.get(col)
            if c is None:
                continue
            try:
                out[col] = self._convert(out[col], c)
            except (ValueError, TypeError) as e:
                raise EvidenceError(f"{where}: column {col}: {e}") from e
        return out

    def _convert(self, s: "pd.Series", c: Mapping[str, Any]) -> "pd.Series":
        """One column of strings as its schema.json type says."""
        pd = _pandas()
        import numpy as np
        how = _CONVERT.get(c.get("type"), "str")
        if how == "int":
            if c.get("empty") or (s == "").any():
                return pd.Series(pd.array([None if x == "" else int(x) for x in s], dtype="Int64"), index=s.index)
            return s.astype("int64")
        if how == "uint64":
            return pd.Series([np.uint64(int(x)) for x in s], index=s.index, dtype="uint64")
        if how == "float":
            return s.where(s != "", "nan").astype("float64")
        if how == "hex":
            return pd.Series([int(x, 16) for x in s], index=s.index, dtype="int64")
        if how == "bool":
            bad = ~s.isin(["0", "1"])
            if bad.any():
                raise ValueError(f"not 0 or 1: {s[bad].iloc[0]!r}")
            return s == "1"
        if how == "utc":
            return pd.to_datetime(s, utc=True)
        if how == "sha":
            return s.where(~s.isin(["-", ""]), None)
        if how in ("case", "arm"):
            return self._categorical(s, self._order(how))
        if how == "cat":
            return self._categorical(s, list(c.get("values", [])))
        return s

    def _read_csv(self, path: Path) -> "pd.DataFrame":
        """A CSV file as strings; NAME.csv.gz decompressed (pandas infers gzip from the name)."""
        pd = _pandas()
        try:
            return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
        except pd.errors.EmptyDataError:
            raise EvidenceError(f"{path}: an empty file (no header)") from None
        except (OSError, ValueError) as e:
            raise EvidenceError(f"{path}: {e}") from e

    def _empty(self, kind: str) -> "pd.DataFrame":
        pd = _pandas()
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in self.columns(kind)})

    def _files(self, kind: str) -> List[Tuple[int, Path]]:
        """(process, path) of every file of a per-process kind, by its schema.json pattern
        (``raw/proc-NNN.csv.gz``, ``checks/proc-NNN.csv``), in process order."""
        sub, _, name = self.kind(kind)["file"].rpartition("/")
        prefix, nnn, suffix = name.partition("NNN")
        if not nnn or suffix not in (".csv", ".csv.gz"):
            raise EvidenceError(f"{self.path}/schema.json: {kind}'s file is not one per process")
        return _proc_files(self.path / sub, prefix)

    def _read_procs(self, kind: str, only: Optional[Sequence[int]] = None) -> "pd.DataFrame":
        pd = _pandas()
        frames = []
        for proc, p in self._files(kind):
            if only is not None and proc not in only:
                continue
            frames.append(self._read_csv(p))
        raw = pd.concat(frames, ignore_index=True) if frames else self._empty(kind)
        return self._typed(raw, kind, f"{self.path}/{self.kind(kind)['file']}")

    # ---- the tables ----

    @cached_property
    def processes(self) -> "pd.DataFrame":
        """processes.csv, one row per started worker (and held-back slot attempt). Folders of
        schema 1 have no ``slot`` and ``attempt``: they read as ``slot`` = ``process``,
        ``attempt`` = 0, as kgate reads them."""
        path = self.path / self.kind("processes")["file"]
        if not path.is_file():
            raise EvidenceError(f"{self.path}: no processes.csv")
        df = self._read_csv(path)
        if "slot" not in df.columns:
            df["slot"] = df["process"]
        if "attempt" not in df.columns:
            df["attempt"] = "0"
        return self._typed(df, "processes", str(path))

    def accepted_processes(self) -> List[int]:
        """The process indices the analysis uses (``accepted`` = 1)."""
        p = self.processes
        return [int(x) for x in p.loc[p["accepted"], "process"]]

    @cached_property
    def raw(self) -> "pd.DataFrame":
        """Every raw/proc-NNN.csv.gz (every process that completed, accepted or not), with
        ``accepted`` from processes.csv. ``cpu`` is the CPU a sample ran on and ``process_cpu``
        the one CPU its process was pinned to (cpu backend; -1: not recorded, not pinned, and
        absent in folders before schema 8): a row where they differ is a contaminated sample,
        which the analysis and ``samples`` leave out."""
        df = self._read_procs("raw")
        acc = set(self.accepted_processes())
        df["accepted"] = df["process"].isin(acc).astype(bool)
        return df

    @cached_property
    def samples(self) -> "pd.DataFrame":
        """Every timed sample of the accepted processes in one tidy table:
        ``process, slot, direction, round, case, op, dtype, arm, role, sample, ns``; the samples
        the analysis uses, so not the contaminated ones (see ``raw``): the table
        ``kgate report DIR --samples FILE`` writes, row for row.

        Made from processes.csv, the accepted processes' raw files and the plan, in the order
        kgate reads them (process, then the file's rows); a merged folder's from its shards in
        turn, processes and slots offset as kgate offsets them (shards by process: the shards'
        processes in schedule order, renumbered). A folder of schemas 6 to 8
        that kept raw/samples.csv is read from that file."""
        f = self.kind("samples")["file"]
        path = self.path / f if f else None
        if path is not None and path.is_file():
            return self._typed(self._read_csv(path), "samples", str(path))
        return self._assemble_samples()

    def _assemble_samples(self) -> "pd.DataFrame":
        """The tidy samples table made from the per-process files (of each shard of a merged
        folder), typed by this folder's schema.json."""
        pd = _pandas()
        merged = self.meta.get("merged")
        if isinstance(merged, dict) and merged.get("shards") and self._by_process(int(merged["shards"])):
            df = self._schedule_samples(int(merged["shards"]))
        elif isinstance(merged, dict) and merged.get("shards"):
            frames, poff, soff = [], 0, 0
            per_shard = 2 * int(self.plan.campaign.get("processes", 0))
            for i in range(int(merged["shards"])):
                shard = Evidence(self.path / "shards" / str(i), kgate=self._kgate)
                frames.append(shard._sample_strings(poff, soff))
                poff += len(shard.processes)
                soff += per_shard
            df = pd.concat(frames, ignore_index=True) if frames else self._empty("samples")
        else:
            df = self._sample_strings(0, 0)
        return self._typed(df, "samples", f"{self.path}/raw")

    def _by_process(self, n: int) -> bool:
        """Whether this merged folder's n shards are shards of processes (meta.json's
        ``shard.by`` of shards/0)."""
        if n < 1:
            return False
        shard = Evidence(self.path / "shards" / "0", kgate=self._kgate)
        rec = shard.meta.get("shard")
        return isinstance(rec, dict) and rec.get("by") == "process"

    def _schedule_samples(self, n: int) -> "pd.DataFrame":
        """The samples of a merged folder of shards by process, as kgate reads it: every
        shard's processes in schedule order (by the process index their seeds took: slot +
        attempt x the schedule's slots), numbered 0, 1, ... in that order, each process's rows
        in its file's order (docs/scale-out.md, "Shards by process")."""
        pd = _pandas()
        nslots = 2 * int(self.plan.campaign.get("processes", 0))
        shards = [Evidence(self.path / "shards" / str(i), kgate=self._kgate) for i in range(n)]
        order = []
        for i, shard in enumerate(shards):
            procs = shard.processes
            for p, slot, attempt in zip(procs["process"], procs["slot"], procs["attempt"]):
                order.append((int(slot) + int(attempt) * nslots, i, int(p)))
        order.sort()
        index = {(i, p): m for m, (_, i, p) in enumerate(order)}
        frames = []
        for i, shard in enumerate(shards):
            df = shard._sample_strings(0, 0)
            df["process"] = df["process"].astype(int).map(lambda p, i=i: index[(i, p)])
            frames.append(df)
        if not frames:
            return self._empty("samples")
        df = pd.concat(frames, ignore_index=True)
        df = df.sort_values("process", kind="mergesort").reset_index(drop=True)
        df["process"] = df["process"].astype(str)
        return df

    def _sample_strings(self, poff: int, soff: int) -> "pd.DataFrame":
        """This folder's samples as strings, process indices and slots offset by poff and soff:
        the accepted processes' raw rows, less the contaminated ones (a sample on a CPU other
        than its pinned process's), joined with the slots and the plan's ops, dtypes and roles."""
        pd = _pandas()
        procs = self.processes
        accepted = procs.loc[procs["accepted"]]
        slot = dict(zip(accepted["process"].astype(int), accepted["slot"].astype(int) + soff))
        raw = self._read_procs("raw", only=list(slot))
        if "process_cpu" in raw.columns and len(raw):
            pin = pd.to_numeric(raw["process_cpu"])
            raw = raw.loc[~((pin >= 0) & (pd.to_numeric(raw["cpu"]) != pin))].reset_index(drop=True)
        plan = self.plan
        op = {name: str(keys.get("op", "")) for name, keys in plan.cases.items()}
        dtype = {name: str(keys.get("dtype", "")) for name, keys in plan.cases.items()}
        role = {name: str(keys.get("role", "candidate")) for name, keys in plan.arms.items()}
        case = raw["case"].astype(str)
        arm = raw["arm"].astype(str)
        proc = raw["process"].astype(int)
        return pd.DataFrame({
            "process": (proc + poff).astype(str),
            "slot": proc.map(slot).astype(str),
            "direction": raw["direction"].astype(str),
            "round": raw["round"].astype(str),
            "case": case,
            "op": case.map(op),
            "dtype": case.map(dtype),
            "arm": arm,
            "role": arm.map(role),
            "sample": raw["sample"].astype(str),
            "ns": raw["ns"].map(lambda x: f"{x:.3f}"),
        }, columns=self.columns("samples"))

    @cached_property
    def checks(self) -> "pd.DataFrame":
        """Every check of every process (checks/proc-NNN.csv), with ``passed`` (bool) and
        ``accepted`` (the process's) added. ``arm`` is missing (NaN) for a check of the
        case itself."""
        df = self._read_procs("checks")
        df["passed"] = (df["result"] == "pass").astype(bool)
        acc = set(self.accepted_processes())
        df["accepted"] = df["process"].isin(acc).astype(bool)
        return df

    @cached_property
    def telemetry(self) -> "pd.DataFrame":
        """telemetry/proc-NNN.csv: per timed sample, clocks, power, temperature, NVML's clock
        event reasons (as an integer), foreign processes, escapes. Empty where the backend
        reports none (fake); -1 and NaN where it cannot say (cpu)."""
        return self._read_procs("telemetry")

    @cached_property
    def resources(self) -> "pd.DataFrame":
        """telemetry/resources-NNN.csv: per launch of each loaded arm, registers, shared and
        local bytes, geometry (``grid``/``block`` as written, ``AxBxC``), image size and
        hash, sandbox."""
        return self._read_procs("resources")

    @cached_property
    def watch(self) -> "pd.DataFrame":
        """watch.csv: the host watch's events (schema 4 and later; empty before)."""
        path = self.path / self.kind("watch")["file"]
        if not path.is_file():
            return self._typed(self._empty("watch"), "watch", str(path))
        return self._typed(self._read_csv(path), "watch", str(path))

    @cached_property
    def outputs(self) -> "pd.DataFrame":
        """outputs/proc-NNN.csv: the index of the saved checked outputs. The 11-column
        index of schemas 2 to 4 reads with ``stored`` = ``bytes`` and ``encoding`` = ``raw``."""
        pd = _pandas()
        frames = []
        for _, p in self._files("outputs"):
            f = self._read_csv(p)
            if "stored" not in f.columns:
                f["stored"] = f["bytes"]
                f["encoding"] = "raw"
                f["sha256"] = ""
            frames.append(f)
        df = pd.concat(frames, ignore_index=True) if frames else self._empty("outputs")
        return self._typed(df, "outputs", f"{self.path}/{self.kind('outputs')['file']}")

    @cached_property
    def results(self) -> "pd.DataFrame":
        """results.json's rows, one per (case, arm): role, state, verdict, contract, times,
        reductions, wins, and the contrast's ``effect`` fields (``reduction``,
        ``reduction_lower``, ``reduction_upper``, ``p_value``, ...) as columns of their own;
        ``clocks`` fields as ``clocks_*``. Missing values are NaN (or <NA>)."""
        pd = _pandas()
        rows = [_flatten(r) for r in self.results_json.get("results", [])]
        if not rows:
            return pd.DataFrame({c: pd.Series([], dtype=object) for c in ("case", "arm", "role", "state", "verdict")})
        df = _json_frame(rows)
        for col in ("role", "state", "verdict"):
            if col in df.columns:
                df[col] = self._categorical(df[col].astype(object), self._values("results", col))
        for col in ("case", "arm"):
            df[col] = self._categorical(df[col].astype(object), self._order(col))
        if "baseline" in df.columns:
            df["baseline"] = self._categorical(df["baseline"].astype(object).where(df["baseline"].notna(), ""),
                                               self.arms)
        return df

    @cached_property
    def variance_components(self) -> "pd.DataFrame":
        """results.json's variance components, one row per (case, arm); the contrast's as
        ``contrast_*`` columns."""
        pd = _pandas()
        rows = [_flatten(r) for r in self.results_json.get("variance_components", [])]
        if not rows:
            return pd.DataFrame({c: pd.Series([], dtype=object) for c in ("case", "arm", "role")})
        df = _json_frame(rows)
        for col in ("case", "arm"):
            if col in df.columns:
                df[col] = self._categorical(df[col].astype(object), self._order(col))
        if "role" in df.columns:
            df["role"] = self._categorical(df["role"].astype(object), self._values("results", "role"))
        return df

    # ---- kgate verify ----

    def verify(self, key: Optional[PathLike] = None, *, kgate: Optional[PathLike] = None,
               allow_env: Sequence[str] = ()) -> VerifyResult:
        """Runs ``kgate verify`` on the folder (``--key PUB`` when given): a VerifyResult, truthy
        when the folder verified.  ``allow_env`` (with ``key``): the signing run's unattested
        variables to accept (``--allow-env NAME,...``; docs/evidence.md, "Signature").

        Raises:
            KgateError: kgate ended with another status than 0 or 1 (not an evidence folder,
                a usage error).
        """
        argv = ["verify", str(self.path)]
        if key is not None:
            argv += ["--key", os.fspath(key)]
        if allow_env:
            argv += ["--allow-env", ",".join(allow_env)]
        cp = run_cli(argv, kgate=kgate or self._kgate)
        if cp.returncode not in (EXIT_PASS, EXIT_FAIL):
            raise KgateError(f"kgate verify {self.path}: exit {cp.returncode}", returncode=cp.returncode,
                             argv=cp.args, stdout=cp.stdout, stderr=cp.stderr)
        return VerifyResult(cp.returncode, cp.stdout, cp.stderr)


def _flatten(obj: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    """One results.json row as flat columns: ``effect`` without a prefix (as results.csv
    names them), other nested objects with theirs (``clocks_recorded``, ``clocks_cycles_theta``)."""
    out: Dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            inner = "" if (k == "effect" and not prefix) else f"{prefix}{k}_"
            for k2, v2 in _flatten(v, inner).items():
                if k2 in out:
                    k2 = f"{prefix}{k}_{k2[len(inner):]}"
                out[k2] = v2
        else:
            out[prefix + k] = v
    return out


def _json_frame(rows: Sequence[Mapping[str, Any]]) -> "pd.DataFrame":
    """Rows of JSON objects as a frame, columns in first-seen order, each typed by
    :func:`_json_column` from the values as JSON gave them."""
    pd = _pandas()
    cols: Dict[str, None] = {}
    for r in rows:
        for k in r:
            cols.setdefault(k, None)
    return pd.DataFrame({c: _json_column([r.get(c) for r in rows]) for c in cols})


def _json_column(values: List[Any]) -> "pd.Series":
    """A column of JSON values with a sensible dtype: bool (nullable ``boolean`` where some
    are missing), int (``Int64`` likewise), float (NaN where missing), else object."""
    pd = _pandas()
    vals = [v for v in values if v is not None]
    if not vals:
        return pd.Series([float("nan")] * len(values), dtype="float64")
    if all(isinstance(v, bool) for v in vals):
        return pd.Series(pd.array(values, dtype="boolean")) if len(vals) < len(values) else \
            pd.Series(values, dtype=bool)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return pd.Series(pd.array(values, dtype="Int64")) if len(vals) < len(values) else \
            pd.Series(values, dtype="int64")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return pd.Series([float("nan") if v is None else float(v) for v in values], dtype="float64")
    return pd.Series(values, dtype=object)


def count_checks(folder: PathLike) -> Tuple[int, List[Dict[str, str]]]:
    """The number of check rows in FOLDER/checks and the failed ones (as dicts), read with
    the csv module (no pandas)."""
    n = 0
    failed: List[Dict[str, str]] = []
    for _, p in _proc_files(Path(folder) / "checks", "proc-"):
        with open(p, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                n += 1
                if row.get("result") == "fail":
                    failed.append(dict(row))
    return n, failed
