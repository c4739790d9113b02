"""A claim's lease and its owner: pure rules over a claim record (decision record 0096).

* **Ours** is the clone's: a claim recorded by this clone (its random id) in this worktree,
  or in a worktree of this clone that is gone, belongs to any later session here — it may be
  resumed, reverted or released without a person. A claim of another live worktree of this
  clone is that worktree's (a parallel agent's), and another clone's is never ours.
* **Expired**: anyone else's claim whose last heartbeat is older than the lease
  (`[shiftkit.claims] lease_minutes`). Its holder is gone; any session may take it.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from shiftkit.core.claim import TIME_FORMAT, ClaimRecord


def is_ours(record: ClaimRecord, clone: str, worktree: str, live: Collection[str]) -> bool:
    """Whether this clone holds ``record`` for ``worktree``: recorded by this clone, in this
    worktree or in one that is no longer among this clone's ``live`` worktrees."""
    if not clone or record.clone != clone:
        return False
    return record.worktree == worktree or record.worktree not in live


def expired(record: ClaimRecord, seen_here: str, now: str, lease_minutes: int) -> str | None:
    """Why ``record``'s lease has run out (no heartbeat for more than ``lease_minutes``),
    or None while it holds. Times in `TIME_FORMAT`; a record without readable times (a
    hand-made one) never expires by itself."""
    beat = record.last_beat(seen_here)
    try:
        last = datetime.strptime(beat, TIME_FORMAT)
        current = datetime.strptime(now, TIME_FORMAT)
    except ValueError:
        return None
    if current - last <= timedelta(minutes=lease_minutes):
        return None
    return f"no heartbeat since {beat}, lease {lease_minutes} min"
