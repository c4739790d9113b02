"""The publish gate (issue 26.3, 26.4): a push that would publish commits made outside a
claim re-verifies the passing features they can break, and publishes the demotion with
them; every demotion names the commit that broke the feature."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import git, git_ok, ok, shell_features, shiftkit
from test_parallel import _machines

from shiftkit.edge import readsets

FEATURE = "F001"


def _passing_one(project: Path) -> None:
    """F001 (`test -f one.txt`) finished: passing, with its file committed."""
    shell_features(project, "one.txt")
    ok(project, "claim", FEATURE)
    (project / "one.txt").write_text("one\n")
    git_ok(project, "add", "one.txt")
    ok(project, "finish", "-m", "one.txt exists")


def _plain_commit(project: Path, message: str, write: str = "", remove: str = "") -> str:
    if write:
        (project / write).write_text(f"{write}\n")
        git_ok(project, "add", write)
    if remove:
        git_ok(project, "rm", "-q", remove)
    git_ok(project, "commit", "-q", "-m", message)
    return git_ok(project, "rev-parse", "HEAD").strip()


def _passes(project: Path, rev: str, feature_id: str = FEATURE) -> bool:
    text = git_ok(project, "show", f"{rev}:features.json")
    return any(f["id"] == feature_id and f["passes"] for f in json.loads(text)["features"])


def test_check_names_the_commit_that_broke_it(scaffold: Path) -> None:
    _passing_one(scaffold)
    _plain_commit(scaffold, "Add a readme", write="README.extra")
    breaking = _plain_commit(scaffold, "Tidy up the files", remove="one.txt")
    _plain_commit(scaffold, "Add notes", write="notes.md")
    checked = shiftkit(scaffold, "check")
    assert checked.returncode == 1, checked.output
    assert f"first fails at {breaking[:7]} 'Tidy up the files'" in checked.stdout
    assert not _passes(scaffold, "HEAD")
    log = (scaffold / "claude-progress.txt").read_text()
    assert f"first fails at {breaking[:7]}" in log.rsplit("demoted (regression)", 1)[1]
    message = git_ok(scaffold, "log", "-1", "--format=%B")
    assert f"{FEATURE} first fails at {breaking[:7]}" in message


# -- the team case: two clones on a bare remote ------------------------------------------------


def _team(scaffold: Path, tmp_path: Path, *more: str) -> tuple[Path, Path, Path]:
    """A bare remote recording every value its main takes, and two clones of it; F001
    (`test -f one.txt`) finished in the first and caught up in the second (and F002…, `test
    -f` each of ``more``, not yet)."""
    shell_features(scaffold, "one.txt", *more)
    config = scaffold / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
    git_ok(scaffold, "commit", "-q", "-am", "Share claims through origin")
    bare = tmp_path / "remote.git"
    git_ok(tmp_path, "clone", "-q", "--bare", str(scaffold), str(bare))
    git_ok(bare, "config", "core.logAllRefUpdates", "always")
    clones = []
    for name in ("one", "two"):
        clone = tmp_path / name
        git_ok(tmp_path, "clone", "-q", str(bare), str(clone))
        ok(clone, "install-hooks", "--force")
        clones.append(clone)
    one, two = clones
    ok(one, "claim", FEATURE)
    (one / "one.txt").write_text("one\n")
    git_ok(one, "add", "one.txt")
    ok(one, "finish", "-m", "one.txt exists")
    assert "fast-forwarded" in ok(two, "sync")
    assert _passes(two, "HEAD")
    return bare, one, two


def _never_lies(bare: Path, tmp_path: Path) -> list[str]:
    """Every commit the remote's main received — each value it took and every commit they
    reach — checked in a fresh clone: F001 marked passing only where its verifier (`test -f
    one.txt`) passes (decision record 0083: not only at the tips). Returns the values main
    took, oldest first."""
    fresh = tmp_path / "fresh"
    git_ok(tmp_path, "clone", "-q", str(bare), str(fresh))
    tips = git_ok(bare, "reflog", "show", "--format=%H", "refs/heads/main").split()[::-1]
    assert tips, "the remote recorded no update of main"
    for commit in git_ok(fresh, "rev-list", *tips).split():
        has_file = git(fresh, "cat-file", "-e", f"{commit}:one.txt").returncode == 0
        assert has_file or not _passes(fresh, commit), f"main's {commit[:7]} says F001 passes"
    return tips


def _log_names_only_published_commits(bare: Path) -> None:
    """Every entry header of main's log names a commit the remote holds: an entry written
    while commits were written again names their new ids (found by an agent trial)."""
    log = git_ok(bare, "show", "main:claude-progress.txt")
    for line in log.splitlines():
        if line.startswith("## ") and line.count(" | ") == 3:
            base = line.rsplit(" | ", 1)[1].strip()
            if base != "-":
                assert git(bare, "cat-file", "-e", f"{base}^{{commit}}").returncode == 0, line


def _breaking_commit_demotes(bare: Path, subject: str, old: str, exact: bool = True) -> str:
    """The commit of the remote's main with ``subject`` is the one shiftkit wrote again from
    ``old``: the same message, author and dates, F001 demoted there and its log entry saying
    so. Returns it."""
    listing = git_ok(bare, "log", "--format=%H %s", "main").splitlines()
    [new] = [line.split()[0] for line in listing if line.split(" ", 1)[1] == subject]
    assert new != old
    shown = "%an %ae %ad %cn %ce %cd%n%B"
    assert git_ok(bare, "show", "-s", f"--format={shown}", new) == git_ok(
        bare.parent / "two", "show", "-s", f"--format={shown}", old
    )
    assert not _passes(bare, new) and _passes(bare, f"{new}^")
    log = git_ok(bare, "show", f"{new}:claude-progress.txt")
    entry = log.rsplit("demoted (regression)", 1)[1]
    if exact:
        assert "it first fails at the commit this entry is in (its parent " in entry, entry
        header_base = log.rsplit("demoted (regression) | ", 1)[1].split()[0]
        assert f"(its parent {header_base} passed)" in entry, entry
    else:
        assert "it fails at this commit, and passes again at a later one" in entry, entry
    return new


def test_sync_publishes_the_demotion_in_the_breaking_commit(scaffold: Path, tmp_path: Path) -> None:
    bare, _, two = _team(scaffold, tmp_path)
    breaking = _plain_commit(two, "Tidy up the files", remove="one.txt")
    _plain_commit(two, "Add notes", write="notes.md")
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0, synced.output
    new = _breaking_commit_demotes(bare, "Tidy up the files", breaking)
    said = f"{FEATURE} first fails at {new[:7]} 'Tidy up the files' (was {breaking[:7]}"
    assert said in synced.stdout, synced.stdout
    assert "2 unpublished commits written again" in synced.stdout
    assert "published with this push" in synced.stdout
    assert git_ok(bare, "rev-parse", "main") == git_ok(two, "rev-parse", "HEAD")
    assert git_ok(bare, "log", "-1", "--format=%s", "main").strip() == "Add notes"
    tips = _never_lies(bare, tmp_path)
    assert not _passes(bare, tips[-1])
    assert "shiftkit: shiftkit:" not in synced.output
    assert git_ok(two, "status", "--porcelain") == ""
    # The rewritten commits are judged like any: a fresh clone's audit accepts them.
    fresh = tmp_path / "fresh"
    audited = shiftkit(fresh, "audit", "--reverify", "--isolated")
    assert audited.returncode == 0, audited.output


def test_a_break_under_a_sync_merge_is_demoted_in_both(scaffold: Path, tmp_path: Path) -> None:
    """The trial's case: a plain commit breaks F001 while the remote moved on; sync merges.
    The breaking commit and the merge above it are both written with F001 demoted."""
    bare, one, two = _team(scaffold, tmp_path)
    _plain_commit(one, "Add a spare file", write="spare.txt")
    git_ok(one, "push", "-q", "origin", "main")
    breaking = _plain_commit(two, "Tidy up the files", remove="one.txt")
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0, synced.output
    assert "merged and pushed" in synced.stdout, synced.stdout
    new = _breaking_commit_demotes(bare, "Tidy up the files", breaking)
    merge = git_ok(bare, "rev-parse", "main").strip()
    assert git_ok(bare, "rev-parse", f"{merge}^1").strip() == new
    assert not _passes(bare, merge)
    _never_lies(bare, tmp_path)


def test_a_plain_git_push_demotes_in_the_breaking_commit_and_asks_to_push_again(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, _, two = _team(scaffold, tmp_path)
    before = git_ok(bare, "rev-parse", "main")
    breaking = _plain_commit(two, "Tidy up the files", remove="one.txt")
    (two / "scratch.py").write_text("work in progress\n")  # a dirty tree: kept as it is
    pushed = git(two, "push", "-q", "origin", "main")
    assert pushed.returncode != 0, pushed.output
    said = [line for line in pushed.stderr.splitlines() if line.startswith("shiftkit:")]
    assert len(said) == 1, pushed.stderr
    new = git_ok(two, "rev-parse", "HEAD").strip()
    assert f"{FEATURE} first fails at {new[:7]} 'Tidy up the files' (was {breaking[:7]}" in said[0]
    assert "push again" in said[0]
    assert git_ok(bare, "rev-parse", "main") == before  # nothing published
    assert git_ok(two, "rev-parse", "HEAD^") == git_ok(two, "rev-parse", f"{breaking}^")
    assert not _passes(two, "HEAD")
    assert (two / "scratch.py").read_text() == "work in progress\n"
    again = git(two, "push", "-q", "origin", "main")
    assert again.returncode == 0, again.output
    tips = _never_lies(bare, tmp_path)
    assert tips[-1] == new
    _breaking_commit_demotes(bare, "Tidy up the files", breaking)


@pytest.mark.parametrize("how", ["sync", "push"])
def test_a_break_repaired_before_the_push_is_demoted_where_it_fails(
    scaffold: Path, tmp_path: Path, how: str
) -> None:
    """The tip passes, but a commit before it does not: that commit is written with F001
    demoted, and the repair after it re-marks F001 (an entry, and its message names it)."""
    bare, _, two = _team(scaffold, tmp_path)
    breaking = _plain_commit(two, "Tidy up the files", remove="one.txt")
    _plain_commit(two, "Put the file back", write="one.txt")
    if how == "sync":
        said = shiftkit(two, "sync")
        assert said.returncode == 0, said.output
        told = said.stdout
    else:
        pushed = git(two, "push", "-q", "origin", "main")
        assert pushed.returncode != 0, pushed.output
        told = pushed.stderr
        assert git(two, "push", "-q", "origin", "main").returncode == 0
    assert f"(was {breaking[:7]}), where the list marked it passing: demoted there" in told
    assert "re-marked at" in told, told
    _never_lies(bare, tmp_path)
    _breaking_commit_demotes(bare, "Tidy up the files", breaking, exact=False)
    assert _passes(bare, "main")
    message = git_ok(bare, "log", "-1", "--format=%B", "main")
    assert message.startswith("Put the file back\n\nRe-marks F001 passing"), message
    _log_names_only_published_commits(bare)
    log = git_ok(bare, "show", "main:claude-progress.txt")
    assert "re-marked passing (repaired)" in log.rsplit("demoted (regression)", 1)[1]
    fresh = tmp_path / "fresh"
    audited = shiftkit(fresh, "audit", "--reverify", "--isolated")
    assert audited.returncode == 0, audited.output


def test_a_finish_over_an_unpublished_break_publishes_no_lie(
    scaffold: Path, tmp_path: Path
) -> None:
    """Found by the property search: a plain commit breaks F001, then F002's `finish` on
    top of it publishes both through its own push."""
    bare, _, two = _team(scaffold, tmp_path, "two.txt")
    _plain_commit(two, "Tidy up the files", remove="one.txt")
    ok(two, "claim", "F002")
    (two / "two.txt").write_text("two\n")
    git_ok(two, "add", "two.txt")
    finished = shiftkit(two, "finish", "-m", "two.txt exists")
    assert finished.returncode == 0, finished.output
    assert "claim released" in finished.stdout, finished.output
    assert "before publishing (`shiftkit finish`)" not in finished.stdout  # (said as a line:)
    assert "demoted there" in finished.stdout, finished.output
    _never_lies(bare, tmp_path)
    assert _passes(bare, "main", "F002") and not _passes(bare, "main")
    fresh = tmp_path / "fresh"
    audited = shiftkit(fresh, "audit", "--reverify", "--isolated")
    assert audited.returncode == 0, audited.output


def test_a_signed_breaking_commit_is_demoted_on_top(scaffold: Path, tmp_path: Path) -> None:
    """A commit written again would lose its signature: the demotion then comes on top, as
    before, and says why."""
    import subprocess

    bare, _, two = _team(scaffold, tmp_path)
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    git_ok(two, "config", "gpg.format", "ssh")
    git_ok(two, "config", "user.signingkey", str(key))
    git_ok(two, "rm", "-q", "one.txt")
    git_ok(two, "commit", "-q", "-S", "-m", "Tidy up the files")
    breaking = git_ok(two, "rev-parse", "HEAD").strip()
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0, synced.output
    assert f"commit {breaking[:7]} is signed" in synced.stdout, synced.stdout
    assert git_ok(two, "rev-parse", "HEAD^").strip() == breaking
    assert not _passes(bare, "main")


def test_a_push_that_cannot_commit_the_demotion_is_refused_in_one_line(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, _, two = _team(scaffold, tmp_path)
    before = git_ok(bare, "rev-parse", "main")
    _plain_commit(two, "Tidy up the files", remove="one.txt")
    head = git_ok(two, "rev-parse", "HEAD")
    log = two / "claude-progress.txt"
    log.write_text(log.read_text() + "\nan edit of the log in progress\n")
    pushed = git(two, "push", "-q", "origin", "main")
    assert pushed.returncode != 0, pushed.output
    said = [line for line in pushed.stderr.splitlines() if line.startswith("shiftkit:")]
    assert len(said) == 1, pushed.stderr
    assert "the demotion cannot be committed" in said[0] and "claude-progress.txt" in said[0]
    assert git_ok(two, "rev-parse", "HEAD") == head  # nothing committed
    assert git_ok(bare, "rev-parse", "main") == before


def test_a_plain_commit_that_breaks_nothing_is_published(scaffold: Path, tmp_path: Path) -> None:
    bare, _, two = _team(scaffold, tmp_path)
    _plain_commit(two, "Add notes", write="notes.md")
    pushed = git(two, "push", "-q", "origin", "main")
    assert pushed.returncode == 0, pushed.output
    assert git_ok(bare, "rev-parse", "main") == git_ok(two, "rev-parse", "HEAD")
    assert _passes(bare, "main")


def test_ci_check_runs_the_affected_first_and_names_the_breaking_commit(scaffold: Path) -> None:
    shell_features(scaffold, "one.txt", "two.txt")
    for feature_id, name in (("F001", "one.txt"), ("F002", "two.txt")):
        ok(scaffold, "claim", feature_id)
        (scaffold / name).write_text(f"{name}\n")
        git_ok(scaffold, "add", name)
        ok(scaffold, "finish", "-m", f"{name} exists")
    base = git_ok(scaffold, "rev-parse", "HEAD").strip()
    breaking = _plain_commit(scaffold, "Drop the second file", remove="two.txt")
    _plain_commit(scaffold, "Add notes", write="notes.md")
    checked = shiftkit(scaffold, "check", "--no-demote", "--since", base, "--json")
    assert checked.returncode == 1, checked.output
    report = json.loads(checked.stdout)
    assert report["affected"] == ["F002"] and report["since"] == base
    [failed] = report["failed"]
    assert failed["id"] == "F002" and failed["broken_by"] == breaking
    assert failed["exact"] is True
    said = shiftkit(scaffold, "check", "--no-demote", "--since", base)
    assert f"affected by the change since {base[:7]} (verified first): F002" in said.stdout
    assert f"FAILED F002: exit 1; it first fails at {breaking[:7]}" in said.stdout
    assert git_ok(scaffold, "rev-parse", "HEAD").strip() != base  # (nothing demoted)
    assert _passes(scaffold, "HEAD", "F002")
    # A fresh clone (CI's) has no recorded pass: the last pass is F002's `finish`.
    fresh = scaffold.parent / "fresh"
    git_ok(scaffold.parent, "clone", "-q", str(scaffold), str(fresh))
    again = shiftkit(fresh, "check", "--no-demote", "--isolated", "--since", base, "--json")
    assert again.returncode == 1, again.output
    assert json.loads(again.stdout)["failed"][0]["broken_by"] == breaking
    bad = shiftkit(scaffold, "check", "--since", "no-such-rev")
    assert bad.returncode == 2 and bad.stderr.count("shiftkit:") == 1, bad.output


def test_a_failed_sync_merge_quotes_gits_conflict_lines(scaffold: Path, tmp_path: Path) -> None:
    _, one, two = _team(scaffold, tmp_path)
    (one / "one.txt").write_text("one's words\n")
    git_ok(one, "add", "one.txt")
    git_ok(one, "commit", "-q", "-m", "Reword one.txt here")
    git_ok(one, "push", "-q", "origin", "main")
    (two / "one.txt").write_text("two's words\n")
    git_ok(two, "add", "one.txt")
    git_ok(two, "commit", "-q", "-m", "Reword one.txt there")
    head = git_ok(two, "rev-parse", "HEAD")
    synced = shiftkit(two, "sync")
    assert synced.returncode == 1, synced.output
    assert "CONFLICT (content): Merge conflict in one.txt" in synced.stderr, synced.stderr
    assert "Auto-merging" not in synced.stderr
    assert all(line.count("shiftkit:") == 1 for line in synced.stderr.splitlines())
    assert git_ok(two, "rev-parse", "HEAD") == head and git_ok(two, "status", "--porcelain") == ""


def test_sync_re_verifies_incoming_flips_at_once(scaffold: Path, tmp_path: Path) -> None:
    """Two teammate's flips whose verifiers each take a second: `sync -j 2` runs them side by
    side (each writes when it starts and ends, outside the checkout)."""
    times = tmp_path / "runs.txt"
    for name in ("a", "b"):
        stamp = f"echo {name} start $(date +%s.%N) >> {times}"
        done = f"echo {name} end $(date +%s.%N) >> {times}"
        verifier = f"{stamp}; sleep 1; test -f {name}.txt; {done}"
        ok(scaffold, "add", "--description", f"{name} exists", "--step", "s", "--verify", verifier)
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    listed = json.loads((one / "features.json").read_text())["features"]
    for name in ("a", "b"):
        feature_id = next(f["id"] for f in listed if f["description"] == f"{name} exists")
        ok(one, "claim", feature_id)
        (one / f"{name}.txt").write_text(f"{name}\n")
        git_ok(one, "add", f"{name}.txt")
        ok(one, "finish", "-m", f"{name}.txt exists")
    times.write_text("")
    synced = shiftkit(two, "sync", "-j", "2")
    assert synced.returncode == 0 and "fast-forwarded" in synced.stdout, synced.output
    seen = {
        (name, what): float(at)
        for name, what, at in (line.split() for line in times.read_text().splitlines())
    }
    assert set(seen) == {("a", "start"), ("a", "end"), ("b", "start"), ("b", "end")}, seen
    assert seen[("a", "start")] < seen[("b", "end")] and seen[("b", "start")] < seen[("a", "end")]
    assert git_ok(two, "rev-parse", "HEAD") == git_ok(bare, "rev-parse", "main")


def test_the_start_checks_demotion_names_the_breaking_commit(scaffold: Path) -> None:
    _passing_one(scaffold)
    breaking = _plain_commit(scaffold, "Tidy up the files", remove="one.txt")
    _plain_commit(scaffold, "Add notes", write="notes.md")
    started = shiftkit(scaffold, "start")
    assert started.returncode == 0, started.output
    # The brief shows the demotion's log entry, which names the breaking commit.
    assert f"it first fails at {breaking[:7]} 'Tidy up the files'" in started.stdout
    assert not _passes(scaffold, "HEAD")
    message = git_ok(scaffold, "log", "-1", "--format=%B")
    assert f"{FEATURE} first fails at {breaking[:7]}" in message


def test_a_push_of_a_branch_not_checked_out_is_refused_in_one_line(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, _, two = _team(scaffold, tmp_path)
    git_ok(two, "switch", "-q", "-c", "side")
    breaking = _plain_commit(two, "Tidy up the files", remove="one.txt")
    git_ok(two, "switch", "-q", "main")
    pushed = git(two, "push", "-q", "origin", "side")
    assert pushed.returncode != 0, pushed.output
    said = [line for line in pushed.stderr.splitlines() if line.startswith("shiftkit:")]
    assert len(said) == 1, pushed.stderr
    assert f"{FEATURE} fails at {breaking[:7]}" in said[0]
    assert "check out refs/heads/side" in said[0], said[0]
    assert git(bare, "rev-parse", "-q", "--verify", "refs/heads/side").returncode != 0
    assert git_ok(two, "rev-parse", "side").strip() == breaking  # nothing committed there


def test_a_merge_that_keeps_its_own_side_over_the_remotes_work_is_gated(
    scaffold: Path, tmp_path: Path
) -> None:
    """Found by an agent trial: a merge resolved by keeping our side changes nothing against
    its first parent (only bookkeeping came in), yet against the remote's tip it undoes the
    file a passing feature needs. The gate judges a merge against each of its parents."""
    bare, _, two = _team(scaffold, tmp_path)
    # two's side: a commit carrying shiftkit's claim trailer (the work of a claim, which the
    # gate trusts) that lost one.txt, taken from before one's finish
    base = git_ok(two, "rev-parse", "HEAD~1").strip()
    git_ok(two, "checkout", "-q", "-b", "stale", base)
    (two / "two.txt").write_text("two\n")
    git_ok(two, "add", "two.txt")
    git_ok(two, "commit", "-q", "-m", "Add two.txt", "-m", "Shiftkit-Claim: 0123abcd")
    git_ok(two, "checkout", "-q", "main")
    git_ok(two, "reset", "-q", "--hard", "stale")
    # the merge of the remote's main, resolved by keeping two's side: one.txt stays out
    git_ok(two, "fetch", "-q", "origin")
    merged = git(two, "merge", "-q", "--no-commit", "origin/main")
    assert merged.returncode == 0, merged.stderr
    git_ok(two, "rm", "-q", "-f", "one.txt")
    git_ok(two, "commit", "-q", "-m", "Merge origin/main: keep ours")
    assert _passes(two, "HEAD") and git(two, "cat-file", "-e", "HEAD:one.txt").returncode != 0
    remote_side = git_ok(two, "rev-parse", "HEAD^2").strip()
    synced = shiftkit(two, "sync")
    assert "published with this push" in synced.stdout, synced.output
    _never_lies(bare, tmp_path)
    entry = git_ok(bare, "show", "main:claude-progress.txt").rsplit("demoted (regression)", 1)[1]
    # The merge itself is the commit that broke it: its side from the remote passed, its own
    # side never marked F001 (decision record 0093).
    assert "it first fails at the commit this entry is in (" in entry, entry
    assert f"passed at {remote_side[:7]})" in entry or f"parent {remote_side[:7]} passed" in entry
    _log_names_only_published_commits(bare)


# -- no message buys trust (decision record 0075) ---------------------------------------------


@pytest.mark.parametrize("how", ["sync", "push"])
def test_a_claim_trailer_on_a_plain_commit_buys_no_trust(
    scaffold: Path, tmp_path: Path, how: str
) -> None:
    """The trailer `finish` writes, written by hand on a commit that breaks F001: the gate
    judges the commit by what it changes, not by what its message says."""
    bare, _, two = _team(scaffold, tmp_path)
    claim = git_ok(two, "rev-parse", "HEAD").strip()
    git_ok(two, "rm", "-q", "one.txt")
    message = tmp_path / "message.txt"
    message.write_text(f"F001: tidy up\n\nShiftkit-Claim: {claim}\n")
    git_ok(two, "commit", "-q", "-F", str(message))
    breaking = git_ok(two, "rev-parse", "HEAD").strip()
    if how == "sync":
        synced = shiftkit(two, "sync")
        assert synced.returncode == 0, synced.output
        assert f"(was {breaking[:7]}" in synced.stdout
    else:
        pushed = git(two, "push", "-q", "origin", "main")
        assert pushed.returncode != 0, pushed.output
        assert f"(was {breaking[:7]}" in pushed.stderr
        assert git(two, "push", "-q", "origin", "main").returncode == 0
    tips = _never_lies(bare, tmp_path)
    assert not _passes(bare, tips[-1])


def _feature(project: Path, verify: str) -> None:
    ok(project, "add", "--description", "it works", "--step", "s", "--verify", verify)
    git_ok(project, "commit", "-q", "-am", "Add a feature")


@pytest.mark.parametrize("traced", [True, False])
def test_finishs_own_push_runs_no_verifier_again(
    scaffold: Path, tmp_path: Path, traced: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `finish` verified beside the claimed feature is recorded at the tree it
    committed: the gate on its own push finds those passes and runs nothing again — also
    where no read set is known (untraced: every feature affected by every change)."""
    if not traced:
        monkeypatch.setenv(readsets.OFF_VARIABLE, "off")
    _, one, _ = _team(scaffold, tmp_path)
    runs = tmp_path / "runs"
    _feature(one, f"echo run >> {runs} && test -f two.txt")
    ok(one, "claim", "F002")
    (one / "two.txt").write_text("two\n")
    ok(one, "finish", "-m", "two.txt exists")
    _feature(one, "test -f three.txt")
    ok(one, "claim", "F003")
    runs.unlink()  # (`claim` re-checks what is unchecked at the new HEAD: not the gate)
    (one / "three.txt").write_text("three\n")
    (one / "two.txt").write_text("")  # (emptied, which `test -f` stats: re-verified beside)
    finished = ok(one, "finish", "-m", "three.txt exists")
    assert re.search(r"F002[^;]* still pass", finished) and "claim released" in finished
    assert runs.read_text().count("run") == 1, finished


