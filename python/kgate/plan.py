"""Plans from Python: dicts to kgate's INI plan format (docs/plan-format.md).

A generated candidate needs no hand-written INI::

    plan = kgate.Plan(
        campaign={"name": "rowsum-sweep", "backend": "cpu", "quiet": 0, "margin": "2%"},
        cases={"r": {"op": "rowsum", "dtype": "f32", "M": 256, "N": [1024, 4096]}},
        arms={"naive": {"op": "rowsum", "role": "baseline", "source": "kernels/cpu/rowsum_naive.c"},
              "cand": {"op": "rowsum", "source": "gen/cand.c", "defines": {"UNROLL": [4, 8]}}},
        gate={"min_reduction": "2%"},
    )
    plan.write("gen/sweep.kg")

Values:

=================  ===================================================================
Python value       plan text
=================  ===================================================================
``True/False``     ``yes`` / ``no``
``int``            decimal
``float``          the shortest text that reads back exactly (``repr``); inf/NaN refused
``str``            as written (``"2%"``, ``"ceildiv(N, 16)"``)
``list``           an axis ``{a, b, c}`` on keys that take one, a declared op's
                   variables among them (docs/plan-format.md, "Axes"); on ``cases``,
                   ``forbid`` and ``args`` the comma-separated list
``tuple``          the key's own list: ``grid``/``block``/``args`` joined by ``", "``,
                   ``defines``/``cflags`` by blanks, ``cases``/``forbid`` by commas
``dict``           ``defines`` only: ``{"TILE": 32, "PIPE": [0, 1], "FAST": True}`` is
                   ``TILE=32 PIPE={0, 1} FAST`` (a list is a named axis; ``False`` leaves
                   the define out)
``Axis([...])``    an axis, explicitly
=================  ===================================================================

A key ``"#"`` in any section (a string or a list of strings) is written as comment
lines at the top of that section. kgate remains the authority on what a plan means:
:meth:`Plan.canonical` asks ``kgate freeze`` for the canonical text and its hash.
"""
from __future__ import annotations

import math
import os
import re
import textwrap
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, MutableMapping, Optional, Tuple, Union

from ._cli import KgateError, PathLike, run_cli

__all__ = ["Plan", "Axis", "PlanError"]


class PlanError(ValueError):
    """A plan that this builder cannot write as kgate's plan format (a bad name, key
    or value), or plan text it cannot read."""


class Axis(list):  # type: ignore[type-arg]
    """An axis: the section stands for one variant per value (``{a, b, c}``)."""


#: Keys of [case] that take an axis; so does every variable of a declared op (any key
#: outside CASE_KEYS, e.g. ``"S": [512, 1024]``).
CASE_AXIS_KEYS = frozenset({"dtype", "M", "N", "K", "splits", "eps", "scale"})
#: The keys of [case] in kgate's key table; any other key is a variable of the case's op.
CASE_KEYS = CASE_AXIS_KEYS | {"op", "primary"}
#: Keys of [arm] that take an axis (and every ``fake_`` key).
ARM_AXIS_KEYS = frozenset({"entry", "defines", "cflags", "grid", "block", "shared", "args",
                           "entry2", "grid2", "block2", "shared2", "args2",
                           "entry3", "grid3", "block3", "shared3", "args3",
                           "precision", "tolerance", "specialize"})
#: Keys whose value names a plan object or an op (docs/plan-format.md, "Names").
NAME_KEYS = {"campaign": {"name", "reference"}, "case": {"op"}, "arm": {"op", "of", "builtin", "parity"}}
#: Keys holding a path relative to the plan's folder.
PATH_KEYS = {"arm": {"source", "image"}, "op": {"source"}}
#: Keys whose ``python:FILE:FUNCTION`` value holds a path relative to the plan's folder
#: (a Python-declared op's reference, a library arm's call; docs/ops.md, docs/library-arms.md).
PYTHON_KEYS = {"arm": {"call"}, "op": {"reference"}}
#: The keys of a Python-declared op (``reference = python:FILE:FUNCTION``).
PY_OP_KEYS = frozenset({"reference", "tensors", "vars", "inputs", "outputs", "requires", "flops", "bytes",
                        "heldout", "bound", "rtol", "atol"})
