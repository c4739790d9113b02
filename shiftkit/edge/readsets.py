"""Read sets: measuring what a verifier reads while it runs (strace), keeping the set of each
passing feature in shiftkit's state, and asking which passing features a change affects
(decision record 0053; the pure part is `shiftkit.core.affected`).

Stable API (the finish gate and the publish gate share it):

- `measuring()` — a context giving a `Measure` (the argv prefix to run a verifier under, and
  `Measure.read_set(...)` after it ran), or None when strace is missing or cannot trace here
  (`SHIFTKIT_READSETS=off` turns it off): the feature's set is then unknown;
- `record(common_dir, feature_id, read_set)` / `forget(common_dir, feature_id)`;
- `load(common_dir, commands)` — each feature's stored set, None (unknown) when absent or
  measured for another verifier;
- `run_measured(common_dir, feature_id, command, root, tree, run)` — one verifier run
  under the tracer, its set kept when it passed;
- `change(root, old_tree, new_tree)` — a `Change` between two trees (directories included);
- `affected_at(root, common_dir, commands, new_tree)` — the features of ``commands`` (in its
  order) a move of the tree to ``new_tree`` can break.
- `selection_at(...)` — those and why the rest were left out (`affected.Skipped`);
  `selection_by(common_dir, commands, changes_from)` the same with the changes given.

The sets live in the common git dir (``shiftkit/readsets.sqlite3``: `readstore`, decision
record 0121), keyed by feature id and holding the tree and verifier they were measured at.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import affected, blocks, prefilter, trace
from shiftkit.edge import blocksets, gitio, readstore, verify

FOLDER = "readsets"
OFF_VARIABLE = "SHIFTKIT_READSETS"  # "off": measure nothing (every set unknown)
STRACE_FILTER = "trace=%file,?getdents,getdents64"

_probed: list[tuple[str, ...] | None] = []  # (the probe's answer, once)


def tracer() -> tuple[str, ...] | None:
    """strace's argv (before ``-o``) when it is on PATH and can trace a process here (a
    container may forbid ptrace), probed once per process; None otherwise."""
    if os.environ.get(OFF_VARIABLE) == "off":
        return None
    if not _probed:
        _probed.append(_probe())
    return _probed[0]


def _probe() -> tuple[str, ...] | None:
    import subprocess

    program = shutil.which("strace")
    if program is None:
        return None
    for fast in (("--seccomp-bpf",), ()):
        # (verbose=none: structures are not decoded — less work, and nothing read needs them)
        argv = (program, "-f", "-ff", "-qq", "-y", *fast, "-e", "verbose=none", "-e", STRACE_FILTER)
        try:
            proc = subprocess.run(
                [*argv, "-o", os.devnull, "--", "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode == 0:
            return argv
    return None


class Measure(NamedTuple):
    """One verifier run's measurement: run the command under `prefix`, then `read_set`."""

    prefix: tuple[str, ...]
    directory: Path  # strace's output files (one per process)
    blocks: bool = False  # the run's Python processes measured too (`blocksets`)

    def read_set(self, root: Path, tree: str, command: str) -> affected.ReadSet:
        """The set of the run that just finished in ``root`` (a checkout of ``tree``)."""
        processes = dict(_processes(self.directory, str(root)))
        seen = trace.merge(processes.values())
        tracked = frozenset(_tree_files(root, tree))
        roots = {str(root), os.path.realpath(root)}
        found = [
            affected.normalise(seen.looked, seen.listed, top, tracked, seen.opened) for top in roots
        ]
        files, dirs, missing, stats = (
            frozenset().union(*(one[n] for one in found)) for n in range(4)
        )
        ran = _blocks_ran(self.directory, root, tree, tracked, processes) if self.blocks else None
        return affected.ReadSet(tree, command, files, dirs, missing, stats - files, ran)


