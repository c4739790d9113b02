"""The claim record: who holds a feature, from where, since when. Pure data and its JSON form.

A claim object's message is this record as JSON; this worktree's own claim is the record plus
the claim object's id. Only ``feature`` is required to read a record (older or hand-made
records name the holder partly); every present key must have its type.
"""

from __future__ import annotations

import json
from typing import NamedTuple


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

    def as_json(self) -> dict[str, object]:
        return self._asdict()

    def holder(self) -> str:
        """The holder, in the words every refusal uses."""
        return (
            f"session {self.session} (worktree {self.worktree}, branch "
            f"{self.branch or 'detached'}, host {self.host}, pid "
            f"{'?' if self.pid is None else self.pid}, since {self.taken})"
        )


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
    "pid": (int,),
    "pid_start": (str,),
    "taken": (str,),
    "expires": (str,),
    "nonce": (str,),
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


def parse_message(message: str) -> ClaimRecord | str:
    try:
        return parse_record(json.loads(message))
    except json.JSONDecodeError:
        return "its record is not JSON"


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
