"""The hooks from the shiftkit repository (decision 0118), for real: a clone of this repository
served by `git daemon` on 127.0.0.1, a project copied from that git:// URL by real copier
(its task, `shiftkit bootstrap`, makes the first commit through the hooks), and the real
pre-commit building its own environment from the served repository (pip and hatchling from
the package index) — then the lint job and real `git commit`s with no `shiftkit` on PATH.

pre-commit's home is one per module: the hook environment is built once (about 20 s)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import (
    BIN_DIR,
    add_log_entry,
    flip,
    git,
    git_ok,
    isolated_environment,
    run,
    snapshot_repository,
)
from servers import Daemon
from test_guests import tool_venv

# The smoke test (F000's verifier) is also a probe: it fails when the verifier runs with the
# hook environment's `bin` on PATH (pre-commit names its environments `py_env-*`), so a
# verifier's `python` would not be the project's (the local route runs it with the caller's).
SMOKE = 'test -f features.json && case ":$PATH:" in *py_env-*) false ;; esac'


@pytest.fixture(scope="module")
def module_home(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[tuple[str, str]]:
    """This repository's files, committed, served at a git:// URL; (the URL, its commit)."""
    base = tmp_path_factory.mktemp("served")
    with isolated_environment(isolated_home):
        source = snapshot_repository(tmp_path_factory.mktemp("shiftkit-src"))
        git_ok(base, "clone", "-q", "--bare", str(source), "shiftkit.git")
        commit = git_ok(source, "rev-parse", "HEAD").strip()
    daemon = Daemon(base)
    daemon.start()
    try:
        yield daemon.url("shiftkit.git"), commit
    finally:
        daemon.stop()


@pytest.fixture(scope="module")
def copied(
    served: tuple[str, str],
    module_home: Path,
    tmp_path_factory: pytest.TempPathFactory,
    isolated_home: Path,
) -> tuple[Path, str]:
    """`copier copy --trust --defaults git://…` (no `hook_source` answered); the project and
    what the copy printed."""
    target = tmp_path_factory.mktemp("copied") / "app"
    with isolated_environment(isolated_home, PRE_COMMIT_HOME=str(module_home)):
        copier = [sys.executable, "-m", "copier", "copy", "--trust", "--defaults"]
        data = ["--data", f"smoke_command={SMOKE}"]
        done = run([*copier, *data, served[0], str(target)], target.parent, timeout=900)
    assert done.returncode == 0, done.output
    return target, done.output


def without_shiftkit() -> str:
    """The PATH minus this interpreter's folder: no `shiftkit` on it."""
    kept = [
        entry
        for entry in os.environ["PATH"].split(os.pathsep)
        if entry and Path(entry).resolve() != BIN_DIR.resolve()
    ]
    path = os.pathsep.join(kept)
    assert shutil.which("shiftkit", path=path) is None, path
    return path


@pytest.fixture
def project(copied: tuple[Path, str], tmp_path: Path, module_home: Path) -> Path:
    """A test's own copy of the project, with the module's pre-commit home."""
    target = tmp_path / "app"
    shutil.copytree(copied[0], target, symlinks=True)
    os.environ["PRE_COMMIT_HOME"] = str(module_home)  # (restored by the autouse fixture)
    return target


def as_a_machine_without_shiftkit(project: Path) -> dict[str, str]:
    """A clone where shiftkit was never set up: no judge recorded, pre-commit's hooks
    installed by a pre-commit that has no shiftkit beside it, no `shiftkit` on PATH."""
    (project / ".git" / "shiftkit" / "interpreter").unlink()
    pre_commit = tool_venv("pre-commit-4", "pre-commit>=4.4") / "pre-commit"
    env = {"PATH": without_shiftkit()}
    for name in ("pre-commit", "commit-msg"):
        (project / ".git" / "hooks" / name).unlink()
    hooks = ["install", "--hook-type", "pre-commit", "--hook-type", "commit-msg"]
    installed = run([str(pre_commit), *hooks], project, env=env)
    assert installed.returncode == 0, installed.output
    return env


def test_a_copy_from_a_url_ci_reaches_takes_its_hooks_from_there(
    copied: tuple[Path, str], served: tuple[str, str]
) -> None:
    """Nothing answered: the hooks come from the served repository at the commit copied,
    and the copy says so in one line. Before: `repo: local`."""
    project, output = copied
    url, commit = served
    config = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())
    [entry] = config["repos"]
    assert entry["repo"] == url and entry["rev"] == commit
    assert [hook["id"] for hook in entry["hooks"]] == ["shiftkit-pre-commit", "shiftkit-commit-msg"]
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["hook_source"] == "repository"
    [line] = [x for x in output.splitlines() if x.startswith("hooks: ")]
    assert url in line and commit[:12] in line
    assert git_ok(project, "status", "--porcelain") == ""


def test_their_lint_job_runs_the_repositorys_shiftkit(project: Path) -> None:
    """`pre-commit run --all-files` where shiftkit is not installed: pre-commit's own
    environment runs shiftkit's hook, which judges (no pass-through line) and passes."""
    env = as_a_machine_without_shiftkit(project)
    pre_commit = str(tool_venv("pre-commit-4", "pre-commit>=4.4") / "pre-commit")
    ran = run([pre_commit, "run", "--all-files", "--verbose"], project, env=env, timeout=900)
    assert ran.returncode == 0, ran.output
    assert "shiftkit rules (staged tree)" in ran.output and "Passed" in ran.output
    assert "not installed here" not in ran.output


