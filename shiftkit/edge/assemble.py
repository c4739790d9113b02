"""The tree a verdict runs on (decision record 0086): the judged tree's files under `code`,
everything else as a person last left it (`core.ground`).

The person's state at a commit T is T's tree with every change an agent made outside `code`
since `code` took its present value taken back: for each such path, the version of the newest
trusted commit that changed it (a person's action — an override trailer, under the "signed"
policy a good signature: `overlay.person_commits`, rules 14 and 11 — or a commit that appended
features, whose definitions are a person's: decision record 0050), else the version at the
commit that set `code`. One `git log` of T's history since then, read once per T and kept by
T's id in the git dir.

Every temporary checkout a verifier runs in holds `assembled(root, tree, tip)`: for a commit
judged, ``tip`` is the commit itself; for a staged tree, the HEAD it is staged on (the staged
change itself is an agent's until committed). Without `code` in ``tip``'s settings the judged
tree is returned as it is (the list-based boundary of rule 14 and the oracle overlay).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from shiftkit.core import config, ground
from shiftkit.core import overlay as overlay_core
from shiftkit.core.ledger import LEDGER_FILE
from shiftkit.edge import gitio, state
from shiftkit.edge.atomic import atomic_write

_ID = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')
_SETTINGS: dict[str, config.Config | None] = {}  # settings blob id -> parsed (None: unreadable)
# (keyed by the repository too: a tree written in one is not in another, a copy of it)
_PERSON: dict[tuple[str, str], str] = {}  # (repository, commit) -> its person's tree
_ASSEMBLED: dict[tuple[str, str, str], str] = {}  # (repository, judged, person's) -> assembled
# (where a person's tree is kept by its commit; "-2" since merges count as changes, 0112: a
# tree kept by an earlier shiftkit is not read)
PERSON_FOLDER = "person-2"


def settings_at(root: Path, commit: str) -> config.Config | None:
    """The settings committed at ``commit`` (None: none, or unreadable: then no assembly)."""
    found = gitio.read_blobs_with_ids(root, [f"{commit}:{config.CONFIG_FILE}"])[0]
    if found is None:
        return None
    blob, text = found
    if blob not in _SETTINGS:
        try:
            _SETTINGS[blob] = config.parse(text)
        except Exception:  # (a broken file judges nothing; the rules say why elsewhere)
            _SETTINGS[blob] = None
    return _SETTINGS[blob]


def protocol_files(cfg: config.Config) -> frozenset[str]:
    return frozenset({cfg.features, cfg.progress, cfg.log.archive, LEDGER_FILE})


def assembled(root: Path, tree: str, tip: str | None = None) -> str:
    """The tree a verifier judging ``tree`` runs on: its files under `code` over the person's
    state at ``tip`` (default HEAD). ``tree`` itself when ``tip``'s settings set no `code`."""
    tip = tip or gitio.head_oid(root)
    if tip is None:
        return tree
    cfg = settings_at(root, tip)
    if cfg is None or not cfg.code:
        return tree
    person = person_tree(root, tip, cfg)
    key = (str(root), tree, person)
    if key not in _ASSEMBLED:
        judged = _entries(root, tree)
        kept = ground.assemble(judged, _entries(root, person), cfg.code, protocol_files(cfg))
        _ASSEMBLED[key] = tree if kept == judged else _write(root, kept)
    return _ASSEMBLED[key]


def person_tree(root: Path, tip: str, cfg: config.Config) -> str:
    """``tip``'s tree with every untrusted change outside `code` since `code` was set taken
    back (kept by ``tip`` in memory and in the git dir)."""
    if (str(root), tip) in _PERSON:
        return _PERSON[(str(root), tip)]
    common = gitio.common_dir(root)
    kept = state.repo_state(common) / PERSON_FOLDER / tip
    try:
        found = kept.read_text().strip()
    except OSError:
        found = ""
    if not re.fullmatch(r"[0-9a-f]{40,64}", found):
        found = _person_tree(root, tip, cfg)
        atomic_write(kept, found + "\n")
    _PERSON[(str(root), tip)] = found
    return found


def _person_tree(root: Path, tip: str, cfg: config.Config) -> str:
    tree = gitio.out(["rev-parse", f"{tip}^{{tree}}"], root).strip()
    base = code_set_at(root, tip, cfg.code)
    touches = _touches(root, base, tip, cfg)
    if not touches:
        return tree
    trusted = _trusted(root, [oid for oid, _ in touches], cfg.features)
    restored: list[overlay_core.Restored] = []
    seen: set[str] = set()
    for index, (oid, paths) in enumerate(touches):  # (newest first)
        for path in paths - seen:
            seen.add(path)
            if oid in trusted:
                continue  # (the newest change of it is a person's: tip's version stands)
            source = next(
                (old for old, names in touches[index + 1 :] if old in trusted and path in names),
                base,
            )
            restored.append(overlay_core.Restored(path, source))
    if not restored:
        return tree
    present = gitio.object_ids(root, [f"{item.source}:{item.path}" for item in restored])
    restored = [
        item._replace(removed=oid is None) for item, oid in zip(restored, present, strict=True)
    ]
    from shiftkit.edge import overlay

    return overlay.overlaid_tree(root, tree, restored)


