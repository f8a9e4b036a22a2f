"""Python functions that kgate runs from their files: a reference of a Python-declared op
or a library arm's call (``python:FILE:FUNCTION``) is a module-level function of a ``.py``
file, which kgate's trusted helper imports from that file's text in its own process. What
cannot be run that way is refused here, with the fix."""
from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Tuple

from .plan import PlanError

__all__ = ["CompareError", "function_file", "kwargs_for"]


class CompareError(PlanError):
    """kgate.compare cannot build a plan from what it was given; the message says how to
    fix it."""


def function_file(fn: Any, what: str) -> Tuple[str, str]:
    """The ``.py`` file and the name of a module-level function, which kgate's helper runs
    from that file's text; refuses what it cannot run that way, saying how to fix it."""
    name = getattr(fn, "__name__", None)
    fix = (f"write it as a module-level function (def {name if name and name.isidentifier() else 'ref'}(...)) "
           "in a .py file and pass that function")
    if not inspect.isfunction(fn):
        raise CompareError(f"{what}: {fn!r} is not a Python function defined in a file (a builtin, a method or an "
                           f"object): kgate runs the function from its file in its own process; {fix}, e.g. "
                           "def softmax(x): return torch.softmax(x, dim=-1)")
    if name == "<lambda>":
        raise CompareError(f"{what}: a lambda has no name kgate can call from its file: {fix}")
    if fn.__qualname__ != name or fn.__closure__:
        raise CompareError(f"{what}: {fn.__qualname__} is defined inside another function or class (a closure): "
                           f"kgate imports the file and calls the name, so {fix}")
    try:
        src = inspect.getsourcefile(fn)
    except TypeError:
        src = None
    cell = src is None or src.startswith("<") or "ipykernel_" in src or "/ipython-input" in src
    if cell:
        raise CompareError(f"{what}: {name} was defined in a notebook cell or an interactive session, not in a file: "
                           f"kgate runs the reference from a file in its own process; put it in a .py file beside "
                           f"the notebook (%%writefile {name}_ref.py in a cell of its own), then "
                           f"`from {name}_ref import {name}`")
    path = Path(src).resolve()
    if path.suffix != ".py" or not path.is_file():
        raise CompareError(f"{what}: {name} comes from {path}, not a .py file kgate can run: {fix}")
    module = sys.modules.get(fn.__module__)
    if module is not None and getattr(module, name, None) is not fn:
        raise CompareError(f"{what}: {path} does not define {name} at its top level as this function (a decorator "
                           f"or a later definition replaced it): {fix}")
    if fn.__module__ == "__main__":
        _check_script(path, what)
    return str(path), name


def _check_script(path: Path, what: str) -> None:
    """A script's function: kgate's helper runs the script's text as a module (not as
    ``__main__``), so a top-level use of kgate would start another campaign there."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError) as e:
        raise CompareError(f"{what}: cannot read {path}: {e}") from e
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.If) and "__name__" in ast.dump(node.test):
            continue
        if any(isinstance(n, ast.Name) and n.id == "kgate" for n in ast.walk(node)):
            raise CompareError(f"{what}: {path}:{node.lineno} uses kgate at the top level of the script that defines "
                               "the reference; kgate's helper runs that file when the campaign runs, and would run "
                               "this line there too: put the script's code under if __name__ == \"__main__\": or "
                               "move the function to a module of its own")




def kwargs_for(fn: Callable[..., Any], values: Mapping[str, Any]) -> Dict[str, Any]:
    """The variables fn's signature names (all of them when it takes ``**kwargs``)."""
    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return dict(values)
    return {k: v for k, v in values.items() if k in params}
