"""shiftkit's local state in the git dir: caches and records that are never committed.

Repository-wide state (keyed by content: validated blobs, passing trees, verification
times) lives in the common git dir, shared by all worktrees; a worktree's own state (its
claim, its start check) lives in that worktree's git dir.
"""

from __future__ import annotations

import json
from pathlib import Path

from shiftkit.core import jsonbound
from shiftkit.core.errors import BadInput
from shiftkit.edge.atomic import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from shiftkit.core import features
    from shiftkit.core.claim import LocalClaim

STATE_DIR = "shiftkit"


def repo_state(common_dir: Path) -> Path:
    return common_dir / STATE_DIR


def worktree_state(git_dir: Path) -> Path:
    return git_dir / STATE_DIR


def is_validated(common_dir: Path, blob: str) -> bool:
    return (repo_state(common_dir) / "validated" / blob).exists()


def mark_validated(common_dir: Path, blob: str) -> None:
    atomic_write(repo_state(common_dir) / "validated" / blob, "")


TABLES = "tables"
TABLES_KEPT = 8  # a few lists per repository: HEAD's, the work tree's, a merge's sides
_TABLE_FORMAT = 1


def read_table(
    common_dir: Path, blob: str
) -> tuple[features.Table, tuple[int, ...] | None, str | None] | None:
    """The `Table`, item spans and ``$schema`` of a feature list blob that passed rule 1
    (None when none is recorded, or the record is unreadable: it is only a cache)."""
    import marshal

    from shiftkit.core import features

    try:
        data = (repo_state(common_dir) / TABLES / blob).read_bytes()
        form, schema_ref, ids, flags, depends_on, spans = marshal.loads(data)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if form != _TABLE_FORMAT or len(flags) != len(ids) or len(depends_on) != len(ids):
        return None
    return features.Table(ids, flags, depends_on), spans, schema_ref


def write_table(
    common_dir: Path,
    blob: str,
    table: features.Table,
    spans: tuple[int, ...] | None,
    schema_ref: str | None,
) -> None:
    """Record a checked list's table (marshal: the fastest format Python reads back; the
    format number and the blob id guard it), keeping the newest `TABLES_KEPT`."""
    import marshal

    folder = repo_state(common_dir) / TABLES
    data = (_TABLE_FORMAT, schema_ref, table.ids, table.flags, table.depends_on, spans)
    atomic_write(folder / blob, marshal.dumps(data))
    try:
        tables = [p for p in folder.iterdir() if not p.name.startswith(".")]  # (not a temp)
        kept = sorted(tables, key=lambda p: p.stat().st_mtime_ns, reverse=True)
    except OSError:
        return
    for old in kept[TABLES_KEPT:]:
        old.unlink(missing_ok=True)


def record_checked(common_dir: Path, blob: str, checked: features.FeatureList) -> None:
    """Record that the list with blob id ``blob`` passed rule 1, with its table."""
    mark_validated(common_dir, blob)
    if checked.text is None:
        return
    spans = checked.spans
    if spans is None:
        from shiftkit.core import features

        spans = features.item_spans(checked.text, checked.items)
    write_table(common_dir, blob, checked.table, spans, checked.schema_ref)


def recorded_list(common_dir: Path, blob: str, text: str) -> features.FeatureList | None:
    """The checked list ``text`` (blob id ``blob``) from its recorded table, parsing
    nothing; None when no table is recorded."""
    recorded = read_table(common_dir, blob)
    if recorded is None:
        return None
    from shiftkit.core import features

    table, spans, schema_ref = recorded
    return features.FeatureList.from_text(text, table, spans, schema_ref)


def read_json(path: Path) -> Any:
    try:
        return jsonbound.loads(path.read_text(encoding="utf-8"), str(path))
    except (FileNotFoundError, BadInput, UnicodeDecodeError):
        return None