#: How a tuple (or, where said, a list) joins on a key.
JOIN = {"grid": ", ", "block": ", ", "args": ", ", "grid2": ", ", "block2": ", ", "args2": ", ",
        "grid3": ", ", "block3": ", ", "args3": ", ", "defines": " ", "cflags": " ",
        "cases": ",", "forbid": ",", "vars": " ", "inputs": " ", "outputs": " ", "heldout": " "}
#: Keys where a plain list is the key's own list, not an axis.
LIST_IS_JOINED = frozenset({"cases", "forbid", "args", "args2", "args3", "vars", "inputs", "outputs", "heldout"})
_PY_REF = re.compile(r"python:(.+\.py):([A-Za-z_][A-Za-z0-9_]*)")

_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,63}")
_VARIANT = re.compile(r"[A-Za-z0-9_.\-]+\[[^\[\]\n]+\]")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AXIS_VALUE = re.compile(r"[A-Za-z0-9_.\-+]+")
#: What a quoted axis value may hold: printable ASCII but '"', '{' and '}'.
_QUOTED_VALUE = re.compile(r'[ !#-z|~]+')
_DEFINE_NAME = re.compile(r"-?-?[A-Za-z_][A-Za-z0-9_]*")
MAX_LINE = 196
MAX_VALUE = 160
SECTION_KINDS = ("campaign", "op", "case", "arm", "gate")


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str):
        raise PlanError(f"{what}: a name must be a string, not {type(name).__name__}")
    if len(name) > 63 or not (_NAME.fullmatch(name) or _VARIANT.fullmatch(name)):
        raise PlanError(f"{what}: bad name {name!r} (1 to 63 characters from A-Z a-z 0-9 _ . -, "
                        "or a variant's expanded name BASE[AXIS=VALUE,...])")
    return name


def _scalar(value: Any, where: str) -> str:
    """One value as plan text."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # a numpy scalar
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PlanError(f"{where}: {value!r} is not a plan number (no inf or NaN)")
        return repr(value)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise PlanError(f"{where}: an empty value (leave the key out instead)")
        return text
    raise PlanError(f"{where}: cannot write a {type(value).__name__} as a plan value")


def _axis(values: Iterable[Any], where: str) -> str:
    items = [_scalar(v, where) for v in values]
    if not items:
        raise PlanError(f"{where}: an empty axis")
    words = []
    for it in items:
        if _AXIS_VALUE.fullmatch(it):
            words.append(it)
        elif _QUOTED_VALUE.fullmatch(it):
            words.append(f'"{it}"')  # a value with blanks or '=': quoted, '_' for them in the name
        else:
            raise PlanError(f"{where}: axis value {it!r} has characters a quoted value cannot hold "
                            "('\"', '{', '}' or one that is not printable ASCII)")
    names = [re.sub(r"[^A-Za-z0-9_.\-+]", "_", it) for it in items]
    if len(set(names)) != len(names):
        raise PlanError(f"{where}: a value listed twice in an axis (or two that give one variant name): {items}")
    return "{" + ", ".join(words) + "}"


def _defines(value: Mapping[str, Any], where: str) -> str:
    words: List[str] = []
    for name, v in value.items():
        if not isinstance(name, str) or not _DEFINE_NAME.fullmatch(name):
            raise PlanError(f"{where}: bad define name {name!r}")
        if v is None or v is True:
            words.append(name)
        elif v is False:
            continue
        elif isinstance(v, list):
            words.append(f"{name}={_axis(v, where + ' ' + name)}")
        else:
            text = _scalar(v, where + " " + name)
            if re.search(r"\s", text):
                raise PlanError(f"{where}: define {name} = {text!r} holds a blank")
            words.append(f"{name}={text}")
    if not words:
        raise PlanError(f"{where}: no defines left to write")
    return " ".join(words)


def format_value(kind: str, key: str, value: Any, where: str = "") -> str:
    """The plan text of ``key = value`` in a section of ``kind`` ("campaign", "case",
    "arm", "op", "gate"), following the table in this module's docstring."""
    where = where or f"[{kind}] {key}"
    takes_axis = (kind == "case" and (key in CASE_AXIS_KEYS or key not in CASE_KEYS)) or \
                 (kind == "arm" and (key in ARM_AXIS_KEYS or key.startswith("fake_")))
    if isinstance(value, Axis):
        if not takes_axis:
            raise PlanError(f"{where}: this key takes no axis")
        return _axis(value, where)
    if isinstance(value, dict):
        if kind == "arm" and key == "defines":
            return _defines(value, where)
        raise PlanError(f"{where}: a dict is only for defines")
    if isinstance(value, list) and key in LIST_IS_JOINED and key in JOIN:
        return JOIN[key].join(_scalar(v, where) for v in value)
    if isinstance(value, list):
        if not takes_axis:
            raise PlanError(f"{where}: this key takes no axis (a list is an axis; "
                            "axes are for the keys docs/plan-format.md lists under Axes)")
        return _axis(value, where)
    if isinstance(value, tuple):
        if key not in JOIN:
            raise PlanError(f"{where}: this key takes no list")
        parts = [_axis(v, where) if isinstance(v, Axis) else _scalar(v, where) for v in value]
        return JOIN[key].join(parts)
    return _scalar(value, where)


