"""The read-set store: every passing feature's read set in one SQLite database in the common
git dir (``shiftkit/readsets.sqlite3``; decision record 0121, replacing 0053's JSON file per
feature), indexed so a selection reads only the sets a change can touch.

Tables: ``sets`` (feature, the tree and verifier command it was measured at: every selection
reads them all, so they are kept narrow) and ``bodies`` (the whole set in `affected.to_json`'s
form: a candidate is read in one row); ``rows`` (one per path: a
file read whole or by blocks, a folder listed, a path looked up and missing, a file stat'ed —
with its set's tree, indexed by (tree, kind, path)); ``marks`` (each distinct (path, block,
fingerprint) once) and ``ran`` (set → mark); ``prints`` (block fingerprints by blob id: a
blob's content never changes, so neither do they).

Several shiftkit processes share the common git dir: WAL journal, a busy timeout, each write
one transaction. A database that cannot be read (corrupt, not a database, another schema) is
a cache lost: every set is unknown, one ``shiftkit:`` warning, and it is removed so the next
write rebuilds it. The JSON files of 0053 are imported once, when the database is created.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from shiftkit.core import affected, prefilter
from shiftkit.edge import state

NAME = "readsets-{scheme}.sqlite3"  # (one database per fingerprint scheme: `scheme`)
OLD_FOLDER = "readsets"  # decision record 0053's one JSON file per feature
SCHEMA = 1
BUSY_MS = 10_000  # (a writer holds the lock for one set's rows: milliseconds)
FEW = 20  # a change's paths counted one by one (`reading`)
CHUNK = 500  # parameters per IN (...): SQLite's limit is larger, a change's paths may be more

FILE, CODE, DIR, MISSING, STAT = range(5)  # a row's kind (CODE: a file read, by blocks)

_DDL = """
CREATE TABLE trees (id INTEGER PRIMARY KEY, tree TEXT NOT NULL UNIQUE);
CREATE TABLE sets (
    id INTEGER PRIMARY KEY,
    feature TEXT NOT NULL UNIQUE,
    tree INTEGER NOT NULL,
    command TEXT NOT NULL
);
CREATE TABLE bodies (set_id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE rows (set_id INTEGER NOT NULL, tree INTEGER NOT NULL, kind INTEGER NOT NULL,
                   path TEXT NOT NULL);
CREATE INDEX rows_at ON rows (tree, kind, path);
CREATE INDEX rows_of ON rows (set_id);
CREATE TABLE marks (id INTEGER PRIMARY KEY, path TEXT NOT NULL, block TEXT NOT NULL,
                    mark TEXT NOT NULL, UNIQUE (path, block, mark));
CREATE TABLE ran (set_id INTEGER NOT NULL, mark INTEGER NOT NULL);
CREATE INDEX ran_mark ON ran (mark, set_id);
CREATE INDEX ran_of ON ran (set_id);
CREATE TABLE prints (blob TEXT PRIMARY KEY, marks TEXT);
"""

_T = TypeVar("_T")
_warned: list[str] = []  # (one warning per process)


def path_of(common_dir: Path) -> Path:
    return state.repo_state(common_dir) / NAME.format(scheme=scheme())


_scheme: list[str] = []


def scheme() -> str:
    """Which code computed the stored fingerprints: a digest of `core.blocks`, where blocks and
    their fingerprints are defined. Marks and cached prints are compared by equality, so two
    schemes must never meet — a shiftkit that draws blocks otherwise (a rule moved a function
    into the module block, say) could find an old mark equal to a new print of changed code.
    Each scheme has its own database: after such an upgrade every set is unknown once."""
    if not _scheme:
        from shiftkit.core import blocks

        source = Path(blocks.__file__).read_bytes()
        _scheme.append(hashlib.sha256(source).hexdigest()[:12])
    return _scheme[0]


class Unreadable(Exception):
    """The database is not one this shiftkit wrote (another schema, not a database)."""


def guarded(common_dir: Path, fallback: _T, work: Callable[[sqlite3.Connection], _T]) -> _T:
    """``work`` on the store, or ``fallback`` when it cannot be opened or read: a corrupt
    database is removed (the next write rebuilds it), with one warning per process; a busy
    one is left alone. Never creates the database for a reader with nothing to import."""
    where = path_of(common_dir)
    if not where.exists() and not (where.parent / OLD_FOLDER).is_dir():
        return fallback
    return _run(where, fallback, work)


def writing(common_dir: Path, work: Callable[[sqlite3.Connection], None]) -> None:
    """``work`` in one write transaction (the database created when absent); a failure
    leaves the sets as they were (each still a real measurement of its tree), with a
    warning."""

    def transaction(con: sqlite3.Connection) -> None:
        con.execute("BEGIN IMMEDIATE")
        try:
            work(con)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    where = path_of(common_dir)
    where.parent.mkdir(parents=True, exist_ok=True)
    _run(where, None, transaction)


def _run(where: Path, fallback: _T, work: Callable[[sqlite3.Connection], _T]) -> _T:
    try:
        con = _connect(where)
    except (sqlite3.Error, OSError, Unreadable) as exc:
        _lost(where, exc)
        return fallback
    try:
        return work(con)
    except (sqlite3.Error, Unreadable) as exc:
        _lost(where, exc)
        return fallback
    finally:
        con.close()


def _corrupt(exc: BaseException) -> bool:
    """Whether ``exc`` says the database is not one to read (not a database, malformed,
    another schema, a table missing) rather than that it could not be reached now (busy,
    locked, an I/O error, a folder not writable)."""
    if isinstance(exc, Unreadable):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return str(exc).startswith("no such ")
    return isinstance(exc, sqlite3.DatabaseError)


def _lost(where: Path, exc: BaseException) -> None:
    """Warn once; remove a database that cannot be read (not one that is only unreachable)."""
    corrupt = _corrupt(exc)
    if corrupt:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{where}{suffix}").unlink(missing_ok=True)
    if not _warned:
        _warned.append(str(where))
        what = "could not be read and was removed" if corrupt else "could not be used"
        print(
            f"shiftkit: the read-set store {where} {what} ({exc}); a feature whose read set "
            "it cannot give counts as affected by every change",
            file=sys.stderr,
        )


def _connect(where: Path) -> sqlite3.Connection:
    con = sqlite3.connect(where, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            _create(con, where.parent / OLD_FOLDER)
        elif version != SCHEMA:
            raise Unreadable(f"schema {version}, this shiftkit writes {SCHEMA}")
        con.execute("PRAGMA synchronous=NORMAL")  # (WAL: a crash loses no committed set)
    except BaseException:
        con.close()
        raise
    return con


def _create(con: sqlite3.Connection, old: Path) -> None:
    """The schema, once (another process may be creating it: checked again under the lock),
    with the JSON sets of 0053 imported — a project upgrading keeps its sets."""
    con.execute("PRAGMA journal_mode=WAL")  # (readers never wait for a writer)
    con.execute("BEGIN IMMEDIATE")
    try:
        if con.execute("PRAGMA user_version").fetchone()[0] == 0:
            for statement in _DDL.split(";"):
                if statement.strip():
                    con.execute(statement)
            for feature_id, read_set in _old_sets(old):
                _put(con, feature_id, read_set)
            con.execute(f"PRAGMA user_version = {SCHEMA}")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
    shutil.rmtree(old, ignore_errors=True)


def _old_sets(folder: Path) -> Iterator[tuple[str, affected.ReadSet]]:
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        record = state.read_json(path)
        feature_id = record.get("feature") if isinstance(record, dict) else None
        read_set = affected.from_json(feature_id, record) if isinstance(feature_id, str) else None
        if isinstance(feature_id, str) and read_set is not None:
            yield feature_id, read_set


# -- writing ----------------------------------------------------------------------------------


def record(common_dir: Path, owners: Sequence[str], read_set: affected.ReadSet) -> None:
    """Keep ``read_set`` as each of ``owners``' (replacing theirs), in one transaction."""

    def work(con: sqlite3.Connection) -> None:
        for feature_id in owners:
            _put(con, feature_id, read_set)

    writing(common_dir, work)


def forget(common_dir: Path, owners: Sequence[str]) -> None:
    """``owners``' sets are unknown from now."""
    if not path_of(common_dir).exists():
        return

    def work(con: sqlite3.Connection) -> None:
        for feature_id in owners:
            _drop(con, feature_id)

    writing(common_dir, work)


def _drop(con: sqlite3.Connection, feature_id: str) -> None:
    row = con.execute("SELECT id FROM sets WHERE feature = ?", (feature_id,)).fetchone()
    if row is not None:
        for table in ("rows", "ran", "bodies"):
            con.execute(f"DELETE FROM {table} WHERE set_id = ?", row)
        con.execute("DELETE FROM sets WHERE id = ?", row)


def _put(con: sqlite3.Connection, feature_id: str, read_set: affected.ReadSet) -> None:
    _drop(con, feature_id)
    con.execute("INSERT OR IGNORE INTO trees (tree) VALUES (?)", (read_set.tree,))
    (tree,) = con.execute("SELECT id FROM trees WHERE tree = ?", (read_set.tree,)).fetchone()
    ran = read_set.blocks
    body = json.dumps(affected.to_json(feature_id, read_set), separators=(",", ":"))
    set_id = con.execute(
        "INSERT INTO sets (feature, tree, command) VALUES (?, ?, ?)",
        (feature_id, tree, read_set.command),
    ).lastrowid
    con.execute("INSERT INTO bodies (set_id, body) VALUES (?, ?)", (set_id, body))
    by_blocks = ran if ran is not None else {}
    rows = [(set_id, tree, CODE if p in by_blocks else FILE, p) for p in read_set.files]
    for kind, paths in ((DIR, read_set.dirs), (MISSING, read_set.missing), (STAT, read_set.stats)):
        rows += [(set_id, tree, kind, p) for p in paths]
    con.executemany("INSERT INTO rows (set_id, tree, kind, path) VALUES (?, ?, ?, ?)", rows)
    marks = [(p, b, m) for p, blocks in by_blocks.items() for b, m in blocks.items()]
    con.executemany("INSERT OR IGNORE INTO marks (path, block, mark) VALUES (?, ?, ?)", marks)
    con.executemany(
        "INSERT INTO ran (set_id, mark) SELECT ?, id FROM marks "
        "WHERE path = ? AND block = ? AND mark = ?",
        [(set_id, *one) for one in marks],
    )


# -- reading ----------------------------------------------------------------------------------


Head = tuple[int, int, str]  # a stored set without its rows: (set id, tree id, command)


def heads(con: sqlite3.Connection) -> dict[str, Head]:
    """Every stored set's head, by feature id."""
    # (thousands of rows per selection: plain tuples, made at C speed)
    rows = con.execute("SELECT feature, id, tree, command FROM sets").fetchall()
    return {feature: (set_id, tree, command) for feature, set_id, tree, command in rows}


def trees(con: sqlite3.Connection) -> dict[int, str]:
    """The trees sets were measured at, by their id here."""
    return dict(con.execute("SELECT id, tree FROM trees"))


def sets_of(con: sqlite3.Connection, set_ids: Collection[int]) -> dict[int, affected.ReadSet]:
    """The whole sets of ``set_ids`` that read back, by id (one that does not is unknown)."""
    found: dict[int, affected.ReadSet] = {}
    for chunk in _chunks(sorted(set_ids)):
        query = (
            "SELECT s.id, s.feature, b.body FROM sets s JOIN bodies b ON b.set_id = s.id "
            f"WHERE s.id IN ({','.join('?' * len(chunk))})"
        )
        for set_id, feature, body in con.execute(query, chunk):
            try:
                read_set = affected.from_json(feature, json.loads(body))
            except ValueError:
                continue
            if read_set is not None:
                found[set_id] = read_set
    return found


def load(common_dir: Path, feature_ids: Collection[str]) -> dict[str, affected.ReadSet]:
    """The stored sets of ``feature_ids`` that have one."""

    def work(con: sqlite3.Connection) -> dict[str, affected.ReadSet]:
        con.execute("BEGIN")  # (one snapshot: a set written meanwhile is seen whole or not)
        try:
            known = {f: h for f, h in heads(con).items() if f in feature_ids}
            sets = sets_of(con, [h[0] for h in known.values()])
        finally:
            con.execute("COMMIT")
        return {f: sets[h[0]] for f, h in known.items() if h[0] in sets}

    return guarded(common_dir, {}, work)


def candidates(con: sqlite3.Connection, tree_id: int, probe: prefilter.Probe) -> set[int]:
    """The sets measured at the tree ``tree_id`` holding a row ``probe`` matches (`prefilter`)."""
    found = _with_rows(con, tree_id, (FILE, CODE), probe.whole)
    found |= _with_rows(con, tree_id, (FILE,), probe.code)
    found |= _with_rows(con, tree_id, (STAT,), probe.looked)
    found |= _with_rows(con, tree_id, (MISSING,), probe.added)
    found |= _with_rows(con, tree_id, (DIR,), probe.parents)
    stale = [
        mark_id
        for path in sorted(probe.code)
        for mark_id, block, mark in con.execute(
            "SELECT id, block, mark FROM marks WHERE path = ?", (path,)
        )
        if prefilter.differs(probe, path, block, mark)
    ]
    for chunk in _chunks(stale):
        query = f"SELECT DISTINCT set_id FROM ran WHERE mark IN ({','.join('?' * len(chunk))})"
        found |= {set_id for (set_id,) in con.execute(query, chunk)}
    # (a mark is shared by the sets of every tree: those of other trees are judged there)
    return found


def reading(
    con: sqlite3.Connection, tree_id: int, paths: Collection[str], excluded: Collection[int]
) -> int:
    """How many sets measured at the tree ``tree_id``, outside ``excluded``, read a file among
    ``paths`` — counted in SQL: thousands may, and only the number is needed."""
    kinds = f"tree = ? AND kind IN ({FILE}, {CODE})"
    if len(paths) > CHUNK:  # (a change too large for one IN (...): the ids, then counted)
        return len(_with_rows(con, tree_id, (FILE, CODE), paths) - set(excluded))
    marks = ",".join("?" * len(paths))
    # (a set holds a path once: one path read at all is counted without the DISTINCT's sort)
    each = [
        con.execute(
            f"SELECT COUNT(*) FROM rows WHERE {kinds} AND path = ?", (tree_id, p)
        ).fetchone()[0]
        for p in (paths if len(paths) <= FEW else ())
    ]
    if len(paths) <= FEW and sum(1 for n in each if n) <= 1:
        count = sum(each)
    else:
        query = f"SELECT COUNT(DISTINCT set_id) FROM rows WHERE {kinds} AND path IN ({marks})"
        (count,) = con.execute(query, (tree_id, *paths)).fetchone()
    among = sorted(excluded)
    for chunk in _chunks(among):
        query = (
            f"SELECT COUNT(DISTINCT set_id) FROM rows WHERE {kinds} AND path IN ({marks}) "
            f"AND set_id IN ({','.join('?' * len(chunk))})"
        )
        count -= con.execute(query, (tree_id, *paths, *chunk)).fetchone()[0]
    return int(count)


def _with_rows(
    con: sqlite3.Connection, tree_id: int, kinds: Sequence[int], paths: Iterable[str]
) -> set[int]:
    found: set[int] = set()
    for kind in kinds:
        for chunk in _chunks(sorted(paths)):
            query = (
                "SELECT set_id FROM rows WHERE tree = ? AND kind = ? "
                f"AND path IN ({','.join('?' * len(chunk))})"
            )
            found |= {set_id for (set_id,) in con.execute(query, (tree_id, kind, *chunk))}
    return found


def _chunks(values: Sequence[_T]) -> Iterator[Sequence[_T]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


# -- block fingerprints by blob ---------------------------------------------------------------


def prints(common_dir: Path, oids: Collection[str]) -> dict[str, dict[str, str] | None]:
    """The fingerprints kept for those of ``oids`` that have them (None: does not parse)."""

    def work(con: sqlite3.Connection) -> dict[str, dict[str, str] | None]:
        found: dict[str, dict[str, str] | None] = {}
        for chunk in _chunks(sorted(oids)):
            query = f"SELECT blob, marks FROM prints WHERE blob IN ({','.join('?' * len(chunk))})"
            for blob, marks in con.execute(query, chunk):
                found[blob] = _marks(marks)
        return found

    return guarded(common_dir, {}, work) if oids else {}


def keep_prints(common_dir: Path, found: Mapping[str, Mapping[str, str] | None]) -> None:
    if not found:
        return

    def work(con: sqlite3.Connection) -> None:
        con.executemany(
            "INSERT OR REPLACE INTO prints (blob, marks) VALUES (?, ?)",
            [
                (oid, None if marks is None else json.dumps(dict(marks), sort_keys=True))
                for oid, marks in found.items()
            ],
        )

    writing(common_dir, work)


def _marks(text: str | None) -> dict[str, str] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise Unreadable("a blob's fingerprints are not JSON") from exc
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise Unreadable("a blob's fingerprints are not a mapping of names")
    return value