def code_set_at(root: Path, tip: str, code: Sequence[str]) -> str:
    """The oldest commit on ``tip``'s first-parent history since which the settings' `code`
    has been ``code`` (the commit that set it, as far as the history of the settings shows)."""
    listing = gitio.out(
        ["log", "--first-parent", "--format=%H", tip, "--", config.CONFIG_FILE], root
    ).split()
    if not listing:
        return tip
    texts = gitio.read_blobs(root, [f"{oid}:{config.CONFIG_FILE}" for oid in listing])
    base = listing[0]
    for oid, text in zip(listing, texts, strict=True):
        try:
            same = text is not None and config.parse(text).code == tuple(code)
        except Exception:
            same = False
        if not same:
            break
        base = oid
    return base


def _touches(
    root: Path, base: str, tip: str, cfg: config.Config
) -> list[tuple[str, frozenset[str]]]:
    """The commits after ``base`` up to ``tip`` (newest first) that changed a path a verdict
    takes from the person's state, with those paths. A merge changed every path in which it
    differs from one of its parents (decision record 0112): a file only the merge brings is
    its own change, not nobody's."""
    listing = gitio.out(
        [
            "-c",
            "core.quotePath=false",
            "log",
            "-z",
            "--topo-order",
            "--no-renames",
            "--diff-merges=separate",
            "--format=%x01%H",
            "--name-only",
            f"{base}..{tip}",
        ],
        root,
    )
    protocol = protocol_files(cfg)
    tip_paths = gitio.out(["ls-tree", "-r", "-z", "--name-only", tip], root).split("\0")
    tests = ground.test_folders(tip_paths)
    found: dict[str, frozenset[str]] = {}  # (a merge is listed once per parent: one entry)
    for record in listing.split("\x01"):
        oid, _, names = record.partition("\0")
        if not oid:
            continue
        paths = frozenset(
            name
            for name in names.lstrip("\n").split("\0")
            if name and not ground.judged_from_commit(name, cfg.code, protocol, tests)
        )
        if paths:
            found[oid.strip()] = found.get(oid.strip(), frozenset()) | paths
    return list(found.items())


def _trusted(root: Path, oids: Sequence[str], list_name: str) -> set[str]:
    """Those of ``oids`` that are a person's: an override trailer (and under "signed" a good
    signature), or a commit that appended features (their definitions are a person's)."""
    from shiftkit.edge import overlay

    trusted = overlay.person_commits(root, oids)
    specs = [spec for oid in oids for spec in (f"{oid}:{list_name}", f"{oid}^:{list_name}")]
    texts = gitio.read_blobs(root, specs)
    for n, oid in enumerate(oids):
        new, old = texts[2 * n], texts[2 * n + 1]
        if new is not None and set(_ID.findall(new)) - set(_ID.findall(old or "")):
            trusted.add(oid)
    return trusted


def _entries(root: Path, tree: str) -> list[ground.Entry]:
    listing = gitio.out(["ls-tree", "-r", "-z", "--full-tree", tree], root)
    found = []
    for line in listing.split("\0"):
        if not line:
            continue
        info, _, path = line.partition("\t")
        mode, _, oid = info.split(" ")
        found.append(ground.Entry(mode, oid, path))
    return found


def _write(root: Path, entries: Sequence[ground.Entry]) -> str:
    """A tree of ``entries``, written through a temporary index (the repository's own
    untouched)."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory(prefix="shiftkit-assemble-") as folder:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        lines = "".join(f"{e.mode} {e.oid}\t{e.path}\0" for e in entries)
        gitio.run(["update-index", "-z", "--index-info"], root, input=lines, env=env)
        return gitio.out(["write-tree"], root, env=env).strip()


def state_note(root: Path, tree: str, tip: str | None = None) -> str:
    """What differs between ``tree`` and the tree its verdict runs on, said in one clause
    (empty when nothing does)."""
    made = assembled(root, tree, tip)
    if made == tree:
        return ""
    changed = gitio.out(["diff-tree", "-r", "--name-only", "-z", tree, made], root)
    paths = [p for p in changed.split("\0") if p]
    shown = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
    return f"judged with the person's {shown}" if paths else ""
