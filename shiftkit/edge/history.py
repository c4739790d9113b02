"""What `audit` reads to judge many commits in a row, read in bulk: one `git diff-tree` for
the changed paths of every commit, one long-lived `git cat-file` for every blob, each blob
read and each list checked once.

A commit is judged exactly as `commits.judge_commit` judges it alone — the same rules, the same
inputs; only the reading differs. Most of a commit's protocol files are its parent's (the
paths its diff does not touch keep their blobs), the settings are parsed once per distinct
pair of configurations, and a feature list that changed is checked beside its parent's list
(`features.loads_against`), so a commit costs what it changed, not the size of the list.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import subprocess
from collections import OrderedDict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from shiftkit.core import features, protected, rules
from shiftkit.core.config import Config
from shiftkit.edge import gitio, judge, protection, snapshot
from shiftkit.edge.revisions import LEDGER_FILE, Commit, decision_numbers, ledger_changed

Blob = tuple[str, str]  # (object id, text)


class Read(NamedTuple):
    """Everything `judge_commit` needs about one commit."""

    settings: judge.Judging
    sides: list[rules.Side]
    blobs: list[Blob | None]  # each parent's feature-list blob
    proposed: rules.Proposed
    features_blob: Blob | None
    # what `rules.check_list` says of the proposed list (None: evaluate checks it)
    checked: tuple[features.FeatureList | None, list[rules.Violation]] | None


class _Cat:
    """One long-lived `git cat-file` (``--batch-check`` for ids, ``--batch`` for contents)."""

    def __init__(self, root: Path, mode: str) -> None:
        self.args = ["cat-file", mode]
        self.proc = subprocess.Popen(
            ["git", *self.args],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        if mode == "--batch" and hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux
            # A list of 5,000 features is a megabyte: through the default 64 KiB pipe, git and
            # this process would take turns twenty times for each one.
            assert self.proc.stdout is not None
            with contextlib.suppress(OSError):
                fcntl.fcntl(self.proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)

    def ask(self, lines: Sequence[str]) -> list[tuple[bytes, ...]]:
        """The header line of each answer, split (contents are read with `contents`)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("".join(f"{line}\n" for line in lines).encode())
        self.proc.stdin.flush()
        return [tuple(self._line().split()) for _ in lines]

    def request(self, oids: Sequence[str]) -> None:
        """Ask for objects without waiting: git writes them while this process works on
        something else, and `answer` reads them in the order asked."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write("".join(f"{oid}\n" for oid in oids).encode())
            self.proc.stdin.flush()
        except OSError:
            self._failed()

    def answer(self) -> str | None:
        """The text of the next object asked for (None: not a blob)."""
        assert self.proc.stdout is not None
        header = self._line().split()
        if len(header) != 3:
            return None  # (missing)
        size = int(header[2]) + 1
        data = self.proc.stdout.read(size)
        if len(data) != size:
            self._failed()
        return (
            str(memoryview(data)[:-1], "utf-8", "surrogateescape") if header[1] == b"blob" else None
        )

    def _line(self) -> bytes:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.endswith(b"\n"):
            self._failed()
        return line

    def _failed(self) -> NoReturn:
        self.close()
        raise gitio.GitFailed(self.args, self.proc.returncode, "git cat-file stopped answering")

    def close(self) -> None:
        """Stop git, also when it is writing blobs asked for ahead that nobody will read."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        self.proc.stdout.close()
        self.proc.wait()


class _Lru(OrderedDict[Any, Any]):
    """At most ``size`` entries; with a ``budget``, also no more characters of text in all
    than that, bar the newest ``size_floor`` entries (which the commit at hand still reads)."""

    def __init__(self, size: int, budget: int | None = None, size_floor: int = 8) -> None:
        super().__init__()
        self.size, self.budget, self.size_floor = size, budget, size_floor
        self.weight = 0

    def put(self, key: Any, value: Any) -> Any:
        if key in self:
            self.weight -= _weight(self[key])
        self[key] = value
        self.weight += _weight(value)
        self.move_to_end(key)
        while len(self) > self.size or (
            self.budget is not None and self.weight > self.budget and len(self) > self.size_floor
        ):
            self.weight -= _weight(self.popitem(last=False)[1])
        return value


def _weight(value: Any) -> int:
    """Characters of text held: a blob's, or a feature list's (alone or first in a tuple)."""
    if isinstance(value, tuple) and value:
        value = value[0]
    text = value if isinstance(value, str) else getattr(value, "text", None)
    return len(text) if isinstance(text, str) else 0


