"""A team on one remote (issue 29): every view counts the remote's claims and names the
feature `claim` then takes; a claim never stands on a stale base; a session does not end with
its finished work unpublished."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git_ok, ok, shiftkit
from test_claims_truth import _connections
from test_parallel import _machines, _work


def _ok(place: Path, *args: str, session: str) -> str:
    done = shiftkit(place, *args, env={"SHIFTKIT_SESSION": session})
    assert done.returncode == 0, done.output
    return done.stdout


STOP = json.dumps({"session_id": "s", "stop_hook_active": False})
STOP_AGAIN = json.dumps({"session_id": "s", "stop_hook_active": True})


def test_every_view_counts_the_remotes_claims(scaffold: Path, tmp_path: Path) -> None:
    _, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    assert "claimed F000" in _ok(one, "claim", session="sess-one")
    # Before: "0 claimed, next: F000" in the other clone while F000 was held on the remote.
    brief = ok(two, "start", "--brief", "--no-check")
    assert "next: F001" in brief and "1 claimed" in brief
    assert "claimed elsewhere: F000 by session sess-one of clone" in brief
    assert ok(two, "next").startswith("F001")
    status = ok(two, "status")
    assert "next: F001" in status and "claimed 1" in status
    assert "F000  session sess-one" in status and " ago" in status
    assert json.loads(ok(two, "next", "--json"))["next"]["id"] == "F001"
    # A clone that has not looked (a fresh one, no cache) agrees too, and `claim` takes the
    # very feature the views named, saying what it skipped and why.
    claimed = ok(two, "claim")
    assert "skipped F000: claimed by session sess-one of clone" in claimed
    assert "claimed F001" in claimed


def test_the_refusal_names_the_claims_that_block(scaffold: Path, tmp_path: Path) -> None:
    _, (one, two, three, four) = _machines(scaffold, tmp_path, ("one", "two", "three", "four"))
    _ok(one, "claim", session="sess-one")
    _ok(two, "claim", session="sess-two")
    assert "claimed F002" in ok(three, "claim")
    assert "claimed F003" in ok(four, "claim")
    git_ok(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(tmp_path / "five"))
    five = tmp_path / "five"
    ok(five, "install-hooks", "--force")
    brief = ok(five, "start", "--brief", "--no-check")
    assert "no feature can be claimed now — claimed: F000 (session sess-one of clone" in brief
    assert "F001 (session sess-two of clone" in brief  # (the brief names the holders too)
    assert "end it (its usage counts as coordination)" in brief
    refused = shiftkit(five, "claim")
    assert refused.returncode == 1, refused.output
    line = refused.stderr
    assert line.count("\n") == 1 and line.startswith("shiftkit: no feature can be claimed")
    for feature, holder in (("F000", "sess-one"), ("F001", "sess-two")):
        assert f"{feature} (session {holder} of clone" in line


def test_a_view_looks_once_then_reuses_the_look(scaffold: Path, tmp_path: Path) -> None:
    _, (one,) = _machines(scaffold, tmp_path, ("one",))
    _, started = _connections(one, "next")
    assert started == ["git-upload-pack"]  # one look: the claims and the branch
    _, started = _connections(one, "status")
    assert started == []  # (within the interval: the look is reused)


def test_an_unreachable_remote_is_said_and_the_view_is_local(
    scaffold: Path, tmp_path: Path
) -> None:
    _, (one,) = _machines(scaffold, tmp_path, ("one",))
    git_ok(one, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    shown = ok(one, "next")
    assert shown.splitlines()[0].startswith("remote 'origin' not reachable: local view")
    assert "F000" in shown
    assert "not reachable: local view" in ok(one, "start", "--brief", "--no-check")


def test_a_claim_on_a_clone_behind_catches_up_and_the_brief_counts_there(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(two, "start", "--no-check")  # (two has looked: its copy of main is old now)
    ok(one, "claim", "F000")
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    ok(one, "finish", "-m", "part zero works")
    # Before: the brief advised F000, already passing on the remote.
    brief = ok(two, "start", "--brief", "--no-check")
    assert "next: F001" in brief and "catches up first" in brief
    claimed = ok(two, "claim")
    assert "caught up first: fast-forwarded main to origin/main" in claimed
    assert "claimed F001" in claimed
    base = json.loads((two / ".git" / "shiftkit" / "claim.json").read_text())["base"]
    assert base == git_ok(bare, "rev-parse", "main").strip()


def test_the_stop_hook_holds_a_session_until_its_work_is_published(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(one, "claim", "F000")
    ok(two, "claim", "F001")
    _work(two, "two")
    git_ok(two, "add", "two.txt")
    ok(two, "finish", "-m", "part one works")  # two's push wins
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    # one's pushes cannot reach the remote (a finish catches up a lost race itself: decision
    # record 0055), so its finished work stays here and its claim stays held there
    git_ok(one, "remote", "set-url", "--push", "origin", str(tmp_path / "unreachable.git"))
    unpushed = shiftkit(one, "finish", "-m", "part zero works")
    git_ok(one, "remote", "set-url", "--push", "origin", str(bare))
    assert unpushed.returncode == 1, unpushed.output  # finished here, not on the remote
    assert unpushed.stdout.rstrip().splitlines()[-1].startswith("not published: F000's commit")
    assert "F000" in git_ok(bare, "for-each-ref", "refs/shiftkit/claims/")
    stop = shiftkit(one, "stop-check", input=STOP)
    assert stop.returncode == 2, stop.output
    assert "not published" in stop.stderr and "shiftkit sync" in stop.stderr
    assert "claim on F000 still held on origin" in stop.stderr
    assert shiftkit(one, "stop-check", input=STOP_AGAIN).returncode == 0  # once, never a trap
    ok(one, "sync")
    assert shiftkit(one, "stop-check", input=STOP).returncode == 0
    assert shiftkit(two, "stop-check", input=STOP).returncode == 0


def test_a_revert_whose_push_fails_exits_1_until_it_is_on_the_remote(
    scaffold: Path, tmp_path: Path
) -> None:
    """A revert's commit that cannot reach the remote leaves the claim held there: exit 1, the
    last line saying what to do (decision record 0085); once on the remote, all is well."""
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    ok(one, "claim", "F000")
    _work(one, "one")
    git_ok(one, "remote", "set-url", "--push", "origin", str(tmp_path / "unreachable.git"))
    reverted = shiftkit(one, "revert", "--reason", "the approach does not work")
    git_ok(one, "remote", "set-url", "--push", "origin", str(bare))
    assert reverted.returncode == 1, reverted.output
    last = reverted.stdout.rstrip().splitlines()[-1]
    assert last.startswith("not published: F000's commit") and "`shiftkit sync`" in last
    assert "F000" in git_ok(bare, "for-each-ref", "refs/shiftkit/claims/")
    ok(one, "sync")
    assert "F000" not in git_ok(bare, "for-each-ref", "refs/shiftkit/claims/")
