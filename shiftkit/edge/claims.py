"""Claims on features: git refs under refs/shiftkit/claims/, shared by all worktrees.

A claim ref points to a commit object with the empty tree whose message is the claim
record as JSON. Creating it with `git update-ref <ref> <oid> <zero>` succeeds only if the
ref does not exist yet, atomically: that compare-and-swap is the lock.
"""

from __future__ import annotations

import json
import os
from datetime import UTC
from pathlib import Path
from typing import Any, NamedTuple

from shiftkit.core.errors import CLAIM_HELD, ShiftkitError
from shiftkit.edge import gitio

PREFIX = "refs/shiftkit/claims/"


class Claim(NamedTuple):
    feature: str
    oid: str
    record: dict[str, Any]

    def holder(self) -> str:
        r = self.record
        if "broken" in r:
            return (
                f"{self.feature} has a broken claim ({r['broken']}); a person removes it with "
                f"`git update-ref -d {ref_name(self.feature)}`"
            )
        return (
            f"{self.feature} is claimed by session {r.get('session', '?')} "
            f"(worktree {r.get('worktree', '?')}, branch {r.get('branch') or 'detached'}, "
            f"host {r.get('host', '?')}, pid {r.get('pid', '?')}, since {r.get('taken', '?')})"
        )


def ref_name(feature_id: str) -> str:
    return PREFIX + feature_id


RECORD_TYPES: dict[str, tuple[type, ...]] = {
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


def broken_reason(record: Any) -> str | None:
    """Why a claim record is not one shiftkit wrote, or None."""
    if not isinstance(record, dict):
        return "its record is not a JSON object"
    for key, kinds in RECORD_TYPES.items():
        if key in record and (not isinstance(record[key], kinds) or isinstance(record[key], bool)):
            return f"its record's {key!r} has the wrong type"
    return None if isinstance(record.get("feature"), str) else "its record names no feature"


def read_record(root: Path, oid: str) -> dict[str, Any]:
    """The claim record in ``oid``; a record with a ``broken`` key when it cannot be one."""
    proc = gitio.run(["cat-file", "commit", oid], root, check=False)
    if proc.returncode != 0:
        return {"broken": "the ref does not point at a commit"}
    _, _, message = proc.stdout.partition("\n\n")
    try:
        record = json.loads(message)
    except json.JSONDecodeError:
        return {"broken": "its record is not JSON"}
    reason = broken_reason(record)
    return {"broken": reason} if reason else record


def current_problem(root: Path, record: dict[str, Any]) -> str | None:
    """None when this worktree's claim record is the claim ref's current object; else why not
    (released, taken over, or never locked): a finish must not outlive its claim."""
    feature, oid = record.get("feature"), record.get("oid")
    if not isinstance(feature, str) or not isinstance(oid, str) or not oid:
        return "this worktree's claim record holds no claim object; claim the feature again"
    ref = ref_name(feature)
    code, out, _ = gitio.plumb(["rev-parse", "-q", "--verify", ref], root)  # (the hook's path)
    current = out.decode().strip() if code == 0 else ""
    if current == oid:
        return None
    where = "is gone" if not current else f"now points at {current[:7]}"
    return (
        f"this worktree's claim on {feature} is no longer held: {ref} {where} (released or "
        f"taken over); `shiftkit claims` shows the holder"
    )


def list_claims(root: Path) -> dict[str, Claim]:
    result = {}
    for name, oid in gitio.refs(root, PREFIX).items():
        feature_id = name[len(PREFIX) :]
        result[feature_id] = Claim(feature_id, oid, read_record(root, oid))
    return result


class ClaimHeld(ShiftkitError):
    def __init__(self, claim: Claim) -> None:
        if "broken" in claim.record:  # nobody holds it: a person must clear it
            super().__init__(claim.holder(), exit_code=1)
            return
        super().__init__(
            f"{claim.holder()}; pick another feature (`shiftkit next`), or take it over with "
            f"`shiftkit claim {claim.feature} --steal` if that session is gone",
            exit_code=CLAIM_HELD,
        )


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def process_start(pid: int) -> str:
    """The process's start time in clock ticks since boot ('' when unknown or gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return fields[19]
    except (OSError, IndexError):
        return ""


def session_pid() -> int:
    """The agent's process: SHIFTKIT_SESSION_PID when the harness sets it, else our parent."""
    value = os.environ.get("SHIFTKIT_SESSION_PID", "")
    return int(value) if value.isdigit() else os.getppid()


def new_record(
    feature_id: str, worktree: Path, branch: str | None, base: str, ttl_hours: int
) -> dict[str, Any]:
    import secrets
    import socket
    from datetime import datetime, timedelta

    now = datetime.now(UTC)
    pid = session_pid()
    return {
        "feature": feature_id,
        "session": os.environ.get("SHIFTKIT_SESSION") or f"{socket.gethostname()}-{pid}",
        "worktree": str(worktree),
        "branch": branch,
        "base": base,
        "host": socket.gethostname(),
        "boot_id": _boot_id(),
        "pid": pid,
        "pid_start": process_start(pid),
        "taken": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "expires": (now + timedelta(hours=ttl_hours)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "nonce": secrets.token_hex(8),
    }


_CLAIM_IDENTITY = {
    "GIT_AUTHOR_NAME": "shiftkit",
    "GIT_AUTHOR_EMAIL": "claims@shiftkit.invalid",
    "GIT_COMMITTER_NAME": "shiftkit",
    "GIT_COMMITTER_EMAIL": "claims@shiftkit.invalid",
}


def _claim_object(root: Path, record: dict[str, Any]) -> str:
    message = json.dumps(record, indent=2, sort_keys=True)
    return gitio.out(
        ["commit-tree", gitio.EMPTY_TREE, "-m", message], root, env=_CLAIM_IDENTITY
    ).strip()


def acquire(root: Path, record: dict[str, Any], expected_old: str = gitio.ZERO_OID) -> str:
    """Create the claim ref if it does not exist (or still points at ``expected_old``)."""
    oid = _claim_object(root, record)
    ref = ref_name(record["feature"])
    proc = gitio.run(["update-ref", ref, oid, expected_old], root, check=False)
    if proc.returncode != 0:
        current = gitio.refs(root, ref).get(ref)
        if current is None:
            raise ShiftkitError(f"could not create {ref}: {proc.stderr.strip()}", exit_code=1)
        raise ClaimHeld(Claim(record["feature"], current, read_record(root, current)))
    return oid


def release_ref(root: Path, feature_id: str, oid: str) -> bool:
    """Delete the claim ref only if it is still ``oid``; False when it was not ours."""
    proc = gitio.run(["update-ref", "-d", ref_name(feature_id), oid], root, check=False)
    return proc.returncode == 0


def staleness(record: dict[str, Any]) -> str | None:
    """Why a claim looks abandoned, or None. Only ever shown: nothing acts on it."""
    import socket
    from datetime import datetime

    if record.get("host") == socket.gethostname():
        if record.get("boot_id") and record.get("boot_id") != _boot_id():
            return "the machine has rebooted since"
        pid = record.get("pid")
        if isinstance(pid, int):
            started = process_start(pid)
            if not started:
                return f"process {pid} is gone"
            if record.get("pid_start") and started != record.get("pid_start"):
                return f"process {pid} is another process now"
        return None
    expires = record.get("expires", "")
    if expires and expires < datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"):
        return f"its lease expired at {expires}"
    return None
