"""Codex CLI by its own rules (decision 0039): the scaffold's `.codex/hooks.json` has Codex's
structure (event, matcher groups, command handlers with a timeout), every payload a test sends
is valid under the Codex repository's input schema for its event, every hook command runs
exactly as written in the file (through `sh -c`), and whatever it prints validates under the
matching output schema (tests/data/codex-hooks/, vendored with their source). The guard denies
for Codex what it denies for Claude Code, shell commands and patches alike."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import Result, git_ok, ok, run, shiftkit, write
from test_copier_adopt import tagged_template as tagged_template
from test_guard import ALLOWED, DENIED
from test_session_start import big_project, path_without_shiftkit

from shiftkit.commands import guard

SCHEMAS = Path(__file__).resolve().parent / "data" / "codex-hooks"
TEMPLATE_HOOKS = Path(__file__).resolve().parent.parent / "template" / ".codex" / "hooks.json"
# The events Codex CLI reads from a hooks file (codex-rs/config's HookEventsToml).
CODEX_EVENTS = {
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "SessionEnd",  # in Codex 0.169's hook events (its app-server's HookEventName)
}
SLUGS = {"SessionStart": "session-start", "PreToolUse": "pre-tool-use", "Stop": "stop"}


@cache
def schema(event: str, direction: str) -> dict[str, Any]:
    path = SCHEMAS / f"{SLUGS[event]}.command.{direction}.schema.json"
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(document)
    return document


def valid(event: str, direction: str, document: Any) -> None:
    jsonschema.Draft7Validator(schema(event, direction)).validate(document)


def codex_file(project: Path | None = None) -> dict[str, Any]:
    path = project / ".codex" / "hooks.json" if project else TEMPLATE_HOOKS
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def handlers(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each event's one shiftkit handler (and its group's matcher, under `matcher`); the
    user's own handlers beside it are left out."""
    found = {}
    for event, groups in document["hooks"].items():
        ours = [
            {**handler, "matcher": group.get("matcher")}
            for group in groups
            for handler in group["hooks"]
            if "shiftkit" in handler["command"]
        ]
        if ours:
            (found[event],) = ours
    return found


# -- payloads, each checked against Codex's input schema before it is sent ---------------------


def common(project: Path, event: str) -> dict[str, Any]:
    return {
        "session_id": "019a0000-aaaa-7bbb-8ccc-codexsession1",
        "transcript_path": None,
        "cwd": str(project),
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": "default",
    }


def session_start(project: Path, source: str = "startup") -> dict[str, Any]:
    payload = {**common(project, "SessionStart"), "source": source}
    valid("SessionStart", "input", payload)
    return payload


def pre_tool_use(project: Path, tool_name: str, command: Any) -> dict[str, Any]:
    payload = {
        **common(project, "PreToolUse"),
        "turn_id": "turn-1",
        "tool_name": tool_name,
        "tool_input": {"command": command},
        "tool_use_id": "call-1",
    }
    valid("PreToolUse", "input", payload)
    return payload


def stop(project: Path, active: bool = False) -> dict[str, Any]:
    payload = {
        **common(project, "Stop"),
        "turn_id": "turn-1",
        "stop_hook_active": active,
        "last_assistant_message": "Done for now.",
    }
    valid("Stop", "input", payload)
    return payload


def run_hook(
    project: Path, event: str, payload: dict[str, Any], env: dict[str, str] | None = None
) -> Result:
    """The event's command exactly as `.codex/hooks.json` has it, through `sh -c`, in the
    project (Codex runs a hook in the session's cwd); its stdout checked against the event's
    output schema (Codex reads empty stdout as no output)."""
    command = handlers(codex_file(project))[event]["command"]
    result = run(["sh", "-c", command], project, input=json.dumps(payload), env=env)
    if result.stdout.strip():
        valid(event, "output", json.loads(result.stdout))
    return result


