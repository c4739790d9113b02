"""The runner's configuration is the person's (issue 35 item 4; decision record 0097).

pytest loads every `pytest11` entry point of every distribution on `sys.path` before the first
test: a `*.dist-info` or `*.egg-info` folder a commit carries anywhere the path reaches (the
root under `python -m pytest`, a package folder an editable install puts on the path) is a
plugin that runs first and can make every test pass. So every verifier runs with each plugin
the tree's own metadata declares blocked (`-p no:NAME` in `PYTEST_ADDOPTS`): what a person
installed in the interpreter's environment loads as always; nothing the judged tree carries
does, whatever its name or folder. (Turning pytest's autoload off and loading the person's
plugins from a module of ours needs that module on `PYTHONPATH`, which a verify command such
as `PYTHONPATH=src pytest` replaces: blocking needs no import path.)
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from shiftkit.core import declared
from shiftkit.edge import gitio

ADDOPTS = "PYTEST_ADDOPTS"
_ENTRY_POINTS = re.compile(r"(?:^|/)[^/]+\.(?:dist-info|egg-info)/entry_points\.txt$")


def tree_plugins(cwd: Path, git_env: Mapping[str, str]) -> list[str]:
    """The names of the pytest plugins the metadata in ``cwd``'s tree declares: its tracked
    files and those not yet added (not the ignored ones: an environment kept in the work tree
    is the person's installation). ``git_env``: the environment git runs in (none of a hook's
    `GIT_DIR`/`GIT_INDEX_FILE`)."""
    args = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        listed = gitio.run(args, cwd, clean_env=git_env).stdout
    except (gitio.GitFailed, OSError):
        return []
    names: list[str] = []
    for path in listed.split("\0"):
        if path and _ENTRY_POINTS.search(path):
            try:
                text = (cwd / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            names += [name for name in declared.pytest_plugins(text) if name not in names]
    return names


def variables(env: dict[str, str], blocked: list[str]) -> dict[str, str]:
    """``env`` with each of ``blocked`` refused to pytest (after any `PYTEST_ADDOPTS` a
    person named in `env`)."""
    if not blocked:
        return env
    words = [f"-p no:{shlex.quote(name)}" for name in blocked]
    options = " ".join([*([env[ADDOPTS]] if env.get(ADDOPTS) else []), *words])
    return {**env, ADDOPTS: options}
