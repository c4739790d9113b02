"""The commit hooks: what they import on the hot path, and incremental validation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import git, git_ok, run, shiftkit, write


def imported_modules(cwd: Path, *args: str) -> set[str]:
    result = run([sys.executable, "-X", "importtime", "-m", "shiftkit", *args], cwd)
    assert result.returncode == 0, result.output
    return {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line}


def test_unstaged_list_imports_no_jsonschema_click_or_json(scaffold: Path) -> None:
    write(scaffold / "notes.txt", "x\n")
    git_ok(scaffold, "add", "notes.txt")
    modules = imported_modules(scaffold, "hook", "pre-commit")
    for heavy in ("jsonschema", "click", "json", "tomllib", "shiftkit.core.features", "git"):
        assert heavy not in modules, heavy


def test_commit_msg_hook_is_light(scaffold: Path) -> None:
    message = write(scaffold / ".git" / "MSG", "Add the parser\n")
    modules = imported_modules(scaffold, "hook", "commit-msg", str(message))
    assert not {"jsonschema", "click", "json"} & modules


# What the guard's process may not import, run as the harness runs it (decision 0070): the
# CLI and its parser, the schema, GitPython, `subprocess` (git runs through posix_spawn),
# what `shutil`, `dataclasses` and the project module would add for one lookup each, `runpy`
# (`-m`), and TOML and the settings' types once this version of the settings was read.
GUARD_HEAVY = (
    "click",
    "shiftkit.cli",
    "jsonschema",
    "git",
    "subprocess",
    "shutil",
    "dataclasses",
    "shiftkit.core.features",
    "shiftkit.edge.project",
    "runpy",
    "tomllib",
    "typing",
    "shiftkit.core.config",
)
LONG_COMMAND = (
    "cd src && pytest -q tests/test_todo.py -k 'add or remove' 2>&1 | tail -20 && git add -A && "
    "git commit -m 'F012: the list keeps its order' && git log --oneline -3; " * 8
)[:500]


def guard_payload(project: Path, tool: str, tool_input: dict[str, str]) -> str:
    return json.dumps(
        {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
        | {"session_id": "s", "cwd": str(project)}
    )


def test_the_guard_as_the_harness_runs_it_is_light(scaffold: Path) -> None:
    """`.shiftkit/hook guard` (what `.claude/settings.json` and `.codex/hooks.json` run)
    imported click, subprocess and the CLI before deciding anything."""
    calls = [
        ("Bash", {"command": LONG_COMMAND}, 0),
        ("Bash", {"command": "git commit --no-verify -m x"}, 2),
        ("Edit", {"file_path": "features.json", "old_string": "false", "new_string": "true"}, 2),
        ("Write", {"file_path": "src/app.py", "content": "print(1)\n"}, 0),
    ]
    # (rule 14's ground is built once per version of the list and settings, then read from
    # the git dir: the first file-tool call after a change of them may import more)
    for warm, (tool, tool_input, code) in enumerate([calls[-1], *calls]):
        result = run(
            [str(scaffold / ".shiftkit" / "hook"), "guard"],
            scaffold,
            input=guard_payload(scaffold, tool, tool_input),
            env={"PYTHONPROFILEIMPORTTIME": "1"},
        )
        assert result.returncode == code, result.output
        modules = {
            line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line
        }
        assert "shiftkit.commands.guard" in modules, result.stderr[-500:]
        assert not warm or not set(GUARD_HEAVY) & modules, (tool, set(GUARD_HEAVY) & modules)


def _make_list(project: Path, n: int) -> None:
    for i in range(n):
        assert shiftkit(project, "add", "--description", f"F{i}", "--step", "s").returncode == 0


def test_incremental_validation_reports_the_real_index(scaffold: Path) -> None:
    _make_list(scaffold, 9)
    git_ok(scaffold, "add", "features.json")
    assert git(scaffold, "commit", "-q", "-m", "Add nine features").returncode == 0
    state = scaffold / ".git" / "shiftkit" / "validated"
    assert any(state.iterdir())  # the committed list is recorded as validated
    doc = json.loads((scaffold / "features.json").read_text())
    doc["features"][7]["steps"] = []
    doc["features"].append(
        {"id": "F100", "category": "c", "description": "d", "steps": ["s"], "passes": False}
    )
    (scaffold / "features.json").write_text(json.dumps(doc, indent=2) + "\n")
    git_ok(scaffold, "add", "features.json")
    refused = git(scaffold, "commit", "-m", "Append a feature")
    assert refused.returncode != 0
    assert "$.features[7].steps" in refused.output


def test_true_is_not_one(scaffold: Path) -> None:
    git_ok(scaffold, "commit", "-q", "--allow-empty", "-m", "An empty commit to validate HEAD")
    path = scaffold / "features.json"
    path.write_text(path.read_text().replace('"core": true', '"core": 1'))
    git_ok(scaffold, "add", "features.json")
    refused = git(scaffold, "commit", "-m", "Make F000 core differently")
    assert refused.returncode != 0 and "$.features[0].core" in refused.output


def test_hook_run_by_hand_from_a_subdirectory(scaffold: Path) -> None:
    (scaffold / "docs").mkdir(exist_ok=True)
    path = scaffold / "features.json"
    path.write_text(path.read_text().replace('"steps": [', '"steps": 5, "x": ['))
    git_ok(scaffold, "add", "features.json")
    result = shiftkit(scaffold / "docs", "hook", "pre-commit")
    assert result.returncode == 1 and "rule 1" in result.stderr


def test_a_finish_commit_reads_no_config_and_no_decision_folder() -> None:
    """`finish` stages the list, the log and the ledger: the hooks decide that rules 13 and the
    list's rules apply, or not, without HEAD's config — whatever its comments mention."""
    from shiftkit import hooks

    config = 'policy = "trailer"  # "trailer" or "signed" (.shiftkit/allowed_signers)\n'
    finish = ["features.json", "claude-progress.txt", ".shiftkit/ledger.jsonl"]
    assert not hooks.config_needed(finish)
    assert not hooks.maybe_decision(config, finish) and hooks.maybe_relevant(None, finish)
    # a record, or the folder itself replaced by a symlink, is a candidate
    assert hooks.maybe_decision(None, ["docs/decisions/0002-x.md"])
    assert hooks.maybe_decision(None, ["docs/decisions"])
    assert hooks.maybe_decision('decisions = "adr"\n', ["adr/0002-x.md"])
    assert hooks.config_needed(["features.json", "adr/0002-x.md"])