def write_json(path: Path, value: Any) -> None:
    atomic_write(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


# -- what the last start check in this worktree found ---------------------------------------

START_CHECK = "start-check.json"


def start_check_path(git_dir: Path) -> Path:
    return worktree_state(git_dir) / START_CHECK


def demoted(git_dir: Path) -> list[str]:
    """Features the last start check demoted: the next session repairs them first."""
    record = read_json(start_check_path(git_dir))
    found = record.get("demoted", []) if isinstance(record, dict) else []
    return [i for i in found if isinstance(i, str)] if isinstance(found, list) else []


# -- this worktree's open claim (WIP = 1 is counted per worktree) ----------------------------

LOCAL_CLAIM = "claim.json"


def local_claim_path(git_dir: Path) -> Path:
    return worktree_state(git_dir) / LOCAL_CLAIM


def local_claim(git_dir: Path) -> LocalClaim | None:
    from shiftkit.core.claim import parse_local

    return parse_local(read_json(local_claim_path(git_dir)))


def local_claim_key(git_dir: Path) -> list[str] | None:
    """(feature, claim object) of this worktree's claim, read without building the record:
    the commit hooks key their record by it on every commit (no typing import there)."""
    record = read_json(local_claim_path(git_dir))
    if not isinstance(record, dict):
        return None
    feature, oid = record.get("feature"), record.get("oid", "")
    return [feature, oid] if isinstance(feature, str) and isinstance(oid, str) else None


def save_local_claim(git_dir: Path, held: LocalClaim) -> None:
    write_json(local_claim_path(git_dir), held.as_json())


def drop_local_claim(git_dir: Path) -> None:
    try:
        local_claim_path(git_dir).unlink()
    except FileNotFoundError:
        pass


# -- changes the commit hooks accepted (the reference-transaction hook's shortcut) ----------


def mark_approved(git_dir: Path, key: str) -> None:
    atomic_write(worktree_state(git_dir) / "approved" / key, "")


def is_approved(git_dir: Path, key: str) -> bool:
    return (worktree_state(git_dir) / "approved" / key).is_file()


# -- when each feature was last verified here: the start check's rotation -------------------

VERIFIED = "verified.json"


def _stamps_path(common_dir: Path) -> Path:
    return repo_state(common_dir) / VERIFIED


def read_stamps(common_dir: Path) -> tuple[int, dict[str, int]]:
    """(start checks run so far, the check count at which each feature was last verified)."""
    record = read_json(_stamps_path(common_dir))
    if not isinstance(record, dict):
        return 0, {}
    count = record.get("checks")
    found = record.get("features")
    checks = count if isinstance(count, int) and count >= 0 else 0
    stamps = (
        {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, int)}
        if isinstance(found, dict)
        else {}
    )
    return checks, stamps


def stamp_verified(common_dir: Path, feature_ids: list[str], *, new_check: bool = False) -> int:
    """Record that these features' verifiers passed now (``new_check``: in a new start check,
    which is counted first); returns the check count they are stamped with."""
    checks, stamps = read_stamps(common_dir)
    if new_check:
        checks += 1
    for feature_id in feature_ids:
        stamps[feature_id] = checks
    write_json(_stamps_path(common_dir), {"checks": checks, "features": stamps})
    return checks


def drop_demoted(git_dir: Path, feature_ids: list[str]) -> None:
    """Features re-marked passing (repaired) leave the start check's "repair first"."""
    path = start_check_path(git_dir)
    record = read_json(path)
    if not isinstance(record, dict) or not feature_ids:
        return
    record["demoted"] = [i for i in demoted(git_dir) if i not in feature_ids]
    write_json(path, record)


def add_demoted(git_dir: Path, feature_ids: list[str]) -> None:
    """Features `check` demoted join the start check's: the next session repairs them first."""
    path = start_check_path(git_dir)
    record = read_json(path)
    if not isinstance(record, dict):
        return  # (no start check yet: `start` runs one before any claim)
    known = demoted(git_dir)
    record["demoted"] = known + [i for i in feature_ids if i not in known]
    write_json(path, record)
