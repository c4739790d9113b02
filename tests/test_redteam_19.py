"""Issue 19's red team on the verdict cache (decision record 0043), the isolation of verifiers
(0044) and the guard: each way found to a local branch at a commit whose failing feature is
marked passing, or to a secret seen by an isolated verifier, as an agent would try it.

- Git run inside the git dir (`cd .git`, `git -C .git/refs`) gave the reference-transaction
  hook no work tree, and it took that for a bare repository: nothing judged, and the branch
  it made was then evidence for every later fast-forward (`--not --branches`).
- A verdict is an empty file: `touch` or `mkdir -p` of `.git/shiftkit/judged/ab/cdef…` (or of
  an approval) passed the guard and forged one.
- `git symbolic-ref refs/heads/x refs/remotes/origin/wip` met no hook and counted as a branch.
- `audit --reverify REV` recorded verdicts for what REV named after its verifiers ran; one of
  them moved REV.

Decision record 0045 (which also lists what the red team found of isolation and left).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, git_ok, ok, shiftkit
from test_guard import pre_tool_use
from test_trust_invariants import base as base  # (the fixtures, shared)
from test_trust_invariants import no_hooks
from test_trust_invariants import one_project as one_project
from test_trust_invariants import project as project
from test_verdicts import _forge_flip, _head


def _forged_in_remotes(p: Path, tmp_path: Path) -> str:
    other = tmp_path / "other"
    git_ok(tmp_path, "clone", "-q", str(p), str(other))
    forged = _forge_flip(other, "F002", "F002: subtract two numbers")
    git_ok(p, "fetch", "-q", str(other), "+HEAD:refs/remotes/origin/wip")
    return forged


@pytest.mark.parametrize("where", [".git", ".git/refs", ".git/objects"])
def test_git_run_inside_the_git_dir_is_judged(project: Path, tmp_path: Path, where: str) -> None:
    p = project
    forged = _forged_in_remotes(p, tmp_path)
    made = git(p / where, "branch", "-f", "side", forged)
    assert made.returncode != 0, made.output
    assert "reference-transaction refused" in made.output and "F002" in made.output
    assert git(p, "rev-parse", "-q", "--verify", "refs/heads/side").returncode != 0
    # ... so no branch vouches for it, and main cannot follow.
    before = _head(p)
    assert git(p, "merge", "-q", "--ff-only", "origin/wip").returncode != 0
    assert _head(p) == before
    # A judged commit still moves from there.
    git_ok(p / where, "branch", "-f", "judged", before)


def test_a_repository_made_bare_is_judged(project: Path, tmp_path: Path) -> None:
    p = project
    forged = _forged_in_remotes(p, tmp_path)
    git_ok(p, "config", "core.bare", "true")
    made = git(p, "branch", "-f", "side", forged)
    git_ok(p / ".git", "config", "core.bare", "false")
    assert made.returncode != 0 and "F002" in made.output, made.output


FORGERIES = [
    "touch .git/shiftkit/judged/ab/cdef0123456789abcdef0123456789abcdef01",
    "mkdir -p .git/shiftkit/judged/ab/cdef0123456789abcdef0123456789abcdef01",
    "cd .git/shiftkit && touch judged/ab/cdef01",
    "cd .git && mkdir -p shiftkit/approved/k",
    "touch -d 2020-01-01 .git/shiftkit/approved/key",
    "touch .git/refs/heads/x",
    "touch .git/info/grafts",
]


@pytest.mark.parametrize("command", FORGERIES)
def test_the_guard_denies_making_state_files_by_hand(scaffold: Path, command: str) -> None:
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))
    assert result.returncode == 2, result.output
    assert ".git" in result.stderr


@pytest.mark.parametrize("command", ["touch features.json", "mkdir -p src/app", "touch notes.md"])
def test_the_guard_still_allows_harmless_touches(scaffold: Path, command: str) -> None:
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))
    assert (result.returncode, result.output) == (0, ""), result.output


def test_a_folder_is_no_verdict(project: Path, tmp_path: Path) -> None:
    """Made past the guard, a folder in a verdict's place vouches for nothing."""
    p = project
    forged = _forged_in_remotes(p, tmp_path)
    (p / ".git" / "shiftkit" / "judged" / forged[:2] / forged[2:]).mkdir(parents=True)
    before = _head(p)
    moved = git(p, "merge", "-q", "--ff-only", "origin/wip")
    assert moved.returncode != 0 and "F002" in moved.output, moved.output
    assert _head(p) == before


