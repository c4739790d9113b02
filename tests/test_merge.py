"""The features.json merge driver: pure rules, then a real `git merge` of two sessions' work."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, git_ok, shiftkit

from shiftkit.core import features, merge, progress
from shiftkit.core.errors import Refused


def listing(*specs: tuple[str, bool, int]) -> features.FeatureList:
    return features.FeatureList(
        features.Feature(
            id=i, category="c", description=f"does {i}", steps=("s",), passes=p, attempts=a
        )
        for i, p, a in specs
    )


def test_passes_from_either_side_attempts_max_new_features_appended() -> None:
    base = listing(("F1", False, 0), ("F2", False, 0))
    ours = listing(("F1", True, 0), ("F2", False, 1), ("F3", False, 0))
    theirs = listing(("F1", False, 0), ("F2", True, 2), ("F4", False, 0))
    merged = merge.merge_lists(base, ours, theirs)
    assert [(f.id, f.passes, f.attempts) for f in merged.features] == [
        ("F1", True, 0),
        ("F2", True, 2),
        ("F3", False, 0),
        ("F4", False, 0),
    ]


def test_demotion_wins() -> None:
    base = listing(("F1", True, 0))
    assert (
        not merge.merge_lists(base, listing(("F1", False, 0)), listing(("F1", True, 0)))
        .features[0]
        .passes
    )
    assert (
        not merge.merge_lists(base, listing(("F1", True, 0)), listing(("F1", False, 0)))
        .features[0]
        .passes
    )


def test_definition_changed_on_both_sides_is_a_conflict() -> None:
    ours = listing(("F1", False, 0))
    theirs = features.FeatureList([ours.features[0]._replace(description="else")])
    with pytest.raises(Refused, match="F1: both sides changed its definition"):
        merge.merge_lists(None, ours, theirs)


def ok(project: Path, *args: str) -> str:
    result = shiftkit(project, *args)
    assert result.returncode == 0, result.output
    return result.stdout


def test_two_sessions_merge_cleanly_through_the_hooks(scaffold: Path, tmp_path: Path) -> None:
    for i in (1, 2):
        ok(scaffold, "add", "--description", f"feature {i}", "--step", "s", "--verify", "true")
    git_ok(scaffold, "commit", "-q", "-am", "Two features for two sessions")
    other = tmp_path / "second-session"
    git_ok(scaffold, "worktree", "add", "-q", "-b", "second", str(other))
    ok(other, "claim", "F002")
    ok(other, "finish", "-m", "feature two works")
    ok(other, "add", "--description", "from the second session", "--step", "s")
    git_ok(other, "commit", "-q", "-am", "Append a feature from the second session")
    ok(scaffold, "claim", "F001")
    ok(scaffold, "finish", "-m", "feature one works")
    ok(scaffold, "add", "--id", "F010", "--description", "from the first session", "--step", "s")
    git_ok(scaffold, "commit", "-q", "-am", "Append a feature from the first session")

    merged = git(scaffold, "merge", "--no-edit", "second")
    assert merged.returncode == 0, merged.output
    assert git_ok(scaffold, "status", "--porcelain") == ""
    result = features.loads((scaffold / "features.json").read_text())
    assert [(f.id, f.passes) for f in result.features] == [
        ("F000", False),
        ("F001", True),
        ("F002", True),
        ("F010", False),
        ("F003", False),
    ]
    outcomes = [
        (e.feature, e.outcome)
        for e in progress.parse((scaffold / "claude-progress.txt").read_text()).entries
    ]
    assert ("F001", "passed") in outcomes and ("F002", "passed") in outcomes
    audit = shiftkit(scaffold, "audit")
    assert audit.returncode == 0, audit.output