def test_a_finish_publishes_without_re_running_what_only_stats_the_list(
    scaffold: Path, tmp_path: Path
) -> None:
    """pytest stats every entry of the root, `features.json` among them, which each finish
    resizes: the list (and the log) count only where a verifier read them, so a pytest
    feature the change cannot touch is not run again when the finish is published."""
    _, one, _ = _team(scaffold, tmp_path)
    runs = tmp_path / "runs"
    (one / "tests").mkdir(exist_ok=True)
    (one / "tests" / "test_three.py").write_text(
        f"def test_three():\n    open({str(runs)!r}, 'a').write('run\\n')\n"
    )
    (one / "sub").mkdir()
    (one / "sub" / "keep.txt").write_text("kept\n")
    git_ok(one, "add", "-A")
    git_ok(one, "commit", "-q", "-m", "Add a test and a folder")
    _feature(one, "python -m pytest -q -p no:cacheprovider tests/test_three.py")
    _feature(one, "test -f sub/four.txt")
    assert git(one, "push", "-q", "origin", "main").returncode == 0
    ok(one, "claim", "F002")
    ok(one, "finish", "-m", "the test passes")
    ok(one, "claim", "F003")
    runs.unlink()
    (one / "sub" / "four.txt").write_text("four\n")
    finished = ok(one, "finish", "-m", "four.txt exists")
    assert "claim released" in finished, finished
    assert not runs.exists(), finished
