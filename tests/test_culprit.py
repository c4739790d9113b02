"""Who broke it (issue 36 item 3): the search walks every commit between a feature's last
pass and its first failure, both sides of merges, and names the first failing commit whose
parents pass — real git, real hooks, shell verifiers."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, git_ok, ok, shiftkit

from shiftkit.edge import culprit

FEATURE = "F001"
# Passes with one.txt, unless a.txt and b.txt are both there (each alone is fine).
VERIFY = "test -f one.txt && test ! -f a.txt -o ! -f b.txt"


def _feature(project: Path) -> None:
    ok(project, "add", "--description", "one.txt exists", "--step", "s", "--verify", VERIFY)
    git_ok(project, "add", "-A")
    git_ok(project, "commit", "-q", "-m", "Add the feature")


def _finish(project: Path) -> str:
    ok(project, "claim", FEATURE)
    (project / "one.txt").write_text("one\n")
    git_ok(project, "add", "one.txt")
    ok(project, "finish", "-m", "one.txt exists")
    return _head(project)


def _commit(project: Path, message: str, write: str = "", remove: str = "") -> str:
    if write:
        (project / write).write_text(f"{write}\n")
        git_ok(project, "add", write)
    if remove:
        git_ok(project, "rm", "-q", remove)
    git_ok(project, "commit", "-q", "-m", message)
    return _head(project)


def _merge(project: Path, branch: str, message: str) -> str:
    git_ok(project, "merge", "-q", "--no-ff", "-m", message, branch)
    return _head(project)


def _head(project: Path) -> str:
    return git_ok(project, "rev-parse", "HEAD").strip()


def _culprit_line(project: Path) -> str:
    checked = shiftkit(project, "check")
    assert checked.returncode == 1, checked.output
    [line] = [x for x in checked.stdout.splitlines() if x.startswith(f"FAILED {FEATURE}")]
    return line


def test_a_plain_breaking_commit_in_a_linear_run_is_named(scaffold: Path) -> None:
    """The trial's first shape: the pass came in by a merge (no trailer of it on the first
    parents), then a linear run with the break in the middle — never "fails at the scaffold
    and at every earlier commit searched"."""
    for n in range(8):
        _commit(scaffold, f"Early work {n}", write=f"early{n}.txt")
    _feature(scaffold)
    git_ok(scaffold, "switch", "-q", "-c", "feature")
    _finish(scaffold)
    git_ok(scaffold, "switch", "-q", "main")
    _commit(scaffold, "Add a readme", write="README.extra")
    _merge(scaffold, "feature", "Merge the feature")
    for n in range(2):
        _commit(scaffold, f"Add file {n}", write=f"file{n}.txt")
    breaking = _commit(scaffold, "Tidy up the files", remove="one.txt")
    for n in range(5, 12):
        _commit(scaffold, f"Add file {n}", write=f"file{n}.txt")
    line = _culprit_line(scaffold)
    assert f"it first fails at {breaking[:7]} 'Tidy up the files' (last passed at" in line, line


def test_a_break_on_a_merged_side_branch_is_named(scaffold: Path) -> None:
    """The trial's second shape: the bisect over first parents only named the merge."""
    _feature(scaffold)
    _finish(scaffold)
    git_ok(scaffold, "switch", "-q", "-c", "side")
    _commit(scaffold, "Side work", write="side1.txt")
    breaking = _commit(scaffold, "Tidy up the files", remove="one.txt")
    _commit(scaffold, "More side work", write="side2.txt")
    git_ok(scaffold, "switch", "-q", "main")
    _commit(scaffold, "Main work", write="main1.txt")
    merge = _merge(scaffold, "side", "Merge the side")
    _commit(scaffold, "More main work", write="main2.txt")
    line = _culprit_line(scaffold)
    assert f"it first fails at {breaking[:7]} 'Tidy up the files' (last passed at" in line, line
    assert merge[:7] not in line


def test_a_merge_whose_sides_pass_alone_is_named_as_the_merge(scaffold: Path) -> None:
    """The trial's third shape: each side passes, their merge fails."""
    _feature(scaffold)
    _finish(scaffold)
    git_ok(scaffold, "switch", "-q", "-c", "side")
    side = _commit(scaffold, "Add b", write="b.txt")
    git_ok(scaffold, "switch", "-q", "main")
    main = _commit(scaffold, "Add a", write="a.txt")
    merge = _merge(scaffold, "side", "Merge the side")
    _commit(scaffold, "More main work", write="main2.txt")
    line = _culprit_line(scaffold)
    expected = f"it first fails at {merge[:7]} 'Merge the side', the merge of {main[:7]} and {side[:7]} (each passes alone)"
    assert expected in line, line


def test_a_search_cut_short_says_where_and_why(
    scaffold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More commits to search than verifier runs allowed: the narrowest bounds found, and
    why the search stopped."""
    _feature(scaffold)
    _finish(scaffold)
    for n in range(12):
        _commit(scaffold, f"Add file {n}", write=f"file{n}.txt")
    breaking = _commit(scaffold, "Tidy up the files", remove="one.txt")
    for n in range(12, 20):
        _commit(scaffold, f"Add file {n}", write=f"file{n}.txt")
    monkeypatch.setattr(culprit, "PROBES", 2)
    found = culprit.find(
        scaffold, scaffold / ".git", FEATURE, VERIFY, _head(scaffold), "./init.sh", 60.0
    )
    assert found is not None and not found.exact
    assert found.since is not None and found.cut == "it ran the verifier 2 times"
    assert "search cut short: it ran the verifier 2 times" in found.text()
    # The bounds hold the break: the last pass found is before it, the failure at or after.
    assert git(scaffold, "merge-base", "--is-ancestor", found.since, breaking).returncode == 0
    assert git(scaffold, "merge-base", "--is-ancestor", breaking, found.commit).returncode == 0
