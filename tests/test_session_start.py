"""Claude Code by its own rules: the scaffold's `.claude/settings.json` validates against
SchemaStore's schema, every hook has a timeout and fails closed without `shiftkit`, the
SessionStart hook re-runs the checks only on startup and clear, and its output stays within
2,000 bytes whatever the project holds. The hook commands run exactly as written in the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import git_ok, ok, run, write

from shiftkit.core import features, progress

TEMPLATE_SETTINGS = (
    Path(__file__).resolve().parent.parent / "template" / ".claude" / "settings.json"
)
SCHEMA = Path(__file__).resolve().parent / "data" / "claude-code-settings.schema.json"
NO_HOOKS = "core.hooksPath=/dev/null/none"


def settings(project: Path | None = None) -> dict[str, Any]:
    path = project / ".claude" / "settings.json" if project else TEMPLATE_SETTINGS
    return json.loads(path.read_text(encoding="utf-8"))


def hooks(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each event's one shiftkit hook command."""
    found = {}
    for event, matchers in document["hooks"].items():
        (matcher,) = matchers
        (hook,) = matcher["hooks"]
        found[event] = hook
    return found


def run_hook(
    project: Path, event: str, payload: dict[str, Any], env: dict[str, str] | None = None
) -> Any:
    """The event's command exactly as the settings file has it, through `sh -c`."""
    command = hooks(settings(project))[event]["command"]
    return run(["sh", "-c", command], project, input=json.dumps(payload), env=env)


def path_without_shiftkit(tmp_path: Path) -> str:
    """A PATH with git and sh but no `shiftkit`."""
    folder = tmp_path / "bin-without-shiftkit"
    folder.mkdir(exist_ok=True)
    for tool in ("git", "sh", "grep", "cat"):
        found = shutil.which(tool)
        assert found
        target = folder / tool
        if not target.exists():
            target.symlink_to(found)
    return str(folder)


