"""Finding and calling the kgate binary.

Every wrapper in this package runs the ``kgate`` command line: the binary is the
authority on plans, campaigns and evidence, and this package only prepares its
inputs and reads what it wrote.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]

#: Exit statuses of the kgate command line (src/cli/cli.h).
EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_INVALID = 3


class KgateError(RuntimeError):
    """kgate ended in a way that is not a verdict: a usage or input error (exit 2),
    a crash, or output this package cannot read.

    Attributes:
        returncode: kgate's exit status (None when it did not run).
        argv: the command line that ran.
        stdout, stderr: what kgate printed.
    """

    def __init__(self, message: str, *, returncode: Optional[int] = None, argv: Sequence[str] = (),
                 stdout: str = "", stderr: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.argv = list(argv)
        self.stdout = stdout
        self.stderr = stderr

    def __str__(self) -> str:
        text = self.message
        err = self.stderr.strip()
        if err:
            lines = err.splitlines()
            if len(lines) > 40:
                lines = ["..."] + lines[-40:]
            text += "\nkgate's stderr:\n" + "\n".join("  " + line for line in lines)
        return text


class KgateNotFound(KgateError):
    """No kgate binary was found (see :func:`find_kgate`)."""


def _source_tree_candidates() -> List[Path]:
    """kgate binaries of the source tree this package sits in (python/kgate/_cli.py), if any."""
    here = Path(__file__).resolve()
    if len(here.parents) < 3:
        return []
    root = here.parents[2]
    if not (root / "src" / "cli").is_dir():
        return []
    return [root / "bin" / "kgate"]


def bundled_kgate() -> Path:
    """Where ``pip install`` puts the binary it builds (``kgate/_bin/bin/kgate``, the headers
    in ``kgate/_bin/include``); it may be absent (a package imported from the tree, or
    built with ``KGATE_BUNDLE=0``)."""
    return Path(__file__).resolve().parent / "_bin" / "bin" / "kgate"


def _usable(p: PathLike) -> bool:
    return os.path.isfile(p) and os.access(p, os.X_OK)


def _is_script(p: PathLike) -> bool:
    """A file that starts with ``#!``: the ``kgate`` console script, not the binary."""
    try:
        with open(p, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return True


def _on_path() -> Optional[str]:
    """The first ``kgate`` on PATH that is a binary, not a script (the console script of
    this package runs :func:`find_kgate` itself)."""
    for d in os.get_exec_path():
        cand = os.path.join(d or ".", "kgate")
        if _usable(cand) and not _is_script(cand):
            return os.path.abspath(cand)
    return None


def find_kgate(kgate: Optional[PathLike] = None) -> str:
    """The kgate binary to run.

    In order: ``kgate`` when given; ``$KGATE``; the binary ``pip install`` built and bundled
    (:func:`bundled_kgate`); ``kgate`` on ``PATH`` (``make install``'s ``PREFIX/bin/kgate``;
    the package's own ``kgate`` script is passed over); when this package is imported from a
    kgate source tree (``PYTHONPATH=python``), that tree's ``bin/kgate``, which ``make`` builds.

    Raises:
        KgateNotFound: nothing executable was found; the message lists what was tried.
    """
    tried: List[str] = []
    if kgate is not None:
        p = os.fspath(kgate)
        if os.sep not in p:
            found = shutil.which(p)
            if found:
                return found
        if _usable(p):
            return os.path.abspath(p)
        raise KgateNotFound(f"kgate binary not found or not executable: {p!r}")
    env = os.environ.get("KGATE")
    if env:
        if _usable(env):
            return os.path.abspath(env)
        raise KgateNotFound(f"$KGATE names no executable file: {env!r}")
    tried.append("$KGATE (unset)")
    bundled = bundled_kgate()
    if _usable(bundled):
        return str(bundled)
    tried.append(f"the bundled {bundled} (absent: the package was built without it)")
    on_path = _on_path()
    if on_path:
        return on_path
    tried.append("kgate on PATH")
    for cand in _source_tree_candidates():
        if _usable(cand):
            return str(cand)
        tried.append(str(cand))
    raise KgateNotFound("no kgate binary: tried " + ", ".join(tried) +
                        " (pip install ./python from the kgate tree bundles one; or make install PREFIX=DIR "
                        "and DIR/bin on PATH; or set KGATE or pass kgate=PATH)")


def run_cli(argv: Sequence[str], *, kgate: Optional[PathLike] = None, env: Optional[Mapping[str, str]] = None,
            cwd: Optional[PathLike] = None, timeout: Optional[float] = None,
            echo: bool = False) -> "subprocess.CompletedProcess[str]":
    """Runs ``kgate ARGV...`` and returns its exit status and output.

    Args:
        argv: the arguments after the binary (``["run", "plan.kg", "-o", "out"]``).
        kgate: the binary (see :func:`find_kgate`).
        env: variables added to this process's environment for the call.
        cwd: the folder kgate runs in.
        timeout: seconds; kgate is then sent SIGTERM (it stops its workers and leaves a
            resumable folder), and SIGKILL 30 s later.
        echo: also copy kgate's stderr (its verdict and progress lines) to ``sys.stderr``
            as it comes.

    Raises:
        KgateError: on a timeout, or when the binary cannot be started.
    """
    binary = find_kgate(kgate)
    full = [binary] + [os.fspath(a) for a in argv]
    environ = dict(os.environ)
    if env:
        environ.update({k: str(v) for k, v in env.items()})
    try:
        proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=environ, cwd=None if cwd is None else os.fspath(cwd), text=True,
                                encoding="utf-8", errors="replace")
    except OSError as e:
        raise KgateError(f"cannot start {binary}: {e}", argv=full) from e
    err_parts: List[str] = []

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err_parts.append(line)
            if echo:
                sys.stderr.write(line)
                sys.stderr.flush()

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    out_parts: List[str] = []

    def pump_out() -> None:
        assert proc.stdout is not None
        out_parts.append(proc.stdout.read())

    t2 = threading.Thread(target=pump_out, daemon=True)
    t2.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        t.join()
        t2.join()
        raise KgateError(f"kgate {argv[0] if argv else ''} ran past its timeout of {timeout} s and was stopped",
                         returncode=proc.returncode, argv=full, stdout="".join(out_parts),
                         stderr="".join(err_parts))
    except KeyboardInterrupt:
        # the terminal's SIGINT reached kgate too: let it stop its workers and end
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise
    t.join()
    t2.join()
    return subprocess.CompletedProcess(full, proc.returncode, "".join(out_parts), "".join(err_parts))
