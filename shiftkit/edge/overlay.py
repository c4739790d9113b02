"""Re-verification runs the oracle as defined (issue 26 item 2; decision record 0081).

For a feature re-verified at a judged commit, its oracle files (rule 14's: `core.oracle`
through `core.protected`, one source of truth) are taken as the newest trusted commit on the
commit's history had them — the commit that appended the feature to the list, or a person's
action after it (an override trailer, and under the "signed" policy a good signature: what
rules 14 and 11 ask) — and written over the judged tree as a tree of their own
(`Overlay.tree`), which the verifier's temporary checkout then holds. A file the definition
did not have that rule 14 counts as an oracle change (a root `conftest.py`, a module that
shadows the runner) is left out of it.

Cheap in the common case: one `git log` of the list's first-parent history and a few reads of
it (the definition, found by a search), and one `git diff-tree` from the definition to the
judged commit; only when an oracle file changed since does a `git log` of those files ask who
changed them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import features, messages, protected
from shiftkit.core import overlay as core
from shiftkit.core.config import Config
from shiftkit.edge import gitio, protection


class Overlay(NamedTuple):
    """The judged tree with a feature's oracle as defined (``tree``), and what differed."""

    tree: str
    restored: tuple[core.Restored, ...]

    def note(self) -> str:
        return core.note(self.restored)


Work = Sequence[tuple[features.Feature, str]]  # (the feature, its effective verify command)


def overlays(root: Path, tip: str, tree: str, work: Work, cfg: Config) -> dict[str, Overlay]:
    """The overlay each of ``work`` needs when re-verified at the commit ``tip`` (whose tree
    is ``tree``), by feature id, judged by ``cfg`` (the judge's settings: the default oracle,
    the list's name, the decision folder). A feature whose oracle is as defined (the common
    case) has none, and so has one whose definition is not on ``tip``'s history."""
    defined = definitions(root, tip, cfg.features, [feature.id for feature, _ in work])
    diffs: dict[str, tuple[protection.Rows, protection.Pairs]] = {}
    found = {}
    for feature, command in work:
        definition = defined.get(feature.id)
        if definition is None:
            continue
        if definition not in diffs:
            diffs[definition] = _diff(root, definition, tip)
        made = _overlay(root, tip, tree, definition, diffs[definition], feature, command, cfg)
        if made is not None:
            found[feature.id] = made
    return found


def _diff(root: Path, old: str, new: str) -> tuple[protection.Rows, protection.Pairs]:
    args = ["diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-abbrev", old, new]
    code, out, err = gitio.plumb(args, root)
    if code != 0:
        raise gitio.GitFailed(args, code, err.decode("utf-8", "replace"))
    return protection.raw_rows(out)


def _overlay(
    root: Path,
    tip: str,
    tree: str,
    definition: str,
    diff: tuple[protection.Rows, protection.Pairs],
    feature: features.Feature,
    command: str,
    cfg: Config,
) -> Overlay | None:
    ground = protected.ground(
        [(feature.id, command, feature.oracle)],
        cfg.oracle,
        cfg.decisions,
        protected.protocol_files(cfg.features, cfg.progress, cfg.log.archive),
    )
    rows, pairs = diff
    # Every oracle file that differs from the definition is a candidate, a new one too
    # (also asked as a change: a person may have added it since, and their version is then
    # the defined one).
    candidates = [*rows, *(("M", path) for status, path in rows if status == "A")]
    hits = _hits(root, ground, candidates, pairs, cfg, feature.id)
    if not hits:
        return None
    chosen = core.sources(hits, touches(root, definition, tip, hits), definition)
    ids = gitio.object_ids(
        root, [spec for path in hits for spec in (f"{chosen[path]}:{path}", f"{tip}:{path}")]
    )
    versions = {path: (ids[2 * n], ids[2 * n + 1]) for n, path in enumerate(hits)}
    kept = _hits(root, ground, core.changed_rows(versions), versions, cfg, feature.id)
    if not kept:
        return None
    restored = tuple(core.Restored(p, chosen[p], versions[p][0] is None) for p in kept)
    return Overlay(overlaid_tree(root, tree, restored), restored)


