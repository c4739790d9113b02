"""copier, properly: `shiftkit new` records a source and version `copier update` can use, an
update never touches the protocol's state and its commit passes shiftkit's own hooks, and
`copier recopy` works. Real copier, git, pre-commit; the template is a tagged git repository
made from this checkout."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from conftest import (
    copy_of,
    git,
    git_ok,
    isolated_environment,
    ok,
    run,
    shiftkit,
    snapshot_repository,
    write,
)

from shiftkit import __version__

PROTOCOL_STATE = ["features.json", "claude-progress.txt", "docs/decisions/README.md"]


def change_template(source: Path, tag: str) -> None:
    """A newer template: new AGENTS.md text, and changes to the protocol's state files that a
    project must never receive (a new log preamble line, F000 reworded, a decision index)."""
    agents = source / "template" / "AGENTS.md.jinja"
    agents.write_text(
        agents.read_text().replace(
            "## The shift routine", "## The shift routine\n\n(Template v2: read this first.)"
        )
    )
    log = source / "template" / "{{ progress_file }}.jinja"
    log.write_text(log.read_text().replace("Goal: {{ goal }}", "Goal: {{ goal }}\nMotto: v2"))
    listing = source / "template" / "features.json"
    listing.write_text(listing.read_text().replace("The environment builds", "The env builds"))
    # (the records' folder is the `decisions` answer: decision 0107)
    index = (
        source / "template" / "{% if decisions != 'auto' %}{{ decisions }}{% endif %}" / "README.md"
    )
    index.write_text(index.read_text() + "- (template v2 line)\n")
    write(source / "template" / "docs" / "RUNBOOK.md", "# Runbook (template v2)\n")
    git_ok(source, "add", "-A")
    git_ok(source, "commit", "-q", "-m", f"Template {tag}")
    git_ok(source, "tag", tag)


@pytest.fixture(scope="module")
def template_repo_v1_v2(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path) -> Path:
    with isolated_environment(isolated_home):
        source = snapshot_repository(tmp_path_factory.mktemp("template") / "shiftkit")
        git_ok(source, "tag", "v1")
        change_template(source, "v2")
    return source


@pytest.fixture(scope="module")
def pristine_v1_project(
    template_repo_v1_v2: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Path:
    """`shiftkit new --template REPO --vcs-ref v1`, then a person's changes and a feature
    finished through the shift commands."""
    target = tmp_path_factory.mktemp("v1") / "todo"
    with isolated_environment(isolated_home):
        made = shiftkit(
            target.parent,
            "new",
            str(target),
            "--defaults",
            "--trust",
            "--template",
            str(template_repo_v1_v2),
            "--vcs-ref",
            "v1",
        )
        assert made.returncode == 0, made.output
        used = f"template: {template_repo_v1_v2} at v1 (shiftkit {__version__})"
        assert used in made.stderr  # the one version line
        assert "Copying from template version" not in made.stderr
        agents = target / "AGENTS.md"
        agents.write_text(agents.read_text() + "\n## Project notes\n\nUse tabs.\n")
        write(target / "app.py", "print('hello')\n")
        ok(
            target,
            "add",
            "--description",
            "It says hello",
            "--step",
            "run it",
            "--verify",
            "python3 app.py",
        )
        git_ok(target, "add", "-A")
        git_ok(target, "commit", "-q", "-m", "Add the app, project notes and the first feature")
        ok(target, "claim", "F000")
        ok(target, "finish", "-m", "the environment builds")
    return target


@pytest.fixture
def v1_project(pristine_v1_project: Path, tmp_path: Path) -> Path:
    return copy_of(pristine_v1_project, tmp_path)


def answers(project: Path) -> dict[str, object]:
    loaded = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def copier(project: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = run([sys.executable, "-m", "copier", *args], project, env=env)
    assert result.returncode == 0, result.output
    return result.output


def test_new_records_the_template_and_its_tag(v1_project: Path, template_repo_v1_v2: Path) -> None:
    recorded = answers(v1_project)
    assert recorded["_src_path"] == str(template_repo_v1_v2)
    assert recorded["_commit"] == "v1"
    assert "template_origin" not in recorded


def test_copier_update_keeps_the_protocol_state_and_passes_the_hooks(v1_project: Path) -> None:
    before = {name: (v1_project / name).read_text() for name in PROTOCOL_STATE}
    agents = v1_project / "AGENTS.md"
    copier(v1_project, "update", "--trust", "--defaults", "--vcs-ref", "v2")
    assert answers(v1_project)["_commit"] == "v2"
    text = agents.read_text()
    assert "(Template v2: read this first.)" in text and "Use tabs." in text
    assert (v1_project / "docs" / "RUNBOOK.md").is_file()
    assert (v1_project / "app.py").read_text() == "print('hello')\n"
    for name, content in before.items():
        assert (v1_project / name).read_text() == content, name
    listing = json.loads((v1_project / "features.json").read_text())["features"]
    assert [(f["id"], f["passes"]) for f in listing] == [("F000", True), ("F001", False)]
    assert list(v1_project.rglob("*.rej")) == []
    git_ok(v1_project, "add", "-A")
    committed = git(v1_project, "commit", "-m", "Update the scaffold to template v2")
    assert committed.returncode == 0, committed.output
    audited = shiftkit(v1_project, "audit")
    assert audited.returncode == 0, audited.output
    # The one person action in this history is the fixture's appending of F001 (decision
    # record 0050): `--strict` refuses that and nothing the update brought.
    strict = shiftkit(v1_project, "audit", "--strict")
    assert strict.returncode == 1 and "features added" in strict.output, strict.output
    assert "Update the scaffold" not in strict.output.split("person actions", 1)[-1]


def test_copier_recopy_works_and_commits_nothing(v1_project: Path) -> None:
    before = {name: (v1_project / name).read_text() for name in PROTOCOL_STATE}
    head = git_ok(v1_project, "rev-parse", "HEAD")
    output = copier(v1_project, "recopy", "--trust", "--defaults", "--overwrite", "--vcs-ref", "v2")
    assert "nothing committed" in output
    assert git_ok(v1_project, "rev-parse", "HEAD") == head
    for name, content in before.items():
        assert (v1_project / name).read_text() == content, name
    assert "(Template v2: read this first.)" in (v1_project / "AGENTS.md").read_text()
    assert answers(v1_project)["_commit"] == "v2"
    # And once more, with nothing left to change.
    git_ok(v1_project, "add", "-A")
    assert git(v1_project, "commit", "-q", "-m", "Recopy the scaffold from v2").returncode == 0
    copier(v1_project, "recopy", "--trust", "--defaults", "--overwrite", "--vcs-ref", "v2")
    assert git_ok(v1_project, "status", "--porcelain") == ""


def test_new_refuses_an_untrusted_template(template_repo_v1_v2: Path, tmp_path: Path) -> None:
    result = shiftkit(
        tmp_path, "new", str(tmp_path / "x"), "--defaults", "--template", str(template_repo_v1_v2)
    )
    assert result.returncode == 2
    assert "--trust" in result.stderr and "Traceback" not in result.output


def test_new_again_with_skip_answered_keeps_the_answers(v1_project: Path) -> None:
    """`shiftkit new` over an existing project: --skip-answered reuses its recorded answers,
    --overwrite replaces the template's files, and the protocol's state stays."""
    before = {name: (v1_project / name).read_text() for name in PROTOCOL_STATE}
    head = git_ok(v1_project, "rev-parse", "HEAD")
    result = shiftkit(
        v1_project.parent, "new", str(v1_project), "--skip-answered", "--overwrite", "--defaults"
    )
    assert result.returncode == 0, result.output
    assert git_ok(v1_project, "rev-parse", "HEAD") == head
    assert answers(v1_project)["project_name"] == "todo"
    for name, content in before.items():
        assert (v1_project / name).read_text() == content, name


def test_a_project_from_the_installed_wheel_can_be_updated(tmp_path: Path) -> None:
    """The bundled template is no git repository: the wheel carries the checkout and commit
    it was built from (decision 0068); the project records them, and `copier update` takes
    the template's later commits from there."""
    published = snapshot_repository(tmp_path / "published")
    built = git_ok(published, "rev-parse", "HEAD").strip()
    site = install_wheel(tmp_path, published)
    env = {"PYTHONPATH": str(site), "PATH": f"{site / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    target = tmp_path / "from-wheel"
    made = run(
        [str(site / "bin" / "shiftkit"), "new", str(target), "--defaults"], tmp_path, env=env
    )
    assert made.returncode == 0, made.output
    recorded = answers(target)
    assert recorded["_src_path"] == str(published)
    assert recorded["_commit"] == built
    change_template(published, f"v{__version__}.post1")
    before = (target / "features.json").read_text()
    copier(target, "update", "--trust", "--defaults", env=env)
    assert answers(target)["_commit"] == f"v{__version__}.post1"
    assert "(Template v2: read this first.)" in (target / "AGENTS.md").read_text()
    assert (target / "features.json").read_text() == before
    git_ok(target, "add", "-A")
    committed = run(["git", "commit", "-q", "-m", "Update the scaffold"], target, env=env)
    assert committed.returncode == 0, committed.output


def install_wheel(tmp_path: Path, source: Path | None = None) -> Path:
    wheel_dir = tmp_path / "wheel"
    built = run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"),
            *("-w", str(wheel_dir), str(source or Path(__file__).resolve().parent.parent)),
        ],
        tmp_path,
    )
    assert built.returncode == 0, built.output
    [wheel] = wheel_dir.glob("shiftkit-*.whl")
    site = tmp_path / "site"
    installed = run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        tmp_path,
    )
    assert installed.returncode == 0, installed.output
    return site


