"""Trust by construction (issue 19): invariants that close whole classes of leaks, each tried
the way an agent would — through the real hooks (the pre-commit framework's and the plain
shims), then past every hook — and shown refused, flagged by `audit`, and flagged by
`audit --reverify --strict` on a fresh clone.

- Roots bring nothing (decision record 0027).
- Every parent is a judge (decision record 0028).
- The log and its archive are one append-only record (decision record 0029).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    FEATURES,
    Result,
    add_log_entry,
    edit_list,
    git,
    git_ok,
    implement,
    isolated_environment,
    ok,
    shiftkit,
    use_shims,
    write,
)
from test_trust import (
    SIGNERS,
    head,
    land_past_every_hook,
    refused,
    set_config,
)
from test_trust import signed as signed  # (the fixture, shared with test_trust)

ARCHIVE = "progress-archive.txt"


@pytest.fixture(scope="module")
def base(
    pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[Path]:
    """F000 passing; F001 blocked after three failed attempts (test_trust's base)."""
    target = tmp_path_factory.mktemp("invariants") / "project"
    shutil.copytree(pristine_calc, target, symlinks=True)
    with isolated_environment(isolated_home):
        ok(target, "claim", "F000")
        ok(target, "finish", "-m", "the environment builds")
        for _ in range(3):
            ok(target, "claim", "F001")
            implement(target, "add", good=False)
            ok(target, "revert", "--reason", "returned the wrong sum")
        yield target


@pytest.fixture
def one_project(base: Path, tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(base, target, symlinks=True)
    return target


@pytest.fixture(params=["pre-commit-framework", "plain-shims"])
def project(request: pytest.FixtureRequest, one_project: Path) -> Path:
    if request.param == "plain-shims":
        use_shims(one_project)
    return one_project


def no_hooks(p: Path) -> tuple[str, str]:
    return ("-c", f"core.hooksPath={p / 'no-hooks'}")


def all_pass(items: list[dict[str, object]]) -> None:
    for item in items:
        item["passes"] = True
        item.pop("blocked", None)


def fresh_clone_audit(p: Path, tmp: Path) -> Result:
    clone = tmp / "clone"
    git_ok(p, "clone", "-q", str(p), str(clone))
    return shiftkit(clone, "audit", "--reverify", "--strict")


def flagged(result: Result, commit: str, *words: str) -> None:
    assert result.returncode == 1, result.output
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith(commit[:7])]
    assert lines, result.stdout
    assert all(any(w in ln for ln in lines) for w in words), result.stdout


def orphan_side(p: Path, change: object, message: str = "Import upstream state") -> str:
    """An orphan branch `side` with ``change`` applied, committed past every hook; returns
    the name of the branch it came from."""
    main = git_ok(p, "branch", "--show-current").strip()
    git_ok(p, "checkout", "-q", "--orphan", "side")
    change(p)  # type: ignore[operator]
    git_ok(p, "add", "-A")
    return main


# -- 1. roots bring nothing --------------------------------------------------------------------


def test_a_root_commit_cannot_bring_passes(project: Path) -> None:
    p = project
    orphan_side(p, lambda q: edit_list(q, all_pass))
    result = git(p, "commit", "-m", "Import upstream state")
    assert result.returncode != 0, result.output
    assert "rule 2" in result.output and "F002" in result.output, result.output
    assert git(p, "rev-parse", "-q", "--verify", "HEAD").returncode != 0


def test_an_orphan_merged_as_first_parent_brings_no_pass(project: Path, tmp_path: Path) -> None:
    """The red-team's case: the orphan is the merge's FIRST parent, the merge fast-forwards
    main. The hooks refuse each step; landed past them, every audit flags it."""
    p = project
    main = orphan_side(p, lambda q: edit_list(q, all_pass))
    root = land_past_every_hook(p, "Import upstream state")
    merge = ("merge", "-q", "--allow-unrelated-histories", "-s", "ours", "-m", "Merge main")
    refused_merge = git(p, *merge, main)
    assert refused_merge.returncode != 0, refused_merge.output
    assert head(p) == root
    git_ok(p, "merge", "--abort")
    git_ok(p, *no_hooks(p), *merge, main)
    tip = head(p)
    git_ok(p, "checkout", "-q", main)
    # (the commits are on a branch already: the reference-transaction hook takes them as
    # judged — issue 19, item 3)
    git_ok(p, *no_hooks(p), "merge", "-q", "--ff-only", "side")
    assert head(p) == tip
    plain = shiftkit(p, "audit")
    flagged(plain, root, "rule 2")
    assert "rule 3" in plain.stdout or "rule 4" in plain.stdout, plain.stdout
    strict = fresh_clone_audit(p, tmp_path)
    flagged(strict, root, "rule 2")
    flagged(strict, tip)


def test_an_orphan_without_the_config_is_judged_through_its_merge(
    one_project: Path, tmp_path: Path
) -> None:
    """An orphan without `.shiftkit.toml` is outside the adoption scope: the merge that brings
    it in earns none of its passes."""
    p = one_project

    def change(q: Path) -> None:
        edit_list(q, all_pass)
        git_ok(q, "rm", "-q", "--cached", ".shiftkit.toml")
        (q / ".shiftkit.toml").unlink()

    main = orphan_side(p, change)
    land_past_every_hook(p, "Import upstream state")
    git_ok(p, *no_hooks(p), "merge", "-q", "--allow-unrelated-histories", "-s", "ours", main)
    tip = head(p)
    git_ok(p, *no_hooks(p), "checkout", "-q", main)
    git_ok(p, *no_hooks(p), "merge", "-q", "--ff-only", "side")
    flagged(shiftkit(p, "audit"), tip)
    flagged(fresh_clone_audit(p, tmp_path), tip)


def test_a_merge_of_an_unrelated_history_is_a_person_action(one_project: Path) -> None:
    """Even one that brings no list (a subtree of another repository): a person's to make."""
    p = one_project

    def change(q: Path) -> None:
        git_ok(q, "rm", "-q", "-r", "--cached", ".")
        for path in list(q.iterdir()):
            if path.name not in (".git", "no-hooks") and path.is_file():
                path.unlink()
        write(q / "vendor.txt", "vendored\n")

    main = orphan_side(p, change)
    git_ok(p, *no_hooks(p), "commit", "-q", "-m", "Vendor a library")
    git_ok(p, "checkout", "-q", "-f", main)
    git_ok(
        p, "merge", "-q", "--allow-unrelated-histories", "-m", "Merge the vendored library", "side"
    )
    audit = shiftkit(p, "audit")
    assert audit.returncode == 0, audit.output
    assert "unrelated history" in audit.stdout, audit.stdout
    strict = shiftkit(p, "audit", "--strict")
    assert strict.returncode == 1 and "unrelated history" in strict.stdout, strict.output


# -- 2. every parent is a judge ----------------------------------------------------------------


def test_an_orphan_first_parent_cannot_swap_the_people_policy(
    signed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    p, _, agent = signed

    def change(q: Path) -> None:
        set_config(q, "shiftkit.people", 'policy = "trailer"')
        set_config(q, "shiftkit.claims", "enabled = false")
        write(q / SIGNERS, f"agent@shiftkit.invalid {Path(f'{agent}.pub').read_text()}")

    main = orphan_side(p, change)
    root = land_past_every_hook(p, "Import upstream settings")
    merge = ("merge", "-q", "--allow-unrelated-histories", "-s", "ours", "-m", "Merge main")
    with_hooks = git(p, *merge, main)
    assert with_hooks.returncode != 0, with_hooks.output
    assert "people.policy" in with_hooks.output, with_hooks.output
    assert head(p) == root
    git_ok(p, "merge", "--abort")
    git_ok(p, *no_hooks(p), *merge, main)
    tip = head(p)
    git_ok(p, "checkout", "-q", main)
    git_ok(p, *no_hooks(p), "merge", "-q", "--ff-only", "side")
    plain = shiftkit(p, "audit")
    flagged(plain, tip, "rule 11")
    for words in ("people.policy", "allowed signers changed", "claims.enabled"):
        assert words in plain.stdout, plain.stdout
    flagged(fresh_clone_audit(p, tmp_path), tip, "rule 11")


def test_a_merge_cannot_undo_a_settings_change_of_its_second_parent(one_project: Path) -> None:
    """A person raised `max_attempts` on main after `branch` forked. Merging main into the
    branch keeps the merge driver's answer — main's change — and is no person action; a
    merge that keeps the branch's old value undoes main's change: a change against its
    second parent, which the first parent alone did not show."""
    p = one_project
    main = git_ok(p, "branch", "--show-current").strip()
    git_ok(p, "checkout", "-q", "-b", "branch")
    write(p / "notes.txt", "notes\n")
    git_ok(p, "add", "-A")
    git_ok(p, "commit", "-q", "-m", "Take notes")
    git_ok(p, "checkout", "-q", main)
    set_config(p, "shiftkit", "max_attempts = 5")
    git_ok(p, "add", "-A")
    git_ok(p, "commit", "-q", "-m", "Allow five attempts")
    changed = head(p)
    git_ok(p, "checkout", "-q", "branch")
    git_ok(p, "merge", "-q", "--no-ff", "-m", "Merge main", main)
    honest = head(p)
    git_ok(p, "reset", "-q", "--hard", "HEAD^")
    git_ok(p, "merge", "-q", "--no-ff", "--no-commit", main)
    git_ok(p, "checkout", "HEAD", "--", ".shiftkit.toml")
    git_ok(p, "commit", "-q", "-m", "Merge main")
    undone = head(p)
    audit = shiftkit(p, "audit")
    listed = [ln for ln in audit.stdout.splitlines() if "max_attempts" in ln]
    assert [ln.split()[0] for ln in listed] == [changed[:7], undone[:7]], audit.stdout
    git_ok(p, "checkout", "-q", "-b", "again", honest)
    audit = shiftkit(p, "audit")
    listed = [ln for ln in audit.stdout.splitlines() if "max_attempts" in ln]
    assert [ln.split()[0] for ln in listed] == [changed[:7]], audit.stdout


# -- 6. the log and its archive are one append-only record --------------------------------------


def pruned(p: Path) -> None:
    set_config(p, "shiftkit.log", "keep = 1")
    set_config(p, "shiftkit.log", "block = 1")
    git_ok(p, "add", "-A")
    git_ok(p, "commit", "-q", "-m", "Keep one log entry")
    ok(p, "log", "--prune")
    assert (p / ARCHIVE).exists() and (p / ARCHIVE).read_text().strip()


def test_the_archive_cannot_be_deleted(project: Path, tmp_path: Path) -> None:
    p = project
    pruned(p)
    git_ok(p, "rm", "-q", ARCHIVE)
    output = refused(p, "Drop the archive")
    assert "rule 8" in output, output
    commit = land_past_every_hook(p, "Drop the archive")
    flagged(shiftkit(p, "audit"), commit, "rule 8")
    flagged(fresh_clone_audit(p, tmp_path), commit, "rule 8")


def test_the_archive_cannot_lose_an_entry_beside_a_log_append(one_project: Path) -> None:
    p = one_project
    pruned(p)
    archive = (p / ARCHIVE).read_text()
    start = archive.index("\n## ")
    end = archive.find("\n## ", start + 1)
    write(p / ARCHIVE, archive[:start] + (archive[end:] if end != -1 else "\n"))
    add_log_entry(p, "F002", "attempted")
    git_ok(p, "add", "-A")
    output = refused(p, "Tidy the archive")
    assert "rule 8" in output, output


def test_a_merge_keeps_every_archived_entry(one_project: Path) -> None:
    p = one_project
    pruned(p)
    main = git_ok(p, "branch", "--show-current").strip()
    git_ok(p, "checkout", "-q", "-b", "side")
    write(p / "notes.txt", "notes\n")
    git_ok(p, "add", "-A")
    git_ok(p, "commit", "-q", "-m", "Take notes")
    git_ok(p, "checkout", "-q", main)
    git_ok(p, "merge", "-q", "--no-ff", "--no-commit", "side")
    git_ok(p, "rm", "-q", ARCHIVE)
    output = refused(p, "Merge the notes")
    assert "rule 8" in output, output


def test_an_honest_prune_and_merge_pass(one_project: Path) -> None:
    p = one_project
    pruned(p)
    assert FEATURES  # (the list is untouched by a prune)
    audit = shiftkit(p, "audit")
    assert audit.returncode == 0, audit.output


# -- 3 (in part). the pre-push hook asks the remote what it lacks --------------------------------


def test_the_pre_push_hook_asks_the_remote_what_it_lacks(one_project: Path, tmp_path: Path) -> None:
    """A hand-made flip with forged trailers, fetched into `refs/remotes/origin/wip` and
    fast-forwarded onto main past the hooks: the remote never had it, so the push audits it,
    whatever the local remote-tracking refs say."""
    p = one_project
    remote = tmp_path / "remote.git"
    git_ok(tmp_path, "init", "-q", "--bare", str(remote))
    git_ok(p, "remote", "add", "origin", str(remote))
    git_ok(p, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    git_ok(tmp_path, "clone", "-q", str(p), str(other))
    edit_list(other, lambda items: next(i for i in items if i["id"] == "F002").update(passes=True))
    add_log_entry(other, "F002")
    git_ok(other, "add", "-A")
    git_ok(other, *no_hooks(other), "commit", "-q", "-m", "F002: subtract two numbers")
    tree = git_ok(other, "rev-parse", "HEAD^{tree}").strip()
    forged = f"F002: subtract two numbers\n\nShiftkit-Feature: F002\nShiftkit-Verified: {tree}\n"
    git_ok(other, *no_hooks(other), "commit", "-q", "--amend", "-m", forged)
    git_ok(p, "fetch", "-q", str(other), "HEAD:refs/remotes/origin/wip")
    git_ok(p, *no_hooks(p), "merge", "-q", "--ff-only", "origin/wip")
    pushed = git(p, "push", "origin", "main")
    assert pushed.returncode != 0, pushed.output
    assert "push refused" in pushed.output and "F002" in pushed.output, pushed.output
    assert git_ok(remote, "rev-parse", "main") != git_ok(p, "rev-parse", "main")
