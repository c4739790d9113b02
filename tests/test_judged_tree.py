"""Verification sees only the judged tree (issue 19, item 4): re-verification reads `init`,
the verifier and its timeout from the judged commit's parent, never from the commit itself
or the work tree, and a checkout that `init` or the verifier changed is not the judged tree.
Each case is a flip landed past every hook with forged trailers: only `audit --reverify` (as
in CI, on a fresh clone) stands between it and "passing"."""

from __future__ import annotations

from pathlib import Path

from conftest import add_log_entry, flip, git_ok, ok, shiftkit, write

PAST_ALL_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")


def _feature(project: Path, verify: str) -> None:
    ok(project, "add", "--description", "data is ok", "--step", "s", "--verify", verify)
    git_ok(project, "add", "-A")
    git_ok(project, "commit", "-q", "-m", "Add F001")


def _forged_flip(project: Path) -> str:
    """F001 flipped with its log entry and every trailer a finish would write, committed
    past every hook (the verifier never ran)."""
    flip(project, "F001", log=False)
    add_log_entry(project, "F001")
    git_ok(project, "add", "-A")
    tree = git_ok(project, "write-tree").strip()
    message = (
        f"F001: data is ok\n\nShiftkit-Feature: F001\nShiftkit-Verified: {tree}\n"
        f"Shiftkit-Claim: -\n"
    )
    git_ok(project, *PAST_ALL_HOOKS, "commit", "-q", "--no-verify", "-m", message)
    return git_ok(project, "rev-parse", "HEAD").strip()


def _fresh_clone(project: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "ci"
    git_ok(tmp_path, "clone", "-q", str(project), str(clone))
    return clone


def test_an_init_that_rewrites_a_tracked_file_does_not_verify(
    scaffold: Path, tmp_path: Path
) -> None:
    write(scaffold / "data.txt", "broken\n")
    _feature(scaffold, "grep -q ok data.txt")
    # The commit's own init.sh writes what its verifier greps for.
    write(scaffold / "init.sh", "#!/bin/sh\necho ok > data.txt\n")
    _forged_flip(scaffold)
    clone = _fresh_clone(scaffold, tmp_path)
    result = shiftkit(clone, "audit", "--reverify")
    assert result.returncode == 1, result.output
    assert "F001" in result.stdout and "re-run at this commit" in result.stdout


def test_a_verifier_that_writes_what_it_checks_does_not_verify(
    scaffold: Path, tmp_path: Path
) -> None:
    write(scaffold / "data.txt", "broken\n")
    _feature(scaffold, "echo ok > data.txt && grep -q ok data.txt")
    _forged_flip(scaffold)
    result = shiftkit(_fresh_clone(scaffold, tmp_path), "audit", "--reverify")
    assert result.returncode == 1, result.output
    assert "re-run at this commit" in result.stdout


def test_init_comes_from_the_parent_not_from_the_work_tree(scaffold: Path, tmp_path: Path) -> None:
    """A later commit (a person's, listed) sets an `init` that would make the old flip's
    verifier pass; re-verifying the old flip still runs its parent's `init`."""
    write(scaffold / ".gitignore", "build/\n")
    _feature(scaffold, "grep -q ok build/out.txt")
    flipped = _forged_flip(scaffold)
    config = scaffold / ".shiftkit.toml"
    config.write_text(
        config.read_text().replace(
            'init = "./init.sh"', 'init = "mkdir -p build && echo ok > build/out.txt"'
        )
    )
    git_ok(scaffold, "commit", "-q", "-am", "Build before verifying\n\nShiftkit-Override: test")
    clone = _fresh_clone(scaffold, tmp_path)
    result = shiftkit(clone, "audit", "--reverify")
    assert result.returncode == 1, result.output
    assert flipped[:7] in result.stdout and "re-run at this commit" in result.stdout
    # `init` is an enforcement key: changing it is a person's action.
    assert "person actions" in result.stdout and "init" in result.stdout
