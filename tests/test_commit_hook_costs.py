"""What a commit that flips nothing costs in the hooks (decision 0122), and that each thing
cut from that path still refuses what it refused: the message rule and rule 14 in the
commit-msg hook without `re`, the reference-transaction hook without `re` or OpenSSL's
hashlib, its shim without `git rev-parse` in a plain clone and without runpy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from conftest import FEATURES, by_id, edit_list, git, git_ok, run, write

from shiftkit.edge.framework_env import RUN_MAIN

# What the no-flip path of every hook process imported before (a third of each start-up).
HEAVY = ("re", "enum", "hashlib", "_hashlib", "runpy")


def hook_imports(cwd: Path, *args: str, stdin: str | None = None) -> tuple[int, set[str]]:
    """Run `shiftkit hook ARGS` as the shims and `.shiftkit/hook` run it: its exit code and
    the modules it imported."""
    result = run(
        [sys.executable, "-X", "importtime", "-P", "-c", RUN_MAIN, "hook", *args],
        cwd,
        input=stdin,
    )
    modules = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    return result.returncode, modules


def new_commit(project: Path, message: str) -> str:
    """The `old new ref` line git hands the reference-transaction hook for a commit of the
    staged tree on HEAD (made, not yet on a branch)."""
    head = git_ok(project, "rev-parse", "HEAD").strip()
    tree = git_ok(project, "write-tree").strip()
    new = git_ok(project, "commit-tree", tree, "-p", head, "-m", message).strip()
    return f"{head} {new} refs/heads/main\n"


def test_the_honest_commit_passes_every_hook_without_re_enum_hashlib_or_runpy(
    scaffold: Path,
) -> None:
    write(scaffold / "notes.txt", "a change that is not the feature list\n")
    git_ok(scaffold, "add", "notes.txt")
    message = write(scaffold / ".git" / "MSG", "Add notes about the app\n")
    for args, stdin in (
        (("pre-commit",), None),
        (("commit-msg", str(message)), None),
        (("reference-transaction", "prepared"), new_commit(scaffold, "Add notes about the app")),
    ):
        code, modules = hook_imports(scaffold, *args, stdin=stdin)
        assert code == 0, args
        assert not set(HEAVY) & modules, (args, set(HEAVY) & modules)
    made = git(scaffold, "commit", "-q", "-m", "Add notes about the app")
    assert made.returncode == 0, made.output


def test_a_message_that_says_nothing_is_still_refused_before_and_past_the_hooks(
    scaffold: Path,
) -> None:
    write(scaffold / "notes.txt", "a change that is not the feature list\n")
    git_ok(scaffold, "add", "notes.txt")
    before = git_ok(scaffold, "rev-parse", "HEAD")
    refused = git(scaffold, "commit", "-q", "-m", "wip")
    assert refused.returncode != 0 and "rule 9" in refused.output, refused.output
    forced = git(scaffold, "commit", "-q", "--no-verify", "-m", "wip")
    assert forced.returncode != 0, forced.output
    assert "reference-transaction refused" in forced.output and "rule 9" in forced.output
    assert git_ok(scaffold, "rev-parse", "HEAD") == before


def _tamper(items: list[dict[str, Any]]) -> None:
    by_id(items, "F001")["verify"] = "true"  # rule 2: a definition changes


def test_a_tampered_list_is_still_refused_by_the_commit_hooks_and_past_them(calc: Path) -> None:
    before = git_ok(calc, "rev-parse", "HEAD")
    edit_list(calc, _tamper)
    git_ok(calc, "add", FEATURES)
    refused = git(calc, "commit", "-q", "-m", "Make F001 easier to verify")
    assert refused.returncode != 0 and "rule 2" in refused.output, refused.output
    # Past the commit hooks, with approvals of other changes on record (the reference-
    # transaction hook hashes a commit only when there is an approval to compare it with).
    approved = calc / ".git" / "shiftkit" / "approved"
    write(approved / ("0" * 64), "")
    forced = git(calc, "commit", "-q", "--no-verify", "-m", "Make F001 easier to verify")
    assert forced.returncode != 0, forced.output
    assert "reference-transaction refused" in forced.output and "rule 2" in forced.output
    # ... and with none.
    for entry in approved.iterdir():
        entry.unlink()
    approved.rmdir()
    forced = git(calc, "commit", "-q", "--no-verify", "-m", "Make F001 easier to verify")
    assert forced.returncode != 0 and "rule 2" in forced.output, forced.output
    assert git_ok(calc, "rev-parse", "HEAD") == before


def test_an_oracle_changed_in_a_commit_that_flips_nothing_is_still_refused(calc: Path) -> None:
    """Rule 14 in the commit-msg hook's no-flip path (`protected_only`), which now imports
    `messages` only past `may_touch`."""
    before = git_ok(calc, "rev-parse", "HEAD")
    test_file = calc / "tests" / "test_add.py"
    test_file.write_text(test_file.read_text() + "\n# weakened\n")
    git_ok(calc, "add", "tests/test_add.py")
    refused = git(calc, "commit", "-q", "-m", "Reword the add test")
    assert refused.returncode != 0 and "rule 14" in refused.output, refused.output
    forced = git(calc, "commit", "-q", "--no-verify", "-m", "Reword the add test")
    assert forced.returncode != 0 and "rule 14" in forced.output, forced.output
    assert git_ok(calc, "rev-parse", "HEAD") == before
    # the honest twin: a new file beside it
    git_ok(calc, "reset", "-q", "--hard")
    write(calc / "notes.txt", "x\n")
    git_ok(calc, "add", "notes.txt")
    made = git(calc, "commit", "-q", "-m", "Add notes about the calc package")
    assert made.returncode == 0, made.output


def test_in_a_linked_worktree_the_shim_asks_git_for_the_common_dir(
    calc: Path, tmp_path: Path
) -> None:
    """The reference-transaction shim takes `.git` as the common dir only in a plain clone's
    top folder with no GIT_DIR; a linked worktree (git sets GIT_DIR) asks git, and its hook
    still judges: a tampered list committed past the commit hooks there is refused."""
    linked = tmp_path / "linked"
    git_ok(calc, "worktree", "add", "-q", "-b", "side", str(linked))
    assert (linked / ".git").is_file()
    edit_list(linked, _tamper)
    git_ok(linked, "add", FEATURES)
    before = git_ok(linked, "rev-parse", "HEAD")
    forced = git(linked, "commit", "-q", "--no-verify", "-m", "Make F001 easier to verify")
    assert forced.returncode != 0, forced.output
    assert "reference-transaction refused" in forced.output and "rule 2" in forced.output
    assert git_ok(linked, "rev-parse", "HEAD") == before
    git_ok(linked, "reset", "-q", "--hard")
    write(linked / "notes.txt", "x\n")
    git_ok(linked, "add", "notes.txt")
    made = git(linked, "commit", "-q", "-m", "Add notes on the side branch")
    assert made.returncode == 0, made.output
