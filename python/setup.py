"""The build step of the kgate package: the kgate binary, compiled from the kgate tree this
folder sits in (``make build/kgate``), bundled into the package with the public headers kernels and op modules
include (kgate/_bin/bin/kgate, kgate/_bin/include/kgate/*.h: the binary finds its headers
in ../include next to itself, as it does in the tree and after ``make install``).

The metadata is pyproject.toml's. Variables:
    KGATE_SOURCE_TREE  the kgate tree to build from (default: this folder's parent)
    KGATE_BUNDLE=0     build the package without the binary (it then runs $KGATE, kgate on
                       PATH, e.g. from ``make install``, or the tree's bin/kgate)
"""
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import ExecError

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - wheel is absent: pip builds one with it
    bdist_wheel = None

HERE = Path(__file__).resolve().parent
DEPS_HINT = ("install the build dependencies with `sh tools/install-deps.sh` from the kgate tree (a C compiler, "
             "make, and the -dev packages of libinih, GSL, libseccomp, libzstd, jansson, OpenSSL and OpenBLAS), "
             "or build the package without the binary with KGATE_BUNDLE=0 and point KGATE at a kgate of your own")


def _tree() -> Path:
    env = os.environ.get("KGATE_SOURCE_TREE")
    root = Path(env).resolve() if env else HERE.parent
    if (root / "Makefile").is_file() and (root / "src" / "cli").is_dir() and (root / "include" / "kgate").is_dir():
        return root
    where = f"KGATE_SOURCE_TREE={env}" if env else f"{root} (the parent of {HERE})"
    raise ExecError(f"kgate: {where} is not a kgate source tree, so the kgate binary cannot be built: install "
                    "the package from the tree (pip install ./python from its root), set KGATE_SOURCE_TREE to "
                    "the tree, or build without the binary (KGATE_BUNDLE=0)")


def _make(root: Path) -> Path:
    """``make build/kgate`` in the tree (a no-op when it is current); returns it. (Not
    bin/kgate, which ``make all`` copies from it: the build writes nothing a running kgate
    may be executing.)"""
    make = shutil.which("make")
    cc = os.environ.get("CC") or "cc"
    missing = [name for name, found in (("make", make), (cc, shutil.which(cc))) if not found]
    if missing:
        raise ExecError(f"kgate: no {' or '.join(missing)} on PATH to build the kgate binary: {DEPS_HINT}")
    jobs = str(min(os.cpu_count() or 1, 8))
    cmd = [make, "-C", str(root), "-j", jobs, "BUILD=build", "build/kgate"]
    sys.stderr.write(f"kgate: building the kgate binary: {' '.join(cmd)}\n")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-30:])
        raise ExecError(f"kgate: `{' '.join(cmd)}` failed (exit {proc.returncode}):\n{tail}\n"
                        f"kgate: a missing header or library above means a missing -dev package: {DEPS_HINT}")
    binary = root / "build" / "kgate"
    if not binary.is_file():
        raise ExecError(f"kgate: make succeeded but wrote no {binary}")
    return binary


class build_py_with_kgate(build_py):  # noqa: N801 - setuptools' command naming
    """build_py, then the binary and the headers into the package."""

    def run(self) -> None:
        super().run()
        if os.environ.get("KGATE_BUNDLE", "1") == "0":
            return
        root = _tree()
        binary = _make(root)
        dest = Path(self.build_lib) / "kgate" / "_bin"
        if dest.exists():
            shutil.rmtree(dest)
        (dest / "bin").mkdir(parents=True)
        (dest / "include" / "kgate").mkdir(parents=True)
        shutil.copyfile(binary, dest / "bin" / "kgate")
        os.chmod(dest / "bin" / "kgate", 0o755)
        for h in sorted((root / "include" / "kgate").glob("*.h")):
            shutil.copyfile(h, dest / "include" / "kgate" / h.name)
            os.chmod(dest / "include" / "kgate" / h.name, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)


cmdclass = {"build_py": build_py_with_kgate}

if bdist_wheel is not None:
    class bdist_wheel_platform(bdist_wheel):  # noqa: N801
        """A wheel for this platform (it carries a Linux binary), for any Python 3."""

        def finalize_options(self) -> None:
            super().finalize_options()
            self.root_is_pure = os.environ.get("KGATE_BUNDLE", "1") == "0"

        def get_tag(self):  # type: ignore[no-untyped-def]
            python, abi, plat = super().get_tag()
            if not self.root_is_pure:
                python, abi = "py3", "none"
                plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
            return python, abi, plat

    cmdclass["bdist_wheel"] = bdist_wheel_platform

setup(cmdclass=cmdclass)
