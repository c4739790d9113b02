"""`shiftkit sync` whose push loses a race (another clone pushed between its catch-up and
its push) catches up again and pushes, a bounded number of rounds, instead of telling the
agent to "run sync again" (the team trial: two syncs for one publication). Its twin: a push
the remote refuses for another reason is not retried — one line, exit 1."""

from __future__ import annotations

from pathlib import Path

from conftest import git_ok, ok, shiftkit
from teams import team_project

RACE_ONCE = """#!/bin/sh
# the first push loses a race: another clone's commit (waiting on `pending`) lands first
# (outside the quarantine, where git forbids ref updates)
if [ ! -e "$GIT_DIR/raced" ]; then
    touch "$GIT_DIR/raced"
    env -u GIT_QUARANTINE_PATH git update-ref refs/heads/main refs/heads/pending
    echo "main moved" >&2
    exit 1
fi
exit 0
"""

REFUSE_ALWAYS = """#!/bin/sh
echo "pushes are closed today" >&2
exit 1
"""


def remote_with_a_pending_commit(scaffold: Path, tmp_path: Path, hook: str) -> tuple[Path, Path]:
    """(the remote, clone one): a teammate's plain commit waits on the remote's `pending`
    branch; the remote's pre-receive hook is ``hook``."""
    bare = team_project(scaffold, tmp_path, ["a.txt"])
    one, two = tmp_path / "one", tmp_path / "two"
    for place in (one, two):
        git_ok(tmp_path, "clone", "-q", str(bare), str(place))
        ok(place, "install-hooks", "--force")
    (two / "theirs.txt").write_text("a teammate's\n")
    git_ok(two, "add", "theirs.txt")
    git_ok(two, "commit", "-q", "-m", "Add a teammate's file")
    git_ok(two, "push", "-q", "origin", "HEAD:refs/heads/pending")
    script = bare / "hooks" / "pre-receive"
    script.write_text(hook)
    script.chmod(0o755)
    (one / "ours.txt").write_text("ours\n")
    git_ok(one, "add", "ours.txt")
    git_ok(one, "commit", "-q", "-m", "Add our file")
    return bare, one


def test_a_sync_that_loses_a_race_catches_up_again(scaffold: Path, tmp_path: Path) -> None:
    bare, one = remote_with_a_pending_commit(scaffold, tmp_path, RACE_ONCE)
    synced = shiftkit(one, "sync")
    assert synced.returncode == 0, synced.output
    assert "moved on meanwhile (another clone pushed first): catching up again" in synced.output
    assert "run sync again" not in synced.output
    for name in ("ours.txt", "theirs.txt"):
        assert git_ok(bare, "cat-file", "-t", f"main:{name}").strip() == "blob"


def test_a_push_refused_for_another_reason_is_not_retried(scaffold: Path, tmp_path: Path) -> None:
    _, one = remote_with_a_pending_commit(scaffold, tmp_path, REFUSE_ALWAYS)
    synced = shiftkit(one, "sync")
    assert synced.returncode == 1, synced.output
    assert "catching up again" not in synced.output
    assert "was refused" in synced.stderr and "run sync again" in synced.stderr
    assert synced.stderr.count("\n") == 1
