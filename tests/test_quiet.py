"""Quiet: no git hint block and no colour codes in what shiftkit prints or in what an agent
under `shiftkit run` sees from git (decision 0067)."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import run, shell_features, shiftkit, write

# An agent's session: plain git reads, a commit through the hooks, a claim and a finish;
# every line git and shiftkit print goes into one file.
AGENT = r"""
import json, subprocess, sys
out = open(sys.argv[1], "a")
def say(*args):
    done = subprocess.run(list(args), capture_output=True, text=True)
    out.write(f"$ {' '.join(args)}\n{done.stdout}{done.stderr}")
say("git", "log", "--oneline", "-3")
say("git", "rev-list", "--all", "--count")
say("git", "status", "--short")
open("notes.md", "w").write("the plan\n")
say("git", "add", "notes.md")
say("git", "commit", "-m", "Add notes on the plan")
say("shiftkit", "claim")
open("a.txt", "w").write("done\n")
say("shiftkit", "finish", "-m", "make a.txt exist")
say("git", "log", "--format=%s", "-2")
print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                  "num_turns": 1, "result": "done", "session_id": "s-1",
                  "usage": {"input_tokens": 10, "output_tokens": 1}}))
"""


def assert_quiet(text: str) -> None:
    lines = [line for line in text.splitlines() if line.lstrip().startswith("hint:")]
    assert not lines, text
    assert "\x1b[" not in text, text


def test_new_prints_no_hint_and_no_colour_when_piped(tmp_path: Path) -> None:
    result = shiftkit(tmp_path, "new", str(tmp_path / "todo"), "--defaults")
    assert result.returncode == 0, result.output
    assert "    create  AGENTS.md" in result.stderr  # copier's lines, uncoloured
    assert "Passed" in result.output  # the first commit ran through the hooks
    assert_quiet(result.output)


def test_an_agent_under_run_sees_no_hint_from_git(scaffold: Path, tmp_path: Path) -> None:
    shell_features(scaffold, "a.txt")
    assert shiftkit(scaffold, "claim", "F000").returncode == 0
    assert shiftkit(scaffold, "finish", "-m", "the environment builds").returncode == 0
    write(tmp_path / "agent.py", AGENT)
    said = tmp_path / "said.txt"
    command = f"{sys.executable} {tmp_path / 'agent.py'} {said}"
    result = shiftkit(scaffold, "run", "--agent", command, "--max-sessions", "1", "--verbose")
    transcript = said.read_text()
    assert "Add notes on the plan" in transcript and "F001: make a.txt exist" in transcript
    assert_quiet(transcript)
    assert_quiet(result.output)


# -- small untruths (issue 30) -----------------------------------------------------------------


def test_status_after_finish_does_not_say_unchecked(scaffold: Path) -> None:
    assert shiftkit(scaffold, "claim", "F000").returncode == 0
    finished = shiftkit(scaffold, "finish", "-m", "the environment builds")
    assert "F000 passes" in finished.output
    status = shiftkit(scaffold, "status").stdout
    assert "not checked at HEAD" not in status  # finish did verify it, in the work tree
    assert "not yet verified in a clean checkout of HEAD — run `shiftkit check`" in status


def test_claiming_an_unknown_id_says_so_before_any_check(scaffold: Path) -> None:
    result = shiftkit(scaffold, "claim", "F999")
    assert result.returncode == 2, result.output
    assert "unknown feature id 'F999'" in result.stderr
    assert "start check" not in result.output and "running it now" not in result.output
    assert "smoke" not in result.output


def test_help_lines_are_true_and_short() -> None:
    listing = shiftkit(Path.cwd(), "--help").stdout
    lines = [*listing.splitlines(), ""]
    [report] = [n for n, line in enumerate(lines) if line.startswith("  report ")]
    after = lines[report + 1]
    assert not after.startswith("                "), listing  # one line, not five
    assert ".codex/hooks.json" in " ".join(shiftkit(Path.cwd(), "new", "--help").stdout.split())
    setup = " ".join(shiftkit(Path.cwd(), "setup", "--help").stdout.split())
    assert "merge drivers" in setup and "merge driver " not in setup
    assert "merge drivers" in listing and "the merge driver " not in listing


def test_a_second_copy_says_its_line_without_the_error_prefix(scaffold: Path) -> None:
    """`shiftkit:` starts a refusal or an error; a recopy's success line is neither."""
    again = run(
        [sys.executable, "-m", "copier", "recopy", "--trust", "--defaults", "--overwrite"],
        scaffold,
        timeout=300,
    )
    assert again.returncode == 0, again.output
    [line] = [x for x in again.output.splitlines() if "is a shiftkit project already" in x]
    assert not line.startswith("shiftkit:"), line


def test_run_on_a_terminal_says_a_session_started_while_it_runs(
    scaffold: Path, tmp_path: Path
) -> None:
    import os
    import pty
    import select
    import subprocess
    import time

    write(
        tmp_path / "waiting.py",
        "import os, sys, time\n"
        "go = sys.argv[1]\n"
        "while not os.path.exists(go):\n"
        "    time.sleep(0.05)\n",
    )
    command = f"{sys.executable} {tmp_path / 'waiting.py'} {tmp_path / 'go'}"
    main, child = pty.openpty()
    proc = subprocess.Popen(
        ["shiftkit", "run", "--agent", command, "--max-sessions", "1"],
        cwd=scaffold,
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
    )
    os.close(child)
    seen = b""
    try:
        deadline = time.monotonic() + 120
        while b"session 1: started" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if ready:
                try:
                    seen += os.read(main, 4096)
                except OSError:
                    break
        assert b"session 1: started" in seen, seen.decode(errors="replace")
        assert proc.poll() is None  # said while the session runs
    finally:
        (tmp_path / "go").write_text("go\n")
        proc.wait(timeout=120)
        while True:
            try:
                if not os.read(main, 4096):
                    break
            except OSError:
                break
        os.close(main)
