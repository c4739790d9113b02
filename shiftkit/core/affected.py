"""Which passing features a change can break: their measured read sets against the change.

A *read set* is what one run of a feature's verifier looked at inside the checkout, measured
while it ran (decision record 0053): the committed files whose content it reached (opened,
executed: ``files``), those it only looked at (their type, size, mode: ``stats`` — pytest
stats every entry of the directories it walks), the directories it listed (``dirs``), and the
paths it looked up that the tree does not hold (``missing``: a file added there later could
change what it does, as a ``pytest.py`` at the root shadows pytest). Paths are repository
paths (``a/b.py``; the root directory is ``""``).

A change breaks nothing a verifier did not look at: a feature is *affected* by a change when
the change modifies or deletes a file it read, deletes or resizes (or changes the mode of) a
file it looked at, or adds a path it looked up or a file in a directory it listed. A
feature whose read set is unknown (never measured, measured with another verifier, or
measured where no tracer was available) is affected by every change.

Stable API (the finish gate and the publish gate share it):

- `ReadSet`, `Change` — the values;
- `affected(passing_ids, read_sets, changed_paths, added_paths=())` — one change for all;
- `affected_since(passing_ids, read_sets, changes)` — each feature against the change since
  the tree its set was measured at (`trees_to_compare` says which trees those are);
- `touches(read_set, change)` — the test for one feature;
- `skipped_since(...)` — why the rest were left out (`Skipped.clause`: the one clause said);
- `to_json` / `from_json` — the stored form.

Pure: values in, values out.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any, NamedTuple


class ReadSet(NamedTuple):
    """What one passing run of ``command`` read at ``tree`` (see the module's docstring)."""

    tree: str  # the tree id the verifier judged
    command: str  # the verifier's cache command (a set measured for another verifier is stale)
    files: frozenset[str]
    dirs: frozenset[str] = frozenset()
    missing: frozenset[str] = frozenset()
    stats: frozenset[str] = frozenset()
    # per Python file read, the blocks the run executed with their fingerprints then
    # (`core.blocks`; decision record 0116): a change of that file that leaves them as they
    # were does not touch the run. None, or a file absent: the file counts as a whole.
    blocks: Mapping[str, Mapping[str, str]] | None = None


class Change(NamedTuple):
    """The paths a change touches (``paths``: added, deleted or modified), and those of them
    it adds (absent before) — new directories included, so a new ``pkg/__init__.py`` is an
    entry ``pkg`` added to the directory above it."""

    paths: frozenset[str]
    added: frozenset[str] = frozenset()
    # the paths whose metadata a stat sees changed: added, deleted, resized, another mode
    # (None: not known, every changed path counts)
    resized: frozenset[str] | None = None
    # the changed Python files' block fingerprints in the new tree (None for one that does
    # not parse or is gone); a file absent, or None here: not known
    blocks: Mapping[str, Mapping[str, str] | None] | None = None


def parent_dir(path: str) -> str:
    """``a/b/c.py`` → ``a/b``; ``c.py`` → ``""`` (the root)."""
    head, _, _ = path.rpartition("/")
    return head


def quieted(change: Change, quiet: Collection[str]) -> Change:
    """``change`` with the paths of ``quiet`` (shiftkit's own files: the list, the log, its
    archive, the ledger) counting only where a verifier read them: their resizing or
    appearing in a directory it listed or stat'ed changes no test's outcome. Without this,
    every `finish` — whose list flip resizes `features.json`, which pytest stats at the root
    — touched every pytest feature measured before it (decision record 0075)."""
    if not quiet or change.paths.isdisjoint(quiet):
        return change
    hushed = frozenset(quiet)
    resized = change.paths if change.resized is None else change.resized
    return Change(change.paths, change.added - hushed, resized - hushed, change.blocks)


def touches(read_set: ReadSet | None, change: Change) -> bool:
    """Whether ``change`` can change what the run that measured ``read_set`` saw (None:
    unknown, so yes)."""
    if read_set is None:
        return True
    for path in change.paths & read_set.files:
        if not _same_blocks(read_set, change, path):
            return True
    looked = change.paths if change.resized is None else change.resized
    if not looked.isdisjoint(read_set.stats):
        return True
    for path in change.added:
        if path in read_set.missing or parent_dir(path) in read_set.dirs:
            return True
    return False


def _same_blocks(read_set: ReadSet, change: Change, path: str) -> bool:
    """Whether the change of ``path``, a file the run read, left every block the run executed
    in it as it was (False whenever that is not known: the file counts as a whole)."""
    ran = read_set.blocks.get(path) if read_set.blocks is not None else None
    if ran is None or change.blocks is None or path not in change.blocks:
        return False
    now = change.blocks[path]
    return now is not None and all(now.get(name) == mark for name, mark in ran.items())


def affected(
    passing_ids: Sequence[str],
    read_sets: Mapping[str, ReadSet | None],
    changed_paths: Iterable[str],
    added_paths: Iterable[str] = (),
    resized_paths: Iterable[str] | None = None,
) -> list[str]:
    """The features of ``passing_ids`` (in that order) that the change can break: those whose
    read set it touches, and every one whose set is unknown (absent from ``read_sets``, or
    None). ``added_paths``: the changed paths that are new (without them, an added file is
    matched only against the files read, never the directories listed); ``resized_paths``:
    those whose type, size or mode changed (None: not known, so all of them)."""
    added = frozenset(added_paths)
    resized = None if resized_paths is None else frozenset(resized_paths) | added
    change = Change(frozenset(changed_paths) | added, added, resized)
    if not change.paths:
        return []
    return [i for i in passing_ids if touches(read_sets.get(i), change)]


class Skipped(NamedTuple):
    """The features a selection did not re-run, by why: only because no block their verifiers
    executed changed (file level would have run them), or because nothing they read did."""

    by_blocks: int = 0
    by_files: int = 0

    @property
    def total(self) -> int:
        return self.by_blocks + self.by_files

    def clause(self) -> str:
        """One clause for a line: "(3 untouched: 2 by the functions their verifiers ran, 1 by
        the files they read)"; "" when none was skipped."""
        if not self.by_blocks:
            return f" ({self.by_files} untouched, by the files their verifiers read)" * (
                self.by_files > 0
            )
        if not self.by_files:
            return f" ({self.by_blocks} untouched, by the functions their verifiers ran)"
        return (
            f" ({self.total} untouched: {self.by_blocks} by the functions their verifiers ran, "
            f"{self.by_files} by the files they read)"
        )


def skipped_since(
    skipped_ids: Iterable[str],
    read_sets: Mapping[str, ReadSet | None],
    changes: Mapping[str, Change],
) -> Skipped:
    """Why each of ``skipped_ids`` (features `affected_since` left out) was left out: by
    blocks where the same change touches its set read as whole files."""
    by_blocks = by_files = 0
    for feature_id in skipped_ids:
        read_set = read_sets.get(feature_id)
        change = changes.get(read_set.tree) if read_set is not None else None
        if read_set is None or change is None:
            continue
        if read_set.blocks and touches(read_set._replace(blocks=None), change):
            by_blocks += 1
        else:
            by_files += 1
    return Skipped(by_blocks, by_files)


def trees_to_compare(
    passing_ids: Iterable[str], read_sets: Mapping[str, ReadSet | None]
) -> list[str]:
    """The distinct trees the known read sets of ``passing_ids`` were measured at: the trees
    `affected_since` needs a change from."""
    trees: list[str] = []
    for feature_id in passing_ids:
        read_set = read_sets.get(feature_id)
        if read_set is not None and read_set.tree not in trees:
            trees.append(read_set.tree)
    return trees


def affected_since(
    passing_ids: Sequence[str],
    read_sets: Mapping[str, ReadSet | None],
    changes: Mapping[str, Change],
) -> list[str]:
    """Like `affected`, each feature judged against the change from the tree its read set was
    measured at (``changes[tree]``) to the tree in question — sound even when the set is older
    than the change's base. A set whose tree has no entry in ``changes`` counts as unknown."""
    found = []
    for feature_id in passing_ids:
        read_set = read_sets.get(feature_id)
        change = changes.get(read_set.tree) if read_set is not None else None
        if read_set is None or change is None or touches(read_set, change):
            found.append(feature_id)
    return found


def known(read_set: ReadSet | None, command: str) -> ReadSet | None:
    """``read_set`` when it was measured for ``command``, else None (unknown)."""
    return read_set if read_set is not None and read_set.command == command else None


# -- the stored form ------------------------------------------------------------------------

_FORMAT = 1


def to_json(feature_id: str, read_set: ReadSet) -> dict[str, Any]:
    return {
        "format": _FORMAT,
        "feature": feature_id,
        "tree": read_set.tree,
        "command": read_set.command,
        "files": sorted(read_set.files),
        "dirs": sorted(read_set.dirs),
        "missing": sorted(read_set.missing),
        "stats": sorted(read_set.stats),
        **(
            {"blocks": {p: dict(b) for p, b in sorted(read_set.blocks.items())}}
            if read_set.blocks is not None
            else {}
        ),
    }


def _paths(value: Any) -> frozenset[str] | None:
    # (map: the check of each entry at C speed — thousands of sets are read per selection)
    if not isinstance(value, list) or not all(map(isinstance, value, repeat(str))):
        return None
    return frozenset(value)


def from_json(feature_id: str, record: Any) -> ReadSet | None:
    """The read set stored for ``feature_id``; None when the record is not one (a cache: an
    unreadable record only makes the feature count as affected)."""
    return from_json_for(feature_id, record, None)


def from_json_for(feature_id: str, record: Any, command: str | None) -> ReadSet | None:
    """`from_json`, None at once when the record was measured for another command than
    ``command`` (None: any) — what `known` makes of it, without reading the rest."""
    if not isinstance(record, dict) or record.get("format") != _FORMAT:
        return None
    tree, command_then = record.get("tree"), record.get("command")
    if command is not None and command_then != command:
        return None
    command = command_then
    if record.get("feature") != feature_id or not isinstance(tree, str):
        return None
    if not isinstance(command, str):
        return None
    files, dirs, missing = (_paths(record.get(k)) for k in ("files", "dirs", "missing"))
    stats = _paths(record.get("stats", []))
    if files is None or dirs is None or missing is None or stats is None:
        return None
    return ReadSet(tree, command, files, dirs, missing, stats, _blocks(record.get("blocks")))


def _blocks(value: Any) -> dict[str, dict[str, str]] | None:
    """The stored block sets, or None (unknown: files count whole) when not well formed."""
    if not isinstance(value, dict):
        return None
    found: dict[str, dict[str, str]] = {}
    for path, ran in value.items():
        if not isinstance(path, str) or not isinstance(ran, dict):
            return None
        if not all(map(isinstance, ran, repeat(str))):
            return None
        if not all(map(isinstance, ran.values(), repeat(str))):
            return None
        found[path] = dict(ran)
    return found


def normalise(
    looked: Iterable[str],
    listed: Iterable[str],
    root: str,
    tracked: Collection[str],
    opened: Iterable[str] | None = None,
) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """(files, dirs, missing, stats) from absolute, normalised paths: ``looked`` (every path
    named), ``opened`` (those whose content was reached; None: all of ``looked``) and
    ``listed`` (directories read). Only paths under ``root`` (itself normalised) and outside
    its ``.git`` count, as repository paths: a path the tree holds (``tracked``) is a file
    read when opened, else a file looked at; one it does not hold (and that is no directory
    of it) a path looked up that the tree does not hold; a listed directory a directory. A
    tracked source whose compiled cache was opened (`cached_source`) is a file read: its
    content reached the run through the cache, after a stat of the source."""
    tracked_dirs = directories_of(tracked)
    reached = None if opened is None else set(_under(opened, root))
    files: set[str] = set()
    stats: set[str] = set()
    missing: set[str] = set()
    for relative in _under(looked, root):
        if relative in tracked:
            (files if reached is None or relative in reached else stats).add(relative)
        elif relative not in tracked_dirs:
            missing.add(relative)
    if reached is not None:
        files |= {path for path in reached if path in tracked}
        files |= {path for path in map(cached_source, reached) if path in tracked}
        stats -= files
    return frozenset(files), frozenset(_under(listed, root)), frozenset(missing), frozenset(stats)


def cached_source(path: str) -> str:
    """The source file whose content ``path`` — a cache a runner reads instead of it — holds,
    or ``""``: Python imports a module from ``D/__pycache__/NAME.TAG.pyc`` (pytest's rewritten
    tests as well) after only a stat of ``D/NAME.py``, and from a ``NAME.pyc`` beside it."""
    head, _, name = path.rpartition("/")
    if not name.endswith((".pyc", ".pyo")):
        return ""
    parent, _, last = head.rpartition("/")
    if last == "__pycache__":
        return _joined(parent, name.split(".", 1)[0] + ".py")
    return _joined(head, name[:-1])


def _joined(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _under(paths: Iterable[str], root: str) -> Iterable[str]:
    top = root.rstrip("/")
    prefix = top + "/"
    for path in paths:
        if path == top:
            relative = ""
        elif path.startswith(prefix):
            relative = path[len(prefix) :].rstrip("/")
        else:
            continue
        if relative != ".git" and not relative.startswith(".git/"):
            yield relative


def directories_of(tracked: Iterable[str]) -> frozenset[str]:
    """Every directory holding a tracked file, the root (``""``) included."""
    found = {""}
    for path in tracked:
        head = parent_dir(path)
        while head and head not in found:
            found.add(head)
            head = parent_dir(head)
    return frozenset(found)
