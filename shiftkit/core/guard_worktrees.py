"""This repository's linked worktrees, for the guard (decision 0063): a place outside the
project that is one of them is this project, not another repository — its config is this
repository's config and its hooks are these hooks. Known from `.git/worktrees/*/gitdir`
(`configure`, by the guard's command) and from a `git worktree add` earlier on the same line
(`add`), so `git worktree add ../wt main && cd ../wt && git config core.hooksPath x` is judged
as it would be here."""

from __future__ import annotations

import os

_known: set[str] = set()  # from the repository, for this process
_line: set[str] = set()  # added by the line being judged


def configure(paths: list[str]) -> None:
    global _known
    _known = {os.path.normpath(p) for p in paths if p.startswith("/")}


def start_line() -> None:
    _line.clear()


def add(path: str) -> None:
    if path.startswith("/"):
        _line.add(os.path.normpath(path))


def is_worktree(place: str) -> bool:
    """Whether this absolute place is in one of this repository's linked worktrees."""
    target = os.path.normpath(place)
    return any(target == tree or target.startswith(tree + "/") for tree in _known | _line)
