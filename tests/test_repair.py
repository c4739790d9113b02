"""A repair is one step (issue 36 item 2): a hand merge that repairs demoted features is
re-marked by the next `shiftkit check`, all of them in one commit the audit accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git_ok, ok, shell_features, shiftkit

NAMES = ("one.txt", "two.txt", "three.txt")
IDS = ("F001", "F002", "F003")


def _passing(project: Path, rev: str = "HEAD") -> set[str]:
    text = git_ok(project, "show", f"{rev}:features.json")
    return {f["id"] for f in json.loads(text)["features"] if f["passes"]}


def _three_passing(project: Path) -> None:
    shell_features(project, *NAMES)
    for feature_id, name in zip(IDS, NAMES, strict=True):
        ok(project, "claim", feature_id)
        (project / name).write_text(f"{name}\n")
        git_ok(project, "add", name)
        ok(project, "finish", "-m", f"{name} exists")


def _count(project: Path) -> int:
    return int(git_ok(project, "rev-list", "--count", "HEAD").strip())


@pytest.mark.parametrize("how", ["check", "start"])
def test_a_hand_merge_that_repairs_three_features_is_re_marked_in_one_commit(
    scaffold: Path, how: str
) -> None:
    """`shiftkit check`, or the start check of the next session (HEAD moved since the last
    one): every repair re-marked in one commit."""
    _three_passing(scaffold)
    git_ok(scaffold, "mv", "one.txt", "uno.txt")
    git_ok(scaffold, "mv", "two.txt", "dos.txt")
    git_ok(scaffold, "mv", "three.txt", "tres.txt")
    git_ok(scaffold, "commit", "-q", "-m", "Rename the files")
    checked = shiftkit(scaffold, "check")
    assert checked.returncode == 1, checked.output
    assert _passing(scaffold) & set(IDS) == set()  # (demoted, in one commit)
    git_ok(scaffold, "switch", "-q", "-c", "fix")
    for name in NAMES:
        (scaffold / name).write_text(f"{name}\n")
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "Bring the old names back")
    git_ok(scaffold, "switch", "-q", "main")
    (scaffold / "other.txt").write_text("other\n")
    git_ok(scaffold, "add", "other.txt")
    git_ok(scaffold, "commit", "-q", "-m", "Other work")
    git_ok(scaffold, "merge", "-q", "--no-ff", "-m", "Merge the fix", "fix")
    merged = git_ok(scaffold, "rev-parse", "HEAD").strip()
    assert _passing(scaffold) & set(IDS) == set()  # (a hand merge re-marks nothing itself)
    before = _count(scaffold)
    checked = shiftkit(scaffold, how)
    assert checked.returncode == 0, checked.output
    if how == "check":  # (the start check's lines go to the brief's record, not here)
        assert "re-marked F001, F002, F003 passing in" in checked.stdout, checked.output
    assert _count(scaffold) == before + 1  # (one commit for the three)
    assert set(IDS) <= _passing(scaffold)
    message = git_ok(scaffold, "log", "-1", "--format=%B")
    assert "Re-marks F001, F002, F003 passing" in message and merged[:7] in message
    log = (scaffold / "claude-progress.txt").read_text()
    assert all(f"| {i} | re-marked passing (repaired)" in log for i in IDS), log[-1500:]
    audited = shiftkit(scaffold, "audit")
    assert audited.returncode == 0, audited.output
    # Checked again: nothing more to commit.
    again = shiftkit(scaffold, "check")
    assert again.returncode == 0 and _count(scaffold) == before + 1, again.output


def test_a_demoted_feature_still_failing_is_not_re_marked(scaffold: Path) -> None:
    """The honest twin: nothing repaired, nothing re-marked, no commit."""
    _three_passing(scaffold)
    git_ok(scaffold, "rm", "-q", "one.txt")
    git_ok(scaffold, "commit", "-q", "-m", "Remove one")
    assert shiftkit(scaffold, "check").returncode == 1
    before = _count(scaffold)
    checked = shiftkit(scaffold, "check")
    assert checked.returncode == 0, checked.output
    assert "re-marked" not in checked.stdout and _count(scaffold) == before
    assert "F001" not in _passing(scaffold)


def _shared(scaffold: Path, tmp_path: Path, names: tuple[str, ...]) -> tuple[Path, list[Path]]:
    """Three passing features shared through a bare remote, and a clone of it per name."""
    _three_passing(scaffold)
    config = scaffold / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "Share claims through origin")
    bare = tmp_path / "remote.git"
    git_ok(tmp_path, "clone", "-q", "--bare", str(scaffold), str(bare))
    clones = [tmp_path / name for name in names]
    for clone in clones:
        git_ok(tmp_path, "clone", "-q", str(bare), str(clone))
        ok(clone, "install-hooks", "--force")
    return bare, clones


def test_sync_re_marks_what_a_plain_fix_repaired_in_one_commit(
    scaffold: Path, tmp_path: Path
) -> None:
    """`shiftkit sync` too (issue 36 item 2): a rename demoted three features on the remote;
    a teammate's plain commit brings the names back; the sync that publishes it re-marks all
    three in one commit, pushed with it. Before: each needed its own claim and finish."""
    bare, (one, two) = _shared(scaffold, tmp_path, ("one", "two"))
    for name, new in zip(NAMES, ("uno.txt", "dos.txt", "tres.txt"), strict=True):
        git_ok(one, "mv", name, new)
    git_ok(one, "commit", "-q", "-m", "Rename the files")
    assert shiftkit(one, "check").returncode == 1  # (demoted, in one commit)
    ok(one, "sync")
    ok(two, "sync")
    assert _passing(two) & set(IDS) == set()
    for name in NAMES:
        (two / name).write_text(f"{name}\n")
    git_ok(two, "add", "-A")
    git_ok(two, "commit", "-q", "-m", "Bring the old names back")
    before = _count(two)
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0, synced.output
    assert "re-marked F001, F002, F003 passing in" in synced.stdout, synced.output
    assert _count(two) == before + 1  # (one commit for the three)
    assert set(IDS) <= _passing(bare, "HEAD")  # (pushed with the fix)
    assert shiftkit(one, "sync").returncode == 0 and set(IDS) <= _passing(one)


def test_sync_with_nothing_repaired_re_marks_nothing(scaffold: Path, tmp_path: Path) -> None:
    """The twin: a sync whose commits repair nothing makes no re-mark commit."""
    _, (one,) = _shared(scaffold, tmp_path, ("one",))
    git_ok(one, "rm", "-q", "one.txt")
    git_ok(one, "commit", "-q", "-m", "Remove one")
    assert shiftkit(one, "check").returncode == 1
    (one / "notes.md").write_text("notes\n")
    git_ok(one, "add", "notes.md")
    git_ok(one, "commit", "-q", "-m", "Notes")
    before = _count(one)
    synced = shiftkit(one, "sync")
    assert synced.returncode == 0 and "re-marked" not in synced.stdout, synced.output
    assert _count(one) == before