_TEXT_BUDGET = 48 << 20  # characters of blob text kept for later commits

_NO_BLOB = ("000000", "160000")  # the new mode of a deleted path, of a submodule


class History:
    """The protocol files of ``commits`` (the ones `audit` judges, oldest first), read in
    bulk. Use as a context manager: it holds `git cat-file` processes."""

    def __init__(self, root: Path, common_dir: Path, commits: Sequence[Commit]) -> None:
        self.root, self.common_dir = root, common_dir
        single = [c for c in commits if len(c.parents) == 1]
        self._parent = {c.oid: c.parents[0] for c in single}
        self._changes, self._rows = _changed_paths(root, [c.oid for c in single])
        self._next = {a.oid: b for a, b in itertools.pairwise(commits)}
        self._ids: dict[str, dict[str, str | None]] = {}  # commit -> path -> blob id
        self._cats: dict[str, _Cat] = {}
        # blob id -> text: a list of 50,000 features is 13.5 MB, so by size too
        self._texts: _Lru = _Lru(32, budget=_TEXT_BUDGET)
        self._asked: deque[str] = deque()  # blobs asked of git and not read yet
        self._settings: dict[tuple[Any, ...], judge.Judging] = {}
        # feature-list blob id -> its list (None: invalid)
        self._lists: _Lru = _Lru(8, budget=_TEXT_BUDGET, size_floor=2)
        self._checks: _Lru = _Lru(8, budget=_TEXT_BUDGET, size_floor=2)

    def __enter__(self) -> History:
        return self

    def __exit__(self, *_: object) -> None:
        for cat in self._cats.values():
            cat.close()
        self._cats.clear()

    def _cat(self, mode: str) -> _Cat:
        if mode not in self._cats:
            self._cats[mode] = _Cat(self.root, mode)
        return self._cats[mode]

    # -- blob ids and texts ---------------------------------------------------------------

    def ids(self, rev: str, paths: Sequence[str]) -> list[str | None]:
        """The blob id of each path at ``rev`` (None: absent, or not a blob): from the parent's
        and the commit's diff when they are known, else asked of git (once)."""
        known = self._ids.setdefault(rev, {})
        missing = [path for path in dict.fromkeys(paths) if path not in known]
        parent = self._parent.get(rev)
        inherited = self._ids.get(parent) if parent is not None else None
        if inherited is not None:
            changes = self._changes.get(rev, {})
            for path in missing:
                if not _plain(path):
                    continue
                if path in changes:
                    mode, oid = changes[path]
                    known[path] = None if mode in _NO_BLOB else oid
                elif path in inherited:
                    known[path] = inherited[path]
            missing = [path for path in missing if path not in known]
        if missing:
            answers = self._cat("--batch-check").ask([f"{rev}:{path}" for path in missing])
            for path, answer in zip(missing, answers, strict=True):
                blob = len(answer) == 3 and answer[1] == b"blob"
                known[path] = answer[0].decode() if blob else None
        return [known[path] for path in paths]

    def text(self, oid: str | None) -> str | None:
        if oid is None:
            return None
        if oid not in self._texts:
            self.fetch([oid])
        return self._texts[oid]  # type: ignore[no-any-return]

    def ask(self, oids: Sequence[str | None]) -> None:
        """Ask git for the blobs not read or asked for yet."""
        new = [
            oid
            for oid in dict.fromkeys(oids)
            if oid is not None and oid not in self._texts and oid not in self._asked
        ]
        if new:
            self._cat("--batch").request(new)
            self._asked.extend(new)

    def fetch(self, oids: Sequence[str | None]) -> None:
        """Read the blobs not read yet (and any asked for before them)."""
        self.ask(oids)
        wanted = {oid for oid in oids if oid is not None and oid not in self._texts}
        while wanted:
            oid = self._asked.popleft()
            self._texts.put(oid, self._cat("--batch").answer())
            wanted.discard(oid)

    def blob(self, oid: str | None) -> Blob | None:
        text = self.text(oid)
        return None if oid is None or text is None else (oid, text)

    # -- one commit -----------------------------------------------------------------------

    def read(self, commit: Commit) -> Read:
        settings = self._settings_of(commit)
        names = judge.names(settings.parent)
        proposed_names = judge.names(settings.proposed)
        parent_ids = [self.ids(parent, names) for parent in commit.parents]
        proposed_ids = self.ids(commit.oid, proposed_names)
        self.fetch([oid for ids in [*parent_ids, proposed_ids] for oid in ids])
        sides: list[rules.Side] = []
        blobs: list[Blob | None] = []
        for list_id, log_id, archive_id in parent_ids:
            blob = self.blob(list_id)
            blobs.append(blob)
            sides.append(
                rules.Side(self._list(blob, names[0]), self.text(log_id), self.text(archive_id))
            )
        if not commit.parents:
            sides = [rules.Side(None, None, None)]
        list_id, log_id, archive_id = proposed_ids
        features_blob = self.blob(list_id)
        proposed = rules.Proposed(
            features_blob[1] if features_blob else None, self.text(log_id), self.text(archive_id)
        )
        self._ahead(commit, proposed_names)
        checked = self._check(commit, features_blob, names[0], sides, blobs)
        return Read(settings, sides, blobs, proposed, features_blob, checked)

    def _ahead(self, commit: Commit, names: Sequence[str]) -> None:
        """Ask git now for the blobs the next commit changes, so it reads them from its pack
        while this commit is judged (a list of 5,000 features is a megabyte to unpack)."""
        following = self._next.get(commit.oid)
        if following is not None and following.parents == (commit.oid,):
            changes = self._changes.get(following.oid, {})
            wanted = [changes.get(path) for path in (*judge.SETTINGS_FILES, *names)]
            self.ask([new[1] for new in wanted if new is not None and new[0] not in _NO_BLOB])

    def _settings_of(self, commit: Commit) -> judge.Judging:
        first = commit.parents[0] if commit.parents else None
        if len(commit.parents) > 1:  # (every parent is a judge: read them all)
            return judge.at_revisions(self.root, first, f"{commit.oid}:", commit.parents[1:])
        ids: tuple[str | None, ...] = ()
        if first is not None:  # (first: the commit's own are then read from its diff)
            ids = tuple(self.ids(first, judge.SETTINGS_FILES))
        ids = (*ids, *self.ids(commit.oid, judge.SETTINGS_FILES))
        if ids not in self._settings:
            self.fetch(ids)
            texts = [self.text(oid) for oid in ids]
            self._settings[ids] = (
                judge.judging(texts[:2], texts[2:], has_parent=True)
                if first is not None
                else judge.judging((None, None), texts, has_parent=False)
            )
        return self._settings[ids]

    def _list(self, blob: Blob | None, source: str) -> features.FeatureList | None:
        """A parent's list (`snapshot.parse_list`), once per blob: usually the list the
        commit before this one proposed, checked then."""
        if blob is None:
            return None
        if blob[0] not in self._lists:
            self._lists.put(blob[0], snapshot.parse_list(blob, source, self.common_dir))
        return self._lists[blob[0]]  # type: ignore[no-any-return]

    def _check(
        self,
        commit: Commit,
        blob: Blob | None,
        source: str,
        sides: Sequence[rules.Side],
        blobs: Sequence[Blob | None],
    ) -> tuple[features.FeatureList | None, list[rules.Violation]] | None:
        """Rule 1 on the proposed list, once per blob: checked item by item beside the first
        parent's list (`features.loads_against`) when that settles it, else its recorded
        table when it was checked before, else `rules.check_list`, as `judge_commit` does."""
        if blob is None:
            return None  # (missing: `evaluate` says so)
        base, base_blob = sides[0].features, blobs[0] if blobs else None
        key = (blob[0], source, base_blob[0] if base is not None and base_blob else None)
        if key in self._checks:
            return self._checks[key]  # type: ignore[no-any-return]
        found: tuple[features.FeatureList | None, list[rules.Violation]]
        if base_blob is not None and blob[0] == base_blob[0] and base is not None:
            found = (base, [])
        elif base is not None and (quick := features.loads_against(blob[1], base)) is not None:
            found = (quick, [])  # (beside the parent's: cheaper than reading a record)
        elif (recorded := snapshot.checked_list(self.common_dir, blob)) is not None:
            found = (recorded, [])
        else:
            # (not recorded: a record is an fsync'd file, dearer than checking a commit's list
            # beside its parent's again; the lists are kept here while the audit runs)
            trusted = snapshot.trust(sides, list(blobs), self.common_dir)
            found = rules.check_list(blob[1], source, **trusted)
        self._lists.put(blob[0], found[0])
        return self._checks.put(key, found)  # type: ignore[no-any-return]

    def decision_numbers(self, commit: Commit, folder: str) -> list[rules.Violation]:
        """Rule 13 (`revisions.decision_numbers`), without asking git when the commit's diff
        touches nothing in the folder."""
        name = folder.rstrip("/")
        changes = self._changes.get(commit.oid)
        if changes is not None and _plain(name):
            inside = name + "/"
            if not any(path == name or path.startswith(inside) for path in changes):
                return []
        return decision_numbers(self.root, commit.oid, commit.parents, folder)

    def changed(self, commit: Commit, cfg: Config) -> rules.Changed:
        """Rule 14's rows of the commit (from the bulk diff; a merge's asked of git) and the
        texts it reads, through this reader's caches."""
        found = self._rows.get(commit.oid)
        if found is None:
            rows, pairs = protection.commit_rows(self.root, commit.oid, commit.parents)
        else:
            rows, pairs = found
        needed = protected.texts_needed(rows, cfg.decisions)
        oids = [oid for path in needed for oid in pairs.get(path, (None, None))]
        self.fetch(oids)
        texts = {
            path: (self.text(oids[2 * i]), self.text(oids[2 * i + 1]))
            for i, path in enumerate(needed)
        }
        return rules.Changed(tuple(rows), texts, cfg.oracle, cfg.verify, cfg.decisions)

    def merge_base(self, commit: Commit, source: str) -> rules.MergeBase:
        """`snapshot.merge_base` of a merge, the lists read through this reader's caches."""
        first, *others = commit.parents
        bases = []
        for other in others:
            bases_of = gitio.merge_bases(self.root, first, other)
            oids = [self.ids(base, [source])[0] for base in bases_of]
            self.fetch(oids)
            bases.append(tuple(self._list(self.blob(oid), source) for oid in oids))
        return rules.MergeBase(tuple(bases))

    def ledger_problems(self, commit: Commit) -> list[rules.Violation]:
        """Rule 12 (`revisions.ledger_problems`), the ledger's blob ids from the diffs and its
        texts from the bulk reader."""
        revs = [commit.oid, *commit.parents]
        ids = [self.ids(rev, [LEDGER_FILE])[0] for rev in revs]
        if not ledger_changed(commit, ids):
            return []
        self.fetch(ids)
        texts = [self.text(oid) for oid in ids]
        return rules.rule12_ledger(texts[1:], texts[0])