def patch(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"


def update(path: str) -> str:
    return f"*** Update File: {path}\n@@\n-old line\n+new line\n"


# -- the file ----------------------------------------------------------------------------------


def test_the_hooks_file_has_codexs_structure_and_every_hook_a_timeout(scaffold: Path) -> None:
    document = codex_file(scaffold)
    assert document == codex_file()  # the scaffold's file is the template's
    assert set(document) <= {"description", "hooks"}  # Codex refuses other top-level keys
    assert set(document["hooks"]) <= CODEX_EVENTS
    found = handlers(document)
    assert set(found) == {"SessionStart", "PreToolUse", "Stop", "SessionEnd"}
    assert all(len(groups) == 1 for groups in document["hooks"].values())
    for event, handler in found.items():
        assert handler["type"] == "command" and isinstance(handler["command"], str)
        assert isinstance(handler["timeout"], int) and 0 < handler["timeout"] <= 900, event
        assert handler["command"].startswith(".shiftkit/hook ")  # it fails closed itself
    # Codex 0.169 names its patch tool `apply_patch` in PreToolUse (test_real_codex.py)
    assert found["PreToolUse"]["matcher"] == "^(Bash|apply_patch)$"
    assert "--harness codex" in found["SessionStart"]["command"]
    assert found["PreToolUse"]["timeout"] > guard.DEADLINE  # the guard decides in time


# -- SessionStart ------------------------------------------------------------------------------


def test_session_start_gives_codex_its_json_with_the_next_feature_first(scaffold: Path) -> None:
    result = run_hook(scaffold, "SessionStart", session_start(scaffold))
    assert result.returncode == 0, result.output
    assert len(result.stdout.encode()) <= 2000
    output = json.loads(result.stdout)
    context = output["hookSpecificOutput"]["additionalContext"]
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    lines = context.splitlines()
    assert lines[0].startswith("# shiftkit start") and lines[1].startswith("next: F000")
    assert "checks: init passed; smoke passed" in context
    session = scaffold / ".git" / "shiftkit" / "session.json"
    assert json.loads(session.read_text()) == {"session": "019a0000-aaaa-7bbb-8ccc-codexsession1"}


def test_session_start_stays_within_2000_bytes_for_codex_at_any_size(scaffold: Path) -> None:
    big_project(scaffold)
    for source in ("compact", "resume"):
        result = run_hook(scaffold, "SessionStart", session_start(scaffold, source))
        assert result.returncode == 0, result.output
        assert len(result.stdout.encode()) <= 2000, len(result.stdout.encode())
        context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        assert context.splitlines()[1].startswith("next: F2500 — verify:")
        assert "## newest log entries" in context  # the budget still leaves room for the rest


def test_a_project_that_cannot_be_oriented_still_answers_in_json(tmp_path: Path) -> None:
    project = tmp_path / "not-a-project"
    project.mkdir()
    write(project / ".codex" / "hooks.json", TEMPLATE_HOOKS.read_text())
    script = TEMPLATE_HOOKS.parent.parent / ".shiftkit" / "hook"
    write(project / ".shiftkit" / "hook", script.read_text()).chmod(0o755)
    result = run_hook(project, "SessionStart", session_start(project))
    assert result.returncode == 0, result.output
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("shiftkit: start could not orient this session")


# -- PreToolUse: the guard ---------------------------------------------------------------------


def in_process(payload: dict[str, Any]) -> tuple[int, str]:
    """The guard's hook on this payload, as `shiftkit guard` runs it, without a project."""
    raw = json.dumps(payload).encode()
    return guard.run_hook(raw, lambda cwd: (None, "features.json"))


@pytest.mark.parametrize(("command", "mentions"), DENIED)
def test_codex_bash_calls_are_denied_as_claudes_are(
    tmp_path: Path, command: str, mentions: str
) -> None:
    code, message = in_process(pre_tool_use(tmp_path, "Bash", command))
    assert code == 2 and mentions in message, message
    assert message.startswith("shiftkit guard: ") and "\n" not in message


@pytest.mark.parametrize("command", ALLOWED)
def test_codex_bash_calls_are_allowed_as_claudes_are(tmp_path: Path, command: str) -> None:
    assert in_process(pre_tool_use(tmp_path, "Bash", command)) == (0, "")


@pytest.mark.parametrize(
    ("command", "mentions"),
    [
        ("git commit --no-verify -m x", "no-verify"),
        ("sed -i 's/false/true/' features.json", "features.json"),
        ("shiftkit unblock F001 --note x", "a person"),
        ("git -c core.hooksPath=/dev/null commit -m x", "hooksPath"),
        ("apply_patch <<'EOF'\n" + patch(update("features.json")) + "EOF", "features.json"),
    ],
)
def test_the_wired_guard_denies_codex_shell_calls(
    scaffold: Path, command: str, mentions: str
) -> None:
    result = run_hook(scaffold, "PreToolUse", pre_tool_use(scaffold, "Bash", command))
    assert result.returncode == 2 and result.stdout == "", result.output
    assert mentions in result.stderr and result.stderr.startswith("shiftkit guard: ")


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        (patch(update("features.json")), "features.json"),
        (patch("*** Add File: .git/hooks/x\n+#!/bin/sh\n+exit 0\n"), ".git/hooks"),
        (patch(update("claude-progress.txt")), "progress log"),
        (patch("*** Delete File: progress-archive.txt\n"), "progress-archive.txt"),
        (patch(update(".shiftkit/ledger.jsonl")), "ledger"),
        (patch(update(".shiftkit.toml")), "person"),
        (patch(update("src/app.py"), "*** Move to: features.json\n"), "features.json"),
        (patch(update("src/app.py"), update("features.json")), "features.json"),
        ("  *** Begin Patch\n  *** Update File: ./features.json\n  *** End Patch", "features"),
    ],
)
def test_a_patch_touching_the_protocols_files_is_denied(
    scaffold: Path, text: str, mentions: str
) -> None:
    result = run_hook(scaffold, "PreToolUse", pre_tool_use(scaffold, "apply_patch", text))
    assert result.returncode == 2 and result.stdout == "", result.output
    assert mentions in result.stderr and result.stderr.startswith("shiftkit guard: `apply_patch`")
    assert result.stderr.count("\n") == 1


