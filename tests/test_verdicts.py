""" "Judged" is a record, not reachability (issue 19, item 3; decision record 0043).

A commit fetched into `refs/remotes/*`, a tag or any other namespace is new to this machine's
judges: the reference-transaction hook judges it when a local branch moves onto it, whoever
made it, and remembers each commit it passes (the verdict cache). A teammate's honest flip is
re-verified here first — by `shiftkit sync`, or `shiftkit audit --reverify REV` — and a forged
one never gets a verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import add_log_entry, edit_list, git, git_ok, implement, ok, shiftkit
from test_parallel import _machines
from test_trust_invariants import base as base  # (the fixtures, shared)
from test_trust_invariants import no_hooks
from test_trust_invariants import one_project as one_project
from test_trust_invariants import project as project


def _head(p: Path) -> str:
    return git_ok(p, "rev-parse", "HEAD").strip()


def _forge_flip(clone: Path, feature_id: str, subject: str) -> str:
    """A flip made past every hook, its trailers forged as `finish` writes them; the
    feature's verifier fails at it. Returns the commit."""
    edit_list(
        clone, lambda items: next(i for i in items if i["id"] == feature_id).update(passes=True)
    )
    add_log_entry(clone, feature_id)
    git_ok(clone, "add", "-A")
    git_ok(clone, *no_hooks(clone), "commit", "-q", "-m", subject)
    tree = git_ok(clone, "rev-parse", "HEAD^{tree}").strip()
    forged = (
        f"{subject}\n\nShiftkit-Feature: {feature_id}\nShiftkit-Claim: {'1' * 40}\n"
        f"Shiftkit-Verified: {tree}\n"
    )
    git_ok(clone, *no_hooks(clone), "commit", "-q", "--amend", "-m", forged)
    return _head(clone)


@pytest.mark.parametrize("namespace", ["refs/remotes/origin/wip", "refs/tags/wip", "refs/wip"])
def test_a_forged_flip_fetched_into_any_namespace_is_judged(
    project: Path, tmp_path: Path, namespace: str
) -> None:
    p = project
    other = tmp_path / "other"
    git_ok(tmp_path, "clone", "-q", str(p), str(other))
    forged = _forge_flip(other, "F002", "F002: subtract two numbers")
    git_ok(p, "fetch", "-q", str(other), f"+HEAD:{namespace}")
    before = _head(p)
    moved = git(p, "merge", "-q", "--ff-only", namespace)
    assert moved.returncode != 0, moved.output
    assert "reference-transaction refused" in moved.output and "F002" in moved.output
    assert _head(p) == before
    # Neither a second try nor a re-verifying audit makes it judged.
    audited = shiftkit(p, "audit", "--reverify", namespace)
    assert audited.returncode == 1 and "F002" in audited.output, audited.output
    assert not (p / ".git" / "shiftkit" / "judged" / forged[:2] / forged[2:]).exists()
    again = git(p, "reset", "-q", "--hard", forged)
    assert again.returncode != 0 and _head(p) == before, again.output


