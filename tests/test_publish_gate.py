"""The publish gate (issue 26.3, 26.4): a push that would publish commits made outside a
claim re-verifies the passing features they can break, and publishes the demotion with
them; every demotion names the commit that broke the feature."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git_ok, ok, shell_features, shiftkit

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