def test_a_patch_elsewhere_is_allowed(scaffold: Path) -> None:
    for text in (
        patch(update("src/app.py")),
        patch("*** Add File: docs/notes.md\n+# Notes\n", "*** Delete File: old.txt\n"),
        patch(update("README.md"), "*** Move to: docs/README.md\n"),
    ):
        result = run_hook(scaffold, "PreToolUse", pre_tool_use(scaffold, "apply_patch", text))
        assert (result.returncode, result.output) == (0, ""), (text, result.output)
    harmless = run_hook(scaffold, "PreToolUse", pre_tool_use(scaffold, "Bash", "git status"))
    assert (harmless.returncode, harmless.output) == (0, "")


def test_a_patch_from_a_subfolder_is_judged_where_it_runs(scaffold: Path) -> None:
    (scaffold / "src").mkdir()
    payload = pre_tool_use(scaffold, "apply_patch", patch(update("../features.json")))
    payload["cwd"] = str(scaffold / "src")
    result = run_hook(scaffold, "PreToolUse", payload)
    assert result.returncode == 2 and "features.json" in result.stderr
    payload["tool_input"]["command"] = patch(update("features.json"))  # src/features.json
    assert run_hook(scaffold, "PreToolUse", payload).returncode == 0


def test_a_patch_call_that_cannot_be_read_is_denied(tmp_path: Path) -> None:
    for command in (None, ["*** Begin Patch"], {"patch": "x"}):
        code, message = in_process(pre_tool_use(tmp_path, "apply_patch", command))
        assert code == 2 and "cannot be checked" in message, message
    raw = b'{"tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch'
    code, message = guard.run_hook(raw, lambda cwd: (None, "features.json"))
    assert code == 2 and "not JSON" in message


