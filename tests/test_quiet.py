"""Quiet: no git hint block and no colour codes in what shiftkit prints or in what an agent
under `shiftkit run` sees from git (decision 0067)."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import shell_features, shiftkit, write

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
