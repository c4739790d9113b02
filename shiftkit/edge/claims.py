"""Claims on features: git refs under refs/shiftkit/claims/, shared by all worktrees.

A claim ref points to a commit object with the empty tree whose message is the claim
record as JSON. Creating it with `git update-ref <ref> <oid> <zero>` succeeds only if the
ref does not exist yet, atomically: that compare-and-swap is the lock.
"""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from typing import NamedTuple

from shiftkit.core.claim import (
    TIME_FORMAT,
    ClaimRecord,
    LocalClaim,
    parse_message,
    record_message,
    stale_reason,
)
from shiftkit.core.errors import CLAIM_HELD, ShiftkitError
from shiftkit.edge import gitio

PREFIX = "refs/shiftkit/claims/"


class Claim(NamedTuple):
    """A claim ref: the feature, the object it points at, and its record — or, when the
    object is not one shiftkit wrote, why (``broken``)."""

    feature: str
    oid: str
    record: ClaimRecord | None
    broken: str = ""

    def holder(self) -> str:
        if self.record is None:
            return (
                f"{self.feature} has a planted or foreign claim ({self.broken}: not one "
                f"shiftkit wrote); a person releases it, here and on the claims remote, with "
                f"`{release_planted(self.feature)}`"
            )
        return f"{self.feature} is claimed by {self.record.holder()}"

    def as_json(self) -> dict[str, object]:
        """The record's fields, or ``broken`` with the reason."""
        return self.record.as_json() if self.record else {"broken": self.broken}


def release_planted(feature_id: str) -> str:
    """The one command that releases a planted or foreign claim where it is held (decision
    0063): `release --steal` deletes the server's ref under a lease on the object seen."""
    return f"shiftkit release {feature_id} --steal"


def ref_name(feature_id: str) -> str:
    return PREFIX + feature_id


def read_claim(root: Path, feature_id: str, oid: str) -> Claim:
    """The claim in object ``oid``; a broken claim when it cannot be one."""
    proc = gitio.run(["cat-file", "commit", oid], root, check=False)
    if proc.returncode != 0:
        return Claim(feature_id, oid, None, "the ref does not point at a commit")
    _, _, message = proc.stdout.partition("\n\n")
    record = parse_message(message)
    if isinstance(record, str):
        return Claim(feature_id, oid, None, record)
    return Claim(feature_id, oid, record)


def current_problem(root: Path, held: LocalClaim) -> str | None:
    """None when this worktree's claim is the claim ref's current object; else why not
    (released, taken over, or never locked): a finish must not outlive its claim."""
    if not held.oid:
        return "this worktree's claim record holds no claim object; claim the feature again"
    ref = ref_name(held.feature)
    code, out, _ = gitio.plumb(["rev-parse", "-q", "--verify", ref], root)  # (the hook's path)
    current = out.decode().strip() if code == 0 else ""
    if current == held.oid:
        return None
    where = "is gone" if not current else f"now points at {current[:7]}"
    return (
        f"this worktree's claim on {held.feature} is no longer held: {ref} {where} (released or "
        f"taken over); `shiftkit claims` shows the holder"
    )


def list_claims(root: Path) -> dict[str, Claim]:
    result = {}
    for name, oid in gitio.refs(root, PREFIX).items():
        feature_id = name[len(PREFIX) :]
        result[feature_id] = read_claim(root, feature_id, oid)
    return result


class ClaimHeld(ShiftkitError):
    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        if claim.record is None:  # nobody holds it: a person must clear it
            super().__init__(claim.holder(), exit_code=1)
            return
        super().__init__(
            f"{claim.holder()}; pick another feature (`shiftkit next`); once its lease runs "
            f"out without a heartbeat, a plain `shiftkit claim {claim.feature}` takes it (a "
            f"person takes a live one with `--steal`)",
            exit_code=CLAIM_HELD,
        )


def new_record(
    feature_id: str,
    worktree: Path,
    branch: str | None,
    base: str,
    ttl_hours: int,
    session: str,
    clone: str,
) -> ClaimRecord:
    import secrets
    import socket
    from datetime import datetime, timedelta

    now = datetime.now(UTC)
    return ClaimRecord(
        feature=feature_id,
        session=session,
        worktree=str(worktree),
        branch=branch,
        base=base,
        host=socket.gethostname(),
        taken=now.strftime(TIME_FORMAT),
        expires=(now + timedelta(hours=ttl_hours)).strftime(TIME_FORMAT),
        nonce=secrets.token_hex(8),
        clone=clone,
    )


_CLAIM_IDENTITY = {
    "GIT_AUTHOR_NAME": "shiftkit",
    "GIT_AUTHOR_EMAIL": "claims@shiftkit.invalid",
    "GIT_COMMITTER_NAME": "shiftkit",
    "GIT_COMMITTER_EMAIL": "claims@shiftkit.invalid",
}


def claim_object(root: Path, record: ClaimRecord) -> str:
    return gitio.out(
        ["commit-tree", gitio.EMPTY_TREE, "-m", record_message(record)], root, env=_CLAIM_IDENTITY
    ).strip()


def acquire(root: Path, record: ClaimRecord, expected_old: str = gitio.ZERO_OID) -> str:
    """Create the claim ref if it does not exist (or still points at ``expected_old``)."""
    oid = claim_object(root, record)
    ref = ref_name(record.feature)
    proc = gitio.run(["update-ref", ref, oid, expected_old], root, check=False)
    if proc.returncode != 0:
        current = gitio.refs(root, ref).get(ref)
        if current is None:
            raise ShiftkitError(f"could not create {ref}: {proc.stderr.strip()}", exit_code=1)
        raise ClaimHeld(read_claim(root, record.feature, current))
    return oid


def release_ref(root: Path, feature_id: str, oid: str) -> bool:
    """Delete the claim ref only if it is still ``oid``; False when it was not ours."""
    proc = gitio.run(["update-ref", "-d", ref_name(feature_id), oid], root, check=False)
    return proc.returncode == 0


def staleness(record: ClaimRecord | None, oid: str, common_dir: Path, ttl_hours: int) -> str | None:
    """Why a claim looks abandoned (no heartbeat for ``ttl_hours``: from its record, or seen
    in this clone), or None. Only ever shown, and the bar for `--steal`."""
    from shiftkit.edge import session

    if record is None:
        return None
    return stale_reason(record, session.seen(common_dir, oid), session.now(), ttl_hours)
