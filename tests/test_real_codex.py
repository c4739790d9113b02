"""The real Codex CLI (pinned, from npm: tests/harnesses.py) against a real scaffold, driven by
the scripted model on 127.0.0.1 (tests/model_server.py): untrusted hooks are said and refused
by `run`; with the explicit flag every hook fires (the brief reaches the model, the guard
denies a force push and a patch of the feature list, the Stop hook sends the session back),
SessionEnd records each response once with the rollout's own totals, a resumed session is the
same session, and `shiftkit run --agent codex` takes a 3-feature project to "all pass". The
hand-written rollout fixture is pinned against the rollout Codex really writes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import harnesses
import pytest
from conftest import GOOD_IMPL, git_ok, ok, shell_features, shiftkit
from model_server import Call, ModelServer, Step, calc_work, shell, shift, steps, texts

from shiftkit.core import loop, rollout

BYPASS = "--dangerously-bypass-hook-trust"
NAMES = {"F001": "add", "F002": "sub", "F003": "mul"}
FILES = {"F001": "a.txt", "F002": "b.txt", "F003": "c.txt"}
FILE_WORK = {feature: f"echo done > {name}" for feature, name in FILES.items()}
FIXTURE = Path(__file__).parent / "data" / "codex-rollout.jsonl"
BLOCKED = "Command blocked by PreToolUse hook: "


def with_codex(env: dict[str, str], codex: harnesses.Harness) -> dict[str, str]:
    return {**env, "PATH": f"{codex.binary.parent}{os.pathsep}{os.environ['PATH']}"}


def model_read(server: ModelServer) -> list[str]:
    """The texts of the last request's input: the whole conversation the model was shown."""
    return texts(server.main_requests()[-1].body.get("input"))


def preset(project: Path) -> list[str]:
    """`run --agent codex`'s own arguments (its sandbox, the git dir writable, `bash -c`),
    with the one-run bypass of hook trust."""
    common = Path(git_ok(project, "rev-parse", "--git-common-dir").strip())
    command = loop.preset_command("codex", str((project / common).resolve()))
    assert command is not None
    return [BYPASS, *command[3:]]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def last_total(path: Path) -> dict[str, int]:
    """The rollout's own last `total_token_usage`: Codex's totals for the session."""
    totals = [
        v["payload"]["info"]["total_token_usage"]
        for v in lines(path)
        if v.get("type") == "event_msg"
        and v["payload"].get("type") == "token_count"
        and v["payload"].get("info")
    ]
    return totals[-1]


def f000_done(project: Path) -> None:
    ok(project, "claim", "F000")
    ok(project, "finish", "-m", "The environment builds")


def trust_entries(project: Path, codex: harnesses.Harness) -> str:
    """What a person's `/hooks` in Codex writes: each hook's key and the hash Codex itself
    reports for it (read from `codex app-server`, never computed here)."""
    from shiftkit.edge import codex_trust

    asked = codex_trust._exchange(str(codex.binary), project)
    assert asked is not None and asked.hooks
    return "".join(
        f"[hooks.state.{json.dumps(h['key'])}]\ntrusted_hash = {json.dumps(h['currentHash'])}\n"
        for h in asked.hooks
    )


