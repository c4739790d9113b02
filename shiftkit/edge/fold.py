"""Folding a demotion into the commits that broke it (decision record 0083): before a push,
the commits not yet on any remote are written again with each failing feature demoted from
the first commit at which it fails, so the remote receives no commit whose list says a
feature passes where its verifier fails — not only no such tip. Each commit keeps its
author, committer, dates and message; its tree differs only in the feature list and the log
(the demotion's entry, placed where the commit that broke it ends the log, so every later
log is still an append of the one before). Commits it cannot write again exactly (signed,
or already on a remote) are left alone: the caller demotes on top instead."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import features, progress
from shiftkit.edge import gitio
from shiftkit.edge.project import read_features_at

# The headers a commit written again keeps as they are: a signature (gpgsig, mergetag)
# would no longer match, so a commit with any other header is not written again.
_KEPT_HEADERS = (b"tree", b"parent", b"author", b"committer", b"encoding")


class Demotion(NamedTuple):
    """One failing feature: where its demotion starts (a commit not yet published), and
    ``only``: None — it fails from there on (at the tip too); else exactly the commits it
    fails at (it passes again after them: a break a later commit repaired)."""

    feature_id: str
    start: str
    only: frozenset[str] | None = None


# The log entry of a demotion ("demoted") or a re-mark ("re-marked") of a feature at a
# commit, whose first parent (as written again) the entry's header names: (feature, kind,
# commit, parent, the new id of each commit written again so far).
Entries = Callable[[str, str, str, str, Mapping[str, str]], str]
DEMOTES, REMARKS = "demoted", "re-marked"


class Folded(NamedTuple):
    """The branch written again: its new tip, and each commit's new id."""

    tip: str
    rewritten: dict[str, str]  # old commit -> new commit, oldest first
    first: dict[str, str]  # feature -> the (old) commit where it is first demoted
    remarked: dict[str, list[str]]  # (old) commit -> the features re-marked there

    def remarked_at(self, feature_id: str) -> list[str]:
        """The new commits where ``feature_id`` is re-marked."""
        return [self.rewritten[c] for c, ids in self.remarked.items() if feature_id in ids]


class Unpublished(NamedTuple):
    """The commits a push would publish, parents first, and their raw objects."""

    order: list[str]
    parents: dict[str, tuple[str, ...]]
    raw: dict[str, bytes]

    def subject(self, oid: str) -> str:
        message = self.raw[oid].partition(b"\n\n")[2]
        return message.decode("utf-8", "replace").split("\n", 1)[0]


def unpublished(root: Path, tip: str, held: Sequence[str]) -> Unpublished:
    """``tip`` and its ancestors that ``held`` (the remote's commits) lacks, parents first."""
    listing = gitio.out(
        ["rev-list", "--topo-order", "--reverse", "--parents", tip, "--not", *held, "--"], root
    )
    order, parents = [], {}
    for line in listing.splitlines():
        oid, *rest = line.split()
        order.append(oid)
        parents[oid] = tuple(rest)
    raw = {oid: _raw_commit(root, oid) for oid in order}
    return Unpublished(order, parents, raw)


def why_not(root: Path, commits: Unpublished, starts: Sequence[str]) -> str | None:
    """Why these commits cannot be written again from ``starts`` on (None: they can)."""
    if any(start not in commits.parents for start in starts):
        return "the commit that broke it is already on the remote"
    for oid in descendants(commits, starts):
        header = commits.raw[oid].split(b"\n\n", 1)[0]
        for line in header.split(b"\n"):
            if line and not line.startswith(b" ") and line.split(b" ", 1)[0] not in _KEPT_HEADERS:
                return f"commit {oid[:7]} is signed"
    for start in starts:
        code, out, _ = gitio.plumb(
            ["for-each-ref", "--count=1", f"--contains={start}", "refs/remotes/"], root
        )
        if code != 0 or out.strip():
            return f"commit {start[:7]} is already on a remote"
    return None


def descendants(commits: Unpublished, starts: Sequence[str]) -> list[str]:
    """The commits at or after any of ``starts``, parents first."""
    found: set[str] = set(starts)
    for oid in commits.order:
        if any(parent in found for parent in commits.parents[oid]):
            found.add(oid)
    return [oid for oid in commits.order if oid in found]


