"""Audit starts at adoption: a repository with a long history of its own, messages that
break rule 9 and branches forked before shiftkit came in, adopted with the real template."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import (
    copy_of,
    flip,
    git,
    git_ok,
    isolated_environment,
    run,
    shiftkit,
    write,
)

# Messages rule 9 refuses: generic words, an empty-ish subject, one too long.
BAD_MESSAGES = ["wip", "fix", "update", "x" * 90, "WIP", "stuff", "changes", "."]


def commit(repo: Path, name: str, message: str) -> None:
    write(repo / name, f"{name} {message}\n")
    git_ok(repo, "add", name)
    git_ok(repo, "commit", "-q", "--allow-empty-message", "-m", message)


def build_history(repo: Path) -> None:
    """34 commits before adoption, two merges, and a branch left open to be merged after."""
    repo.mkdir()
    git_ok(repo, "init", "-q")
    for n in range(12):
        commit(repo, f"main{n % 4}.txt", BAD_MESSAGES[n % len(BAD_MESSAGES)])
    git_ok(repo, "checkout", "-q", "-b", "old-side")
    for n in range(6):
        commit(repo, f"old{n}.txt", BAD_MESSAGES[(n + 3) % len(BAD_MESSAGES)])
    git_ok(repo, "checkout", "-q", "main")
    for n in range(6):
        commit(repo, f"main{n % 3}.txt", BAD_MESSAGES[(n + 5) % len(BAD_MESSAGES)])
    git_ok(repo, "merge", "-q", "--no-ff", "-m", "merge", "old-side")
    git_ok(repo, "checkout", "-q", "-b", "late-side")
    for n in range(4):
        commit(repo, f"late{n}.txt", "wip")
    git_ok(repo, "checkout", "-q", "main")
    for n in range(5):
        commit(repo, f"tail{n}.txt", BAD_MESSAGES[n])


@pytest.fixture(scope="module")
def pristine_adopted(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path) -> Path:
    """The history above, shiftkit adopted with `shiftkit new` on top, then the branch that
    was forked before the adoption merged in (through the hooks)."""
    repo = tmp_path_factory.mktemp("adopted") / "legacy"
    with isolated_environment(isolated_home):
        build_history(repo)
        assert int(git_ok(repo, "rev-list", "--count", "HEAD")) >= 30
        adopted = shiftkit(repo.parent, "new", str(repo), "--defaults")
        assert adopted.returncode == 0, adopted.output
        merged = git(repo, "merge", "--no-ff", "-m", "Merge the late side branch", "late-side")
        assert merged.returncode == 0, merged.output
    return repo


@pytest.fixture
def adopted(pristine_adopted: Path, tmp_path: Path) -> Path:
    return copy_of(pristine_adopted, tmp_path)


def checked(output: str) -> int:
    found = re.search(r"audit: (\d+) commits? checked", output)
    assert found, output
    return int(found.group(1))


def test_audit_judges_only_the_history_since_adoption(adopted: Path) -> None:
    result = shiftkit(adopted, "audit")
    assert result.returncode == 0, result.output
    # The adopting commit and the merge of the branch forked before it: nothing older, and
    # none of the side branch's own commits.
    assert checked(result.stdout) == 2
    assert "0 with violations, 0 with overrides, 0 with person actions" in result.stdout
    assert "rule 9" not in result.output
    assert shiftkit(adopted, "audit", "--strict").returncode == 0
    adopting = git_ok(
        adopted, "log", "--diff-filter=A", "--format=%s", "HEAD", "--", ".shiftkit.toml"
    )
    assert adopting.strip() == "Scaffold the project with shiftkit"


def test_a_flip_past_the_hooks_after_adoption_is_flagged(adopted: Path, tmp_path: Path) -> None:
    flip(adopted, "F000")
    git_ok(adopted, "add", "-A")
    no_hooks = tmp_path / "no-hooks"
    no_hooks.mkdir()
    forced = git(
        adopted, "-c", f"core.hooksPath={no_hooks}", "commit", "--no-verify", "-m", "F000: passes"
    )
    assert forced.returncode == 0, forced.output
    result = shiftkit(adopted, "audit")
    assert result.returncode == 1, result.output
    assert checked(result.stdout) == 3
    assert "rule 4" in result.stdout and "F000: passes" in result.stdout
    assert "Traceback" not in result.output
    since = shiftkit(adopted, "audit", "--since", "HEAD~1")
    assert since.returncode == 1 and checked(since.stdout) == 1
    clean = shiftkit(adopted, "audit", "--since", "HEAD~1", "--json")
    assert '"rule": 4' in clean.stdout


def test_since_before_the_adoption_still_judges_only_protocol_commits(adopted: Path) -> None:
    result = shiftkit(adopted, "audit", "--since", "HEAD~20")
    assert result.returncode == 0, result.output
    assert checked(result.stdout) == 2


def test_the_pre_push_hook_audits_only_protocol_commits(adopted: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git_ok(tmp_path, "init", "-q", "--bare", str(remote))
    git_ok(adopted, "remote", "add", "origin", str(remote))
    pushed = git(adopted, "push", "-q", "origin", "main")
    assert pushed.returncode == 0, pushed.output
    assert (adopted / ".git" / "hooks" / "pre-push").exists()


def test_a_repository_that_never_adopted_has_nothing_to_audit(tmp_path: Path) -> None:
    repo = tmp_path / "plain"
    repo.mkdir()
    git_ok(repo, "init", "-q")
    commit(repo, "a.txt", "wip")
    result = shiftkit(repo, "audit")
    assert result.returncode == 0, result.output
    assert checked(result.stdout) == 0


# -- the CI workflow ------------------------------------------------------------------------

WORKFLOW = ".github/workflows/shiftkit-audit.yml"


@pytest.mark.parametrize(
    "schema", ["vendor.github-workflows", "custom.github-workflows-require-timeout"]
)
def test_the_workflow_passes_the_github_schemas(adopted: Path, schema: str) -> None:
    result = run(["check-jsonschema", "--builtin-schema", schema, WORKFLOW], adopted)
    assert result.returncode == 0, result.output


def reverify_script(project: Path) -> str:
    import yaml

    workflow = yaml.safe_load((project / WORKFLOW).read_text())
    [step] = [s for s in workflow["jobs"]["audit"]["steps"] if "--reverify" in s.get("run", "")]
    assert set(step["env"]) == {"EVENT", "BEFORE", "PR_BASE", "BRANCH", "DEFAULT_BRANCH"}
    assert workflow["jobs"]["audit"]["timeout-minutes"] > 0
    steps = workflow["jobs"]["audit"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert '"$SHIFTKIT" audit' in runs, "the rules over all protocol history"
    # Every feature at the tip, those the new commits can break first (decision 0056).
    [check] = [r for r in runs if r.startswith('"$SHIFTKIT" check --no-demote --isolated')]
    assert '${SINCE:+--since "$SINCE"}' in check
    assert steps.index(step) < runs.index(check), "after the step that finds SINCE"
    # Repository code inside the verdict runs with a scrubbed environment (decision 0044).
    assert all("--isolated" in r for r in runs if "--reverify" in r or " check" in r)
    # No repository code before (or instead of) the verdict: no ./init.sh step, and shiftkit
    # is called by the absolute path of an install outside the workspace.
    assert not any("init.sh" in r for r in runs)
    assert not any(r.lstrip().startswith("shiftkit ") for r in runs)
    [install] = [r for r in runs if "$RUNNER_TEMP/shiftkit" in r and "pip" in r]
    # (pinned: this release from the index, the template being a local path: decision 0117)
    assert "chmod -R a-w" in install and 'install --quiet "shiftkit==' in install
    return str(step["run"])


def run_step(project: Path, script: str, **env: str) -> int:
    import shutil

    defaults = {
        "BEFORE": "",
        "PR_BASE": "",
        "BRANCH": "main",
        "DEFAULT_BRANCH": "main",
        "SHIFTKIT": str(shutil.which("shiftkit")),
    }
    result = run(["bash", "-e", "-c", script], project, env={**defaults, **env})
    assert result.returncode == 0, result.output
    return checked(result.stdout)


def test_the_workflow_reverifies_only_what_is_new(adopted: Path) -> None:
    script = reverify_script(adopted)
    head = git_ok(adopted, "rev-parse", "HEAD").strip()
    parent = git_ok(adopted, "rev-parse", "HEAD~1").strip()
    # A push: what came after `before`.
    assert run_step(adopted, script, EVENT="push", BEFORE=parent) == 1
    assert run_step(adopted, script, EVENT="push", BEFORE=head) == 0
    # The first push of the default branch (an all-zero `before`): everything.
    assert run_step(adopted, script, EVENT="push", BEFORE="0" * 40) == 2
    # A new branch: what the default branch lacks.
    git_ok(adopted, "update-ref", "refs/remotes/origin/main", parent)
    assert run_step(adopted, script, EVENT="push", BEFORE="0" * 40, BRANCH="topic") == 1
    # A force push whose `before` is gone: likewise.
    assert run_step(adopted, script, EVENT="push", BEFORE="1" * 40, BRANCH="topic") == 1
    # A pull request: merge base..head.
    assert run_step(adopted, script, EVENT="pull_request", PR_BASE=parent) == 1
    # By hand: the full re-verification.
    assert run_step(adopted, script, EVENT="workflow_dispatch") == 2


def test_history_reading_stops_at_the_adoption(adopted: Path) -> None:
    """The history before the adoption is not even read (only its boundary)."""
    from shiftkit.edge import adoption

    scope = adoption.scope(adopted, ["HEAD"], "features.json")
    [adopting] = scope.adopting
    assert git_ok(adopted, "log", "-1", "--format=%s", adopting).strip().startswith("Scaffold")
    assert len(scope.commits) == 2
    assert scope.boundary == (git_ok(adopted, "rev-parse", f"{adopting}^").strip(),)