def _plain(path: str) -> bool:
    """A path as git's diff names it (so its absence from a diff means it did not change)."""
    parts = path.split("/")
    return bool(path) and all(part not in ("", ".", "..") for part in parts)


Rows = tuple[list[tuple[str, str]], dict[str, tuple[str | None, str | None]]]


def _changed_paths(
    root: Path, oids: Sequence[str]
) -> tuple[dict[str, dict[str, tuple[str, str]]], dict[str, Rows]]:
    """For each commit with one parent: (new mode, new blob id) of every path its diff against
    the parent touches, and rule 14's rows of it (`protection.raw_rows`), in one
    `git diff-tree`."""
    if not oids:
        return {}, {}
    args = ["diff-tree", "--stdin", "--always", "-r", "--no-renames", "-z"]
    code, out, err = gitio.plumb(args, root, "".join(f"{oid}\n" for oid in oids).encode())
    if code != 0:
        raise gitio.GitFailed(args, code, err.decode("utf-8", "replace"))
    result: dict[str, dict[str, tuple[str, str]]] = {}
    rows: dict[str, Rows] = {}
    current: dict[str, tuple[str, str]] = {}
    row: Rows = ([], {})
    fields = out.split(b"\0")
    index = 0
    while index < len(fields):
        field = fields[index]
        if field.startswith(b":"):
            _, new_mode, old_oid, new_oid, status = field[1:].decode().split(" ")
            path = fields[index + 1].decode("utf-8", "surrogateescape")
            current[path] = (new_mode, new_oid)
            row[0].append(("A" if status == "A" else "D" if status == "D" else "M", path))
            row[1][path] = (
                old_oid if old_oid.strip("0") else None,
                new_oid if new_oid.strip("0") else None,
            )
            index += 2
            continue
        if field:
            oid = field.decode().strip()
            current = result.setdefault(oid, {})
            row = rows.setdefault(oid, ([], {}))
        index += 1
    return result, rows
