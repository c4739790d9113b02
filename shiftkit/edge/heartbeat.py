"""A claim's heartbeat in this clone: a file per claim object in the common git dir, whose time
is the last sign of life. Light enough for the commit hooks (no json, no config)."""

from __future__ import annotations

import os
from pathlib import Path

HEARTBEATS = "heartbeats"
_HEX = frozenset("0123456789abcdef")


def path(common_dir: Path, oid: str) -> Path | None:
    """The heartbeat file of claim object ``oid`` (None for anything but an object id)."""
    if len(oid) not in (40, 64) or not _HEX.issuperset(oid):
        return None
    return Path(common_dir) / "shiftkit" / HEARTBEATS / oid


def claim_oid(git_dir: Path) -> str | None:
    """The claim object of this worktree's claim file (``"oid": "…"``, as `state` writes it),
    read without a JSON parser; None without a claim."""
    try:
        text = (Path(git_dir) / "shiftkit" / "claim.json").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    _, found, rest = text.partition('"oid": "')
    oid = rest.partition('"')[0]
    return oid if found and path(Path(), oid) is not None else None


def beat(git_dir: Path, common_dir: Path) -> str | None:
    """Refresh this worktree's claim's heartbeat (one `utime`, or creating the file).
    Returns the claim object's id, None without a claim."""
    oid = claim_oid(git_dir)
    where = path(common_dir, oid) if oid else None
    if oid is None or where is None:
        return None
    try:
        os.utime(where)
    except FileNotFoundError:
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            where.touch()
        except OSError:
            return None
    except OSError:
        return None
    return oid
