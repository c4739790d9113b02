"""Imports come from the judged tree (issue 35 item 2; decision record 0087).

A project installed editable in the developer's environment (`pip install -e .`: setuptools'
finder or `.pth` modes, hatchling's path entries, editables' redirecting finder) is imported
from the developer's *work tree* by every Python process, a verifier in a temporary checkout
too: `check` said "passes at HEAD" while HEAD failed. A verifier run in a checkout therefore
gets a private folder first on its `PYTHONPATH` holding a `sitecustomize` (`SHIM`) that, when
the interpreter starts (after site's `.pth` files ran), moves every `sys.path` entry and every
editable finder's path under the work tree to the same place in the checkout, then runs the
next `sitecustomize` on the path, so a user's own still runs. Nothing of the developer's
environment is written.
"""

from __future__ import annotations

import os
from pathlib import Path

WORK_TREE = "SHIFTKIT_WORK_TREE"
JUDGED_TREE = "SHIFTKIT_JUDGED_TREE"

# checkout folder -> the work tree it stands in for (set by `verify.temporary_checkout`)
_CHECKOUTS: dict[str, str] = {}

SHIM = '''"""shiftkit: imports come from the judged tree (decision record 0087)."""
import os as _os
import sys as _sys


def _shiftkit_redirect():
    work = _os.environ.get("SHIFTKIT_WORK_TREE")
    judged = _os.environ.get("SHIFTKIT_JUDGED_TREE")
    if not work or not judged:
        return
    work = _os.path.realpath(work)
    # (the interpreter's own environment stays where it is, a `.venv` in the work tree too)
    # (and the developer's, under the private one an installing `init` gets: decision 0098)
    kept = _os.environ.get("SHIFTKIT_PERSON_ENVIRONMENT", "").split(_os.pathsep)
    environment = {_os.path.realpath(p) for p in (_sys.prefix, _sys.exec_prefix, *kept) if p}

    def inside(real, folder):
        return real == folder or real.startswith(folder + _os.sep)

    def packages(folder):
        try:
            names = _os.listdir(folder)
        except OSError:
            return set()
        return {n for n in names if _os.path.isfile(_os.path.join(folder, n, "__init__.py"))}

    def elsewhere(real):
        # Another clone or worktree of the project (an editable install made from it): the
        # same path under the judged tree, when that tree holds it — a package the judged
        # tree has too, or a folder of packages it shares — so its own code is what runs.
        top = real
        while True:
            parent = _os.path.dirname(top)
            if parent == top:
                return None
            top = parent
            if not _os.path.exists(_os.path.join(top, ".git")):
                continue
            there = judged + real[len(top):]
            if not _os.path.exists(there):
                return None
            if _os.path.isdir(real) and not _os.path.isfile(_os.path.join(real, "__init__.py")):
                if not packages(real) & packages(there):
                    return None  # (a folder of other packages: not this project's)
            return there

    def moved(path):
        if not isinstance(path, str) or not path:
            return path
        real = _os.path.realpath(path)
        if any(inside(real, folder) for folder in environment):
            return path
        if inside(real, work):
            return judged + real[len(work):]
        if inside(real, judged):
            return path
        return elsewhere(real) or path

    _sys.path[:] = [moved(entry) for entry in _sys.path]
    for name, module in list(_sys.modules.items()):
        if not (name.startswith("__editable__") and name.endswith("_finder")):
            continue
        mapping = getattr(module, "MAPPING", None)
        if isinstance(mapping, dict):
            for key, value in list(mapping.items()):
                mapping[key] = moved(value)
        spaces = getattr(module, "NAMESPACES", None)
        if isinstance(spaces, dict):
            for key, value in list(spaces.items()):
                spaces[key] = [moved(entry) for entry in value]
    for finder in _sys.meta_path:
        redirections = getattr(finder, "_redirections", None)
        if isinstance(redirections, dict):
            for key, value in list(redirections.items()):
                redirections[key] = moved(value)
    _sys.path_importer_cache.clear()


def _shiftkit_chain():
    here = _os.path.dirname(_os.path.abspath(__file__))
    kept = list(_sys.path)
    _sys.path[:] = [e for e in kept if _os.path.abspath(e or ".") != here]
    ours = _sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401  (the user's own, if any)
    except ImportError:
        if ours is not None:
            _sys.modules["sitecustomize"] = ours
    finally:
        _sys.path[:] = [e for e in _sys.path if e not in kept] + kept


_shiftkit_redirect()
_shiftkit_chain()
'''

_FOLDER: list[str] = []


def shim_folder() -> str:
    """The private folder holding `SHIM` (made once per process, under the temp folder)."""
    if _FOLDER and Path(_FOLDER[0], "sitecustomize.py").is_file():
        return _FOLDER[0]
    import tempfile

    folder = tempfile.mkdtemp(prefix="shiftkit-imports-")
    Path(folder, "sitecustomize.py").write_text(SHIM, encoding="utf-8")
    _FOLDER[:] = [folder]
    return folder


def register(checkout: Path, work_tree: Path) -> None:
    _CHECKOUTS[str(checkout)] = str(work_tree.resolve())


def forget(checkout: Path) -> None:
    _CHECKOUTS.pop(str(checkout), None)


def work_tree_of(cwd: Path) -> str | None:
    """The work tree the checkout ``cwd`` stands in for (None: not a checkout of ours)."""
    return _CHECKOUTS.get(str(cwd))


def variables(cwd: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` with the shim's variables when ``cwd`` is a checkout `register` knows (a
    `PYTHONPATH` a person named in `env` stays, after the shim)."""
    work = _CHECKOUTS.get(str(cwd))
    if work is None:
        return env
    path = [shim_folder(), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    return {
        **env,
        "PYTHONPATH": os.pathsep.join(path),
        WORK_TREE: work,
        JUDGED_TREE: str(Path(cwd).resolve()),
    }
