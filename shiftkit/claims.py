"""Claims on features: git refs under refs/shiftkit/claims/, shared by all worktrees.

A claim ref points to a commit object with the empty tree whose message is the claim
record as JSON. Creating it with `git update-ref <ref> <oid> <zero>` succeeds only if the
ref does not exist yet, atomically: that compare-and-swap is the lock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftkit import gitio

PREFIX = "refs/shiftkit/claims/"


@dataclass(frozen=True)
class Claim:
    feature: str
    oid: str
    record: dict[str, Any]

    def holder(self) -> str:
        r = self.record
        return (
            f"{self.feature} is claimed by session {r.get('session', '?')} "
            f"(worktree {r.get('worktree', '?')}, branch {r.get('branch') or 'detached'}, "
            f"host {r.get('host', '?')}, pid {r.get('pid', '?')}, since {r.get('taken', '?')})"
        )


def ref_name(feature_id: str) -> str:
    return PREFIX + feature_id


def read_record(root: Path, oid: str) -> dict[str, Any]:
    raw = gitio.out(["cat-file", "commit", oid], root)
    _, _, message = raw.partition("\n\n")
    try:
        record = json.loads(message)
    except json.JSONDecodeError:
        return {}
    return record if isinstance(record, dict) else {}


def list_claims(root: Path) -> dict[str, Claim]:
    result = {}
    for name, oid in gitio.refs(root, PREFIX).items():
        feature_id = name[len(PREFIX) :]
        result[feature_id] = Claim(feature_id, oid, read_record(root, oid))
    return result