def test_the_source_new_chooses() -> None:
    from shiftkit.commands.render import choose_source
    from shiftkit.core.resources import template_root

    checkout = str(template_root())  # the tests run from a git checkout
    assert choose_source(None, None, False, "9.9") == (checkout, "HEAD", True, {})
    assert choose_source(None, "v1", False, "9.9") == (checkout, "v1", True, {})
    assert choose_source("gh:someone/else", None, False, "9.9") == (
        "gh:someone/else",
        None,
        False,
        {},
    )
    assert choose_source("/srv/t", "v2", True, "9.9") == ("/srv/t", "v2", True, {})


def test_the_origin_a_pip_install_records() -> None:
    """Installed from a git URL: that URL at the commit; else the checkout the build ran in,
    at the commit it built; nothing when the build recorded none."""
    from shiftkit.commands.render import origin_of

    commit = "0123456789abcdef0123456789abcdef01234567"
    from_git = {
        "url": "https://example.org/me/shiftkit.git",
        "vcs_info": {"vcs": "git", "commit_id": commit},
    }
    built = {"commit": "f" * 40, "dirty": False, "source": "/src/shiftkit"}
    assert origin_of(from_git, built) == ("https://example.org/me/shiftkit.git", commit)
    clone = {"url": "file:///src/shiftkit", "dir_info": {}}
    assert origin_of(clone, built) == ("/src/shiftkit", "f" * 40)
    wheel = {"url": "file:///tmp/shiftkit-0.1.0-py3-none-any.whl", "archive_info": {}}
    assert origin_of(wheel, built) == ("/src/shiftkit", "f" * 40)
    assert origin_of(wheel, {}) is None
    assert origin_of({}, {}) is None
