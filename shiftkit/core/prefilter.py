"""The selection's prefilter (decision record 0121): which stored rows of a read set a change
can match, so a store indexed by path finds the few sets `affected.touches` may say yes to
without reading the thousands it will say no to.

`affected.touches` stays the rule. This module only names, for one `Change`, the rows any of
whose presence makes a set a *candidate* — a superset of the sets the rule touches:

- a file read whose path changed, where the change's new blocks are not known (not Python, not
  parsed, deleted, or block sets off): ``whole``;
- a file read whole (no blocks recorded for it) whose path is a changed Python file: ``code``;
- a block executed in a changed Python file whose fingerprint differs now or is gone:
  ``code`` (the store compares each distinct (path, block, fingerprint) once);
- a file stat'ed among ``looked``, a path looked up among ``added``, a folder listed among
  ``parents``.

A set holding none of these rows is left alone by every clause of `touches`. `combine` puts
the candidates' exact verdicts and the rest's counts together as `selection_at` returns them.

Pure: values in, values out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from shiftkit.core import affected


class Probe(NamedTuple):
    """The paths of one change, by the kind of row each can match."""

    paths: frozenset[str]  # every changed path (a file read among them: by files, touched)
    whole: frozenset[str]  # changed paths whose every reader is a candidate
    code: Mapping[str, Mapping[str, str]]  # changed Python files → their blocks now
    looked: frozenset[str]  # paths a stat sees changed
    added: frozenset[str]  # paths the change adds
    parents: frozenset[str]  # the folders those were added to


def probe(change: affected.Change, blocks: bool = True) -> Probe:
    """The rows ``change`` can match; ``blocks`` False: block sets are ignored (every file
    read counts whole)."""
    known = change.blocks if blocks and change.blocks is not None else {}
    code = {path: now for path in change.paths if (now := known.get(path)) is not None}
    looked = change.paths if change.resized is None else change.resized
    return Probe(
        change.paths,
        frozenset(path for path in change.paths if path not in code),
        code,
        frozenset(looked),
        change.added,
        frozenset(affected.parent_dir(path) for path in change.added),
    )


def differs(probe: Probe, path: str, block: str, mark: str) -> bool:
    """Whether a run that executed ``block`` of ``path`` with fingerprint ``mark`` is a
    candidate: the file changed and that block is not the same now."""
    now = probe.code.get(path)
    return now is not None and now.get(block) != mark


def combine(
    ids: Sequence[str],
    unknown: Collection[str],
    candidates: Mapping[str, affected.ReadSet],
    changes: Mapping[str, affected.Change],
    reading: int,
) -> tuple[list[str], affected.Skipped]:
    """The features of ``ids`` to re-run (in that order) and why the rest were not:
    ``unknown`` all run (no set, or no change from its tree); ``candidates`` (their whole
    sets) as `affected` says; every other feature is touched by no clause of `touches`. Read
    as whole files it would be touched exactly when it read a changed path —
    the stat and added-path clauses do not look at blocks — so `skipped_since` would count it
    by functions exactly then, by files otherwise: ``reading`` is how many of them did."""
    judged = [i for i in ids if i in candidates and i not in unknown]
    hit = set(affected.affected_since(judged, candidates, changes))
    chosen = hit | set(unknown)
    exact = affected.skipped_since([i for i in judged if i not in hit], candidates, changes)
    rest = [i for i in ids if i not in chosen and i not in candidates]
    skipped = affected.Skipped(exact.by_blocks + reading, exact.by_files + len(rest) - reading)
    return [i for i in ids if i in chosen], skipped
