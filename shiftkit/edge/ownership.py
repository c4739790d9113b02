"""Whose a claim is, and whether it still holds, as this clone sees it (decision record 0096):
the rules of `core/lease.py` with what only git and the git dir know — this clone's id, its
live worktrees, a claim's heartbeat seen here, and whether a commit is still on a branch."""

from __future__ import annotations

from pathlib import Path

from shiftkit.core import lease
from shiftkit.core.claim import ClaimRecord
from shiftkit.edge import gitio, session


def live_worktrees(root: Path) -> set[str]:
    """The worktrees of this clone that still exist (`git worktree list`, the prunable
    ones left out: their folder is gone)."""
    proc = gitio.run(["worktree", "list", "--porcelain"], root, check=False)
    live: set[str] = set()
    current = ""
    for line in [*proc.stdout.splitlines(), ""]:
        if line.startswith("worktree "):
            current = line[len("worktree ") :]
        elif line.startswith("prunable"):
            current = ""
        elif not line and current:
            live.add(current)
            current = ""
    return live


def is_ours(root: Path, common_dir: Path, record: ClaimRecord | None) -> bool:
    """A claim of this clone held for this worktree, or for one of its worktrees that is
    gone: any later session here may resume, revert or release it."""
    clone = session.clone_id(common_dir)
    if record is None or record.clone != clone:
        return False
    live = () if record.worktree == str(root) else live_worktrees(root)
    return lease.is_ours(record, clone, str(root), live)


def expiry(common_dir: Path, record: ClaimRecord | None, oid: str, minutes: int) -> str | None:
    """Why a claim's lease ran out (its last heartbeat — its record's, or the one seen in
    this clone — is older than ``minutes``), or None while it holds."""
    if record is None:
        return None
    return lease.expired(record, session.seen(common_dir, oid), session.now(), minutes)


def on_a_branch(root: Path, commit: str) -> bool:
    """Whether ``commit`` is on HEAD, a local branch or a remote-tracking branch here (False
    when the object is gone too)."""
    if gitio.is_ancestor(root, commit, "HEAD"):
        return True
    proc = gitio.run(
        ["for-each-ref", "--count=1", "--contains", commit, "refs/heads/", "refs/remotes/"],
        root,
        check=False,
    )
    return proc.returncode == 0 and bool(proc.stdout.strip())
