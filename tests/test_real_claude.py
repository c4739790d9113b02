"""The real Claude Code (pinned, from npm: tests/harnesses.py) against a real scaffold, driven
by the scripted model on 127.0.0.1 (tests/model_server.py): the brief reaches the model, the
guard denies, the Stop hook sends the session back and it continues, SessionEnd records the
usage Claude Code itself reports, a resumed session is the same session, and `shiftkit run
--agent claude` takes a 3-feature project to "all pass". What the model read is asserted from
the server's request log; usage and money against Claude Code's own JSON result."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import harnesses
from conftest import GOOD_IMPL, git_ok, ok, shell_features, shiftkit
from model_server import Call, ModelServer, Step, calc_work, shell, shift, steps, texts

from shiftkit.core import ledger

HOOK_ERROR = "PreToolUse:Bash hook error: "
STOP_FEEDBACK = "Stop hook feedback:\n"
NAMES = {"F001": "add", "F002": "sub", "F003": "mul"}
FILES = {"F001": "a.txt", "F002": "b.txt", "F003": "c.txt"}
FILE_WORK = {feature: f"echo done > {name}" for feature, name in FILES.items()}


def wrapper_text(message: str, start: str, script: str) -> int:
    """Characters of a model-visible hook message between Claude Code's own prefix and
    shiftkit's line, beyond the hook script's name: ``[<command>]: `` less ``script``."""
    at = message.index(start) + len(start)
    rest = message[at:]
    assert rest.startswith("["), rest[:80]
    command = rest[1 : rest.index("]: ")]
    assert rest[len(command) + 4 :].startswith("shiftkit"), rest[:200]
    return len(command) - len(script) if command.startswith(script) else len(command)


def model_read(server: ModelServer) -> list[str]:
    """Every text the model was sent in the main requests' messages."""
    found: list[str] = []
    for request in server.main_requests():
        found.extend(texts(request.body.get("messages")))
    return found


def result_of(stdout: str) -> dict[str, Any]:
    value = json.loads(stdout)
    assert isinstance(value, dict) and value.get("type") == "result", stdout[:500]
    return value


def sessions_in(project: Path) -> list[str]:
    """The sessions `cost --by session` names (without a person's own, `manual`)."""
    by_session = json.loads(ok(project, "cost", "--by", "session", "--json"))["by_session"]
    return sorted(key for key in by_session if key != "manual")


def f000_done(project: Path) -> None:
    ok(project, "claim", "F000")
    ok(project, "finish", "-m", "The environment builds")


def test_a_whole_shift_brief_claim_edit_finish_and_its_usage(calc: Path, tmp_path: Path) -> None:
    f000_done(calc)
    with ModelServer(shift(calc_work(GOOD_IMPL, NAMES))) as server:
        claude = harnesses.claude(server.url, tmp_path / "claude-home")
        result = claude.run(calc, "You are one shift of a long-running project.")
    assert result.returncode == 0, result.stderr
    out = result_of(result.stdout)
    first = " ".join(texts(server.main_requests()[0].body.get("messages")))
    assert "SessionStart:startup hook success: # shiftkit start" in first
    assert "next: F001" in first  # the brief reached the model, the next feature first
    status = json.loads(ok(calc, "show", "F001", "--json"))
    assert status["passes"] is True
    assert git_ok(calc, "status", "--porcelain") == ""
    # the session is Claude Code's own id, in the ledger and in `cost --by session`
    session = out["session_id"]
    assert sessions_in(calc) == [session]
    # SessionEnd recorded the usage; its totals are Claude Code's own
    totals = json.loads(ok(calc, "cost", "--json"))["totals"]
    usage = out["usage"]
    assert totals["input"] == usage["input_tokens"]
    assert totals["output"] == usage["output_tokens"]
    assert totals["cache_read"] == usage["cache_read_input_tokens"]
    assert totals["cache_write"] == usage["cache_creation_input_tokens"]
    expected = sum(s.input_tokens for s in server.answered())
    assert usage["input_tokens"] == expected  # (what the server sent, every response once)
    # dollars by default, within 1 % of Claude Code's total_cost_usd
    assert abs(totals["usd"] - out["total_cost_usd"]) <= 0.01 * out["total_cost_usd"]
    # the transcript reader (and the hand-written transcripts of the other tests) against the
    # transcript Claude Code really wrote: one message per response, the server's usage each
    [path] = claude.transcripts()
    messages = ledger.transcript_messages([path.read_text()])
    assert [m.usage.input for m in messages] == [s.input_tokens for s in server.answered()]
    assert {m.model for m in messages} == {harnesses.CLAUDE_MODEL}