def fold(
    root: Path,
    commits: Unpublished,
    demotions: Sequence[Demotion],
    names: tuple[str, str],
    entry: Entries,
) -> Folded:
    """Write the commits again from each demotion's start on: in each, the features it
    fails at demoted where its list marks them passing (from the start on, or exactly at
    the commits named), with a log entry where each demotion begins — and, where a repaired
    feature passes again, its re-mark (an entry, and a paragraph of the message naming it,
    as rule 5 asks of every flip). Every entry stays in each later log at the place it was
    first written. ``names``: the repository paths of the feature list and the log. A
    commit whose tree and parents stay the same is kept. Writes objects only: no ref
    moves."""
    features_name, log_name = names
    todo = descendants(commits, list({d.start for d in demotions}))
    texts = gitio.read_blobs(
        root, [f"{oid}:{name}" for oid in todo for name in (features_name, log_name)]
    )
    started: dict[str, set[str]] = {}  # commit -> the features failing from it on
    demoted: dict[str, set[str]] = {}  # commit -> the features demoted in it
    placed: dict[str, list[tuple[str, str]]] = {}  # commit -> (log before, entry) in its log
    mapped: dict[str, str] = {}
    first: dict[str, str] = {}
    remarked: dict[str, list[str]] = {}
    for n, oid in enumerate(todo):
        list_text, log_text = texts[2 * n], texts[2 * n + 1] or ""
        parents = commits.parents[oid]
        here_started = {d.feature_id for d in demotions if d.start == oid and d.only is None}
        before: set[str] = set()  # demoted in a parent (as written again)
        where: list[tuple[str, str]] = []
        for parent in parents:
            here_started |= started.get(parent, set())
            before |= demoted.get(parent, set())
            where += [item for item in placed.get(parent, []) if item not in where]
        feature_list = read_features_at(root, oid, features_name) if list_text else None
        marked = {
            d.feature_id
            for d in demotions
            if feature_list is not None
            and (feature := feature_list.get(d.feature_id)) is not None
            and feature.passes
        }
        fails = here_started | {d.feature_id for d in demotions if d.only and oid in d.only}
        down, back = marked & fails, (marked - fails) & before
        parent = mapped.get(parents[0], parents[0]) if parents else ""  # (its new id)
        for feature_id in sorted(down - before):  # (a demotion begins here)
            where.append((log_text, entry(feature_id, DEMOTES, oid, parent, mapped)))
            first.setdefault(feature_id, oid)
        for feature_id in sorted(back):  # (a repaired feature passes again here)
            where.append((log_text, entry(feature_id, REMARKS, oid, parent, mapped)))
        started[oid], demoted[oid], placed[oid] = here_started, down, where
        new_list = _demoted(feature_list, down) if feature_list is not None and down else None
        new_log = _with_entries(log_text, where)
        tree = _tree_with(
            root,
            oid,
            {features_name: new_list, log_name: new_log if new_log != log_text else None},
        )
        raw = _verified_at(commits.raw[oid], _tree_of(commits.raw[oid]), tree)
        if back:
            remarked[oid] = sorted(back)
            raw = _with_paragraph(
                raw,
                f"Re-marks {', '.join(sorted(back))} passing: demoted in an earlier commit of "
                f"this push, passing again here (written in by shiftkit before publishing).",
                f"Shiftkit-Verified: {tree}",
            )
        new_parents = tuple(mapped.get(p, p) for p in parents)
        if new_parents != parents or tree != _tree_of(raw) or raw != commits.raw[oid]:
            mapped[oid] = _write_commit(root, raw, tree, new_parents)
    tip = commits.order[-1]
    return Folded(mapped.get(tip, tip), mapped, first, remarked)