def _check_text(line: str, value: str, where: str) -> None:
    if any(ord(c) < 32 and c != "\t" for c in value) or "\x7f" in value:
        raise PlanError(f"{where}: a control character or line break in {value!r}")
    if value.startswith((";", "#")):
        raise PlanError(f"{where}: a value may not start with ';' or '#' (it would be a comment): {value!r}")
    if re.search(r"[ \t][;#]", value):
        raise PlanError(f"{where}: ' ;' or ' #' in {value!r} would start a comment")
    if len(value) > MAX_VALUE:
        raise PlanError(f"{where}: the value is {len(value)} characters; a plan value holds at most {MAX_VALUE}")
    if len(line) > MAX_LINE:
        raise PlanError(f"{where}: the line is {len(line)} characters; a plan line holds at most {MAX_LINE}")


def _comment_lines(comment: Any, where: str) -> List[str]:
    if comment is None:
        return []
    parts = [comment] if isinstance(comment, str) else list(comment)
    out: List[str] = []
    for p in parts:
        for line in str(p).splitlines() or [""]:
            if any(ord(c) < 32 and c != "\t" for c in line):
                raise PlanError(f"{where}: a control character in a comment")
            for piece in textwrap.wrap(line, MAX_LINE - 6) or [""]:
                out.append(("# " + piece).rstrip())
    return out


Section = Dict[str, Any]


