"""Living beside the usual hooks: a scaffold whose pre-commit config also runs the
`pre-commit-hooks` package's fixers and checkers (its real console scripts, as `repo: local`
hooks, no network), through whole shifts with real git, pre-commit and pytest verifiers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, git_ok, implement, run, shiftkit, write
from fixers import fixed

from shiftkit.core import features, progress

USUAL_HOOKS = """\
  - repo: local
    hooks:
      - id: end-of-file-fixer
        name: fix end of files
        entry: end-of-file-fixer
        language: system
        types: [text]
        stages: [pre-commit, pre-push, manual]
      - id: trailing-whitespace
        name: trim trailing whitespace
        entry: trailing-whitespace-fixer
        language: system
        types: [text]
        stages: [pre-commit, pre-push, manual]
      - id: mixed-line-ending
        name: mixed line ending
        entry: mixed-line-ending
        language: system
        types: [text]
      - id: check-json
        name: check json
        entry: check-json
        language: system
        types: [json]
      - id: check-yaml
        name: check yaml
        entry: check-yaml
        language: system
        types: [yaml]
      - id: freeze
        name: no commits while FREEZE is set
        entry: sh -c 'if test -n "$FREEZE"; then echo "commits are frozen - $FREEZE"; exit 1; fi'
        language: system
        pass_filenames: false
        always_run: true
        stages: [pre-commit]