def _with_paragraph(raw: bytes, text: str, trailer: str) -> bytes:
    """The commit ``raw`` with a paragraph more in its message, before its trailers (the
    last paragraph when every line of it is ``Key: value``), and ``trailer`` among them."""
    header, _, message = raw.partition(b"\n\n")
    paragraphs = message.rstrip(b"\n").split(b"\n\n")
    added, line = text.encode(), trailer.encode()
    if len(paragraphs) > 1 and all(_TRAILER.match(x) for x in paragraphs[-1].split(b"\n")):
        if line not in paragraphs[-1].split(b"\n"):
            paragraphs[-1] += b"\n" + line
        paragraphs.insert(len(paragraphs) - 1, added)
    else:
        paragraphs += [added, line]
    return header + b"\n\n" + b"\n\n".join(paragraphs) + b"\n"


_TRAILER = re.compile(rb"^[A-Za-z0-9][A-Za-z0-9-]*:\s")


def _verified_at(raw: bytes, old_tree: str, new_tree: str) -> bytes:
    """A `Shiftkit-Verified` trailer naming the old tree names the new one: they differ in
    the list and the log alone (the same argument that carries the passes recorded)."""
    if old_tree == new_tree:
        return raw
    header, _, message = raw.partition(b"\n\n")
    old, new = f"Shiftkit-Verified: {old_tree}".encode(), f"Shiftkit-Verified: {new_tree}".encode()
    return header + b"\n\n" + message.replace(old, new)


def _demoted(feature_list: features.FeatureList, ids: set[str]) -> str:
    for feature_id in sorted(ids):
        feature = feature_list.get(feature_id)
        if feature is not None:
            feature_list = feature_list.replace_feature(feature._replace(passes=False))
    return features.dumps(feature_list)


def _with_entries(text: str, placed: Sequence[tuple[str, str]]) -> str:
    """``text`` with each entry where the log it was first placed after ends (the latest
    first, so the earlier places still hold; entries of one place in the order placed), or
    at the end when this log does not continue that one (pruned since)."""
    at = [
        (len(prefix) if text.startswith(prefix) else len(text), n, entry)
        for n, (prefix, entry) in enumerate(placed)
    ]
    for position, _, entry in sorted(at, key=lambda item: (-item[0], -item[1])):
        text = progress.insert(text, position, entry)
    return text


def _tree_of(raw: bytes) -> str:
    return raw.split(b"\n", 1)[0].removeprefix(b"tree ").decode()


def _tree_with(root: Path, oid: str, texts: Mapping[str, str | None]) -> str:
    """``oid``'s tree with these files' texts (None: left as it is), through a temporary
    index: the real index and the work tree are untouched."""
    fd, index = tempfile.mkstemp(prefix="shiftkit-fold-index-")
    os.close(fd)
    try:
        env = {"GIT_INDEX_FILE": index}
        gitio.run(["read-tree", f"{oid}^{{tree}}"], root, env=env)
        for path, text in texts.items():
            if text is None:
                continue
            blob = gitio.out(["hash-object", "-w", "--stdin"], root, input=text).strip()
            mode = _mode(root, oid, path)
            gitio.run(["update-index", "--cacheinfo", f"{mode},{blob},{path}"], root, env=env)
        return gitio.out(["write-tree"], root, env=env).strip()
    finally:
        os.unlink(index)


def _mode(root: Path, oid: str, path: str) -> str:
    listing = gitio.out(["ls-tree", oid, "--", path], root).split()
    return listing[0] if listing else "100644"


def _raw_commit(root: Path, oid: str) -> bytes:
    code, out, err = gitio.plumb(["cat-file", "commit", oid], root)
    if code != 0:
        raise gitio.GitFailed(["cat-file", "commit", oid], code, err.decode(errors="replace"))
    return bytes(out)


def _write_commit(root: Path, raw: bytes, tree: str, parents: tuple[str, ...]) -> str:
    """The commit ``raw`` with another tree and parents, everything else byte for byte."""
    header, _, message = raw.partition(b"\n\n")
    kept = [
        line
        for line in header.split(b"\n")
        if not line.startswith(b"tree ") and not line.startswith(b"parent ")
    ]
    lines = [b"tree " + tree.encode(), *(b"parent " + p.encode() for p in parents), *kept]
    data = b"\n".join(lines) + b"\n\n" + message
    args = ["hash-object", "-t", "commit", "-w", "--stdin"]
    code, out, err = gitio.plumb(args, root, data)
    if code != 0:
        raise gitio.GitFailed(args, code, err.decode(errors="replace"))
    return bytes(out).decode().strip()