def test_a_file_tool_may_not_write_the_records_either(tmp_path: Path) -> None:
    """One rule for file edits: Claude Code's Write/Edit of the log, its archive or the ledger
    is denied as a patch of them is."""
    site = guard.Site(
        "features.json", ("claude-progress.txt", "progress-archive.txt", ".shiftkit/ledger.jsonl")
    )
    for relative in ("claude-progress.txt", "progress-archive.txt", ".shiftkit/ledger.jsonl"):
        path = str(tmp_path / relative)
        for payload in (
            {"tool_name": "Write", "tool_input": {"file_path": path, "content": "x"}},
            {"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "a"}},
        ):
            reason = guard.decide(payload, tmp_path, site)
            assert reason is not None and "only shiftkit writes" in reason, (payload, reason)
    notes = {"tool_name": "Write", "tool_input": {"file_path": str(tmp_path / "NOTES.md")}}
    assert (
        guard.decide(
            {**notes, "tool_input": {**notes["tool_input"], "content": "x"}}, tmp_path, site
        )
        is None
    )


# -- Stop --------------------------------------------------------------------------------------


def test_stop_lets_a_clean_session_stop_and_sends_a_dirty_one_back(scaffold: Path) -> None:
    clean = run_hook(scaffold, "Stop", stop(scaffold))
    assert (clean.returncode, clean.output) == (0, "")
    write(scaffold / "scratch.txt", "half done\n")
    dirty = run_hook(scaffold, "Stop", stop(scaffold))
    assert dirty.returncode == 2 and dirty.stdout == ""
    assert dirty.stderr.startswith("shiftkit: no claim is open") and "scratch.txt" in dirty.stderr
    again = run_hook(scaffold, "Stop", stop(scaffold, active=True))
    assert (again.returncode, again.stdout) == (0, "")


def test_stop_with_a_claim_sends_the_session_back_once(scaffold: Path) -> None:
    ok(scaffold, "claim")
    write(scaffold / "work.txt", "started\n")
    first = run_hook(scaffold, "Stop", stop(scaffold))
    assert first.returncode == 2 and "F000 is claimed" in first.stderr
    second = run_hook(scaffold, "Stop", stop(scaffold, active=True))
    assert (second.returncode, second.stdout) == (0, "")
    pending = (scaffold / ".git" / "shiftkit" / "pending-note.txt").read_text()
    assert "the session stopped with F000 claimed" in pending  # written down, not trapped


# -- without shiftkit --------------------------------------------------------------------------


def test_every_hook_fails_closed_without_shiftkit(scaffold: Path, tmp_path: Path) -> None:
    env = {"PATH": path_without_shiftkit(tmp_path)}
    (scaffold / ".git" / "shiftkit" / "interpreter").unlink()  # (as before `shiftkit setup`)
    payloads: dict[str, Callable[[], dict[str, Any]]] = {
        "SessionStart": lambda: session_start(scaffold),
        "PreToolUse": lambda: pre_tool_use(scaffold, "apply_patch", patch(update("a.py"))),
        "Stop": lambda: stop(scaffold),
        "SessionEnd": lambda: stop(scaffold),
    }
    for event, payload in payloads.items():
        result = run_hook(scaffold, event, payload(), env=env)
        assert result.returncode == 2 and result.stdout == "", (event, result.output)
        assert result.stderr.startswith("shiftkit: cannot run (not installed"), result.stderr
        assert result.stderr.count("\n") == 1
    let_go = run_hook(scaffold, "Stop", stop(scaffold, active=True), env=env)
    assert (let_go.returncode, let_go.stdout) == (0, "")  # never trapped in a loop


# -- the template's question and adoption ------------------------------------------------------


def test_harnesses_decides_which_hook_files_are_written(tmp_path: Path) -> None:
    only_claude = tmp_path / "only-claude"
    result = shiftkit(tmp_path, "new", str(only_claude), "--defaults", "--data", "harnesses=claude")
    assert result.returncode == 0, result.output
    assert (only_claude / ".claude" / "settings.json").is_file()
    assert not (only_claude / ".codex").exists()
    assert "- claude" in (only_claude / ".copier-answers.yml").read_text()
    only_codex = tmp_path / "only-codex"
    result = shiftkit(tmp_path, "new", str(only_codex), "--defaults", "--data", "harnesses=codex")
    assert result.returncode == 0, result.output
    assert codex_file(only_codex) == codex_file() and not (only_codex / ".claude").exists()
    assert git_ok(only_codex, "ls-files", ".codex").split() == [".codex/hooks.json"]


USER_HOOKS = {
    "description": "our team's hooks",
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint-shell.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
    },
}