def test_a_teammates_flip_is_judged_here_before_the_branch_moves(
    one_project: Path, tmp_path: Path
) -> None:
    p = one_project
    remote = tmp_path / "remote.git"
    git_ok(tmp_path, "init", "-q", "--bare", str(remote))
    git_ok(p, "remote", "add", "origin", str(remote))
    git_ok(p, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    git_ok(tmp_path, "clone", "-q", str(remote), str(other))
    ok(other, "install-hooks", "--force")
    ok(other, "claim", "F002")
    implement(other, "sub")
    ok(other, "finish", "-m", "subtract two numbers")
    git_ok(other, "push", "-q", "origin", "main")
    flip = _head(other)

    git_ok(p, "fetch", "-q", "origin")
    before = _head(p)
    pulled = git(p, "merge", "-q", "--ff-only", "origin/main")  # as `git pull` would
    assert pulled.returncode != 0, pulled.output
    assert "shiftkit sync" in pulled.output and "audit --reverify" in pulled.output
    assert _head(p) == before
    audited = shiftkit(p, "audit", "--reverify", "origin/main")
    assert audited.returncode == 0, audited.output
    assert "re-verifying F002" in audited.stderr
    git_ok(p, "merge", "-q", "--ff-only", "origin/main")
    assert _head(p) == flip
    # The verdict is the record: back, the remote-tracking ref gone, and forward again.
    git_ok(p, "reset", "-q", "--hard", before)
    git_ok(p, "update-ref", "-d", "refs/remotes/origin/main")
    git_ok(p, "reset", "-q", "--hard", flip)
    assert _head(p) == flip


def test_sync_re_verifies_what_it_brings(scaffold: Path, tmp_path: Path) -> None:
    ok(scaffold, "add", "--description", "never works", "--step", "s", "--verify", "false")
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    listed = json.loads((one / "features.json").read_text())["features"]
    never = next(item["id"] for item in listed if item["description"] == "never works")
    forged = _forge_flip(one, never, f"{never}: it works now")
    pushed = git(one, "push", "--no-verify", "-q", "origin", "main")
    assert pushed.returncode == 0, pushed.output
    before = _head(two)
    synced = shiftkit(two, "sync")
    assert synced.returncode == 1, synced.output
    assert "break the rules here" in synced.stderr and never in synced.stderr, synced.stderr
    assert "audit --reverify origin/main" in synced.stderr
    assert _head(two) == before
    assert not (two / ".git" / "shiftkit" / "judged" / forged[:2] / forged[2:]).exists()
    assert git_ok(bare, "rev-parse", "main").strip() == forged


def test_a_push_never_drops_the_remotes_commits(one_project: Path, tmp_path: Path) -> None:
    """The trial's overnight fear: a force push erased a teammate's finished feature. The
    pre-push hook refuses a push that is not a fast-forward of the remote's branch, and a
    deletion of one; a person may still (`--no-verify`)."""
    p = one_project
    remote = tmp_path / "remote.git"
    git_ok(tmp_path, "init", "-q", "--bare", str(remote))
    git_ok(p, "remote", "add", "origin", str(remote))
    git_ok(p, "push", "-q", "origin", "main", "main:side")
    other = tmp_path / "other"
    git_ok(tmp_path, "clone", "-q", str(remote), str(other))
    ok(other, "install-hooks", "--force")
    (other / "theirs.txt").write_text("a teammate's work\n")
    git_ok(other, "add", "theirs.txt")
    git_ok(other, "commit", "-q", "-m", "Add a teammate's work")
    git_ok(other, "push", "-q", "origin", "main")
    theirs = _head(other)
    (p / "mine.txt").write_text("my work\n")
    git_ok(p, "add", "mine.txt")
    git_ok(p, "commit", "-q", "-m", "Add my work")
    for args in (("--force", "origin", "main"), ("origin", "+main"), ("origin", ":side")):
        pushed = git(p, "push", *args)
        assert pushed.returncode != 0, pushed.output
        assert "push refused" in pushed.output, pushed.output
    assert git_ok(remote, "rev-parse", "main").strip() == theirs
    assert git_ok(remote, "rev-parse", "side").strip()
    # A person's force push goes through.
    git_ok(p, "push", "-q", "--no-verify", "--force", "origin", "main")
    assert git_ok(remote, "rev-parse", "main").strip() == _head(p)


def test_sync_puts_back_what_a_refused_pull_staged(scaffold: Path, tmp_path: Path) -> None:
    """git moves the files before the branch: a `git pull` the hook refuses leaves the
    teammate's files staged and HEAD where it was (seen in an agent trial). The refusal says
    to sync; sync puts the files back, judges the commits here and fast-forwards."""
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(one, "claim", "F001")
    (one / "part.txt").write_text("part one\n")
    git_ok(one, "add", "part.txt")
    ok(one, "finish", "-m", "part one works")
    flip = _head(one)
    assert git_ok(bare, "rev-parse", "main").strip() == flip
    before = _head(two)
    pulled = git(two, "pull", "-q", "--ff-only", "origin", "main")
    assert pulled.returncode != 0, pulled.output
    last = [line for line in pulled.output.splitlines() if line.startswith("shiftkit:")][-1]
    assert "came from another clone" in last and "shiftkit sync" in last, pulled.output
    assert _head(two) == before and git_ok(two, "status", "--porcelain")  # half done
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0, synced.output
    assert "put back" in synced.stdout and "fast-forwarded" in synced.stdout, synced.stdout
    assert _head(two) == flip and git_ok(two, "status", "--porcelain") == ""


def test_all_pass_here_is_not_nothing_to_do_while_behind(scaffold: Path, tmp_path: Path) -> None:
    """An agent trial was told "all 7 features pass — nothing to do" while the remote held a
    new feature: behind, every all-pass message says to sync instead."""
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    config = scaffold / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
    git_ok(scaffold, "commit", "-q", "-am", "Share claims through origin")
    bare = tmp_path / "remote.git"
    git_ok(tmp_path, "clone", "-q", "--bare", str(scaffold), str(bare))
    one, two = tmp_path / "one", tmp_path / "two"
    for clone in (one, two):
        git_ok(tmp_path, "clone", "-q", str(bare), str(clone))
        ok(clone, "install-hooks", "--force")
    ok(one, "add", "--description", "new work", "--step", "s", "--verify", "true")
    git_ok(one, "commit", "-q", "-am", "Add new work")
    git_ok(one, "push", "-q", "origin", "main")
    for args in (("start", "--no-check"), ("start",)):
        said = shiftkit(two, *args)
        assert said.returncode == 0, said.output
        assert "nothing to do" not in said.output, said.output
        assert "behind" in said.output and "shiftkit sync" in said.output, said.output
        assert "next: F001" in said.output  # (counted on the remote's branch: issue 29)
    claimed = ok(two, "claim")  # it catches up first
    assert "caught up first" in claimed and "claimed F001" in claimed


def test_sync_carries_the_usage_waiting_after_the_last_finish(
    scaffold: Path, tmp_path: Path
) -> None:
    """Usage recorded after a clone's last `finish` waited in its git dir for ever, so the
    remote's `cost` left it out (an agent trial: about half of the spend). With no claim
    open, sync commits it; with one open, it waits for the claim's boundary."""
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    ok(one, "claim", "F001")
    ok(one, "usage", "add", "--input", "100", "--output", "10")
    assert "usage" not in ok(one, "sync")  # the claim's: it waits
    (one / "part.txt").write_text("part one\n")
    git_ok(one, "add", "part.txt")
    ok(one, "finish", "-m", "part one works")
    ok(one, "usage", "add", "--input", "7000", "--output", "70")  # after the last finish
    main = git_ok(bare, "rev-parse", "main")
    synced = ok(one, "sync")
    assert "shared the usage waiting here" in synced, synced
    assert git_ok(bare, "rev-parse", "main") == main  # (no commit of its own: ADR 0065)
    fresh = tmp_path / "fresh"
    git_ok(tmp_path, "clone", "-q", str(bare), str(fresh))
    report = json.loads(ok(fresh, "cost", "--json"))
    assert report["unattributed"]["input"] == 7000 and report["totals"]["input"] == 7100
    assert "shared the usage" not in ok(one, "sync")  # nothing waits now


def _finish_part(clone: Path, feature_id: str, name: str) -> str:
    ok(clone, "claim", feature_id)
    (clone / f"{name}.txt").write_text(f"{name}\n")
    git_ok(clone, "add", f"{name}.txt")
    ok(clone, "finish", "-m", f"{name} works")
    return _head(clone)


def _set_up(scaffold: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    for clone in (one, two):
        ok(clone, "setup")  # the hooks and merge drivers, as a clone is set up
    return bare, one, two


def test_a_refused_pull_from_a_url_is_put_back_too(scaffold: Path, tmp_path: Path) -> None:
    """A pull from the remote's URL updates no remote-tracking ref (only FETCH_HEAD): sync
    looked for the staged files at the tracking ref only, and refused 'not clean'."""
    bare, one, two = _set_up(scaffold, tmp_path)
    flip = _finish_part(one, "F001", "part")
    before = _head(two)
    pulled = git(two, "pull", "-q", "--ff-only", str(bare), "main")
    assert pulled.returncode != 0 and "came from another clone" in pulled.output, pulled.output
    assert _head(two) == before and "part.txt" in git_ok(two, "status", "--porcelain")
    assert git_ok(two, "rev-parse", "origin/main").strip() == before  # (not moved by the pull)
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0, synced.output
    assert f"put back the files of the fetched commit {flip[:7]}" in synced.stdout, synced.stdout
    assert "fast-forwarded" in synced.stdout, synced.stdout
    assert _head(two) == flip and git_ok(two, "status", "--porcelain") == ""


def test_a_commit_over_a_refused_pull_says_why_it_is_refused(
    scaffold: Path, tmp_path: Path
) -> None:
    """Found by an agent trial: after a refused `git pull`, `git commit -am` of one's own
    work was refused by the rules alone (rules 5, 6, 8, 12: the remote's staged list, log and
    ledger), naming the wrong cause. The refusal now says the index holds the remote's files, and `sync`."""
    _, one, two = _set_up(scaffold, tmp_path)
    flip = _finish_part(one, "F001", "part")
    pulled = git(two, "pull", "-q", "--ff-only", "origin", "main")
    assert pulled.returncode != 0 and "came from another clone" in pulled.output, pulled.output
    notes = two / "CLAUDE.md"
    notes.write_text(notes.read_text() + "my own line\n")
    committed = git(two, "commit", "-q", "-am", "Add a line of my own")
    assert committed.returncode != 0, committed.output
    said = [line for line in committed.stderr.splitlines() if "staged by a `git pull`" in line]
    assert said and f"fetched commit {flip[:7]}" in said[0] and "`shiftkit sync`" in said[0]
    assert all(line.startswith("shiftkit: ") for line in committed.stderr.splitlines() if line)


def test_sync_keeps_own_changes_when_the_refused_pull_is_behind_the_tracking_ref(
    scaffold: Path, tmp_path: Path
) -> None:
    """With the clone's own changes staged beside the remote's files, or the tracking ref
    moved on by a later fetch, the index is no longer the tracking tip's tree: sync put
    nothing back. Now it finds the fetched commit whose changes are staged, puts those
    back and keeps the clone's own changes, staged or not."""
    _, one, two = _set_up(scaffold, tmp_path)
    first = _finish_part(one, "F001", "part")
    (two / "mine.txt").write_text("my own file\n")
    git_ok(two, "add", "mine.txt")  # staged
    notes = two / "CLAUDE.md"
    notes.write_text(notes.read_text() + "my own line\n")  # not staged
    pulled = git(two, "pull", "-q", "--ff-only", "origin", "main")
    assert pulled.returncode != 0 and "came from another clone" in pulled.output, pulled.output
    assert "part.txt" in git_ok(two, "status", "--porcelain")
    second = _finish_part(one, "F002", "other")
    git_ok(two, "fetch", "-q", "origin")  # the tracking ref moves past what was staged
    assert git_ok(two, "rev-parse", "origin/main").strip() == second
    synced = shiftkit(two, "sync")
    # the clone's own changes are what is left, and all sync now refuses for
    assert f"put back the files of the fetched commit {first[:7]}" in synced.stdout, synced.output
    assert synced.returncode != 0 and "not clean" in synced.stderr, synced.output
    assert sorted(git_ok(two, "status", "--porcelain").splitlines()) == [
        " M CLAUDE.md",
        "A  mine.txt",
    ]
    assert notes.read_text().endswith("my own line\n")
    git_ok(two, "commit", "-q", "-am", "Keep my own notes")  # (a person commits them)
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0, synced.output
    assert git_ok(two, "merge-base", "--is-ancestor", second, "HEAD") == ""
    assert (two / "mine.txt").read_text() == "my own file\n"
    assert git_ok(two, "status", "--porcelain") == ""