def _hits(
    root: Path,
    ground: protected.Ground,
    rows: protection.Rows,
    pairs: protection.Pairs,
    cfg: Config,
    feature_id: str,
) -> list[str]:
    """The paths of ``rows`` that rule 14 counts as a change of ``feature_id``'s oracle."""
    if not rows:
        return []
    texts = protection.texts(root, rows, pairs, cfg.decisions)
    found = protected.changes(ground, rows, texts)
    return list(dict.fromkeys(hit.path for hit in found if hit.feature == feature_id))


# -- who changed them: the definition, or a person ----------------------------------------


def touches(root: Path, definition: str, tip: str, paths: Sequence[str]) -> list[core.Touch]:
    """The commits after ``definition`` up to ``tip`` that changed any of ``paths``, newest
    first (one `git log`), each marked trusted when it is a person's action."""
    args = [
        "--literal-pathspecs",
        "log",
        "-z",
        "--topo-order",
        "--format=%x01%H",
        "--name-only",
        f"{definition}..{tip}",
        "--",
        *paths,
    ]
    listing = gitio.out(args, root)
    changed: list[tuple[str, frozenset[str]]] = []
    for record in listing.split("\x01"):
        oid, _, names = record.partition("\0")
        if oid:
            changed.append((oid, frozenset(n for n in names.lstrip("\n").split("\0") if n)))
    people = person_commits(root, [oid for oid, _ in changed])
    return [core.Touch(oid, names, oid in people) for oid, names in changed]


def person_commits(root: Path, oids: Sequence[str]) -> set[str]:
    """Those of ``oids`` that are a person's action as rules 14 and 11 judge one: an override
    trailer (`messages.override_reason`, what `apply_override` reads), and under the parent's
    "signed" policy a good signature by a key it allows (`judge.signatures_problem`)."""
    if not oids:
        return set()
    from shiftkit.edge import judge

    shown = gitio.out(["log", "--no-walk=unsorted", "--format=%H%x00%P%x00%B%x01", *oids], root)
    found = set()
    for record in shown.split("\x01"):
        oid, _, rest = record.lstrip("\n").partition("\0")
        parents, _, message = rest.partition("\0")
        if not oid or messages.override_reason(message) is None:
            continue
        parent_ids = parents.split()
        first = parent_ids[0] if parent_ids else None
        settings = judge.at_revisions(root, first, f"{oid}:", parent_ids[1:])
        if (
            settings.judge.policy != "signed"
            or judge.signatures_problem(root, oid, settings) is None
        ):
            found.add(oid)
    return found


# -- the definition: the commit that appended the feature to the list -----------------------

MAX_DESCENTS = 16  # merges followed into a side branch, at most
_HOLDS: dict[tuple[str, str], bool] = {}  # (list blob, feature id) -> the list holds it


def definitions(root: Path, tip: str, list_name: str, ids: Sequence[str]) -> dict[str, str]:
    """The commit on ``tip``'s history that appended each of ``ids`` to ``list_name``: a
    search (`SPREAD` probes a read) of the list's first-parent history (a feature, once
    appended, stays: rule 2), its reads batched across features; a feature that came in
    through a merge is followed into the side that brought it. A feature the list at ``tip``
    lacks is left out."""
    found: dict[str, str] = {}
    pending = [(tip, list(dict.fromkeys(ids)))]
    for _ in range(MAX_DESCENTS):
        if not pending:
            break
        start, wanted = pending.pop()
        chain = _chain(root, start, list_name)
        if not chain:
            continue
        newest = _holding(root, [(chain[0][0], i) for i in wanted], list_name)
        # (for each feature: chain[low] holds it, chain[high] does not — len(chain): none)
        bounds = {i: (0, len(chain)) for i, held in zip(wanted, newest, strict=True) if held}
        while any(high - low > 1 for low, high in bounds.values()):
            probes = [(i, n) for i, (low, high) in bounds.items() for n in _probes(low, high)]
            held = _holding(root, [(chain[n][0], i) for i, n in probes], list_name)
            for (i, n), holds in zip(probes, held, strict=True):
                low, high = bounds[i]
                if low < n < high:  # (a list that lost it and got it back: the newest gap)
                    bounds[i] = (n, high) if holds else (low, n)
        for feature_id, (low, _) in bounds.items():
            oid, parents = chain[low]
            others = parents[1:]
            sides = _holding(root, [(p, feature_id) for p in others], list_name)
            side = next((p for p, holds in zip(others, sides, strict=True) if holds), None)
            if side is None:
                found[feature_id] = oid
            else:
                pending.append((side, [feature_id]))
    return found


