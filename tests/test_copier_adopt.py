"""Plain `copier copy` adopts an existing repository as `shiftkit new` does, refuses a dirty
tree leaving it as it was, and `copier recopy --overwrite` keeps the user's words (decision
0037). Real copier, git and pre-commit; the template is a tagged git repository made from
this checkout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from conftest import (
    REPO_ROOT,
    git,
    git_ok,
    isolated_environment,
    run,
    shiftkit,
    snapshot_repository,
    write,
)
from servers import Daemon
from test_adopt import hook_log as hook_log  # (the autouse fixture, shared with test_adopt)

from shiftkit import __version__

USER_AGENTS = "# Our agents\n\nUse tabs, never spaces.\n"
USER_PRE_COMMIT = """\
# Our own hooks: keep them.
minimum_pre_commit_version: '3.0.0'
repos:
  - repo: local
    hooks:
      - id: log-commits
        name: log each commit
        entry: sh -c 'echo ran >> "$HOOK_LOG"'
        language: system
        pass_filenames: false
        always_run: true
"""
USER_SETTINGS = '{"permissions": {"allow": ["Bash(make test)"]}}\n'


@pytest.fixture(scope="module")
def tagged_template(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path) -> Path:
    with isolated_environment(isolated_home):
        source = snapshot_repository(tmp_path_factory.mktemp("template") / "shiftkit")
        git_ok(source, "tag", "v0.9.0")
    return source


def users_repository(root: Path) -> Path:
    root.mkdir()
    git_ok(root, "init", "-q")
    write(root / "app.py", "x = 1\n")
    write(root / "AGENTS.md", USER_AGENTS)
    write(root / ".pre-commit-config.yaml", USER_PRE_COMMIT)
    write(root / ".claude" / "settings.json", USER_SETTINGS)
    git_ok(root, "add", "-A")
    git_ok(root, "commit", "-q", "-m", "The app, with our own agent instructions and hooks")
    installed = run([sys.executable, "-m", "pre_commit", "install"], root)
    assert installed.returncode == 0, installed.output
    return root


def copier(cwd: Path, *args: str) -> tuple[int, str]:
    result = run([sys.executable, "-m", "copier", *args], cwd)
    return result.returncode, result.output


def test_copier_copy_adopts_and_keeps_the_users_files(
    tagged_template: Path, tmp_path: Path, hook_log: Path
) -> None:
    root = users_repository(tmp_path / "app")
    before = git_ok(root, "rev-parse", "HEAD").strip()
    code, output = copier(tmp_path, "copy", "--trust", "--defaults", str(tagged_template), "app")
    assert code == 0, output
    assert git_ok(root, "rev-parse", "HEAD~1").strip() == before  # one adoption commit
    assert git_ok(root, "status", "--porcelain") == ""
    agents = (root / "AGENTS.md").read_text()
    assert agents.startswith(USER_AGENTS) and "<!-- shiftkit:begin -->" in agents
    config = (root / ".pre-commit-config.yaml").read_text()
    # comment and hook as they were; the minimum raised to what shiftkit's hooks need
    assert config.startswith(USER_PRE_COMMIT.replace("'3.0.0'", '"4.4.0"'))
    assert "shiftkit-commit-msg" in config and "default_install_hook_types" not in config
    settings = (root / ".claude" / "settings.json").read_text()
    assert settings.count("\n") == 1  # compact stays compact
    assert json.loads(settings)["permissions"] == {"allow": ["Bash(make test)"]}
    assert ".shiftkit/hook guard" in settings
    answers = (root / ".copier-answers.yml").read_text()
    assert f"_src_path: {tagged_template}" in answers and "_commit: v0.9.0" in answers

    hook_log.unlink(missing_ok=True)
    write(root / "notes.txt", "fine\n")
    git_ok(root, "add", "notes.txt")
    assert git(root, "commit", "-m", "wip").returncode != 0  # shiftkit's rules run
    done = git(root, "commit", "-m", "Add the release notes")
    assert done.returncode == 0, done.output
    assert "ran" in hook_log.read_text()  # and the user's hook still does

    # recopy, even with --overwrite, keeps the user's lines outside shiftkit's markers.
    agents_path = root / "AGENTS.md"
    agents_path.write_text(agents_path.read_text() + "\nAlso: run `make lint`.\n")
    git_ok(root, "commit", "-q", "-am", "Add a lint note to the agent instructions")
    code, output = copier(root, "recopy", "--trust", "--defaults", "--overwrite")
    assert code == 0, output
    recopied = agents_path.read_text()
    assert recopied.startswith(USER_AGENTS) and recopied.endswith("run `make lint`.\n")
    assert recopied.count("<!-- shiftkit:begin -->") == 1
    assert (root / ".pre-commit-config.yaml").read_text() == config
    assert (root / ".claude" / "settings.json").read_text() == settings


def test_copier_copy_into_a_dirty_tree_refuses_and_leaves_it_as_it_was(
    tagged_template: Path, tmp_path: Path
) -> None:
    root = users_repository(tmp_path / "app")
    write(root / "app.py", "x = 2\n")
    write(root / "scratch.txt", "untracked\n")
    status = git_ok(root, "status", "--porcelain", "--untracked-files=all", "--ignored")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".git" not in p.parts)
    code, output = copier(tmp_path, "copy", "--trust", "--defaults", str(tagged_template), "app")
    assert code != 0
    assert "uncommitted changes" in output and "Traceback" not in output
    assert git_ok(root, "status", "--porcelain", "--untracked-files=all", "--ignored") == status
    after = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".git" not in p.parts)
    assert after == files
    assert (root / "AGENTS.md").read_text() == USER_AGENTS


def test_copier_copy_into_a_plain_folder_merges_into_the_users_files(
    tagged_template: Path, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    write(root / "AGENTS.md", USER_AGENTS)
    write(root / ".claude" / "settings.json", USER_SETTINGS)
    code, output = copier(tmp_path, "copy", "--trust", "--defaults", str(tagged_template), "notes")
    assert code == 0, output
    assert git_ok(root, "status", "--porcelain") == ""
    agents = git_ok(root, "show", "HEAD:AGENTS.md")
    assert agents.startswith(USER_AGENTS) and "<!-- shiftkit:begin -->" in agents
    settings = git_ok(root, "show", "HEAD:.claude/settings.json")
    assert "Bash(make test)" in settings and ".shiftkit/hook guard" in settings


def test_a_hook_refusing_copier_copys_adoption_leaves_the_repository_as_it_was(
    tagged_template: Path, tmp_path: Path
) -> None:
    root = tmp_path / "app"
    root.mkdir()
    git_ok(root, "init", "-q")
    write(root / "app.py", "x = 1\n")
    write(
        root / ".pre-commit-config.yaml",
        "repos:\n- repo: local\n  hooks:\n  - id: no-tool-names\n    name: no tool names\n"
        "    entry: shift[k]it\n    language: pygrep\n    exclude: ^\\.pre-commit-config\\.yaml$\n",
    )
    git_ok(root, "add", "-A")
    git_ok(root, "commit", "-q", "-m", "The app and its hooks")
    installed = run([sys.executable, "-m", "pre_commit", "install"], root)
    assert installed.returncode == 0, installed.output
    files = {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "objects" not in p.parts and "logs" not in p.parts
    }
    code, output = copier(tmp_path, "copy", "--trust", "--defaults", str(tagged_template), "app")
    assert code != 0 and "no tool names" in output, output
    after = {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "objects" not in p.parts and "logs" not in p.parts
    }
    assert sorted(after) == sorted(files)
    assert [name for name in files if files[name] != after[name]] in ([], [".git/index"])
    assert git_ok(root, "status", "--porcelain", "--untracked-files=all") == ""


def template_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("template: ")]


def test_new_from_a_checkout_without_tags_tells_one_version(tmp_path: Path) -> None:
    """`shiftkit new` from a local checkout without tags (this one, as the tests run): one
    line names the recorded source, its commit and shiftkit's version; copier's guess from
    tags (`None`, `0.0.0.post...`) is not shown; the workflow pins that same version."""
    made = shiftkit(tmp_path, "new", "todo", "--defaults")
    assert made.returncode == 0, made.output
    answers = yaml.safe_load((tmp_path / "todo" / ".copier-answers.yml").read_text())
    assert answers["_src_path"] == str(REPO_ROOT)
    expected = f"template: {REPO_ROOT} at {answers['_commit']} (shiftkit {__version__})"
    assert template_lines(made.output) == [expected], made.output
    assert "Copying from template version" not in made.output
    assert "None" not in made.output and "0.0.0" not in made.output
    assert made.output.count("is ready in") == 1
    workflow = (tmp_path / "todo" / ".github" / "workflows" / "shiftkit-audit.yml").read_text()
    # (a path no runner reaches: the release of the version named, from the index: 0117)
    assert f'install --quiet "shiftkit=={__version__}"' in workflow
    assert shiftkit(tmp_path, "--version").stdout.split()[-1] == __version__


def test_copy_recopy_and_update_each_close_once_with_their_own_words(
    tagged_template: Path, tmp_path: Path
) -> None:
    template = tmp_path / "template"
    git_ok(tmp_path, "clone", "-q", str(tagged_template), str(template))
    code, output = copier(tmp_path, "copy", "--trust", "--defaults", str(template), "todo")
    assert code == 0, output
    root = tmp_path / "todo"
    assert template_lines(output) == [f"template: {template} at v0.9.0 (shiftkit {__version__})"]
    assert output.count("is ready in") == 1 and output.count("Next:") == 1, output

    code, output = copier(root, "recopy", "--trust", "--defaults", "--overwrite")
    assert code == 0, output
    assert "is ready in" not in output and "Next:" not in output, output
    assert output.count("is a shiftkit project already") == 1, output
    git_ok(root, "checkout", "-q", "--", ".")

    agents = template / "template" / "AGENTS.md.jinja"
    text = agents.read_text().replace(
        "## The shift routine", "Template v0.9.1 was here.\n\n## The shift routine"
    )
    agents.write_text(text)
    git_ok(template, "commit", "-q", "-am", "Template v0.9.1")
    git_ok(template, "tag", "v0.9.1")
    code, output = copier(root, "update", "--trust", "--defaults")
    assert code == 0, output
    assert "Template v0.9.1 was here." in (root / "AGENTS.md").read_text()
    assert "is ready in" not in output and "is a shiftkit project already" not in output, output
    assert output.count("updated from the template") == 1, output
    assert template_lines(output) == [f"template: {template} at v0.9.1 (shiftkit {__version__})"]


def test_new_adopting_a_repository_tells_the_same_one_version(tmp_path: Path) -> None:
    root = users_repository(tmp_path / "app")
    made = shiftkit(tmp_path, "new", "app", "--defaults")
    assert made.returncode == 0, made.output
    answers = yaml.safe_load((root / ".copier-answers.yml").read_text())
    expected = f"template: {REPO_ROOT} at {answers['_commit']} (shiftkit {__version__})"
    assert template_lines(made.output) == [expected], made.output
    assert made.stdout.count("Next:") == 1 and made.stdout.rstrip().endswith("shiftkit start")


def test_adopting_from_a_url_tells_the_version_too(tagged_template: Path, tmp_path: Path) -> None:
    """A URL source is a clone copier removes before the line is said: the version comes from
    the render itself (the template's hidden `shiftkit_version`), not a guess or nothing."""
    root = users_repository(tmp_path / "app")
    served = tmp_path / "served"
    git_ok(tmp_path, "clone", "-q", "--bare", str(tagged_template), str(served / "t.git"))
    daemon = Daemon(served)
    daemon.start()
    try:
        url = daemon.url("t.git")
        made = shiftkit(
            tmp_path,
            "new",
            "app",
            "--defaults",
            "--template",
            url,
            "--trust",
            "--data",
            "hook_source=local",  # (the hook environment is not what is tested)
        )
    finally:
        daemon.stop()
    assert made.returncode == 0, made.output
    assert template_lines(made.output) == [f"template: {url} at v0.9.0 (shiftkit {__version__})"]
    assert (root / ".shiftkit.toml").is_file()


def test_a_relative_template_path_is_recorded_absolute(
    tagged_template: Path, tmp_path: Path
) -> None:
    """`copier copy template app` records the path as given, which `copier update` later reads
    from the project's folder and cannot find: the copy records (and commits) the absolute
    path its clone came from instead, and says nothing (an absolute path: nothing either)."""
    git_ok(tmp_path, "clone", "-q", str(tagged_template), str(tmp_path / "template"))
    code, output = copier(tmp_path, "copy", "--trust", "--defaults", "template", "app")
    assert code == 0, output
    assert "a path relative to" not in output
    committed = yaml.safe_load(git_ok(tmp_path / "app", "show", "HEAD:.copier-answers.yml"))
    assert committed["_src_path"] == str(tmp_path / "template")
    assert git_ok(tmp_path / "app", "status", "--porcelain") == ""
    code, output = copier(
        tmp_path, "copy", "--trust", "--defaults", str(tmp_path / "template"), "b"
    )
    assert code == 0, output
    assert "a path relative to" not in output
