"""The claim record: who holds a feature, from where, since when. Pure data and its JSON form.

A claim object's message is this record as JSON; this worktree's own claim is the record plus
the claim object's id. Only ``feature`` is required to read a record (older or hand-made
records name the holder partly); every present key must have its type.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from shiftkit.core import jsonbound
from shiftkit.core.errors import BadInput


class ClaimRecord(NamedTuple):
    feature: str
    session: str = "?"
    worktree: str = "?"
    branch: str | None = None
    base: str = ""
    host: str = "?"
    boot_id: str = ""
    pid: int | None = None
    pid_start: str = ""
    taken: str = "?"
    expires: str = ""
    nonce: str = ""
    clone: str = ""  # the clone's random id (a path alone names no one: two machines share paths)
    heartbeat: str = ""  # the last time the holder refreshed the claim ref ('' = never since taken)

    def as_json(self) -> dict[str, object]:
        return self._asdict()

    def holder(self) -> str:
        """The holder, in the words every refusal uses."""
        return (
            f"session {self.session} (worktree {self.worktree}, branch "
            f"{self.branch or 'detached'}, host {self.host}, clone {self.clone or '?'}, "
            f"since {self.taken}, last heartbeat {self.last_beat()})"
        )

    def last_beat(self, seen_here: str = "") -> str:
        """The newest sign of life: taken, the ref's heartbeat, or one seen in this clone."""
        return max(self.taken if self.taken != "?" else "", self.heartbeat, seen_here) or "?"

    def is_held_by(self, clone: str, worktree: str) -> bool:
        """Whether this worktree of this clone holds the claim (a path alone is not enough)."""
        return bool(clone) and self.clone == clone and self.worktree == worktree


class LocalClaim(NamedTuple):
    """This worktree's open claim: the record and the claim object that locks it."""

    record: ClaimRecord
    oid: str

    @property
    def feature(self) -> str:
        return self.record.feature

    @property
    def base(self) -> str:
        return self.record.base

    def as_json(self) -> dict[str, object]:
        return {**self.record.as_json(), "oid": self.oid}


_TYPES: dict[str, tuple[type, ...]] = {
    "feature": (str,),
    "session": (str,),
    "worktree": (str,),
    "branch": (str, type(None)),
    "base": (str,),
    "host": (str,),
    "boot_id": (str,),
    "pid": (int, type(None)),
    "pid_start": (str,),
    "taken": (str,),
    "expires": (str,),
    "nonce": (str,),
    "clone": (str,),
    "heartbeat": (str,),
}


def parse_record(value: object) -> ClaimRecord | str:
    """The record in a decoded JSON value, or why it is not one shiftkit wrote."""
    if not isinstance(value, dict):
        return "its record is not a JSON object"
    for key, kinds in _TYPES.items():
        if key in value and (not isinstance(value[key], kinds) or isinstance(value[key], bool)):
            return f"its record's {key!r} has the wrong type"
    if not isinstance(value.get("feature"), str):
        return "its record names no feature"
    return ClaimRecord(**{key: value[key] for key in _TYPES if key in value})


MAX_RECORD = 64 * 1024  # characters of a claim object's message (shiftkit's are ~400)


def parse_message(message: str) -> ClaimRecord | str:
    try:
        return parse_record(jsonbound.loads(message, "its record", max_length=MAX_RECORD))
    except BadInput as exc:
        if exc.message.startswith(("its record: not JSON", "its record: invalid JSON")):
            return "its record is not JSON"
        return exc.message.replace("its record: ", "its record is not JSON shiftkit reads: ", 1)


def record_message(record: ClaimRecord) -> str:
    """The claim object's message: deterministic, so equal records make equal objects."""
    return json.dumps(record.as_json(), indent=2, sort_keys=True)


def parse_local(value: object) -> LocalClaim | None:
    """This worktree's claim file; a file of the wrong shape (hand-edited, from another
    version) is no claim."""
    if not isinstance(value, dict) or not isinstance(value.get("oid", ""), str):
        return None
    if not isinstance(value.get("base"), str):
        return None
    record = parse_record({key: item for key, item in value.items() if key != "oid"})
    return LocalClaim(record, value.get("oid", "")) if isinstance(record, ClaimRecord) else None


def stale_reason(record: ClaimRecord, seen_here: str, now: str, ttl_hours: int) -> str | None:
    """Why a claim looks abandoned (its last heartbeat is older than ``ttl_hours``), or None.
    Times are ISO-8601 UTC (``%Y-%m-%dT%H:%M:%SZ``). Only ever shown, and the bar for
    `--steal`: nothing takes a claim back by itself."""
    from datetime import datetime, timedelta

    beat = record.last_beat(seen_here)
    try:
        last = datetime.strptime(beat, TIME_FORMAT)
        current = datetime.strptime(now, TIME_FORMAT)
    except ValueError:
        return None  # a hand-made record without times: never shown stale
    if current - last <= timedelta(hours=ttl_hours):
        return None
    return f"no heartbeat since {beat} (more than {ttl_hours}h)"


TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def age(taken: str, now: str) -> str:
    """How long ago ``taken`` was, both in `TIME_FORMAT`: "42 s", "12 min", "3 h" ("?" when
    either cannot be read)."""
    from datetime import datetime

    try:
        since = datetime.strptime(now, TIME_FORMAT) - datetime.strptime(taken, TIME_FORMAT)
        seconds = int(since.total_seconds())
    except ValueError:
        return "?"
    seconds = max(seconds, 0)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"