def test_guard_denial_and_stop_refusal_read_clean(scaffold: Path, tmp_path: Path) -> None:
    script = steps(
        Step(calls=[shell("anthropic", "git push --force origin HEAD")]),
        Step(calls=[Call("Write", {"file_path": str(scaffold / "stray.txt"), "content": "x\n"})]),
        Step(text="All done."),
        Step(calls=[shell("anthropic", "rm stray.txt")]),
        Step(text="Cleaned up."),
    )
    with ModelServer(script) as server:
        claude = harnesses.claude(server.url, tmp_path / "claude-home")
        result = claude.run(scaffold, "Tidy up.")
    assert result.returncode == 0, result.stderr
    read = model_read(server)
    denials = [text for text in read if HOOK_ERROR in text]
    stops = [text for text in read if STOP_FEEDBACK in text]
    assert denials and "force push" in denials[0]
    assert stops and "stray.txt" in stops[0]
    # what the model reads is shiftkit's line after the script's name: no wrapper text
    assert wrapper_text(denials[0], HOOK_ERROR, ".shiftkit/hook guard") == 0
    assert wrapper_text(stops[0], STOP_FEEDBACK, ".shiftkit/hook stop-check") == 0
    # the Stop hook's refusal made the session go on: it cleaned up, and then it could stop
    assert len(server.main_requests()) == 5
    assert not (scaffold / "stray.txt").exists()
    assert result_of(result.stdout)["result"] == "Cleaned up."


def hook_outputs(claude: harnesses.Harness, event: str) -> list[str]:
    """What Claude Code's transcripts record of shiftkit's hooks for ``event`` (its
    ``hook_success`` attachments: the hook's standard output, by source)."""
    found = []
    for path in claude.transcripts():
        for line in path.read_text().splitlines():
            attachment = json.loads(line).get("attachment")
            if isinstance(attachment, dict) and attachment.get("hookEvent") == event:
                found.append(f"{attachment.get('hookName')}: {attachment.get('stdout', '')}")
    return found


def test_a_resumed_and_compacted_session_is_the_same_session(
    scaffold: Path, tmp_path: Path
) -> None:
    script = steps(Step(text="Looked around."), Step(text="Still here."), Step(text="Summary."))
    with ModelServer(script) as server:
        claude = harnesses.claude(server.url, tmp_path / "claude-home")
        first = claude.run(scaffold, "Look around.")
        session = result_of(first.stdout)["session_id"]
        again = claude.run(scaffold, "Go on.", "--resume", session)
        compacted = claude.run(scaffold, "/compact", "--resume", session)
    assert again.returncode == 0 and compacted.returncode == 0, again.stderr + compacted.stderr
    assert result_of(again.stdout)["session_id"] == session
    assert result_of(compacted.stdout)["session_id"] == session
    resumed = " ".join(texts(server.main_requests()[1].body.get("messages")))
    assert "SessionStart:resume hook success: # shiftkit start" in resumed
    briefs = hook_outputs(claude, "SessionStart")
    for source in ("startup", "resume", "compact"):  # each start re-briefed the model
        assert any(b.startswith(f"SessionStart:{source}: # shiftkit start") for b in briefs)
    remembered = json.loads((scaffold / ".git" / "shiftkit" / "session.json").read_text())
    assert remembered["session"] == session
    assert sessions_in(scaffold) == [session]


def test_run_drives_claude_code_through_three_features(scaffold: Path, tmp_path: Path) -> None:
    """Three features whose verifiers are quick (`test -f`): the time is the harness's and
    shiftkit's, not a test runner's."""
    calc = scaffold
    shell_features(calc, *FILES.values())
    f000_done(calc)
    with ModelServer(shift(FILE_WORK)) as server:
        claude = harnesses.claude(server.url, tmp_path / "claude-home")
        env = {**claude.env, "PATH": f"{claude.binary.parent}{os.pathsep}{os.environ['PATH']}"}
        result = shiftkit(calc, "run", "--agent", "claude", "--max-sessions", "5", env=env)
    assert result.returncode == 0, result.output
    assert "all 4 features pass (checked at HEAD)" in result.output
    rows = json.loads(ok(calc, "cost", "--json"))["features"]
    for feature in FILES:  # cost per feature, from the real transcripts, in dollars
        assert rows[feature]["input"] > 0 and rows[feature]["usd"] > 0, rows[feature]
    assert len(sessions_in(calc)) == 3
