"""`shiftkit run --agent claude --parallel 3` (and `--agent codex --parallel 2` on a smaller
list): real Claude Code loops (pinned, from npm:
tests/harnesses.py), each in its own clone of one bare remote, against the scripted model on
127.0.0.1 (tests/model_server.py; each session claims, does its feature's work, finishes).
The team finishes the list: every feature passes on the remote's branch, each finished once,
no claim left, and the team's spend is what the model served."""

from __future__ import annotations

import os
from pathlib import Path

import harnesses
from conftest import shiftkit
from model_server import ModelServer, shift
from teams import finished_on_remote, remote_claims, remote_list, team_project

NAMES = [f"f{i}.txt" for i in range(1, 7)]
WORK = {f"F{i:03d}": f"echo done > {name}" for i, name in enumerate(NAMES, start=1)}


def fresh_equivalent(server: ModelServer) -> float:
    """What the model served, weighed as the cost table weighs it (input 1, cache read 0.1,
    cache write 1.25, output 5)."""
    return sum(
        s.input_tokens + 0.1 * s.cache_read + 1.25 * s.cache_write + 5 * s.output_tokens
        for s in server.answered()
    )


def test_three_claude_code_loops_finish_the_list_once_each(scaffold: Path, tmp_path: Path) -> None:
    bare = team_project(scaffold, tmp_path, NAMES)
    with ModelServer(shift(WORK)) as server:
        claude = harnesses.claude(server.url, tmp_path / "claude-home")
        env = {**claude.env, "PATH": f"{claude.binary.parent}{os.pathsep}{os.environ['PATH']}"}
        result = shiftkit(
            scaffold,
            "run",
            "--agent",
            "claude",
            "--parallel",
            "3",
            "--clones",
            str(tmp_path / "agents"),
            "--max-sessions",
            "6",
            env=env,
        )
        served = fresh_equivalent(server)
    assert result.returncode == 0, result.output
    assert "Traceback" not in result.output
    assert all(item["passes"] is True for item in remote_list(bare)), result.output
    assert finished_on_remote(bare) == sorted(WORK), result.output  # each once
    assert remote_claims(bare) == []
    worked_in = {
        line.split("]", 1)[0].lstrip("[")
        for line in result.output.splitlines()
        if line.startswith("[agent-") and " passed · " in line
    }
    assert len(worked_in) >= 2, result.output  # the work was shared
    # the team's spend, as the view says it, is what the model served (within 1 %)
    project = [line for line in result.output.splitlines() if line.startswith("project: ")][-1]
    said = float(project.split("spent ", 1)[1].split(" fresh-equivalent", 1)[0].replace(",", ""))
    assert abs(said - served) <= 0.01 * served, (said, served, project)


def test_two_codex_loops_finish_a_smaller_list_once_each(scaffold: Path, tmp_path: Path) -> None:
    names = NAMES[:4]
    work = {f"F{i:03d}": f"echo done > {name}" for i, name in enumerate(names, start=1)}
    bare = team_project(scaffold, tmp_path, names)
    clones = tmp_path / "agents"
    with ModelServer(shift(work), model=harnesses.CODEX_MODEL) as server:
        trusted = [clones / "agent-1", clones / "agent-2"]
        codex = harnesses.codex(server.url, tmp_path / "codex-home", trusted)
        env = {**codex.env, "PATH": f"{codex.binary.parent}{os.pathsep}{os.environ['PATH']}"}
        result = shiftkit(
            scaffold,
            "run",
            "--agent",
            "codex",
            "--dangerously-bypass-hook-trust",
            "--parallel",
            "2",
            "--clones",
            str(clones),
            "--max-sessions",
            "5",
            env=env,
        )
    assert result.returncode == 0, result.output
    assert "Traceback" not in result.output
    assert all(item["passes"] is True for item in remote_list(bare)), result.output
    assert finished_on_remote(bare) == sorted(work), result.output
    assert remote_claims(bare) == []
