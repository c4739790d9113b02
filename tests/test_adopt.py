"""Adopting shiftkit in an existing repository, with the real copier, pre-commit and git:
the user's files are merged into, never replaced; a refused adoption changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN_DIR, git, git_ok, run, shiftkit, write
from ruamel.yaml import YAML

USER_AGENTS = "# Our agents\n\nRun `make test` before you push.\n"
USER_PRE_COMMIT = """\
# See https://pre-commit.com for more information
# Our own hooks: keep them.
repos:
  - repo: local   # no extra downloads
    hooks:
      # Refuse the marker anywhere.
      - id: no-forbidden
        name: no forbidden marker
        entry: FORBID[D]EN
        language: pygrep
      - id: log-commits
        name: log each commit
        entry: sh -c 'echo ran >> "$HOOK_LOG"'
        language: system
        pass_filenames: false
        always_run: true
"""
USER_SETTINGS = {
    "permissions": {"allow": ["Bash(make test)"], "deny": ["Read(./.env)"]},
    "env": {"APP_ENV": "dev"},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}],
        "PostToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command", "command": "make fmt"}]}
        ],
    },
}
USER_ATTRIBUTES = "*.png binary\n"


def users_repository(root: Path) -> Path:
    """A repository with its own AGENTS.md, pre-commit config (and hooks installed),
    Claude Code settings and .gitattributes, all committed."""
    root.mkdir()
    git_ok(root, "init", "-q")
    write(root / "app.py", "x = 1\n")
    write(root / "AGENTS.md", USER_AGENTS)
    write(root / ".pre-commit-config.yaml", USER_PRE_COMMIT)
    write(root / ".claude" / "settings.json", json.dumps(USER_SETTINGS, indent=2) + "\n")
    write(root / ".gitattributes", USER_ATTRIBUTES)
    write(root / ".gitignore", "*.log\n")
    write(root / "debug.log", "ignored, and must survive\n")
    git_ok(root, "add", "-A")
    git_ok(root, "commit", "-q", "-m", "The app, with our own agent instructions and hooks")
    installed = run([sys.executable, "-m", "pre_commit", "install"], root)
    assert installed.returncode == 0, installed.output
    return root


@pytest.fixture(autouse=True)
def hook_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "hook.log"
    monkeypatch.setenv("HOOK_LOG", str(log))
    return log


def snapshot(root: Path) -> dict[str, Any]:
    """Every file under ``root`` (git's own included, its object store aside), with its
    mode, every folder, and what git says about the index, the tree and HEAD."""
    files: dict[str, Any] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if name == ".git/objects" or name.startswith(".git/objects/"):
            continue
        if path.is_symlink():
            files[name] = ("link", os.readlink(path))
        elif path.is_dir():
            files[name] = ("dir",)
        else:
            files[name] = (path.read_bytes(), path.stat().st_mode)
    status = git(root, "status", "--porcelain", "--ignored", "--untracked-files=all")
    return {
        "files": files,
        "status": status.stdout,
        "index": git(root, "ls-files", "--stage").stdout,
        "head": git(root, "rev-parse", "HEAD").stdout,
    }


def differences(after: dict[str, Any], before: dict[str, Any]) -> list[str]:
    files_after, files_before = after["files"], before["files"]
    changed = [
        name
        for name in sorted(set(files_after) | set(files_before))
        if files_after.get(name) != files_before.get(name)
    ]
    return changed + [key for key in before if key != "files" and after[key] != before[key]]


def steady_snapshot(root: Path) -> dict[str, Any]:
    git(root, "status")  # let git refresh its index once, as any git command would
    return snapshot(root)


def one_line_refusal(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("shiftkit:")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def load_yaml(text: str) -> Any:
    return YAML(typ="safe").load(text)


def test_adoption_merges_into_the_users_files_and_their_hooks_still_run(
    tmp_path: Path, hook_log: Path
) -> None:
    root = users_repository(tmp_path / "app")
    before = git_ok(root, "rev-parse", "HEAD").strip()
    result = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert result.returncode == 0, result.output
    assert git_ok(root, "rev-parse", "HEAD~1").strip() == before
    assert git_ok(root, "status", "--porcelain") == ""
    changed = git_ok(root, "show", "--name-only", "--format=", "HEAD").split()
    assert "app.py" not in changed and "features.json" in changed

    # AGENTS.md: the user's text first, untouched; shiftkit's in a marked section after it.
    agents = (root / "AGENTS.md").read_text()
    assert agents.startswith(USER_AGENTS)
    assert agents.count("<!-- shiftkit:begin -->") == 1 and "shiftkit claim" in agents
    assert "<!-- shiftkit:begin -->" in (root / "CLAUDE.md").read_text()

    # The pre-commit config: every line of the user's, comments included, in order.
    config = (root / ".pre-commit-config.yaml").read_text()
    remaining = iter(config.splitlines())
    for line in USER_PRE_COMMIT.splitlines():
        assert any(line == candidate for candidate in remaining), (line, config)
    data = load_yaml(config)
    ids = [hook["id"] for repo in data["repos"] for hook in repo["hooks"]]
    assert ids == ["no-forbidden", "log-commits", "shiftkit-pre-commit", "shiftkit-commit-msg"]
    assert "default_install_hook_types" not in data  # the hook types: `pre-commit install`'s

    # Claude Code settings: permissions, env and the user's hooks kept; shiftkit's added.
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == USER_SETTINGS["permissions"]
    assert settings["env"] == {"APP_ENV": "dev"}
    assert settings["hooks"]["PostToolUse"] == USER_SETTINGS["hooks"]["PostToolUse"]
    stop = json.dumps(settings["hooks"]["Stop"])
    assert "echo done" in stop and ".shiftkit/hook stop-check" in stop
    assert ".shiftkit/hook start --brief" in json.dumps(settings["hooks"]["SessionStart"])
    assert ".shiftkit/hook guard" in json.dumps(settings["hooks"]["PreToolUse"])

    attributes = (root / ".gitattributes").read_text()
    assert attributes.startswith(USER_ATTRIBUTES) and "merge=shiftkit-features" in attributes
    assert (root / "debug.log").read_text() == "ignored, and must survive\n"
    ignored = (root / ".gitignore").read_text()  # the user's lines kept, the runner caches added
    assert ignored.startswith("*.log\n") and "\n__pycache__/\n" in ignored
    assert ".gitignore" in git_ok(root, "show", "--name-only", "--format=", "HEAD").split()

    # The next commits: the user's hooks run beside shiftkit's.
    hook_log.unlink(missing_ok=True)
    write(root / "notes.txt", "FORBIDDEN\n")
    git_ok(root, "add", "notes.txt")
    refused = git(root, "commit", "-m", "Add the release notes")
    assert refused.returncode != 0 and "no forbidden marker" in refused.output
    write(root / "notes.txt", "fine\n")
    git_ok(root, "add", "notes.txt")
    assert git(root, "commit", "-m", "wip").returncode != 0  # shiftkit's rule 9
    done = git(root, "commit", "-m", "Add the release notes")
    assert done.returncode == 0, done.output
    assert "ran" in hook_log.read_text()
    assert shiftkit(root, "validate").returncode == 0


def test_adopting_again_changes_nothing_and_replaces_only_the_marked_section(
    tmp_path: Path,
) -> None:
    root = users_repository(tmp_path / "app")
    assert shiftkit(tmp_path, "new", str(root), "--defaults").returncode == 0
    adopted = steady_snapshot(root)
    again = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert again.returncode == 0, again.output
    assert "nothing to change" in again.stdout
    assert differences(snapshot(root), adopted) == []

    # The user edits inside shiftkit's section and adds text after it: adopting again
    # restores the section and keeps the rest.
    agents = root / "AGENTS.md"
    text = agents.read_text().replace("## The shift routine", "## Routine (edited)")
    agents.write_text(text + "\n## Later notes\n\nKeep these.\n")
    git_ok(root, "commit", "-q", "-am", "Edit the agent instructions")
    redo = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert redo.returncode == 0, redo.output
    merged = agents.read_text()
    assert "## The shift routine" in merged and "Routine (edited)" not in merged
    assert merged.startswith(USER_AGENTS) and merged.endswith("## Later notes\n\nKeep these.\n")
    assert merged.count("<!-- shiftkit:end -->") == 1
    # shiftkit is committed already, so the repair is left for a person to review, like
    # `copier recopy` leaves its re-rendered files (decision 0013).
    assert git_ok(root, "status", "--porcelain") == " M AGENTS.md\n"
    assert "nothing committed" in redo.output


def test_a_dirty_tree_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    root = users_repository(tmp_path / "app")
    write(root / "app.py", "x = 2\n")
    write(root / "scratch.txt", "untracked\n")
    git_ok(root, "add", "app.py")
    write(root / "app.py", "x = 3\n")  # staged and unstaged changes both
    before = steady_snapshot(root)
    result = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert result.returncode == 1
    assert "uncommitted changes" in one_line_refusal(result.stderr)
    assert differences(snapshot(root), before) == []


def test_without_shiftkit_on_path_adoption_is_refused_and_nothing_changes(
    tmp_path: Path,
) -> None:
    root = users_repository(tmp_path / "app")
    before = steady_snapshot(root)
    # Every folder that holds a `shiftkit` goes (the suite's venv, and any other one).
    path = os.pathsep.join(
        entry
        for entry in os.environ["PATH"].split(os.pathsep)
        if entry
        and Path(entry).resolve() != BIN_DIR.resolve()
        and not (Path(entry) / "shiftkit").exists()
    )
    assert subprocess.run(["which", "shiftkit"], env={"PATH": path}).returncode != 0
    result = run(
        [sys.executable, "-m", "shiftkit", "new", str(root), "--defaults"],
        tmp_path,
        env={"PATH": path},
    )
    assert result.returncode == 1
    assert "`shiftkit` is not on PATH" in one_line_refusal(result.stderr)
    assert differences(snapshot(root), before) == []


@pytest.mark.parametrize("kind", ["repository", "plain folder"])
def test_a_hook_refusing_the_adoptions_commit_undoes_everything(tmp_path: Path, kind: str) -> None:
    """The user's own hook refuses shiftkit's files after they were written, the index
    filled, the hooks installed: all of it goes back."""
    root = tmp_path / "app"
    root.mkdir()
    write(root / "app.py", "x = 1\n")
    write(
        root / ".pre-commit-config.yaml",
        "repos:\n- repo: local\n  hooks:\n  - id: no-tool-names\n    name: no tool names\n"
        "    entry: shift[k]it\n    language: pygrep\n    exclude: ^\\.pre-commit-config\\.yaml$\n",
    )
    if kind == "repository":
        git_ok(root, "init", "-q")
        git_ok(root, "add", "-A")
        git_ok(root, "commit", "-q", "-m", "The app and its hooks")
        before = steady_snapshot(root)
    else:
        before = {"files": snapshot(root)["files"]}
    result = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert result.returncode == 1, result.output
    assert "no tool names" in result.output
    refusal = one_line_refusal(result.stderr)
    assert "first commit was refused" in refusal and "adoption undone" in refusal
    after = snapshot(root)
    assert differences(after, before) == []


def test_a_file_shiftkit_cannot_merge_is_refused_by_name_unless_overwrite(
    tmp_path: Path,
) -> None:
    root = users_repository(tmp_path / "app")
    write(root / "init.sh", "#!/bin/sh\necho our own\n")
    git_ok(root, "add", "init.sh")
    git_ok(root, "commit", "-q", "-m", "Our own init script")
    before = steady_snapshot(root)
    refused = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert refused.returncode == 1
    line = one_line_refusal(refused.stderr)
    assert "init.sh exists" in line and "--overwrite" in line
    assert differences(snapshot(root), before) == []

    replaced = shiftkit(tmp_path, "new", str(root), "--defaults", "--overwrite")
    assert replaced.returncode == 0, replaced.output
    assert "our own" not in (root / "init.sh").read_text()
    assert (root / "AGENTS.md").read_text().startswith(USER_AGENTS)  # still merged
    assert git_ok(root, "status", "--porcelain") == ""
