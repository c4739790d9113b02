"""`check` re-runs what the change since each pass can break (issue 37: the gates' one
selection, `readsets.selection_at`): a feature that passed at an earlier tree, whose verifier
read and ran nothing the change since touched, is carried — said in one clause with why —
and `check --all` runs it too, after the rest. Twins: a change to what a verifier ran runs
it (and a break there is caught and demoted); `--all` and `--isolated` run every verifier."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git_ok, ok, shiftkit
from test_block_sets import two_passing


def checked_then_edited(project: Path, env: dict[str, str], path: str, old: str, new: str) -> None:
    """`check` at HEAD (each pass in a clean checkout of its tree, as the gates record them),
    then a commit editing ``path``."""
    assert shiftkit(project, "check", env=env).returncode == 0
    commit_edit(project, path, old, new)


def commit_edit(project: Path, path: str, old: str, new: str) -> None:
    edited = project / path
    edited.parent.mkdir(parents=True, exist_ok=True)
    text = edited.read_text() if edited.exists() else ""
    assert old in text
    edited.write_text(text.replace(old, new, 1) if old else text + new)
    git_ok(project, "add", "-A")
    git_ok(project, "commit", "-q", "-m", f"An edit of {path}")


def checked(project: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    done = shiftkit(project, "check", "--json", *args, env=env)
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_a_change_nothing_read_carries_every_pass(calc: Path) -> None:
    two_passing(calc, {})
    checked_then_edited(calc, {}, "docs/notes.md", "", "Notes.\n")
    out = ok(calc, "check")
    assert "0 verified now" in out
    assert "not run: 3 that passed at an earlier tree (3 untouched, by the files their " in out
    assert "`shiftkit check --all` runs them too" in out
    assert "all 3 passing features pass at HEAD (3 carried from an earlier tree)" in out


def test_check_all_runs_the_carried_ones_too(calc: Path) -> None:
    two_passing(calc, {})
    checked_then_edited(calc, {}, "docs/notes.md", "", "Notes.\n")
    report = checked(calc, {}, "--all")
    assert report["ran"] == 3 and report["carried"] == {}


def test_a_change_a_verifier_read_runs_it_and_a_break_is_caught(calc: Path) -> None:
    two_passing(calc, {})
    checked_then_edited(calc, {}, "calc/ops.py", "return a - b", "return a + b")
    done = shiftkit(calc, "check", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 1
    assert set(report["carried"]) == {"F000"}  # (the environment's check reads no calc code)
    assert [f["id"] for f in report["failed"]] == ["F002"]  # type: ignore[index]


def test_block_sets_carry_what_ran_other_functions(calc: Path, block_sets: dict[str, str]) -> None:
    two_passing(calc, block_sets)
    checked_then_edited(calc, block_sets, "calc/ops.py", "return a - b", "return -(b - a)")
    done = shiftkit(calc, "check", env=block_sets)
    assert done.returncode == 0, done.output
    assert "1 verified now" in done.stdout
    assert (
        "not run: 2 that passed at an earlier tree (2 untouched: 1 by the functions their "
        "verifiers ran, 1 by the files they read)"
    ) in done.stdout
    assert checked(calc, block_sets, "--isolated")["ran"] == 3