def test_settings_validate_against_schemastore(scaffold: Path) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    document = settings(scaffold)
    assert document == settings()  # the scaffold's file is the template's, as is
    assert document["$schema"] == "https://json.schemastore.org/claude-code-settings.json"
    jsonschema.validators.validator_for(schema)(schema).validate(document)
    broken = {**document, "hooks": {"SessionStart": [{"hooks": [{"type": "command"}]}]}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validators.validator_for(schema)(schema).validate(broken)


def test_every_hook_has_a_timeout_and_runs_shiftkit() -> None:
    found = hooks(settings())
    assert set(found) == {"SessionStart", "PreToolUse", "Stop", "SessionEnd"}
    timeouts = {event: hook["timeout"] for event, hook in found.items()}
    assert timeouts["SessionStart"] >= 600  # init.sh, the smoke test and two verifiers
    assert timeouts["PreToolUse"] <= 60 and timeouts["Stop"] <= 120
    assert timeouts["SessionEnd"] <= 120  # reads one transcript
    assert found["SessionStart"]["command"] == ".shiftkit/hook start --brief --hook-input"
    assert found["PreToolUse"]["command"] == ".shiftkit/hook guard"
    assert found["Stop"]["command"] == ".shiftkit/hook stop-check"
    assert found["SessionEnd"]["command"] == ".shiftkit/hook usage record"


def forget_interpreter(project: Path) -> None:
    """The clone as it is before `shiftkit setup`: no interpreter recorded for the hooks."""
    (project / ".git" / "shiftkit" / "interpreter").unlink()


@pytest.mark.parametrize("event", ["SessionStart", "PreToolUse", "Stop", "SessionEnd"])
def test_hooks_fail_closed_without_shiftkit(scaffold: Path, tmp_path: Path, event: str) -> None:
    payload = {
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(scaffold),
        "hook_event_name": event,
        "source": "startup",
        "tool_name": "Bash",
        "tool_input": {"command": "git commit --no-verify -m x"},
        "stop_hook_active": False,
    }
    forget_interpreter(scaffold)
    result = run_hook(scaffold, event, payload, env={"PATH": path_without_shiftkit(tmp_path)})
    assert result.returncode == 2, result.output  # Claude Code: a blocking error
    assert result.stderr.startswith("shiftkit: cannot run (not installed")
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_a_broken_installation_fails_closed_too(scaffold: Path, tmp_path: Path) -> None:
    """A recorded interpreter that is gone (a deleted virtualenv), and no shiftkit on PATH."""
    (scaffold / ".git" / "shiftkit" / "interpreter").write_text("/no/such/venv/bin/python\n")
    payload = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    result = run_hook(
        scaffold, "PreToolUse", payload, env={"PATH": path_without_shiftkit(tmp_path)}
    )
    assert result.returncode == 2 and "shiftkit: cannot run" in result.stderr


def test_the_recorded_interpreter_runs_the_hooks_without_shiftkit_on_path(
    scaffold: Path, tmp_path: Path
) -> None:
    """A login shell (Codex runs `bash -lc`) whose PATH has no shiftkit: the interpreter
    `shiftkit setup` recorded still runs the guard."""
    payload = {"tool_name": "Bash", "tool_input": {"command": "git commit --no-verify -m x"}}
    env = {"PATH": path_without_shiftkit(tmp_path)}
    result = run_hook(scaffold, "PreToolUse", payload, env=env)
    assert result.returncode == 2 and result.stderr.startswith("shiftkit guard: "), result.output


def test_stop_without_shiftkit_lets_the_second_stop_through(scaffold: Path, tmp_path: Path) -> None:
    """Claude Code sets stop_hook_active when a Stop hook already sent the agent back:
    refusing again would trap it."""
    env = {"PATH": path_without_shiftkit(tmp_path)}
    forget_interpreter(scaffold)
    for spacing in ('{"stop_hook_active": true}', '{"stop_hook_active":true}'):
        command = hooks(settings(scaffold))["Stop"]["command"]
        result = run(["sh", "-c", command], scaffold, input=spacing, env=env)
        assert result.returncode == 0, result.output


def test_installed_hooks_behave_as_their_commands(scaffold: Path) -> None:
    denied = run_hook(
        scaffold,
        "PreToolUse",
        {"tool_name": "Bash", "tool_input": {"command": "git commit --no-verify -m x"}},
    )
    assert denied.returncode == 2 and "--no-verify" in denied.stderr
    allowed = run_hook(
        scaffold, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    )
    assert allowed.returncode == 0, allowed.output
    stop = run_hook(scaffold, "Stop", {"stop_hook_active": False})
    assert stop.returncode == 0, stop.output


def count_init_runs(project: Path, counter: Path) -> None:
    """Make the project's `init` step leave a mark each time it runs (committed: the
    committed settings are the ones that apply)."""
    config = project / ".shiftkit.toml"
    config.write_text(
        config.read_text().replace('init = "./init.sh"', f'init = "echo run >> {counter}"')
    )
    git_ok(project, "commit", "-q", "-am", "Count the runs of the init step")


def test_checks_run_on_startup_and_clear_only(scaffold: Path, tmp_path: Path) -> None:
    counter = tmp_path / "init-runs"
    count_init_runs(scaffold, counter)

    def runs() -> int:
        return counter.read_text().count("run") if counter.exists() else 0

    base = {"session_id": "s1", "transcript_path": "/t.jsonl", "hook_event_name": "SessionStart"}
    expected = 0
    for source, reruns in [("startup", 1), ("resume", 0), ("compact", 0), ("clear", 1)]:
        result = run_hook(
            scaffold, "SessionStart", {**base, "source": source, "cwd": str(scaffold)}
        )
        assert result.returncode == 0, result.output
        expected += reruns
        assert runs() == expected, source
        out = result.stdout
        assert "next: F000 — verify: ./init.sh smoke" in out
        if reruns:
            assert "\nchecks: init passed; smoke passed" in out
        else:
            assert "checks: not re-run (" in out and "; last at " in out
    # What is re-rendered is read from the files again: a new log entry shows at once.
    log = scaffold / "claude-progress.txt"
    entry = progress.format_entry("2026-11-30 12:00 UTC", "F000", "note", "abc1234", "fresh text")
    log.write_text(progress.append(log.read_text(), entry))
    resumed = run_hook(scaffold, "SessionStart", {**base, "source": "compact"})
    assert "fresh text" in resumed.stdout and runs() == expected


def test_a_broken_project_is_told_to_the_model(scaffold: Path) -> None:
    """SessionStart cannot block a session and only its stdout reaches the model."""
    (scaffold / ".shiftkit.toml").write_text("[shiftkit\n")
    result = run_hook(scaffold, "SessionStart", {"source": "startup"})
    assert result.returncode == 0
    assert result.stdout.startswith(
        "shiftkit: start could not orient this session: .shiftkit.toml: malformed TOML"
    )
    assert len(result.stdout.splitlines()) == 1
    plain = run(["shiftkit", "start", "--brief"], scaffold)
    assert plain.returncode == 2 and plain.stdout == ""


def test_a_broken_edit_of_the_list_is_named_first(scaffold: Path) -> None:
    """The list the rules stand on is HEAD's; the work tree's broken edit is said first."""
    (scaffold / "features.json").write_text("{ not json")
    result = run_hook(scaffold, "SessionStart", {"source": "startup"})
    assert result.returncode == 0
    first = result.stdout.splitlines()[0]
    assert first.startswith("(uncommitted edit of features.json, invalid: features.json: invalid")
    assert "next: F000" in result.stdout


# -- the 2,000 bytes ----------------------------------------------------------------------------


def big_project(project: Path) -> None:
    """5,000 features, 2,000 log entries after a 3,000-word preamble, 50 decisions with long
    titles, and a 50 KB last entry."""
    items = tuple(
        features.Feature(
            id=f"F{i:04d}",
            category="functional",
            description=f"Feature {i} works end to end, with every edge case of its screen covered",
            steps=tuple(f"Open screen {i} and check detail {k} of it carefully" for k in range(6)),
            verify=f"python -m pytest -q tests/test_feature_{i}.py -k 'end_to_end and not slow'",
            passes=i < 2500,
        )
        for i in range(5000)
    )
    write(project / "features.json", features.dumps(features.FeatureList(items)))
    log = project / "claude-progress.txt"
    words = " ".join(f"word{i}" for i in range(3000))
    text = log.read_text() + "\n".join(words[j : j + 90] for j in range(0, len(words), 90))
    for i in range(2000):
        body = "Implemented the handler; tests cover the edge cases.\nNext: pagination."
        if i == 1999:
            body = "\n".join(f"line {k} of a very long last entry " + "x" * 70 for k in range(500))
        entry = progress.format_entry(
            f"2026-11-{i % 28 + 1:02d} 10:00 UTC", f"F{i:04d}", "passed", f"{i:07x}", body
        )
        text = progress.append(text, entry)
    assert len(text.encode().split(b"## 2026-11-")[-1]) > 50_000
    log.write_text(text)
    title = "A decision about storage, caching, migrations and the order they run in " * 3
    for n in range(2, 52):
        write(
            project / "docs" / "decisions" / f"{n:04d}-decision-{n}.md",
            f"# {n}. {title}\n\nBody.\n",
        )
    git_ok(project, "add", "-A")
    git_ok(project, "-c", NO_HOOKS, "commit", "-q", "--no-verify", "-m", "A big project")


def test_brief_start_stays_within_2000_bytes_at_any_size(scaffold: Path) -> None:
    big_project(scaffold)
    out = ok(scaffold, "start", "--brief", "--no-check").encode()
    assert len(out) <= 2000, len(out)
    first = out[:1000].decode("utf-8", "ignore")
    verify = "python -m pytest -q tests/test_feature_2500.py -k 'end_to_end and not slow'"
    assert f"next: F2500 — verify: {verify}" in first
    text = out.decode()
    assert "## newest log entries (newest first, 2000 in all" in text and "## 2026-11-" in text
    assert "see claude-progress.txt)" in text and "## newest decisions" in text
    assert text.rstrip("\n").splitlines()[-1].endswith(f"({len(out)} bytes)")
    hook = run_hook(scaffold, "SessionStart", {"source": "compact"})
    assert hook.returncode == 0 and len(hook.stdout.encode()) <= 2000
    assert "next: F2500" in hook.stdout.encode()[:1000].decode("utf-8", "ignore")


def test_every_line_keeps_to_the_budget_with_a_claim(scaffold: Path) -> None:
    ok(scaffold, "claim")
    out = ok(scaffold, "start", "--brief", "--no-check")
    assert out.startswith("# shiftkit start") and "your claim: F000" in out
    assert out.index("your claim: F000") < 200 and len(out.encode()) <= 2000


def test_the_newest_log_entry_is_shown_whole_in_the_brief(scaffold: Path) -> None:
    # (issue 29: "newest log entries (3 of 3)" showed two headers, the newest entry folded
    # into "… (5 more lines)")
    log = scaffold / "claude-progress.txt"
    text = log.read_text()
    for n in range(3):
        lines = 20 if n == 2 else 7
        body = "\n".join(
            f"entry {n} line {k}: what was done and what is left" for k in range(lines)
        )
        text = progress.append(
            text,
            progress.format_entry(f"2026-12-01 1{n}:00 UTC", "F000", "passed", "abc1234", body),
        )
    log.write_text(text)
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "-c", NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Three log entries")
    newest = progress.parse(text).entries[-1].key
    assert len(newest.splitlines()) == 21
    out = ok(scaffold, "start", "--brief", "--no-check")
    assert len(out.encode()) <= 2000, len(out.encode())
    assert newest in out  # whole, every line of it in order
    shown = [line for line in out.splitlines() if line.startswith("## 2026-12-01")]
    for header in shown:  # every entry shown is shown whole
        entry = next(e for e in progress.parse(text).entries if e.key.startswith(header))
        assert entry.key in out
    log_part = out.split("## newest log entries")[1]
    for later in ("\n## newest decisions", "\n## recent commits", "\n## the log's preamble"):
        log_part = log_part.split(later)[0]
    assert "more lines" not in log_part  # (no entry folded into a count of its lines)
