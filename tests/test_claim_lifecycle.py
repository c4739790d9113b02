"""No deadlock from an agent's own state (issue 36 item 1, decision record 0096): a claim
belongs to its clone, a finished commit dropped unpublished lets its claim go, another clone's
claim expires on a short lease, and a revert that lost a push race catches up — against one
bare remote and real clones."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git_ok, ok, shiftkit
from test_ground import guarded
from test_parallel import _machines, _server_claims, _work

REFUSE_BRANCHES = """#!/bin/sh
while read old new ref; do
  case "$ref" in refs/heads/*) echo "no branch pushes today" >&2; exit 1;; esac
done
"""


def _refuse_branch_pushes(bare: Path, on: bool) -> None:
    hook = bare / "hooks" / "pre-receive"
    if on:
        hook.write_text(REFUSE_BRANCHES)
        hook.chmod(0o755)
    else:
        hook.unlink()


def _finished_then_dropped(bare: Path, one: Path) -> str:
    """F001 finished in ``one``, its push refused, and the commit dropped with `git reset
    --hard`, as the agent in the trial did: the claim stays parked, waiting for a commit that
    no branch holds. Returns the dropped commit."""
    ok(one, "claim", "F001")
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    _refuse_branch_pushes(bare, True)
    finished = shiftkit(one, "finish", "-m", "part one works")
    assert finished.returncode == 1, finished.output  # committed, not published
    _refuse_branch_pushes(bare, False)
    dropped = git_ok(one, "rev-parse", "HEAD").strip()
    git_ok(one, "reset", "-q", "--hard", "HEAD~1")
    assert set(_server_claims(bare)) == {"F001"}
    return dropped


def test_a_finished_commit_dropped_unpublished_lets_its_claim_go(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    dropped = _finished_then_dropped(bare, one)
    status = shiftkit(one, "status")
    assert status.returncode == 0, status.output
    assert f"released F001: its finished commit {dropped[:7]}" in status.stdout
    assert _server_claims(bare) == {}  # released on the remote, without a person
    log = (one / "claude-progress.txt").read_text()
    assert "F001 | released (finished, dropped unpublished)" in log
    assert git_ok(one, "status", "--porcelain") == ""  # the entry is committed
    assert "released F001" not in ok(one, "status")  # said once
    assert "claimed F001" in ok(one, "claim", "F001")  # free again, for this clone too


def test_a_finished_commit_still_here_keeps_its_claim(scaffold: Path, tmp_path: Path) -> None:
    """The twin: finished and not published, but still on the branch — the claim waits for
    `sync`, and nothing releases it."""
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    ok(one, "claim", "F001")
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    _refuse_branch_pushes(bare, True)
    assert shiftkit(one, "finish", "-m", "part one works").returncode == 1
    _refuse_branch_pushes(bare, False)
    assert "released F001" not in ok(one, "status")
    assert set(_server_claims(bare)) == {"F001"}
    stop = shiftkit(one, "stop-check", input="{}")
    assert stop.returncode == 2, stop.output
    assert "finished work is not published" in stop.stderr
    assert "released F001" in ok(one, "sync")


def test_the_stop_hook_is_silent_about_a_dropped_commit(scaffold: Path, tmp_path: Path) -> None:
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    _finished_then_dropped(bare, one)
    stop = shiftkit(one, "stop-check", input="{}")
    assert stop.returncode == 0, stop.output  # nothing of this session is unpublished
    assert stop.output == ""


def _claimed_in_a_gone_worktree(one: Path, tmp_path: Path) -> None:
    """Session s-a of clone ``one`` claims F001 in a linked worktree, which is then removed
    with the claim still held (its record went with the worktree's git dir)."""
    tree = tmp_path / "wt-a"
    git_ok(one, "worktree", "add", "-q", "-b", "agent-a", str(tree))
    claimed = shiftkit(tree, "claim", "F001", env={"SHIFTKIT_SESSION": "s-a"})
    assert claimed.returncode == 0, claimed.output
    git_ok(one, "worktree", "remove", "--force", str(tree))


def test_a_later_session_of_the_clone_releases_its_claim(scaffold: Path, tmp_path: Path) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    _claimed_in_a_gone_worktree(one, tmp_path)
    later = {"SHIFTKIT_SESSION": "s-b"}
    brief = shiftkit(one, "start", "--no-check", env=later)
    assert "F001 is yours, from session s-a (ended)" in brief.stdout, brief.output
    refused = shiftkit(two, "release", "F001")  # the twin: another clone's, and live
    assert refused.returncode == 3, refused.output
    assert "session s-a" in refused.stderr
    released = shiftkit(one, "release", "F001", env=later)
    assert released.returncode == 0, released.output
    assert "from session s-a (ended" in released.stdout
    assert "released F001" in released.stdout
    assert _server_claims(bare) == {}


def test_a_later_session_of_the_clone_reverts_its_claim(scaffold: Path, tmp_path: Path) -> None:
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    _claimed_in_a_gone_worktree(one, tmp_path)
    reverted = shiftkit(one, "revert", "--reason", "gave up", env={"SHIFTKIT_SESSION": "s-b"})
    assert reverted.returncode == 0, reverted.output
    assert "recorded attempt 1 of F001" in reverted.stdout
    items = json.loads((one / "features.json").read_text())["features"]
    assert next(f for f in items if f["id"] == "F001")["attempts"] == 1
    assert _server_claims(bare) == {}


def _age_claim(bare: Path, feature: str) -> None:
    """The holder is gone: its claim on the remote was last refreshed two hours ago (the
    record rewritten in the bare repository itself, as the holder's clone would have)."""
    ref = f"refs/shiftkit/claims/{feature}"
    message = git_ok(bare, "log", "-1", "--format=%B", ref)
    record = json.loads(message)
    record["taken"] = record["heartbeat"] = "2020-01-01T10:00:00Z"
    aged = git_ok(
        bare,
        "commit-tree",
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "-m",
        json.dumps(record, indent=2, sort_keys=True),
    ).strip()
    git_ok(bare, "update-ref", ref, aged)


def test_an_expired_claim_of_another_clone_is_taken_a_live_one_is_not(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    assert shiftkit(two, "claim", "F001", env={"SHIFTKIT_SESSION": "gone"}).returncode == 0
    _age_claim(bare, "F001")
    assert "F001's claim has expired (session gone" in ok(one, "start", "--no-check")
    code, why = guarded(one, "shiftkit claim F001")  # the agent's own command, through the guard
    assert code == 0, why
    taken = shiftkit(one, "claim", "F001")
    assert taken.returncode == 0, taken.output
    assert "took over the expired claim" in taken.stdout and "session gone" in taken.stdout
    record = json.loads(git_ok(bare, "log", "-1", "--format=%B", "refs/shiftkit/claims/F001"))
    assert record["clone"] == (one / ".git" / "shiftkit" / "clone-id").read_text().strip()


def test_a_live_claim_of_another_clone_stays_its_holders(scaffold: Path, tmp_path: Path) -> None:
    _, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    assert shiftkit(two, "claim", "F001", env={"SHIFTKIT_SESSION": "alive"}).returncode == 0
    refused = shiftkit(one, "claim", "F001")
    assert refused.returncode == 3, refused.output
    assert "session alive" in refused.stderr
    code, why = guarded(one, "shiftkit claim F001 --steal")
    assert code == 2 and "a person's action" in why
    assert "expired" not in ok(one, "start", "--no-check")


def test_a_revert_that_lost_a_push_race_catches_up(scaffold: Path, tmp_path: Path) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(one, "claim", "F001")
    ok(two, "claim", "F002")
    _work(two, "two")
    git_ok(two, "add", "two.txt")
    ok(two, "finish", "-m", "part two works")  # main moved on under one's claim
    reverted = shiftkit(one, "revert", "--reason", "could not do it")
    assert reverted.returncode == 0, reverted.output
    # (the reset tree is clean: the revert fast-forwards to the remote's tip before it
    # records the attempt, so its push does not race; a race lost meanwhile syncs)
    assert (
        "then fast-forwarded to the remote's tip" in reverted.stdout
        or "moved on meanwhile: syncing" in reverted.stdout
    )
    assert _server_claims(bare) == {}
    assert git_ok(one, "rev-parse", "HEAD") == git_ok(bare, "rev-parse", "main")
