"""The protocol's files are read only when they are regular files: a FIFO or a link to
/dev/zero where the settings, the feature list or the progress log belong once hung the guard
past Claude Code's hook timeout and hung `status`, `start` and `log`. Now each says so in one
shiftkit: line (or carries on without the file), and the guard has a deadline of its own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run

from shiftkit.edge import files

COMMANDS = (("status",), ("start", "--brief"), ("log",))


def shiftkit_within(
    project: Path, *args: str, input: str | None = None, **env: str
) -> tuple[int, str]:
    result = run(["shiftkit", *args], project, input=input, env=env, timeout=60)
    assert "Traceback" not in result.output, result.output
    return result.returncode, result.stderr


@pytest.mark.parametrize("name", [".shiftkit.toml", "features.json", "claude-progress.txt"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_a_device_in_place_of_a_file_is_refused_not_waited_on(
    scaffold: Path, name: str, kind: str
) -> None:
    path = scaffold / name
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    for args in COMMANDS:
        code, stderr = shiftkit_within(scaffold, *args)
        assert code in (0, 2), (args, code, stderr)
        if code == 2:
            assert stderr.startswith(f"shiftkit: {name}: cannot be read (not a regular file"), (
                args,
                stderr,
            )
    payload = {
        "tool_name": "Edit",
        "cwd": str(scaffold),
        "tool_input": {"file_path": str(scaffold / "features.json"), "old_string": "a"},
    }
    code, stderr = shiftkit_within(scaffold, "guard", input=json.dumps(payload))
    assert code in (0, 2) and "no decision within" not in stderr, stderr


def test_the_shared_reader_reads_regular_files_as_path_read_text(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"one\r\ntwo\n")
    assert files.read_text(path) == path.read_text(encoding="utf-8")
    with pytest.raises(IsADirectoryError):
        files.read_text(tmp_path)
    with pytest.raises(FileNotFoundError):
        files.read_text(tmp_path / "missing")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        files.read_text(fifo)


def test_the_guard_denies_when_it_cannot_decide_in_time(scaffold: Path) -> None:
    """Past its deadline (20 s, under the 30 s hook timeout; shortened here) the guard denies
    in one line: a hook killed by Claude Code would let the call through."""
    command = "echo x && " * 200_000 + "git status"
    payload = json.dumps({"tool_name": "Bash", "tool_input": {"command": command}})
    code, stderr = shiftkit_within(scaffold, "guard", input=payload, SHIFTKIT_GUARD_DEADLINE="0.05")
    assert code == 2 and stderr.startswith("shiftkit: guard: no decision within"), stderr
    assert stderr.count("\n") == 1
    code, stderr = shiftkit_within(
        scaffold, "guard", input=payload.replace("echo x && ", ""), SHIFTKIT_GUARD_DEADLINE="5"
    )
    assert (code, stderr) == (0, "")


def test_the_guards_deadline_is_under_its_hook_timeout() -> None:
    from shiftkit.commands import guard
    from shiftkit.core.resources import template_root

    settings = json.loads((template_root() / "template/.claude/settings.json").read_text())
    [entry] = settings["hooks"]["PreToolUse"]
    [hook] = entry["hooks"]
    assert hook["command"] == ".shiftkit/hook guard"
    assert hook["timeout"] - 5 >= guard.DEADLINE  # time to start Python and print the line