@pytest.mark.parametrize("target", ["refs/remotes/origin/wip", "refs/tags/wip"])
def test_a_symbolic_ref_is_no_branch(project: Path, tmp_path: Path, target: str) -> None:
    """`git symbolic-ref refs/heads/x REF` meets no hook (git runs none for symbolic refs),
    follows every fetch of REF, and `--branches` counted it as a judged branch."""
    p = project
    forged = _forged_in_remotes(p, tmp_path)
    if target != "refs/remotes/origin/wip":
        git_ok(p, "update-ref", target, forged)
    git_ok(p, "symbolic-ref", "refs/heads/evil", target)
    git_ok(p, "symbolic-ref", "refs/heads/alias", "refs/heads/main")  # (harmless)
    before = _head(p)
    moved = git(p, "merge", "-q", "--ff-only", forged)
    assert moved.returncode != 0 and "F002" in moved.output, moved.output
    assert _head(p) == before
    copied = git(p, "branch", "copy", "evil")
    assert copied.returncode != 0 and "F002" in copied.output, copied.output
    # Nor does it count as judged for `audit --reverify` (the verdicts `sync` records).
    audited = shiftkit(p, "audit", "--reverify", forged)
    assert audited.returncode == 1 and "F002" in audited.output, audited.output
    assert not (p / ".git" / "shiftkit" / "judged" / forged[:2] / forged[2:]).exists()


def test_audit_records_what_it_judged_not_where_rev_points_after(
    one_project: Path, tmp_path: Path
) -> None:
    """`audit --reverify REV` runs the judged commits' verifiers in a worktree of this
    repository; one that moves REV (a remote-tracking ref) made the verdicts go to wherever
    REV pointed afterwards: a forged flip the audit never saw."""
    p = one_project
    forged = _forged_in_remotes(p, tmp_path)
    git_ok(p, "update-ref", "-d", "refs/remotes/origin/wip")
    mover = tmp_path / "mover"
    git_ok(tmp_path, "clone", "-q", str(p), str(mover))
    ok(mover, "install-hooks", "--force")
    git_ok(mover, "fetch", "-q", str(p), f"{forged}:refs/remotes/x/forged")
    command = f"git update-ref refs/remotes/origin/wip {forged} 2>/dev/null; true"
    ok(mover, "add", "--description", "moves a ref", "--step", "s", "--verify", command)
    git_ok(mover, "commit", "-q", "-m", "Add a feature", "features.json")
    added = [
        line for line in git_ok(mover, "show", "HEAD:features.json").split('"') if "F0" in line
    ]
    ok(mover, "claim", added[-1])
    ok(mover, "finish", "-m", "moves a ref")
    git_ok(p, "fetch", "-q", str(mover), "+HEAD:refs/remotes/origin/wip")

    audited = shiftkit(p, "audit", "--reverify", "origin/wip")
    assert audited.returncode == 0, audited.output
    assert git_ok(p, "rev-parse", "origin/wip").strip() == forged  # (it did move)
    assert not (p / ".git" / "shiftkit" / "judged" / forged[:2] / forged[2:]).exists()
    before = _head(p)
    moved = git(p, "merge", "-q", "--ff-only", forged)
    assert moved.returncode != 0 and "F002" in moved.output, moved.output
    assert _head(p) == before


@pytest.mark.parametrize(
    ("command", "mentions"),
    [
        (
            "git worktree add /tmp/w && cd /tmp/w && git config core.hooksPath /tmp/nohooks",
            "hooksPath",
        ),
        ("git worktree add -b side ../w main && cd ../w && git commit -n -m x", "-n"),
        ("git worktree move sub/w /tmp/w && git -C /tmp/w commit --no-verify -m x", "no-verify"),
    ],
)
def test_the_guard_judges_a_worktree_outside_the_project_as_this_one(
    scaffold: Path, command: str, mentions: str
) -> None:
    """Outside the project the guard takes commands for another repository's, but a worktree
    there shares this one's config, hooks and branches: the guard knows the worktrees a line
    makes (and, in later calls, the repository's), so it judges commands there as here
    (decision 0063; a sibling worktree itself is allowed)."""
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))
    assert result.returncode == 2, result.output
    assert mentions in result.stderr