def test_commits_are_judged_by_the_repositorys_shiftkit(project: Path) -> None:
    """Real commits, with shiftkit on no PATH and no judge recorded: an honest commit and an
    honest flip pass (its verifier ran with the caller's PATH, not the hook environment's);
    a flip without its log entry is refused by rule 5, from pre-commit's environment."""
    env = as_a_machine_without_shiftkit(project)
    (project / "README.md").write_text("# app\n")
    git_ok(project, "add", "README.md")
    honest = git(project, "commit", "-m", "Add a readme", env=env)
    assert honest.returncode == 0, honest.output
    claimed = run([str(BIN_DIR / "shiftkit"), "claim", "F000"], project)  # (a person's claim)
    assert claimed.returncode == 0, claimed.output
    assert not (project / ".git" / "shiftkit" / "interpreter").exists()  # (still none)
    flip(project, "F000", log=False)
    git_ok(project, "add", "-A")
    refused = git(project, "commit", "-m", "Mark F000 passing", env=env)
    assert refused.returncode != 0, refused.output
    assert "shiftkit rules (staged tree)" in refused.output and "Failed" in refused.output
    assert "rule 5 [F000]" in refused.output
    add_log_entry(project, "F000")
    git_ok(project, "add", "-A")
    verified = git(project, "commit", "-m", "F000 passes: the environment builds", env=env)
    assert verified.returncode == 0, verified.output
    assert '"passes": true' in git_ok(project, "show", "HEAD:features.json")


def test_a_clone_that_records_its_judge_is_judged_by_it(project: Path, tmp_path: Path) -> None:
    """Where `shiftkit setup` recorded the judge (`.git/shiftkit/interpreter`), the hook from
    pre-commit's environment hands each commit to it through `.shiftkit/hook`, as the local
    route runs it: same shiftkit, same rules. Here a stand-in judge shows it is called; with
    the real one recorded, a flip without its log entry is refused."""
    record = project / ".git" / "shiftkit" / "interpreter"
    real = record.read_text()
    marker = tmp_path / "called"
    stand_in = tmp_path / "judge"
    stand_in.write_text(f'#!/bin/sh\necho "$*" >> {marker}\nexec {real.strip()} "$@"\n')
    stand_in.chmod(0o755)
    record.write_text(f"{stand_in}\n")
    env = {"PATH": without_shiftkit()}
    (project / "README.md").write_text("# app\n")
    git_ok(project, "add", "README.md")
    honest = git(project, "commit", "-m", "Add a readme", env=env)
    assert honest.returncode == 0, honest.output
    called = marker.read_text().splitlines()
    assert [line.split()[-2:] for line in called] == [
        ["hook", "pre-commit"],
        ["commit-msg", ".git/COMMIT_EDITMSG"],
    ], called
    record.write_text(real)
    flip(project, "F000", log=False)
    git_ok(project, "add", "-A")
    refused = git(project, "commit", "-m", "Mark F000 passing", env=env)
    assert refused.returncode != 0 and "rule 5 [F000]" in refused.output, refused.output


def test_a_person_who_chooses_local_gets_local(served: tuple[str, str], tmp_path: Path) -> None:
    """The choice stays a person's: `hook_source=local` renders `repo: local` from a URL too
    (rendered only: the local route's commits are tested everywhere else)."""
    import copier

    copier.run_copy(
        served[0],
        tmp_path / "app",
        data={"hook_source": "local", "project_name": "app"},
        defaults=True,
        skip_tasks=True,
        quiet=True,
    )
    config = yaml.safe_load((tmp_path / "app" / ".pre-commit-config.yaml").read_text())
    assert [entry["repo"] for entry in config["repos"]] == ["local"]


def test_the_hook_knows_pre_commits_environment_from_a_persons_venv(tmp_path: Path) -> None:
    """Only an environment in pre-commit's store, first on PATH and named by VIRTUAL_ENV, is
    given back: a person's activated venv (the local route's PATH) is left as it is."""
    from shiftkit.edge import framework_env

    store = tmp_path / "store"
    hook_env = store / "repoabc" / "py_env-python3"
    (hook_env / "bin").mkdir(parents=True)
    person = tmp_path / "venv"
    (person / "bin").mkdir(parents=True)
    rest = "/usr/bin:/bin"
    theirs = {
        "PRE_COMMIT": "1",
        "PRE_COMMIT_HOME": str(store),
        "VIRTUAL_ENV": str(hook_env),
        "PATH": f"{hook_env / 'bin'}:{person / 'bin'}:{rest}",
    }
    given = dict(theirs)
    assert framework_env.give_back_caller_environment(given, str(hook_env))
    assert given["PATH"] == f"{person / 'bin'}:{rest}" and "VIRTUAL_ENV" not in given
    mine = {**theirs, "VIRTUAL_ENV": str(person), "PATH": f"{person / 'bin'}:{rest}"}
    kept = dict(mine)
    assert not framework_env.give_back_caller_environment(kept, str(person))
    assert kept == mine
    assert not framework_env.give_back_caller_environment(
        {**theirs, "PRE_COMMIT": ""}, str(hook_env)
    )


def test_the_served_clone_is_what_pre_commit_installed(project: Path, module_home: Path) -> None:
    """The environment pre-commit built holds the shiftkit of the served commit (not this
    checkout's editable install): its `shiftkit` runs from pre-commit's home."""
    found = sorted(module_home.glob("repo*/py_env-*/bin/shiftkit"))
    assert len(found) == 1, found
    version = subprocess.run([str(found[0]), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "shiftkit" in version.stdout
