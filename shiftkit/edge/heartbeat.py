"""A claim's heartbeat in this clone: a file per claim object in the common git dir, whose time
is the last sign of life. Light enough for the commit hooks (no json, no config)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # the commit hooks import this on every commit: no pathlib
if TYPE_CHECKING:
    from pathlib import Path

HEARTBEATS = "heartbeats"
_HEX = frozenset("0123456789abcdef")


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and _HEX.issuperset(text)


def _file(common_dir: Path | str, oid: str) -> str:
    return os.path.join(common_dir, "shiftkit", HEARTBEATS, oid)


def path(common_dir: Path | str, oid: str) -> Path | None:
    """The heartbeat file of claim object ``oid`` (None for anything but an object id)."""
    from pathlib import Path

    return Path(_file(common_dir, oid)) if _is_oid(oid) else None


def claim_oid(git_dir: Path | str) -> str | None:
    """The claim object of this worktree's claim file (``"oid": "…"``, as `state` writes it),
    read without a JSON parser; None without a claim."""
    try:
        with open(os.path.join(git_dir, "shiftkit", "claim.json"), encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    _, found, rest = text.partition('"oid": "')
    oid = rest.partition('"')[0]
    return oid if found and _is_oid(oid) else None


def beat(git_dir: Path | str, common_dir: Path | str) -> str | None:
    """Refresh this worktree's claim's heartbeat (one `utime`, or creating the file).
    Returns the claim object's id, None without a claim."""
    oid = claim_oid(git_dir)
    if oid is None:
        return None
    where = _file(common_dir, oid)
    try:
        os.utime(where)
    except FileNotFoundError:
        try:
            os.makedirs(os.path.dirname(where), exist_ok=True)
            with open(where, "a", encoding="utf-8"):
                pass
        except OSError:
            return None
    except OSError:
        return None
    return oid
