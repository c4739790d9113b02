"""The finish gate: `finish` verifies the claimed feature and, beside it, every passing
feature the change can break (by the files their verifiers read), refusing a finish that
breaks one — real git, real hooks, real pytest and shell verifiers."""

from __future__ import annotations

from pathlib import Path

import needs
from conftest import git_ok, implement, ok, shell_features, shiftkit, write

from shiftkit.core import features
from shiftkit.edge import readsets

needs_strace = needs.strace()


def _passing(project: Path) -> set[str]:
    listing = features.loads((project / "features.json").read_text(), "features.json")
    return {f.id for f in listing.features if f.passes}


def _reverified(output: str) -> str:
    """The ids on the line where `finish` says which passing features it re-verifies."""
    lines = [line for line in output.splitlines() if "re-verifying the passing" in line]
    return lines[0].split(":", 1)[1].split(";")[0].split("(")[0] if lines else ""


def _head(project: Path) -> str:
    return git_ok(project, "rev-parse", "HEAD").strip()


def test_a_finish_that_breaks_a_passing_feature_is_refused_naming_it(calc: Path) -> None:
    ok(calc, "claim")
    ok(calc, "finish", "-m", "the environment builds")
    ok(calc, "claim")
    implement(calc, "add")
    ok(calc, "finish", "-m", "add two numbers")
    assert _passing(calc) == {"F000", "F001"}
    ok(calc, "claim", "F002")
    implement(calc, "sub")
    ops = calc / "calc" / "ops.py"
    ops.write_text(ops.read_text().replace("a + b", "a + b + 1"))  # (breaks F001's add)
    base = _head(calc)
    refused = shiftkit(calc, "finish", "-m", "subtract two numbers")
    assert refused.returncode == 1, refused.output
    assert "finishing F002 would break F001" in refused.stderr
    assert "fix it, or `shiftkit revert" in refused.stderr
    assert "F001 is marked passing but FAILS on this tree" in refused.stdout
    assert "assert 6 == 5" in refused.stdout  # (its last lines)
    # Nothing committed: HEAD, the list and the log as they were; the work is still there.
    assert _head(calc) == base and _passing(calc) == {"F000", "F001"}
    assert git_ok(calc, "status", "--porcelain", "--", "features.json") == ""
    assert "a + b + 1" in ops.read_text()
    # Fixed, the same finish goes through, F001 verified again beside F002.
    ops.write_text(ops.read_text().replace("a + b + 1", "a + b"))
    done = ok(calc, "finish", "-m", "subtract two numbers")
    assert "F001 still passes on it" in done
    assert _passing(calc) == {"F000", "F001", "F002"}


@needs_strace
def test_a_passing_feature_the_change_cannot_touch_is_not_run_again(scaffold: Path) -> None:
    shell_features(scaffold, "a.txt", "b.txt")
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    ok(scaffold, "claim", "F001")
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "a.txt exists")
    ok(scaffold, "claim", "F002")
    write(scaffold / "docs" / "b-notes.md", "b\n")
    write(scaffold / "b.txt", "b\n")
    out = ok(scaffold, "finish", "-m", "b.txt exists")
    # F001's verifier read a.txt alone (of what the tree holds): b's change cannot break it.
    assert "F001" not in _reverified(out)
    assert "untouched, by the files their verifiers read" in out
    assert _passing(scaffold) == {"F000", "F001", "F002"}


@needs_strace
def test_a_change_of_a_file_a_verifier_read_selects_it_and_a_break_is_refused(
    scaffold: Path,
) -> None:
    shell_features(scaffold, "a.txt", "b.txt")
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    ok(scaffold, "claim", "F001")
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "a.txt exists")
    ok(scaffold, "claim", "F002")
    write(scaffold / "b.txt", "b\n")
    (scaffold / "a.txt").unlink()  # (F002's change deletes a file F001's verifier read)
    refused = shiftkit(scaffold, "finish", "-m", "b.txt exists")
    assert refused.returncode == 1 and "would break F001" in refused.stderr
    assert "F001" in _reverified(refused.stdout)