"""


def ok(project: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = shiftkit(project, *args, env=env)
    assert result.returncode == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout


def listing(project: Path) -> features.FeatureList:
    return features.loads((project / "features.json").read_text())


def every_file_passes(project: Path) -> None:
    """The real hooks over every file of the repository, changing nothing."""
    result = run(["pre-commit", "run", "--all-files"], project)
    assert result.returncode == 0, result.output
    assert git_ok(project, "status", "--porcelain") == ""


@pytest.fixture
def usual(calc: Path) -> Path:
    """The calc project with the usual hooks, pruning its log above two entries."""
    config = calc / ".pre-commit-config.yaml"
    config.write_text(config.read_text() + USUAL_HOOKS)
    settings = calc / ".shiftkit.toml"
    settings.write_text(
        settings.read_text().replace("keep = 20", "keep = 1").replace("block = 10", "block = 1")
    )
    git_ok(calc, "add", "-A")
    git_ok(calc, "commit", "-q", "-m", "Run the usual hooks and prune the log early")
    return calc


def state_of(project: Path) -> dict[str, str]:
    """What a refused command must leave as it was."""
    return {
        "head": git_ok(project, "rev-parse", "HEAD"),
        "index": git_ok(project, "ls-files", "--stage"),
        "status": git_ok(project, "status", "--porcelain", "--untracked-files=all"),
        "features": (project / "features.json").read_text(),
        "log": (project / "claude-progress.txt").read_text(),
        "claims": git_ok(project, "for-each-ref", "refs/shiftkit/claims/"),
        # (the heartbeat moves with every command: the claim itself must not)
        "claim": shiftkit(project, "claims").stdout.split(", last heartbeat")[0],
    }


def test_whole_shifts_pass_the_usual_hooks(usual: Path) -> None:
    every_file_passes(usual)
    ok(usual, "claim")
    ok(usual, "finish", "-m", "the environment builds")
    assert "claimed F001" in ok(usual, "claim")
    implement(usual, "add", good=False)
    refused = shiftkit(usual, "finish", "-m", "add two numbers")
    assert refused.returncode == 1 and "F001 does not pass" in refused.stderr
    ok(usual, "revert", "--reason", "multiplies by zero")
    assert listing(usual).by_id["F001"].attempts == 1
    ok(usual, "claim")
    implement(usual, "add")
    ok(usual, "note", "trailing spaces here   \r\nand a CRLF   ")
    ok(usual, "finish", "-m", "add two numbers")  # the third entry: a prune is due
    log = progress.parse((usual / "claude-progress.txt").read_text())
    archive = progress.parse((usual / "progress-archive.txt").read_text())
    assert [e.feature for e in archive.entries] == ["F000", "F001"]
    assert [e.feature for e in log.entries] == ["F001"] and log.index_line is not None
    assert "trailing spaces here\nand a CRLF" in log.entries[0].body
    ok(usual, "claim")
    implement(usual, "sub")
    ok(usual, "finish", "-m", "subtract two numbers")
    ok(usual, "claim")
    implement(usual, "mul")
    ok(usual, "finish", "-m", "multiply two numbers")  # a prune with an archive already there
    archive = progress.parse((usual / "progress-archive.txt").read_text())
    assert [e.feature for e in archive.entries] == ["F000", "F001", "F001", "F002"]
    decided = ok(
        usual, "decide", "Plain ints  ", "--why", "simple   \r\nenough  ", "--rejected", "floats  "
    )
    ok(usual, "add", "--description", "calc.ops.div works  ", "--step", "call div  ")
    git_ok(usual, "add", "-A")
    git_ok(usual, "commit", "-q", "-m", "Record the int decision and add division")
    assert "docs/decisions/0002-plain-ints.md" in decided
    ok(usual, "log", "--prune")  # nothing to prune: says so
    every_file_passes(usual)
    assert shiftkit(usual, "audit").returncode == 0


def test_a_whitespace_fixer_refusing_finish_is_named_and_a_rerun_finishes(usual: Path) -> None:
    ok(usual, "claim")
    ok(usual, "finish", "-m", "the environment builds")
    ok(usual, "claim")
    ops = usual / "calc" / "ops.py"
    ops.write_text("def add(a, b):   \n    return a + b\n")
    write(usual / "notes.md", "staged before finish\n")
    git_ok(usual, "add", "notes.md")  # the user's own staging, which a refusal keeps
    before = state_of(usual)
    refused = shiftkit(usual, "finish", "-m", "add two numbers")
    assert refused.returncode == 1, refused.output
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("shiftkit: the commit was refused by the hook trailing-whitespace")
    assert "run `shiftkit finish` again" in line
    assert "- hook id: trailing-whitespace" in refused.stdout  # the hook's output, shown
    assert "Fixing calc/ops.py" in refused.stdout
    after = state_of(usual)
    # The index, the feature list, the log and the claim as they were; the fix in the tree.
    for key in ("head", "index", "features", "log", "claims", "claim"):
        assert after[key] == before[key], key
    assert ops.read_text() == "def add(a, b):\n    return a + b\n"
    out = ok(usual, "finish", "-m", "add two numbers")
    assert "F001 passes" in out and "F001: running" in out  # the fixed tree, verified
    assert git_ok(usual, "show", "HEAD:calc/ops.py") == "def add(a, b):\n    return a + b\n"
    assert git_ok(usual, "status", "--porcelain") == ""
    assert listing(usual).by_id["F001"].passes


def test_a_refused_revert_changes_nothing_and_can_be_run_again(usual: Path) -> None:
    ok(usual, "claim")
    ok(usual, "finish", "-m", "the environment builds")
    ok(usual, "claim")
    implement(usual, "add", good=False)
    git_ok(usual, "commit", "-q", "-am", "Try add as a product")  # a commit within the attempt
    write(usual / "scratch" / "idea.txt", "untracked work of the attempt\n")
    write(usual / "tests" / "test_add.py", "def test_add():\n    assert True\n")
    git_ok(usual, "add", "tests/test_add.py")
    (usual / "calc" / "__init__.py").unlink()  # a deletion, unstaged
    before = state_of(usual)
    refused = shiftkit(usual, "revert", "--reason", "wrong idea", env={"FREEZE": "release day"})
    assert refused.returncode == 1, refused.output
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("shiftkit: the commit was refused by the hook freeze")
    assert "nothing was reverted" in line and "run `shiftkit revert` again" in line
    assert "commits are frozen - release day" in refused.stdout
    assert state_of(usual) == before  # index, files, claim, feature list: all as before
    assert (usual / "scratch" / "idea.txt").read_text() == "untracked work of the attempt\n"
    assert not (usual / "calc" / "__init__.py").exists()
    assert listing(usual).by_id["F001"].attempts == 0
    ok(usual, "revert", "--reason", "wrong idea")
    assert listing(usual).by_id["F001"].attempts == 1
    assert git_ok(usual, "status", "--porcelain") == ""
    assert git_ok(usual, "for-each-ref", "refs/shiftkit/claims/") == ""
    assert shiftkit(usual, "audit").returncode == 0


def test_a_scaffold_with_untidy_answers_passes_the_fixers(tmp_path: Path) -> None:
    target = tmp_path / "untidy"
    answers = {
        "project_name": "untidy project ",
        "goal": "Build it   \nin two lines  ",
        "install_command": "true  ",
        "start_command": "  true  ",
        "smoke_command": "test -f features.json  ",
        "ci_install": "shiftkit  ",
        "people_policy": "signed",
        "people_signer": "me@example.invalid ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFake  ",
    }
    data = [item for key, value in answers.items() for item in ("--data", f"{key}={value}")]
    result = run(["shiftkit", "new", str(target), "--defaults", *data], tmp_path)
    assert result.returncode == 0, result.output
    for name in git_ok(target, "ls-files").split():
        text = (target / name).read_text(encoding="utf-8")
        assert fixed(text, Path(name).name) == {}, name
        if name.endswith(".json"):
            json.loads(text)
    assert "Goal: Build it in two lines\n" in (target / "claude-progress.txt").read_text()
    assert git(target, "status", "--porcelain").stdout == ""