@pytest.mark.parametrize(
    "command",
    [
        "git worktree list",
        "git worktree add build/w",
        "git worktree prune",
        "git worktree add -b side ../w main",
        "git worktree move sub/w /tmp/w",
    ],
)
def test_the_guard_allows_worktrees_inside(scaffold: Path, command: str) -> None:
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))
    assert (result.returncode, result.output) == (0, ""), result.output


@pytest.mark.parametrize(
    "command",
    [
        "G=git; $G config core.hooksPath /tmp/nohooks",
        "export G=git; ${G} commit -n -m x",
        "$(echo git) config core.hooksPath /tmp/nohooks",
        "`printf git` commit -n -m x",
    ],
)
def test_the_guard_reads_a_program_named_indirectly(scaffold: Path, command: str) -> None:
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))
    assert result.returncode == 2, result.output


@pytest.mark.parametrize(
    "command", ["G=git; $G status", "git show $(git rev-parse HEAD)", "$EDITOR notes.md"]
)
def test_the_guard_allows_indirect_harmless_commands(scaffold: Path, command: str) -> None:
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))
    assert (result.returncode, result.output) == (0, ""), result.output


def test_no_verdict_for_a_root_the_audit_left_out(one_project: Path, tmp_path: Path) -> None:
    """An orphan with every feature passing, merged `-s ours` into a commit where none passes:
    from the merge's side the orphan lies outside protocol history, so `audit --reverify`
    did not judge it, yet recorded a verdict for it — and the branch the hook would refuse
    (rule 2: roots bring nothing) then moved onto it."""
    p = one_project
    other = tmp_path / "other"
    git_ok(tmp_path, "clone", "-q", str(p), str(other))
    root = git_ok(other, "rev-list", "--max-parents=0", "HEAD").split()[0]
    listed = git_ok(other, "show", f"{root}:features.json")
    git_ok(other, "checkout", "-q", "--orphan", "side")
    git_ok(other, "rm", "-rq", "--cached", ".")
    (other / "features.json").write_text(listed.replace('"passes": false', '"passes": true'))
    git_ok(other, "add", "features.json")
    git_ok(other, *no_hooks(other), "commit", "-q", "-m", "Import")
    orphan = _head(other)
    git_ok(other, "checkout", "-q", "-f", "-b", "joined", root)
    git_ok(
        other, *no_hooks(other), "merge", "-q", "--allow-unrelated-histories", "-s", "ours",
        "side", "-m", "Merge side",
    )  # fmt: skip
    git_ok(p, "fetch", "-q", str(other), "+joined:refs/remotes/origin/joined")

    audited = shiftkit(p, "audit", "--reverify", "origin/joined")
    # (its verdict on the protocol's history stands; the orphan only keeps the record off)
    assert "not recorded as judged" in audited.stderr and orphan[:7] in audited.stderr
    assert "rule 2" in audited.stderr, audited.output
    assert not (p / ".git" / "shiftkit" / "judged" / orphan[:2] / orphan[2:]).exists()
    made = git(p, "branch", "imported", orphan)
    assert made.returncode != 0 and "rule 2" in made.output, made.output


def test_grafts_give_a_judged_commit_no_unjudged_parent(project: Path, tmp_path: Path) -> None:
    """`.git/info/grafts` written past the guard made a judged branch tip "reach" a forged
    flip (GIT_NO_REPLACE_OBJECTS leaves grafts on), so the walk skipped it."""
    p = project
    forged = _forged_in_remotes(p, tmp_path)
    main = git_ok(p, "branch", "--show-current").strip()
    git_ok(p, "checkout", "-q", "-b", "notes")
    (p / "notes.md").write_text("the plan\n")
    git_ok(p, "add", "notes.md")
    git_ok(p, "commit", "-q", "-m", "Add notes on the plan")
    judged = _head(p)
    git_ok(p, "checkout", "-q", main)
    before = _head(p)
    (p / ".git" / "info").mkdir(exist_ok=True)
    (p / ".git" / "info" / "grafts").write_text(f"{judged} {forged}\n")
    moved = git(p, "-c", "advice.graftFileDeprecated=false", "merge", "-q", "--ff-only", forged)
    assert moved.returncode != 0 and "F002" in moved.output, moved.output
    assert _head(p) == before