class Plan:
    """A kgate plan built from dicts: ``[campaign]``, ``[op NAME]``, ``[case NAME]``,
    ``[arm NAME]`` and ``[gate]``, written in that order, keys in the order given.

    Args:
        campaign: the ``[campaign]`` keys (docs/plan-format.md); None for all defaults.
        cases: case name -> its keys (``op`` and ``dtype`` required).
        arms: arm name -> its keys (``op`` required).
        gate: the ``[gate]`` keys; None for all defaults.
        ops: declared ops, name -> keys: ``source`` (a C module, docs/ops.md), or
            ``reference = "python:FILE.py:FUNCTION"`` with ``inputs``, ``outputs`` and the
            other keys of a Python-declared op (``tensors``, ``vars``, ``requires``,
            ``flops``, ``bytes``, ``heldout``, ``bound``, ``rtol``, ``atol``).
        comment: text written as ``#`` lines at the top of the plan.
        base: the folder that relative ``source`` and ``image`` paths are relative to
            when the plan is written somewhere (:meth:`write`); default: the current
            folder at the time of writing (for a plan read from a file: its folder).

    Raises:
        PlanError: a bad name, key or value (each checked when the text is made, too).
    """

    def __init__(self, campaign: Optional[Mapping[str, Any]] = None,
                 cases: Optional[Mapping[str, Mapping[str, Any]]] = None,
                 arms: Optional[Mapping[str, Mapping[str, Any]]] = None,
                 gate: Optional[Mapping[str, Any]] = None,
                 ops: Optional[Mapping[str, Mapping[str, Any]]] = None, *,
                 comment: Optional[Union[str, Iterable[str]]] = None,
                 base: Optional[PathLike] = None) -> None:
        self.campaign: Section = dict(campaign or {})
        self.cases: Dict[str, Section] = {}
        self.arms: Dict[str, Section] = {}
        self.ops: Dict[str, Section] = {}
        self.gate: Section = dict(gate or {})
        self.comment = comment
        self.base: Optional[Path] = None if base is None else Path(base)
        for name, keys in (ops or {}).items():
            self.add_op(name, **keys)
        for name, keys in (cases or {}).items():
            self.add_case(name, **keys)
        for name, keys in (arms or {}).items():
            self.add_arm(name, **keys)

    # ---- building ----

    def add_case(self, name: str, **keys: Any) -> "Plan":
        """Adds ``[case NAME]`` (``op`` and ``dtype`` required); returns the plan."""
        _check_name(name, "case name")
        if name in self.cases:
            raise PlanError(f"duplicate case {name!r}")
        self.cases[name] = dict(keys)
        return self

    def add_arm(self, name: str, **keys: Any) -> "Plan":
        """Adds ``[arm NAME]`` (``op`` required); returns the plan."""
        _check_name(name, "arm name")
        if name in self.arms:
            raise PlanError(f"duplicate arm {name!r}")
        self.arms[name] = dict(keys)
        return self

    def add_op(self, name: str, **keys: Any) -> "Plan":
        """Adds ``[op NAME]`` (a declared op: ``source`` or ``reference``); returns the plan."""
        _check_name(name, "op name")
        if name in self.ops:
            raise PlanError(f"duplicate op {name!r}")
        self.ops[name] = dict(keys)
        return self

    def copy(self) -> "Plan":
        """A copy whose sections can be changed without changing this plan."""
        p = Plan(campaign=self.campaign, gate=self.gate, comment=self.comment, base=self.base)
        p.cases = {k: dict(v) for k, v in self.cases.items()}
        p.arms = {k: dict(v) for k, v in self.arms.items()}
        p.ops = {k: dict(v) for k, v in self.ops.items()}
        return p

    @property
    def name(self) -> Optional[str]:
        """The campaign's name, when the plan sets one."""
        n = self.campaign.get("name")
        return None if n is None else str(n)

    # ---- checks ----

    def _validate(self) -> None:
        if not self.cases:
            raise PlanError("a plan needs at least one case")
        if not self.arms:
            raise PlanError("a plan needs at least one arm")
        for name, keys in self.cases.items():
            for req in ("op", "dtype"):
                if req not in keys:
                    raise PlanError(f"[case {name}]: missing {req}")
        for name, keys in self.arms.items():
            if "op" not in keys:
                raise PlanError(f"[arm {name}]: missing op")
            of = keys.get("of")
            if of is not None and of not in self.arms:
                raise PlanError(f"[arm {name}]: of = {of!r} names no arm of this plan")
            cases = keys.get("cases")
            if cases is not None:
                items = cases if isinstance(cases, (list, tuple)) else _split_cases(str(cases))
                for item in items:
                    item = str(item).strip()
                    base = item.split("[", 1)[0]
                    if item not in self.cases and base not in self.cases:
                        raise PlanError(f"[arm {name}]: cases names {item!r}, which is no case of this plan")
        for name, keys in self.ops.items():
            _validate_op(name, keys)
        for name, keys in self.arms.items():
            call = keys.get("call")
            if call is not None:
                if keys.get("builtin") is None:
                    raise PlanError(f"[arm {name}]: call = {call!r} is a library arm's call: it needs builtin = "
                                    "torch or numpy")
                if str(call).startswith("python:") and not _PY_REF.fullmatch(str(call)):
                    raise PlanError(f"[arm {name}]: call = {call!r}: a Python call is python:FILE.py:FUNCTION "
                                    "(FILE relative to the plan's folder)")
        ref = self.campaign.get("reference")
        if ref is not None and ref not in self.arms and str(ref).split("[", 1)[0] not in self.arms:
            raise PlanError(f"[campaign] reference = {ref!r} names no arm of this plan")

    # ---- text ----

    def _section_lines(self, kind: str, header: str, keys: Mapping[str, Any],
                       rebase: Optional[Tuple[Path, Optional[Path]]]) -> List[str]:
        lines = [header]
        where0 = header
        lines[1:1] = _comment_lines(keys.get("#"), where0)
        for key, value in keys.items():
            if key == "#":
                continue
            if not isinstance(key, str) or not _KEY.fullmatch(key):
                raise PlanError(f"{where0}: bad key {key!r} (a letter or _, then letters, digits, _)")
            if value is None:
                continue
            where = f"{where0} {key}"
            if key in NAME_KEYS.get(kind, ()):
                _check_name(value, where)
            if rebase is not None and key in PATH_KEYS.get(kind, ()) and isinstance(value, (str, os.PathLike)):
                value = _rebase(os.fspath(value), *rebase)
            if rebase is not None and key in PYTHON_KEYS.get(kind, ()) and isinstance(value, str):
                m = _PY_REF.fullmatch(value.strip())
                if m is not None:
                    value = f"python:{_rebase(m.group(1), *rebase)}:{m.group(2)}"
            text = format_value(kind, key, value, where)
            line = f"{key} = {text}"
            _check_text(line, text, where)
            lines.append(line)
        return lines

    def _text(self, rebase: Optional[Tuple[Path, Optional[Path]]]) -> str:
        self._validate()
        out: List[str] = _comment_lines(self.comment, "plan comment")
        blocks: List[List[str]] = []
        if self.campaign:
            if "name" in self.campaign:
                _check_name(self.campaign["name"], "[campaign] name")
            blocks.append(self._section_lines("campaign", "[campaign]", self.campaign, rebase))
        for name, keys in self.ops.items():
            blocks.append(self._section_lines("op", f"[op {name}]", keys, rebase))
        for name, keys in self.cases.items():
            blocks.append(self._section_lines("case", f"[case {name}]", keys, rebase))
        for name, keys in self.arms.items():
            blocks.append(self._section_lines("arm", f"[arm {name}]", keys, rebase))
        if self.gate:
            blocks.append(self._section_lines("gate", "[gate]", self.gate, rebase))
        for i, b in enumerate(blocks):
            if out or i:
                out.append("")
            out.extend(b)
        return "\n".join(out) + "\n"

    def text(self) -> str:
        """The plan in kgate's plan format. Paths are written as given: kgate reads them
        relative to the folder of the file the text is saved in (:meth:`write` rebases
        them)."""
        return self._text(None)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return (f"Plan(name={self.name!r}, cases={list(self.cases)}, arms={list(self.arms)}, "
                f"ops={list(self.ops)})")

    def write(self, path: PathLike, *, rebase: bool = True, absolute: bool = False) -> Path:
        """Writes the plan to ``path`` and returns it.

        Args:
            rebase: relative ``source`` and ``image`` paths are taken relative to
                ``self.base`` (default: the current folder) and rewritten relative to the
                plan file's folder, which is how kgate reads them. False writes them as
                given.
            absolute: write the rebased paths absolute instead of relative.
        """
        path = Path(path)
        folder = Path(os.path.abspath(path)).parent
        base = Path(os.path.abspath(self.base or Path.cwd()))
        text = self._text((base, None if absolute else folder) if rebase else None)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        return path

    def canonical(self, kgate: Optional[PathLike] = None) -> Tuple[str, str]:
        """The canonical plan kgate would run, and its SHA-256: ``(sha256, text)`` from
        ``kgate freeze`` (paths written absolute, as :func:`kgate.run` writes them).

        Raises:
            KgateError: kgate refused the plan (its message names the line and the fix).
        """
        with tempfile.TemporaryDirectory(prefix="kgate-plan-") as d:
            p = self.write(Path(d) / f"{self.name or 'plan'}.kg", absolute=True)
            frozen = Path(d) / "plan.frozen"
            cp = run_cli(["freeze", str(p), "-o", str(frozen)], kgate=kgate)
            if cp.returncode != 0:
                raise KgateError(f"kgate freeze refused the plan (exit {cp.returncode})", returncode=cp.returncode,
                                 argv=cp.args, stdout=cp.stdout, stderr=cp.stderr)
            text = frozen.read_text(encoding="utf-8")
        first, _, rest = text.partition("\n")
        m = re.fullmatch(r"# kgate frozen plan sha256 ([0-9a-f]{64})", first)
        if m is None:
            raise KgateError("kgate freeze wrote no header line", stdout=cp.stdout, stderr=cp.stderr)
        return m.group(1), rest

    # ---- reading ----

    @classmethod
    def from_text(cls, text: str, *, base: Optional[PathLike] = None) -> "Plan":
        """Reads plan text (a hand-written plan, or an evidence folder's ``plan.kg``) into a
        Plan whose values are the strings as written (comments dropped)."""
        plan = cls(base=base)
        section: Optional[MutableMapping[str, Any]] = None
        if text.startswith("\ufeff"):
            text = text[1:]
        for n, raw in enumerate(text.splitlines(), 1):
            line = _strip_comment(raw).strip()
            if not line:
                continue
            if line.startswith("["):
                if not line.endswith("]"):
                    raise PlanError(f"line {n}: unterminated section header {raw!r}")
                inner = line[1:-1].strip()
                kind, _, name = inner.partition(" ")
                name = name.strip()
                if kind in ("campaign", "gate") and not name:
                    section = plan.campaign if kind == "campaign" else plan.gate
                elif kind in ("case", "arm", "op") and name:
                    table = {"case": plan.cases, "arm": plan.arms, "op": plan.ops}[kind]
                    if name in table:
                        raise PlanError(f"line {n}: duplicate {kind} {name!r}")
                    table[name] = {}
                    section = table[name]
                else:
                    raise PlanError(f"line {n}: unknown section {raw!r}")
                continue
            m = re.match(r"([^=:]+?)\s*[=:]\s*(.*)$", line)
            if m is None or section is None:
                raise PlanError(f"line {n}: not a key = value line inside a section: {raw!r}")
            section[m.group(1)] = m.group(2)
        return plan

    @classmethod
    def from_file(cls, path: PathLike) -> "Plan":
        """Reads a plan file; its relative paths stay relative to the file's folder."""
        p = Path(path)
        return cls.from_text(p.read_text(encoding="utf-8"), base=Path(os.path.abspath(p)).parent)