SPREAD = 8  # probes per feature in each read: a search of 5,000 commits takes 4 reads


def _probes(low: int, high: int) -> list[int]:
    """Up to `SPREAD` indices strictly between ``low`` and ``high``, evenly spread."""
    inside = high - low - 1
    if inside <= 0:
        return []
    count = min(SPREAD, inside)
    return sorted({low + 1 + (inside * k) // count for k in range(count)})


def _chain(root: Path, start: str, list_name: str) -> list[tuple[str, tuple[str, ...]]]:
    """The first-parent commits from ``start`` that changed the list, newest first, with
    their parents."""
    listing = gitio.out(
        ["--literal-pathspecs", "log", "--first-parent", "--format=%H %P", start, "--", list_name],
        root,
    )
    chain = []
    for line in listing.splitlines():
        oid, *parents = line.split()
        chain.append((oid, tuple(parents)))
    return chain


def _holding(root: Path, asked: Sequence[tuple[str, str]], list_name: str) -> list[bool]:
    """For each (commit, feature id), whether the list at the commit holds the feature: its
    `"id": "..."` pair in the text (a string value cannot hold an unescaped quote, and no
    other object of a list has an id), so a large list is searched, not parsed. One `git
    cat-file` for all."""
    import json
    import re

    if not asked:
        return []
    if len(_HOLDS) > 4096:
        _HOLDS.clear()
    commits = list(dict.fromkeys(commit for commit, _ in asked))
    read = dict(
        zip(
            commits,
            gitio.read_blobs_with_ids(root, [f"{c}:{list_name}" for c in commits]),
            strict=True,
        )
    )
    found = []
    for commit, feature_id in asked:
        blob = read[commit]
        if blob is None:
            found.append(False)
            continue
        key = (blob[0], feature_id)
        if key not in _HOLDS:
            pair = r'"id"\s*:\s*' + re.escape(json.dumps(feature_id, ensure_ascii=False))
            _HOLDS[key] = re.search(pair, blob[1]) is not None
        found.append(_HOLDS[key])
    return found


# -- the overlaid tree ------------------------------------------------------------------------


def overlaid_tree(root: Path, tree: str, restored: Sequence[core.Restored]) -> str:
    """``tree`` with each restored file as its source had it (or removed): written through a
    temporary index, the repository's own untouched."""
    import os
    import tempfile

    lines = [f"0 {gitio.ZERO_OID}\t{item.path}" for item in restored if item.removed]
    by_source: dict[str, list[str]] = {}
    for item in restored:
        if not item.removed:
            by_source.setdefault(item.source, []).append(item.path)
    for source, paths in by_source.items():
        listing = gitio.out(["ls-tree", "-r", "-z", "--full-tree", source, "--", *paths], root)
        wanted = set(paths)
        lines += [entry for entry in listing.split("\0") if entry.partition("\t")[2] in wanted]
    with tempfile.TemporaryDirectory(prefix="shiftkit-overlay-") as folder:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        gitio.run(["read-tree", tree], root, env=env)
        gitio.run(
            ["update-index", "-z", "--index-info"], root, input="\0".join(lines) + "\0", env=env
        )
        return gitio.out(["write-tree"], root, env=env).strip()
