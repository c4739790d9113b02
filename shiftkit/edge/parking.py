"""Parked claims: a claim whose unit (a `finish` or `revert` commit) is committed here but
not yet on the remote's branch stays locked there until its commit is (decision 0055). Kept in
the worktree's state; `sync`, `finish` and the publish gate read and write it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from shiftkit.edge import state

PARKED = "parked-claims.json"


class Parked(NamedTuple):
    """A claim whose unit is committed here but not yet on the remote's branch."""

    feature: str
    oid: str
    commit: str


def _path(git_dir: Path) -> Path:
    return state.worktree_state(git_dir) / PARKED


def read(git_dir: Path) -> list[Parked]:
    rows = state.read_json(_path(git_dir))
    if not isinstance(rows, list):
        return []
    return [
        Parked(*row)
        for row in rows
        if isinstance(row, list) and len(row) == 3 and all(isinstance(x, str) for x in row)
    ]


def save(git_dir: Path, rows: list[Parked]) -> None:
    if rows:
        state.write_json(_path(git_dir), [list(row) for row in rows])
    else:
        _path(git_dir).unlink(missing_ok=True)


def remap(git_dir: Path, rewritten: Mapping[str, str]) -> None:
    """A parked claim waits for its commit to reach the remote: when the publish gate wrote
    that commit again (decision record 0083), it waits for the new one."""
    rows = read(git_dir)
    if rewritten and any(row.commit in rewritten for row in rows):
        save(git_dir, [row._replace(commit=rewritten.get(row.commit, row.commit)) for row in rows])