def _validate_op(name: str, keys: Mapping[str, Any]) -> None:
    """An ``[op]`` section: a C module (``source``) or a Python reference (``reference =
    python:FILE:FUNCTION`` with its tensors), not both."""
    where = f"[op {name}]"
    has_src, has_ref = keys.get("source") is not None, keys.get("reference") is not None
    if has_src and has_ref:
        raise PlanError(f"{where}: source (a C module) and reference (a Python function) both given: an op is one")
    if not has_src and not has_ref:
        raise PlanError(f"{where}: needs source = FILE.c (a C module, docs/ops.md) or reference = "
                        "python:FILE.py:FUNCTION (a Python reference)")
    if has_src:
        extra = sorted(k for k in keys if k in PY_OP_KEYS)
        if extra:
            raise PlanError(f"{where}: {', '.join(extra)}: keys of a Python-declared op; a C module "
                            "(source) declares its tensors and bound itself")
        return
    ref = str(keys["reference"]).strip()
    if not _PY_REF.fullmatch(ref):
        raise PlanError(f"{where}: reference = {ref!r}: write python:FILE.py:FUNCTION (FILE relative to the "
                        "plan's folder, FUNCTION a module-level function)")
    for req in ("inputs", "outputs"):
        if keys.get(req) is None:
            raise PlanError(f"{where}: missing {req} (NAME[dim, ...] for each, e.g. X[n] Y0[n])")
    tensors = keys.get("tensors")
    if tensors is not None and str(tensors) not in ("numpy", "torch"):
        raise PlanError(f"{where}: tensors = {tensors!r}: numpy or torch")
    bound = keys.get("bound")
    if bound is not None and str(bound) not in ("library", "tolerance"):
        raise PlanError(f"{where}: bound = {bound!r}: library (the default) or tolerance (with rtol and atol)")
    tol = [k for k in ("rtol", "atol") if keys.get(k) is not None]
    if tol and str(bound) != "tolerance":
        raise PlanError(f"{where}: {' and '.join(tol)} go with bound = tolerance")
    if str(bound) == "tolerance" and not tol:
        raise PlanError(f"{where}: bound = tolerance needs rtol, atol or both")
    for k in ("inputs", "outputs"):
        v = keys[k]
        items = [str(x) for x in v] if isinstance(v, (list, tuple)) else [str(v)]
        for item in items:
            if item.count("[") != item.count("]"):
                raise PlanError(f"{where}: {k}: unbalanced brackets in {item!r} (NAME[dim, ...] with an optional "
                                ":DTYPE)")


def _strip_comment(line: str) -> str:
    s = line.lstrip()
    if s.startswith((";", "#")):
        return ""
    m = re.search(r"[ \t][;#]", line)
    return line[:m.start()] if m else line


def _split_cases(text: str) -> List[str]:
    """An arm's cases list: commas inside a variant's brackets do not separate items."""
    items, depth, cur = [], 0, ""
    for c in text:
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        if c == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        items.append(cur.strip())
    return items


def _rebase(value: str, base: Path, folder: Optional[Path]) -> str:
    """A relative path taken from ``base``, written relative to ``folder`` (absolute when
    ``folder`` is None). Absolute paths stay as they are."""
    if os.path.isabs(value):
        return value
    full = os.path.normpath(os.path.join(base, value))  # symbolic links kept as the caller names them
    if folder is None:
        return full
    return os.path.relpath(full, folder)