def test_untrusted_hooks_are_said_and_run_refuses_until_trusted(
    scaffold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ModelServer(steps()) as server:
        codex = harnesses.codex(server.url, tmp_path / "codex-home")
        env = with_codex(codex.env, codex)
        untrusted_project = shiftkit(scaffold, "setup", env=env)
        assert untrusted_project.returncode == 0, untrusted_project.output
        [said] = [line for line in untrusted_project.stderr.splitlines() if "Codex" in line]
        assert "does not trust this project" in said
        assert f'[projects."{scaffold}"] trust_level = "trusted"' in said
        codex = harnesses.codex(server.url, tmp_path / "codex-home", [scaffold])
        setup = shiftkit(scaffold, "setup", env=env)
        [said] = [line for line in setup.stderr.splitlines() if "Codex" in line]
        assert "will not run 4 of this project's 4 hooks" in said and "/hooks" in said
        refused = shiftkit(scaffold, "run", "--agent", "codex", env=env)
        assert refused.returncode != 0 and "/hooks" in refused.stderr, refused.output
        assert refused.stderr.count("\n") == 1
        assert not server.log  # no session was started
        for command in (("start", "--no-check"), ("report", "--json")):
            said = shiftkit(scaffold, *command, env=env).stderr
            assert "will not run 4 of this project's 4 hooks" in said, command
        # a person trusts them (as /hooks does): Codex says so, and shiftkit says nothing
        monkeypatch.setenv("CODEX_HOME", str(codex.home))
        with (codex.home / "config.toml").open("a") as config:
            config.write(trust_entries(scaffold, codex))
        trusted = shiftkit(scaffold, "setup", env=env)
        assert "Codex" not in trusted.output, trusted.output


def test_every_hook_fires_guard_and_stop_read_clean(scaffold: Path, tmp_path: Path) -> None:
    edit_list = "*** Begin Patch\n*** Update File: features.json\n@@\n-[\n+[ \n*** End Patch\n"
    stray = "*** Begin Patch\n*** Add File: stray.txt\n+x\n*** End Patch\n"
    script = steps(
        Step(calls=[shell("responses", "git push --force origin HEAD")]),
        Step(calls=[Call("apply_patch", edit_list)]),
        Step(calls=[Call("apply_patch", stray)]),
        Step(text="All done."),
        Step(calls=[shell("responses", "rm stray.txt")]),
        Step(text="Cleaned up."),
    )
    before = (scaffold / "features.json").read_text()
    with ModelServer(script, model=harnesses.CODEX_MODEL) as server:
        codex = harnesses.codex(server.url, tmp_path / "codex-home", [scaffold])
        result = codex.run(scaffold, "Tidy up.", *preset(scaffold))
    assert result.returncode == 0, result.stderr
    read = model_read(server)
    assert any(text.startswith("# shiftkit start") for text in read)  # the brief
    denials = [text for text in read if text.startswith(BLOCKED)]
    assert len(denials) == 2, read[-12:]
    assert "force push" in denials[0] and "features.json" in denials[1]
    for denial in denials:  # shiftkit's line, nothing of the hook's command around it
        assert denial[len(BLOCKED) :].startswith("shiftkit guard: ")
    assert (scaffold / "features.json").read_text() == before
    [stop] = [text for text in read if "<hook_prompt" in text]
    assert "stray.txt" in stop
    assert stop.split(">", 1)[1].startswith("shiftkit: ")  # no wrapper text before it
    assert not (scaffold / "stray.txt").exists()  # the Stop hook's refusal was acted on
    assert len(server.main_requests()) == 6


def test_a_whole_shift_and_session_end_records_each_response_once(
    calc: Path, tmp_path: Path
) -> None:
    f000_done(calc)
    with ModelServer(shift(calc_work(GOOD_IMPL, NAMES)), model=harnesses.CODEX_MODEL) as server:
        codex = harnesses.codex(server.url, tmp_path / "codex-home", [calc])
        result = codex.run(calc, "You are one shift of a long-running project.", *preset(calc))
    assert result.returncode == 0, result.stderr
    first = " ".join(texts(server.main_requests()[0].body.get("input")))
    assert "# shiftkit start" in first and "next: F001" in first
    assert json.loads(ok(calc, "show", "F001", "--json"))["passes"] is True
    assert git_ok(calc, "status", "--porcelain") == ""
    [path] = codex.transcripts()
    thread = next(e["thread_id"] for e in result.json_lines() if e.get("type") == "thread.started")
    # the session is Codex's own id, in the ledger and in `cost --by session`
    by_session = json.loads(ok(calc, "cost", "--by", "session", "--json"))["by_session"]
    assert sorted(key for key in by_session if key != "manual") == [thread]
    # SessionEnd recorded the rollout: every response once, its totals Codex's own
    totals = json.loads(ok(calc, "cost", "--json"))["totals"]
    codex_total = last_total(path)
    assert totals["input"] + totals["cache_read"] == codex_total["input_tokens"]
    assert totals["cache_read"] == codex_total["cached_input_tokens"]
    assert totals["output"] == codex_total["output_tokens"]
    assert codex_total["total_tokens"] == codex_total["input_tokens"] + codex_total["output_tokens"]
    assert len(rollout.turns(path.read_text(), thread)) == len(server.main_requests()) == 4
    assert totals["usd"] > 0  # priced by the bundled table, without configuration
    again = shiftkit(calc, "usage", "record", "--transcript", str(path))
    assert json.loads(ok(calc, "cost", "--json"))["totals"] == totals, again.output


def test_a_resumed_session_is_the_same_session(scaffold: Path, tmp_path: Path) -> None:
    with ModelServer(steps(Step(text="Looked."), Step(text="Still here.")), model="gpt-5.5") as s:
        codex = harnesses.codex(s.url, tmp_path / "codex-home", [scaffold])
        first = codex.run(scaffold, "Look around.", BYPASS)
        thread = next(e["thread_id"] for e in first.json_lines() if e["type"] == "thread.started")
        again = codex.run(scaffold, "Go on.", BYPASS, "resume", thread)
    assert again.returncode == 0, again.stderr
    resumed = next(e for e in again.json_lines() if e["type"] == "thread.started")
    assert resumed["thread_id"] == thread
    last = " ".join(texts(s.main_requests()[-1].body.get("input")))
    assert "Looked." in last and "# shiftkit start" in last  # the same conversation, briefed
    remembered = json.loads((scaffold / ".git" / "shiftkit" / "session.json").read_text())
    assert remembered["session"] == thread


def test_run_drives_codex_through_three_features(scaffold: Path, tmp_path: Path) -> None:
    """Three features whose verifiers are quick (`test -f`): the time is the harness's and
    shiftkit's, not a test runner's."""
    calc = scaffold
    shell_features(calc, *FILES.values())
    f000_done(calc)
    with ModelServer(shift(FILE_WORK), model=harnesses.CODEX_MODEL) as server:
        codex = harnesses.codex(server.url, tmp_path / "codex-home", [calc])
        env = with_codex(codex.env, codex)
        result = shiftkit(calc, "run", "--agent", "codex", BYPASS, "--max-sessions", "5", env=env)
    assert result.returncode == 0, result.output
    assert "all 4 features pass (checked at HEAD)" in result.output
    rows = json.loads(ok(calc, "cost", "--json"))["features"]
    for feature in FILES:  # cost per feature, from the real rollouts, in dollars
        assert rows[feature]["input"] > 0 and rows[feature]["usd"] > 0, rows[feature]
    by_session = json.loads(ok(calc, "cost", "--by", "session", "--json"))["by_session"]
    assert len([key for key in by_session if key != "manual"]) == 3


def test_the_rollout_fixture_has_the_shape_codex_writes(scaffold: Path, tmp_path: Path) -> None:
    """tests/data/codex-rollout.jsonl is hand-written: every line kind and key shiftkit reads
    in it is in the rollout the real Codex writes, with values of the same types."""
    with ModelServer(steps(Step(text="Hello.")), model=harnesses.CODEX_MODEL) as server:
        codex = harnesses.codex(server.url, tmp_path / "codex-home", [scaffold])
        result = codex.run(scaffold, "Say hello.")
    assert result.returncode == 0, result.stderr
    [path] = codex.transcripts()
    real = lines(path)

    def shape(items: list[dict[str, Any]]) -> dict[str, dict[str, type]]:
        found: dict[str, dict[str, type]] = {}
        for v in items:
            kind = v["type"] if v["type"] != "event_msg" else f"event_msg.{v['payload']['type']}"
            if kind == "event_msg.token_count" and not v["payload"].get("info"):
                continue
            keys = found.setdefault(kind, {"timestamp": type(v["timestamp"])})
            for key, value in v["payload"].items():
                keys[key] = type(value)
        return found

    fixture, actual = shape(lines(FIXTURE)), shape(real)
    for kind in ("session_meta", "turn_context", "event_msg.token_count"):
        for key in {"session_meta": ("id", "cwd"), "turn_context": ("model",)}.get(kind, ("info",)):
            assert key in fixture[kind] and actual[kind][key] is fixture[kind][key], (kind, key)
    info = next(v["payload"]["info"] for v in real if v["payload"].get("type") == "token_count")
    for key in ("total_token_usage", "last_token_usage"):
        fields = set(info[key])
        assert {"input_tokens", "cached_input_tokens", "output_tokens"} <= fields
        assert {"reasoning_output_tokens", "total_tokens"} <= fields
