"""The oracle as defined (issue 26 item 2; decision record 0081): which version of each oracle
file a re-verification runs, and how the overlay is said.

A feature's oracle file is defined by the newest commit on the judged commit's history that
touched it and is trusted: the commit that appended the feature to the list (the definition,
and everything before it), or a person's action after it. Re-verification runs the verifier
with those versions written over the judged tree (`edge.overlay`).

Pure: values in, values out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple


class Touch(NamedTuple):
    """A commit after the definition that changed some oracle files (newest first in a
    history): ``trusted`` when it is a person's action."""

    commit: str
    paths: frozenset[str]
    trusted: bool


class Restored(NamedTuple):
    """One oracle file the overlay wrote: its version from ``source`` (None: the file did
    not exist there, so the overlay removed it)."""

    path: str
    source: str
    removed: bool = False


def sources(paths: Iterable[str], touches: Sequence[Touch], definition: str) -> dict[str, str]:
    """For each of ``paths``, the commit whose version is the defined one: the newest trusted
    commit of ``touches`` (newest first) that changed it, else ``definition``."""
    found: dict[str, str] = {}
    for path in paths:
        found[path] = next((t.commit for t in touches if t.trusted and path in t.paths), definition)
    return found


def changed_rows(pairs: Mapping[str, tuple[str | None, str | None]]) -> list[tuple[str, str]]:
    """Rule 14's (status, path) rows from each path's (defined, judged) blob ids: "A" a file
    the definition did not have, "D" one the judged tree lacks, "M" one that differs."""
    rows = []
    for path, (defined, judged) in pairs.items():
        if defined == judged:
            continue
        rows.append(("A" if defined is None else "D" if judged is None else "M", path))
    return rows


def note(restored: Sequence[Restored]) -> str:
    """ "oracle restored from 1234567: tests/test_x.py, conftest.py (removed)"."""
    by_source: dict[str, list[str]] = {}
    for item in restored:
        shown = f"{item.path} (removed)" if item.removed else item.path
        by_source.setdefault(item.source[:7], []).append(shown)
    return "oracle restored " + "; ".join(
        f"from {source}: {', '.join(paths)}" for source, paths in by_source.items()
    )