def test_with_no_read_set_known_every_passing_feature_is_verified(scaffold: Path) -> None:
    off = {readsets.OFF_VARIABLE: "off"}
    shell_features(scaffold, "a.txt", "b.txt")
    for feature_id, name in (("F000", None), ("F001", "a.txt")):
        assert shiftkit(scaffold, "claim", feature_id, env=off).returncode == 0
        if name:
            write(scaffold / name, "x\n")
        assert shiftkit(scaffold, "finish", "-m", f"{feature_id} done", env=off).returncode == 0
    assert shiftkit(scaffold, "claim", "F002", env=off).returncode == 0
    write(scaffold / "b.txt", "b\n")
    done = shiftkit(scaffold, "finish", "-m", "b.txt exists", env=off)
    assert done.returncode == 0, done.output
    line = _reverified(done.stdout)
    assert "F000" in line and "F001" in line  # (unknown: affected by every change)


def test_finish_help_states_the_m_limit(scaffold: Path) -> None:
    helped = ok(scaffold, "finish", "--help")
    assert "at most 72 characters in all (for F012, 66)" in " ".join(helped.split())


def test_finish_warns_of_untracked_files_that_look_like_scratch(calc: Path) -> None:
    ok(calc, "claim")
    ok(calc, "finish", "-m", "the environment builds")
    ok(calc, "claim")
    implement(calc, "add")  # (a change in calc/)
    write(calc / "calc" / "helpers.py", "")  # new, beside the change: work
    for scratch in ("debug.log", "notes.txt", "calc/tmp_try.py", "NOTES.md"):
        write(calc / scratch, "x\n")
    out = ok(calc, "finish", "-m", "add two numbers")
    [warning] = [line for line in out.splitlines() if line.startswith("warning:")]
    for scratch in ("debug.log", "notes.txt", "calc/tmp_try.py", "NOTES.md"):
        assert scratch in warning
    assert "calc/helpers.py" not in warning
    assert ".gitignore" in warning and ".git/info/exclude" in warning


def test_new_files_of_the_change_are_work_wherever_they_are(calc: Path) -> None:
    """The trial's two cases (issue 36): a new package beside the change, and a new test
    file, are work — never "look like scratch", whatever folders the change touches. Only
    names are scratch: shiftkit's globs and the project's `scratch` key."""
    toml = (calc / ".shiftkit.toml").read_text()
    write(
        calc / ".shiftkit.toml",
        toml.replace("[shiftkit]\n", '[shiftkit]\nscratch = ["*.bak"]\n', 1),
    )
    git_ok(calc, "commit", "-q", "-am", "Name backups as scratch")
    ok(calc, "claim")
    ok(calc, "finish", "-m", "the environment builds")
    ok(calc, "claim")
    implement(calc, "add")  # (a change in calc/ alone)
    work = ("budget/__init__.py", "budget/__main__.py", "budget/cli.py", "tests/test_undo_more.py")
    for path in work:
        write(calc / path, "\n")
    out = ok(calc, "finish", "-m", "add two numbers")
    assert "warning:" not in out, out
    assert set(work) <= set(git_ok(calc, "ls-files").split())
    ok(calc, "claim")
    implement(calc, "sub")
    for path in ("notes.md", "tmp_x.py", "budget/cli.py.bak", "tests/test_sub_more.py"):
        write(calc / path, "\n")
    out = ok(calc, "finish", "-m", "subtract two numbers")
    [warning] = [line for line in out.splitlines() if line.startswith("warning:")]
    assert "notes.md" in warning and "tmp_x.py" in warning and "budget/cli.py.bak" in warning
    assert "tests/test_sub_more.py" not in warning
    assert "*.bak" in warning  # (the names it keys on)