def test_adoption_keeps_the_users_codex_hooks(tmp_path: Path) -> None:
    root = users_codex_repository(tmp_path / "app")
    result = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert result.returncode == 0, result.output
    merged = kept_and_added(root)
    again = shiftkit(tmp_path, "new", str(root), "--defaults")  # adopting again changes nothing
    assert codex_file(root) == merged, again.output
    denied = run_hook(
        root, "PreToolUse", pre_tool_use(root, "apply_patch", patch(update("features.json")))
    )
    assert denied.returncode == 2 and "features.json" in denied.stderr


def users_codex_repository(root: Path) -> Path:
    root.mkdir()
    git_ok(root, "init", "-q")
    write(root / "app.py", "x = 1\n")
    write(root / ".codex" / "hooks.json", json.dumps(USER_HOOKS, indent=2) + "\n")
    git_ok(root, "add", "-A")
    git_ok(root, "commit", "-q", "-m", "The app, with our own Codex hooks")
    return root


def kept_and_added(root: Path) -> dict[str, Any]:
    merged = codex_file(root)
    assert merged["description"] == "our team's hooks"
    assert merged["hooks"]["PreToolUse"][0] == USER_HOOKS["hooks"]["PreToolUse"][0]
    assert merged["hooks"]["Stop"][0] == USER_HOOKS["hooks"]["Stop"][0]
    for event, groups in codex_file()["hooks"].items():
        assert merged["hooks"][event][-len(groups) :] == groups, event
    assert git_ok(root, "status", "--porcelain") == ""
    return merged


def test_copier_copy_keeps_the_users_codex_hooks(tagged_template: Path, tmp_path: Path) -> None:
    root = users_codex_repository(tmp_path / "app")
    copier = [sys.executable, "-m", "copier", "copy", "--trust", "--defaults"]
    copied = run([*copier, str(tagged_template), "app"], tmp_path)
    assert copied.returncode == 0, copied.output
    kept_and_added(root)
    assert git_ok(root, "log", "--format=%s").count("\n") == 2  # one adoption commit


def test_agents_md_is_the_one_instruction_file_for_both(scaffold: Path) -> None:
    agents = (scaffold / "AGENTS.md").read_text()
    assert "Codex" in agents and "Claude Code" in agents
    assert "@AGENTS.md" in (scaffold / "CLAUDE.md").read_text()


def test_the_vendored_schemas_are_the_ones_named() -> None:
    readme = (SCHEMAS / "README.md").read_text()
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        assert path.name in readme, path.name
        jsonschema.Draft7Validator.check_schema(json.loads(path.read_text()))
    assert "Apache License 2.0" in readme and "openai/codex" in readme


@pytest.mark.parametrize("key", ["command", "input", "patch"])
def test_a_patch_is_read_under_any_key_a_harness_uses(scaffold: Path, key: str) -> None:
    """Codex's hooks send the patch as `command`; its freeform tool's argument is `input`;
    others say `patch`. The guard judges the text wherever it is (an agent trial found a
    patch under `input` denied as unreadable, which would stop every edit)."""
    for text, code in ((patch(update("features.json")), 2), (patch(update("src/app.py")), 0)):
        payload = pre_tool_use(scaffold, "apply_patch", "")
        payload["tool_input"] = {key: text}
        result = run_hook(scaffold, "PreToolUse", payload)
        assert result.returncode == code, (key, result.output)