@contextmanager
def measuring(enabled: bool = True) -> Iterator[Measure | None]:
    """A `Measure` whose output folder is removed after; None when not ``enabled`` or no
    tracer works here."""
    argv = tracer() if enabled else None
    if argv is None:
        yield None
        return
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="shiftkit-trace-"))
    try:
        yield Measure((*argv, "-o", str(directory / "t"), "--"), directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _processes(directory: Path, cwd: str) -> Iterator[tuple[int, trace.Seen]]:
    """Each traced process's record, by process id (strace's ``-ff`` files: ``t.PID``)."""
    for path in sorted(directory.glob("t.*")):
        pid = path.name.rpartition(".")[2]
        try:
            text = path.read_bytes().decode("latin-1")
        except OSError:
            continue
        yield int(pid) if pid.isdigit() else -1, trace.read_process(text.splitlines(), cwd)


def _blocks_ran(
    directory: Path,
    root: Path,
    tree: str,
    tracked: frozenset[str],
    processes: Mapping[int, trace.Seen],
) -> dict[str, dict[str, str]] | None:
    """The blocks the run's Python processes executed, per committed file (`blocksets`), or
    None when any process that opened a committed Python file went unmeasured."""
    from shiftkit.edge import blocksets

    if not blocksets.wrote_data(directory):
        return None  # (no process measured: every interpreter older than 3.12, say)
    code = {path for path in tracked if path.endswith(".py")}
    needed = set()
    for pid, seen in processes.items():
        reached = {
            p
            for one in (str(root), os.path.realpath(root))
            for p in affected.normalise(seen.opened, (), one, tracked, seen.opened)[0]
        }
        if reached & code:
            needed.add(pid)
    paths = sorted(code)
    texts = gitio.read_blobs(root, [f"{tree}:{path}" for path in paths])
    sources = {path: text for path, text in zip(paths, texts, strict=True) if text is not None}
    return blocksets.collect(directory, root, sources, needed)


def _tree_files(root: Path, tree: str) -> list[str]:
    listing = gitio.run(
        ["ls-tree", "-r", "--name-only", "-z", tree], root, clean_env=verify.clean_environment()
    ).stdout
    return [path for path in listing.split("\0") if path]


# -- the store (`readstore`: one SQLite database, decision record 0121) -------------------------


def record(common_dir: Path, feature_id: str, read_set: affected.ReadSet) -> None:
    """Keep ``read_set`` as ``feature_id``'s (replacing the one before)."""
    readstore.record(common_dir, [feature_id], read_set)


def forget(common_dir: Path, feature_id: str) -> None:
    """``feature_id``'s set is unknown from now (a pass whose reads were not measured)."""
    readstore.forget(common_dir, [feature_id])


def load_one(common_dir: Path, feature_id: str) -> affected.ReadSet | None:
    return readstore.load(common_dir, {feature_id}).get(feature_id)


def load(common_dir: Path, commands: Mapping[str, str]) -> dict[str, affected.ReadSet | None]:
    """Each feature's stored set (``commands``: feature id → its verifier's cache command),
    None when there is none or it was measured for another command."""
    stored = readstore.load(common_dir, commands.keys())
    found = {i: affected.known(stored.get(i), command) for i, command in commands.items()}
    if blocksets.enabled():
        return found
    # (block sets off: every file a run read counts whole, whatever was measured before)
    return {i: s._replace(blocks=None) if s is not None else None for i, s in found.items()}


# -- changes between trees -------------------------------------------------------------------


def change(root: Path, old_tree: str, new_tree: str) -> affected.Change:
    """The paths that differ between two trees — directories included (``-t``), renames as
    a deletion and an addition — which are new, and which a stat sees changed (added,
    deleted, another type or mode, emptied or filled: `_emptied`)."""
    return _completed(root, {old_tree: _diff(root, old_tree, new_tree)})[old_tree]


def changes(
    root: Path, old_trees: Sequence[str], new_tree: str, common_dir: Path | None = None
) -> dict[str, affected.Change]:
    """`change` from each of ``old_trees`` that is a tree here (the others left out) to
    ``new_tree``: one git process a tree, and the sizes and the changed Python files'
    fingerprints of them all asked for once (each new file parsed once; with ``common_dir``,
    once per blob ever: `readstore.prints`)."""
    here = _trees_here(root, old_trees)
    present = [tree for tree in old_trees if tree in here]
    diffs = {tree: _diff(root, tree, new_tree) for tree in present}
    return _completed(root, diffs, common_dir)


_Diff = tuple[set[str], set[str], set[str], list[tuple[str, str, str]]]


def _diff(root: Path, old_tree: str, new_tree: str) -> _Diff:
    """(paths, added, resized, same kind: (path, old blob, new blob)) between two trees,
    before the sizes of the files modified in place are known."""
    listing = gitio.out(
        ["diff-tree", "-r", "-t", "--no-renames", "-z", old_tree, new_tree], root
    ).split("\0")
    paths: set[str] = set()
    added: set[str] = set()
    resized: set[str] = set()
    same_kind: list[tuple[str, str, str]] = []  # (path, old blob, new blob)
    for header, path in zip(listing[0::2], listing[1::2], strict=False):
        fields = header.lstrip(":").split()
        if len(fields) < 5 or not path:
            continue
        old_mode, new_mode, old_oid, new_oid, status = fields[:5]
        paths.add(path)
        if status.startswith("A"):
            added.add(path)
        if status[:1] in "AD" or old_mode != new_mode:
            resized.add(path)
        elif status.startswith("M") and new_mode.startswith("10"):
            same_kind.append((path, old_oid, new_oid))
    return paths, added, resized, same_kind


def _completed(
    root: Path, diffs: Mapping[str, _Diff], common_dir: Path | None = None
) -> dict[str, affected.Change]:
    """Each diff as a `Change`: the sizes of its files modified in place (`_emptied`) and the
    fingerprints of its Python ones, asked for once for all."""
    modified = [row for _, _, _, same_kind in diffs.values() for row in same_kind]
    sizes = _sizes(root, sorted({oid for _, a, b in modified for oid in (a, b)}))
    prints = _fingerprints(root, modified, common_dir)
    found = {}
    for tree, (paths, added, resized, same_kind) in diffs.items():
        resized |= {path for path, a, b in same_kind if _emptied(sizes.get(a), sizes.get(b))}
        code = {path: prints[new] for path, _, new in same_kind if path.endswith(".py")}
        found[tree] = affected.Change(frozenset(paths), frozenset(added), frozenset(resized), code)
    return found


def _fingerprints(
    root: Path, modified: Sequence[tuple[str, str, str]], common_dir: Path | None = None
) -> dict[str, dict[str, str] | None]:
    """The block fingerprints of the new blob of each modified Python file, by blob id —
    kept in the store by blob id when ``common_dir`` is given: a blob's content never
    changes, and parsing a large module costs more than the rest of a selection."""
    code = sorted({new for path, _, new in modified if path.endswith(".py")})
    kept = readstore.prints(common_dir, code) if common_dir is not None else {}
    fresh = [oid for oid in code if oid not in kept]
    texts = gitio.read_blobs(root, fresh)
    found = {
        oid: blocks.fingerprints(text)
        for oid, text in zip(fresh, texts, strict=True)
        if text is not None  # (a blob not read: not kept, None this time)
    }
    if common_dir is not None:
        readstore.keep_prints(common_dir, found)
    return {oid: kept[oid] if oid in kept else found.get(oid) for oid in code}


def _emptied(old: int | None, new: int | None) -> bool:
    """Whether a stat can tell the two apart without reading the file: one is empty and the
    other not (`test -s`), or a size is unknown. A verifier that only looks at a file —
    pytest stats every entry of the root — is not changed by its growing from one non-empty
    size to another; one that reads it has it among the files read (decision record 0075)."""
    if old is None or new is None:
        return True
    return (old == 0) != (new == 0)


def _sizes(root: Path, oids: Sequence[str]) -> dict[str, int]:
    if not oids:
        return {}
    proc = gitio.run(
        ["cat-file", "--batch-check=%(objectname) %(objectsize)"],
        root,
        input="\n".join(oids) + "\n",
        check=False,
    )
    found = {}
    for line in proc.stdout.splitlines():
        oid, _, size = line.partition(" ")
        if size.isdigit():
            found[oid] = int(size)
    return found


class Selection(NamedTuple):
    touched: list[str]  # the features to re-run, in the order asked
    skipped: affected.Skipped  # the rest, by why


def selection_at(
    root: Path,
    common_dir: Path,
    commands: Mapping[str, str],
    new_tree: str,
    bookkeeping: Collection[str] = (),
) -> Selection:
    """The features of ``commands`` (feature id → verifier cache command; in its order)
    whose verifiers a move to ``new_tree`` can break: each judged against the change from the
    tree its read set was measured at, unknown sets all included; and why the rest were not.
    ``bookkeeping``: shiftkit's own files, which count only where a verifier read them
    (`affected.quieted`). The one selection of the finish gate, the publish gate, `sync`,
    `check` and the start check.

    Only the sets a change can touch are read (`prefilter`: the store's rows that mention a
    changed path, a block whose fingerprint changed) and judged by `affected`; the others are
    counted. A store that cannot be read selects every feature."""
    return selection_by(
        common_dir,
        commands,
        lambda trees: changes(root, trees, new_tree, common_dir),
        bookkeeping,
    )


def selection_by(
    common_dir: Path,
    commands: Mapping[str, str],
    changes_from: Callable[[Sequence[str]], Mapping[str, affected.Change]],
    bookkeeping: Collection[str] = (),
) -> Selection:
    """`selection_at` with the changes from the trees the sets were measured at given by
    ``changes_from`` (tree → change; a tree left out: its sets are unknown)."""
    ids = list(commands)
    everything = Selection(ids, affected.Skipped())

    def work(con: sqlite3.Connection) -> Selection:
        con.execute("BEGIN")  # (one snapshot: heads and rows of the same sets)
        try:
            return _selection(con, commands, changes_from, bookkeeping)
        finally:
            con.execute("COMMIT")

    return readstore.guarded(common_dir, everything, work)


def _selection(
    con: sqlite3.Connection,
    commands: Mapping[str, str],
    changes_from: Callable[[Sequence[str]], Mapping[str, affected.Change]],
    bookkeeping: Collection[str],
) -> Selection:
    ids = list(commands)
    stored = readstore.heads(con)
    heads = {i: head for i in ids if (head := stored.get(i)) is not None and head[2] == commands[i]}
    named = readstore.trees(con)
    measured = {tree_id: named[tree_id] for tree_id in {head[1] for head in heads.values()}}
    found = changes_from(list(dict.fromkeys(measured[head[1]] for head in heads.values())))
    unknown = {i for i in ids if i not in heads or measured[heads[i][1]] not in found}
    owner = {heads[i][0]: i for i in ids if i not in unknown}
    at_tree: dict[int, set[int]] = {}
    for set_id, feature_id in owner.items():
        at_tree.setdefault(heads[feature_id][1], set()).add(set_id)
    every_at: dict[int, set[int]] = {tree_id: set() for tree_id in at_tree}
    for set_id, tree_id, _ in stored.values():
        if tree_id in every_at:
            every_at[tree_id].add(set_id)
    by_blocks = blocksets.enabled()
    candidates: set[int] = set()
    reading = 0
    quiet = {tree: affected.quieted(change, bookkeeping) for tree, change in found.items()}
    for tree_id, owned in at_tree.items():
        probe = prefilter.probe(quiet[measured[tree_id]], by_blocks)
        found_here = readstore.candidates(con, tree_id, probe) & owned
        candidates |= found_here
        # (the sets of this tree not asked about, or for another command, are not counted)
        others = every_at[tree_id] - owned
        reading += readstore.reading(con, tree_id, sorted(probe.paths), others | found_here)
    sets = {owner[s]: one for s, one in readstore.sets_of(con, candidates).items()}
    unknown |= {owner[s] for s in candidates if owner[s] not in sets}  # (did not read back)
    if not by_blocks:
        sets = {i: one._replace(blocks=None) for i, one in sets.items()}
    touched, skipped = prefilter.combine(ids, unknown, sets, quiet, reading)
    return Selection(touched, skipped)


def affected_at(
    root: Path,
    common_dir: Path,
    commands: Mapping[str, str],
    new_tree: str,
    bookkeeping: Collection[str] = (),
) -> list[str]:
    """`selection_at`'s features to re-run."""
    return selection_at(root, common_dir, commands, new_tree, bookkeeping).touched


def _trees_here(root: Path, trees: Sequence[str]) -> set[str]:
    """Those of ``trees`` that name a tree in the repository at ``root`` (a name that is not
    an object id is asked about on its own: one line each for all the others)."""
    ids = [tree for tree in trees if _OID.fullmatch(tree)]
    named = set(ids)
    found = {tree for tree in trees if tree not in named and _has_tree(root, tree)}
    if ids:
        proc = gitio.run(
            ["cat-file", "--batch-check=%(objecttype)"],
            root,
            input="".join(f"{tree}^{{tree}}\n" for tree in ids),
            check=False,
        )
        answers = proc.stdout.split("\n")
        if proc.returncode == 0 and len(answers) > len(ids):
            found |= {tree for tree, kind in zip(ids, answers, strict=False) if kind == "tree"}
        else:
            found |= {tree for tree in ids if _has_tree(root, tree)}
    return found


_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _has_tree(root: Path, tree: str) -> bool:
    return gitio.run(["cat-file", "-e", f"{tree}^{{tree}}"], root, check=False).returncode == 0


# -- one verifier run, measured -----------------------------------------------------------


def run_measured(
    common_dir: Path,
    feature_id: str | Sequence[str],
    command: str,
    root: Path,
    tree: str,
    run: Callable[[Sequence[str]], verify.Outcome],
) -> verify.Outcome:
    """``run(prefix)`` — ``feature_id``'s verifier ``command`` in ``root`` (a checkout of
    ``tree``) — under the tracer when one works here; a pass keeps the set it read (a pass
    whose reads could not be measured forgets the old set: unknown again). Several ids: the
    features that share this verifier, each keeping the same set."""
    owners = [feature_id] if isinstance(feature_id, str) else list(feature_id)
    with measuring() as measure:
        if measure is not None and blocksets.enabled():
            extra = blocksets.prefix(measure.directory, root)
            measure = measure._replace(prefix=(*measure.prefix, *extra), blocks=bool(extra))
        outcome = run(measure.prefix if measure is not None else ())
        if outcome.ok:
            found = measure.read_set(root, tree, command) if measure is not None else None
            if found is not None:
                readstore.record(common_dir, owners, found)
            else:
                readstore.forget(common_dir, owners)
    return outcome
