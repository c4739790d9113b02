"""The project as the guard finds it before every tool call (decision 0070): its root read
from the `.git` entries on the way up (no process), and HEAD's `.shiftkit.toml` by one git
call without `subprocess`. `project.find` gives the same answer for every other command."""

from __future__ import annotations

import os

from shiftkit.core import config as config_mod
from shiftkit.edge import gitio

# What changes where git looks for the repository: with any of these set, git is asked.
GIT_DISCOVERY = ("GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES", "GIT_COMMON_DIR")
# What a `.git` folder holds for git to take it for a repository.
REPOSITORY = ("HEAD", "objects", "refs")


def worktree_root(cwd: str) -> str | None:
    """The top of the work tree ``cwd`` lies in, as `git rev-parse --show-toplevel` gives
    it (None: no work tree). The first folder on the way up that holds a `.git` folder
    with a repository's entries, or a `.git` file naming a git dir, is it; anything else
    (a `.git` that is neither, GIT_DIR and the like) asks git."""
    here = os.path.realpath(cwd)
    if not any(name in os.environ for name in GIT_DISCOVERY):
        while True:
            dot = os.path.join(here, ".git")
            if os.path.isdir(dot):
                if all(os.path.exists(os.path.join(dot, name)) for name in REPOSITORY):
                    return here
                break  # (a `.git` folder git may not take for a repository: ask git)
            if os.path.isfile(dot):
                try:
                    with open(dot, encoding="utf-8") as handle:
                        linked = handle.read(8) == "gitdir: "
                except (OSError, UnicodeDecodeError):
                    linked = False
                if linked:
                    return here
                break  # (not a link git can read: let git say what it is)
            parent = os.path.dirname(here)
            if parent == here:
                return None
            here = parent
    code, out, _ = gitio.plumb(["rev-parse", "--show-toplevel"], cwd)
    top = out.decode("utf-8", "surrogateescape").strip()
    return top if code == 0 and top else None


def committed_config(root: str) -> tuple[config_mod.Config, str | None]:
    """HEAD's settings, the judge's (`project.committed_config` reads the same blob), and
    their text; the work tree's settings (and None) before a commit holds them."""
    code, out, _ = gitio.plumb(["cat-file", "blob", f"HEAD:{config_mod.CONFIG_FILE}"], root)
    if code != 0:
        from pathlib import Path

        from shiftkit.edge import project

        return project.load_config(Path(root)), None
    text = out.decode("utf-8", "surrogateescape")
    return config_mod.parse(text, f"{config_mod.CONFIG_FILE} (as committed at HEAD)"), text
