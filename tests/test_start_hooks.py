"""`start` says when the harness's hooks are not running (issue 27.1): a committed hook file
lacking shiftkit's handlers, and a session whose brief no SessionStart hook delivered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git_ok, shiftkit

NO_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")


def _warnings(project: Path, **env: str) -> list[str]:
    started = shiftkit(project, "start", "--no-check", env=env or None)
    assert started.returncode == 0, started.output
    return [line for line in started.stdout.splitlines() if line.startswith("WARNING:")]


def _commit_past_the_hooks(project: Path, message: str) -> None:
    git_ok(project, *NO_HOOKS, "commit", "-q", "--no-verify", "-am", message)


def test_a_fresh_scaffold_warns_of_nothing(scaffold: Path) -> None:
    assert not [w for w in _warnings(scaffold) if "HEAD" in w or "SessionStart" in w]


@pytest.mark.parametrize(
    ("path", "event", "says"),
    [
        (".claude/settings.json", "PreToolUse", "PreToolUse (the guard): Claude Code"),
        (".claude/settings.json", "Stop", "Stop (the stop check): Claude Code"),
        (".codex/hooks.json", "SessionStart", "SessionStart (this brief): Codex CLI"),
    ],
)
def test_a_committed_harness_file_without_a_handler_is_said(
    scaffold: Path, path: str, event: str, says: str
) -> None:
    file = scaffold / path
    document = json.loads(file.read_text())
    del document["hooks"][event]
    file.write_text(json.dumps(document, indent=2) + "\n")
    _commit_past_the_hooks(scaffold, "Drop a hook")
    said = [w for w in _warnings(scaffold) if path in w]
    assert len(said) == 1 and says in said[0] and "ask a person" in said[0], said


def test_a_pre_commit_config_without_shiftkits_hooks_is_said(scaffold: Path) -> None:
    (scaffold / ".pre-commit-config.yaml").write_text("repos: []\n")
    _commit_past_the_hooks(scaffold, "No hooks")
    said = [w for w in _warnings(scaffold) if ".pre-commit-config.yaml" in w]
    assert len(said) == 1 and "shiftkit-pre-commit" in said[0] and "shiftkit-commit-msg" in said[0]


def test_a_deleted_harness_file_is_said(scaffold: Path) -> None:
    git_ok(scaffold, "rm", "-q", ".claude/settings.json")
    git_ok(scaffold, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "No Claude settings")
    said = [w for w in _warnings(scaffold) if ".claude/settings.json" in w]
    assert len(said) == 1 and "is gone" in said[0], said


def _hooked_start(project: Path, session: str) -> None:
    payload = json.dumps({"session_id": session, "hook_event_name": "SessionStart"})
    started = shiftkit(project, "start", "--brief", "--hook-input", "--no-check", input=payload)
    assert started.returncode == 0, started.output


def test_claude_code_session_without_its_session_start_hook_is_said(scaffold: Path) -> None:
    said = [w for w in _warnings(scaffold, CLAUDECODE="1") if "SessionStart hook" in w]
    assert len(said) == 1 and "Claude Code" in said[0] and "guard" in said[0], said
    _hooked_start(scaffold, "claude-session-1")
    assert not [w for w in _warnings(scaffold, CLAUDECODE="1") if "SessionStart hook" in w]


def test_codex_session_is_matched_by_its_thread_id(scaffold: Path) -> None:
    _hooked_start(scaffold, "thread-a")
    assert not [w for w in _warnings(scaffold, CODEX_THREAD_ID="thread-a") if "SessionStart" in w]
    said = [w for w in _warnings(scaffold, CODEX_THREAD_ID="thread-b") if "SessionStart" in w]
    assert len(said) == 1 and "Codex CLI" in said[0] and "trusted" in said[0], said


def test_a_person_at_a_terminal_is_told_nothing(scaffold: Path) -> None:
    assert not [w for w in _warnings(scaffold) if "SessionStart hook" in w]
