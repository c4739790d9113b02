"""Installable as documented (decisions 0068, 0117): the CI workflow's install step, as
`shiftkit new` writes it, installs the shiftkit it names (here the source the project was
made from, a git URL at the commit rendered) in a fresh virtual environment; a shiftkit pip-installed from a clone
records the commit its bundled template was built from, so `copier update` after a change to
the clone applies that change."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT, git_ok, run, snapshot_repository

from shiftkit.commands.render import template_version

WORKFLOW = ".github/workflows/shiftkit-audit.yml"


def answers(project: Path) -> dict[str, object]:
    loaded = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def install_step(project: Path) -> str:
    workflow = yaml.safe_load((project / WORKFLOW).read_text())
    steps = workflow["jobs"]["audit"]["steps"]
    [step] = [s for s in steps if s.get("name", "").startswith("Install shiftkit")]
    return str(step["run"])


def test_the_workflow_installs_the_shiftkit_it_names(tmp_path: Path) -> None:
    source = snapshot_repository(tmp_path / "shiftkit")
    commit = git_ok(source, "rev-parse", "HEAD").strip()
    project = tmp_path / "todo"
    # (a path no runner reaches: the default pins the release on the package index, which
    # this machine's index lacks; the person names the source instead — decision 0117)
    requirement = f"git+{source.as_uri()}@{commit}"
    made = run(
        ["shiftkit", "new", str(project), "--defaults", "--template", str(source), "--trust",
         "--data", f"ci_install={requirement}"],
        tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.output
    script = install_step(project)
    assert f'"{requirement}"' in script
    runner = tmp_path / "runner"
    runner.mkdir()
    github_env = runner / "env"
    # the step as written, in a fresh venv made by the interpreter the tests run on
    ran = run(
        ["bash", "-e", "-c", script],
        project,
        env={
            "RUNNER_TEMP": str(runner),
            "GITHUB_ENV": str(github_env),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
        timeout=900,
    )
    try:
        assert ran.returncode == 0, ran.output
        [line] = github_env.read_text().splitlines()
        judge = line.removeprefix("SHIFTKIT=")
        assert judge == str(runner / "shiftkit" / "bin" / "shiftkit")
        audited = run([judge, "audit"], project)
        assert audited.returncode == 0, audited.output
        version = run([judge, "--version"], project)
        assert version.stdout.split()[-1] == template_version(source, "HEAD")
    finally:
        run(["chmod", "-R", "u+w", str(runner)], tmp_path)


def test_a_clone_installed_by_pip_records_the_commit_it_bundled(tmp_path: Path) -> None:
    """The clone moves on after the install: `new` records the commit the installed copy was
    built from (not the clone's HEAD now), and `copier update` then applies the change."""
    clone = snapshot_repository(tmp_path / "clone")
    built = git_ok(clone, "rev-parse", "HEAD").strip()
    env = pip_target(clone, tmp_path / "site")
    agents = clone / "template" / "AGENTS.md.jinja"
    agents.write_text(
        agents.read_text().replace(
            "## The shift routine", "## The shift routine\n\n(Template v2: read this first.)"
        )
    )
    git_ok(clone, "commit", "-q", "-am", "Template v2")
    target = tmp_path / "todo"
    made = run(["shiftkit", "new", str(target), "--defaults"], tmp_path, env=env)
    assert made.returncode == 0, made.output
    recorded = answers(target)
    assert recorded["_src_path"] == str(clone) and recorded["_commit"] == built
    assert f"template: {clone} at {built} (shiftkit " in made.stderr, made.output
    assert "(Template v2" not in (target / "AGENTS.md").read_text()
    update = run(
        [sys.executable, "-m", "copier", "update", "--trust", "--defaults", "--vcs-ref", "HEAD"],
        target,
        env=env,
    )
    assert update.returncode == 0, update.output
    assert "Keeping template version" not in update.output
    assert "(Template v2: read this first.)" in (target / "AGENTS.md").read_text()
    assert answers(target)["_commit"] != built


def pip_target(clone: Path, site: Path) -> dict[str, str]:
    installed = run(
        [
            *(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"),
            *("--target", str(site), str(clone)),
        ],
        clone.parent,
        timeout=300,
    )
    assert installed.returncode == 0, installed.output
    return {"PYTHONPATH": str(site), "PATH": f"{site / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def test_a_dirty_or_moved_clone_is_named_as_such(tmp_path: Path) -> None:
    clone = snapshot_repository(tmp_path / "clone")
    (clone / "template" / "AGENTS.md.jinja").write_text("edited, not committed\n")
    env = pip_target(clone, tmp_path / "dirty")
    made = run(["shiftkit", "new", str(tmp_path / "a"), "--defaults"], tmp_path, env=env)
    assert made.returncode == 0, made.output
    assert "with uncommitted template changes: `copier update` takes" in made.stderr
    git_ok(clone, "checkout", "-q", "--", ".")
    env = pip_target(clone, tmp_path / "clean")
    made = run(["shiftkit", "new", str(tmp_path / "b"), "--defaults"], tmp_path, env=env)
    assert made.returncode == 0, made.output
    assert "uncommitted" not in made.stderr and "no longer holds" not in made.stderr
    clone.rename(tmp_path / "moved")
    made = run(["shiftkit", "new", str(tmp_path / "c"), "--defaults"], tmp_path, env=env)
    assert made.returncode == 0, made.output
    assert f"; {clone} no longer holds " in made.stderr, made.output


def test_no_message_names_a_package_or_url_that_does_not_exist() -> None:
    """No registry has a `shiftkit` package yet, and github.com/shiftkit is no repository:
    nothing names a release as a fixed fact (the workflow's `shiftkit=={{ shiftkit_version }}`
    pin, for a template no runner reaches, is said as such when `new` writes it: 0117)."""
    names = ["README.md", "copier.yml", "hooks", "shiftkit", "template"]
    found = run(
        [
            "git",
            "grep",
            "-n",
            "-I",
            "-E",
            r"pipx? install shiftkit\b|github\.com/shiftkit|shiftkit==[0-9]",
            "--",
            *names,
        ],
        REPO_ROOT,
    )
    assert found.stdout == "", found.stdout


def test_a_newcomers_transcript(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh venv and the README only: `pip install .` in a clone, `shiftkit demo`, `shiftkit
    new`, adoption of a repository whose hooks format Markdown (tomli's), `copier update` after
    a change to the clone, `shiftkit report`: every step exits 0, no git hint, no colour codes.
    (The workflow's install step: test_the_workflow_installs_shiftkit_from_the_source_…)"""
    from test_guests import tomli_markdown_hooks

    clone = snapshot_repository(tmp_path / "shiftkit")
    venv = tmp_path / "venv"
    made = run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    assert made.returncode == 0, made.output
    env = {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    # as a newcomer's machine runs Python: writing bytecode (some sandboxes turn it off)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    said: list[str] = []

    def step(args: list[str], cwd: Path, timeout: float = 600) -> str:
        done = run(args, cwd, env=env, timeout=timeout)
        said.append(done.output)
        assert done.returncode == 0, done.output
        return done.output

    step(["pip", "install", "-q", "."], clone, timeout=900)  # the README's first command
    step(["shiftkit", "demo", str(tmp_path / "demo" / "todo-app")], tmp_path)
    project = tmp_path / "my-project"
    step(["shiftkit", "new", str(project), "--defaults", "--data", "goal=A todo app"], tmp_path)
    theirs = tmp_path / "tomli"
    theirs.mkdir()
    git_ok(theirs, "init", "-q")
    (theirs / "README.md").write_text("# Tomli\n\nA lil' TOML parser.\n")
    (theirs / ".pre-commit-config.yaml").write_text(tomli_markdown_hooks())
    git_ok(theirs, "add", "-A")
    git_ok(theirs, "commit", "-q", "-m", "Add the readme and the hooks")
    step(["pre-commit", "install"], theirs)
    step(["shiftkit", "new", str(theirs), "--defaults"], tmp_path)  # adopted, not refused
    agents = clone / "template" / "AGENTS.md.jinja"
    agents.write_text(
        agents.read_text().replace(
            "## The shift routine", "## The shift routine\n\nRead this first."
        )
    )
    git_ok(clone, "commit", "-q", "-am", "Template: a new line")
    step(["copier", "update", "--trust", "--defaults", "--vcs-ref", "HEAD"], project)
    assert "Read this first." in (project / "AGENTS.md").read_text()
    step(["shiftkit", "report"], project)
    transcript = "".join(said)
    assert not [line for line in transcript.splitlines() if line.startswith("hint:")]
