"""shiftkit's local state in the git dir: caches and records that are never committed.

Repository-wide state (keyed by content: validated blobs, passing trees, verification
times) lives in the common git dir, shared by all worktrees; a worktree's own state (its
claim, its start check) lives in that worktree's git dir.
"""

from __future__ import annotations

import json
from pathlib import Path

from shiftkit.edge.atomic import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
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
    return (worktree_state(git_dir) / "approved" / key).exists()
