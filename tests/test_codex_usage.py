"""Codex CLI's usage in the ledger, as Claude Code's: a rollout written from the documented
format (tests/data/codex-rollout.jsonl: one session, two responses, `token_count` lines
repeated, cached input, an `info: null` line) counts each response once however often it is
read, at the feature claimed at its time, and `cost --json` gives the figures computed by hand;
a rollout is found by its hook's `transcript_path` or by `session_meta.cwd` under
$CODEX_HOME/sessions; `shiftkit run --agent codex` (a scripted stand-in named `codex` on PATH)
records one session once; bad lines are skipped and no bytes make a traceback."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import fuzz_examples, git_ok, shell_features, shiftkit, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shiftkit.core import loop, rollout
from shiftkit.core.ledger import MAX_TOKENS, Usage

FIXTURE = Path(__file__).parent / "data" / "codex-rollout.jsonl"
SESSION = "0199d0c4-5e1a-7a52-9d3e-6f1c2b3a4d5e"
PRICES = (
    "\n[shiftkit.prices]\n"
    '"gpt-5-codex" = { input = 1.25, cache_read = 0.125, cache_write = 1.25, output = 10.0 }\n'
)

# The fixture by hand. Response 1 (10:00:05): cumulative input 12,000 of which 8,000 cached,
# output 600 and reasoning 200. Response 2 (10:00:10): cumulative 30,000 / 24,000 / 1,500 /
# 500, so the response is 18,000 input of which 16,000 cached, 900 output (300 of them
# reasoning). The ledger's output is output_tokens, which holds the reasoning (OpenAI's usage
# object; a real Codex rollout's total_tokens = input + output: decision 0040). The repeats
# (three lines with the first totals, two with the second) and the `info: null` line count
# nothing.
TURN_1 = Usage(input=12_000 - 8_000, cache_read=8_000, cache_write=0, output=600)
TURN_2 = Usage(input=(30_000 - 12_000) - (24_000 - 8_000), cache_read=16_000, output=900)
TOTAL = Usage(input=4_000 + 2_000, cache_read=8_000 + 16_000, cache_write=0, output=600 + 900)
# fresh-equivalent: input + 0.1 * cache read + 1.25 * cache write + 5 * output
FRESH = 6_000 + 0.1 * 24_000 + 1.25 * 0 + 5 * 1_500  # = 15,900
# dollars at gpt-5-codex's prices per million: 1.25 input, 0.125 cached input, 10 output
USD = (6_000 * 1.25 + 24_000 * 0.125 + 1_500 * 10.0) / 1_000_000  # = 0.0255


def ok(project: Path, *args: str, input: str | None = None) -> str:
    result = shiftkit(project, *args, input=input)
    assert result.returncode == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout


def cost_json(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ok(project, "cost", "--json"))
    return data


def kinds(row: dict[str, Any]) -> Usage:
    return Usage(row["input"], row["cache_read"], row["cache_write"], row["output"])


def price(project: Path) -> None:
    config = project / ".shiftkit.toml"
    config.write_text(config.read_text() + PRICES)
    git_ok(project, "commit", "-q", "-am", "Price gpt-5-codex")


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def retimed(cwd: Path, first: datetime, second: datetime | None) -> str:
    """The fixture with its cwd set and its lines moved in time: up to the first response at
    ``first``, the rest at ``second`` (each line keeps its offset; None: left out)."""
    lines = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    base = datetime.fromisoformat("2026-11-30T10:00:00+00:00")
    out = []
    for value in lines:
        at = datetime.fromisoformat(value["timestamp"].replace("Z", "+00:00"))
        offset = at - base
        if second is None and offset >= timedelta(seconds=10):
            continue
        anchor = first if offset < timedelta(seconds=10) or second is None else second
        start = timedelta(seconds=5) if anchor is first else timedelta(seconds=10)
        value["timestamp"] = iso(anchor + offset - start)
        if "cwd" in value["payload"]:
            value["payload"]["cwd"] = str(cwd)
        out.append(json.dumps(value))
    return "\n".join(out) + "\n"


# -- the format, pure --------------------------------------------------------------------------


def test_each_response_once_from_the_changes_of_the_cumulative_totals() -> None:
    text = FIXTURE.read_text()
    assert rollout.is_rollout(text)
    assert rollout.meta(text) == (SESSION, "/home/dev/todo-app")
    found = rollout.usage_messages([text], SESSION)
    assert [(m.model, m.at, m.usage) for m in found] == [
        ("gpt-5-codex", "2026-11-30T10:00:05.000Z", TURN_1),
        ("gpt-5-codex", "2026-11-30T10:00:10.000Z", TURN_2),
    ]
    # the same file twice (a re-read, a copy) is the same responses, never more
    assert rollout.usage_messages([text + text], SESSION) == found


def test_a_claude_transcript_is_not_read_as_a_rollout() -> None:
    claude = json.dumps(
        {
            "type": "assistant",
            "timestamp": "2026-11-30T10:00:00Z",
            "message": {"id": "msg_1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 3}},
        }
    )
    assert not rollout.is_rollout(claude)
    [message] = rollout.usage_messages([claude])
    assert message.id == "msg_1" and message.usage == Usage(3, 0, 0, 0)
    both = rollout.usage_messages([claude, FIXTURE.read_text()], SESSION)
    assert [m.usage for m in both] == [Usage(3, 0, 0, 0), TURN_1, TURN_2]


def token_line(at: str, total: dict[str, Any] | None) -> str:
    info = None if total is None else {"total_token_usage": total, "last_token_usage": total}
    return json.dumps(
        {"timestamp": at, "type": "event_msg", "payload": {"type": "token_count", "info": info}}
    )


META = json.dumps({"timestamp": "2026-11-30T10:00:00Z", "type": "session_meta", "payload": {}})
GOOD = {"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 7}


@pytest.mark.parametrize(
    "bad",
    [
        "{not json at all",
        '{"timestamp": "2026-11-30T10:00:01Z", "type": "event_msg", "payload": {"type": "token',
        token_line("2026-11-30T10:00:01Z", {**GOOD, "input_tokens": -5}),
        token_line("2026-11-30T10:00:01Z", {**GOOD, "output_tokens": 10**400}),
        token_line("2026-11-30T10:00:01Z", {**GOOD, "output_tokens": MAX_TOKENS + 1}),
        token_line("2026-11-30T10:00:01Z", {**GOOD, "cached_input_tokens": True}),
        token_line("2026-11-30T10:00:01Z", {**GOOD, "input_tokens": 2.5}),
        token_line("2026-11-30T10:00:01Z", {**GOOD, "input_tokens": "100"}),
        token_line("2026-11-30T10:00:01", GOOD),  # no zone: no moment
        token_line("yesterday", GOOD),
        token_line("2026-11-30T10:00:01Z", None),
        '{"x": ' + "1" * 5000 + "}",  # past Python's digit limit
        "[" * 100_000,  # past its nesting limit
    ],
)
def test_bad_lines_are_skipped_and_the_good_ones_count_once(bad: str) -> None:
    good = token_line("2026-11-30T10:00:02Z", GOOD)
    [message] = rollout.turns("\n".join([META, bad, good, bad, good]))
    assert message.usage == Usage(60, 40, 0, 7) and message.model == rollout.UNKNOWN_MODEL


def test_usage_record_skips_bad_lines_without_a_word(scaffold: Path, tmp_path: Path) -> None:
    good = token_line("2026-11-30T10:00:02Z", GOOD)
    bad = [
        "{not json",
        token_line("2026-11-30T10:00:01Z", {**GOOD, "input_tokens": -5}),
        token_line("2026-11-30T10:00:01Z", {**GOOD, "output_tokens": 10**400}),
        "[" * 100_000,
    ]
    path = write(tmp_path / "r.jsonl", "\n".join([META, *bad, good, *bad, good]) + "\n")
    with path.open("ab") as handle:
        handle.write(b"\xff\xfe\x00garbage\n")
    out = ok(scaffold, "usage", "record", "--transcript", str(path), "--session", "s")
    assert "recorded 107 tokens of session s (unattributed)" in out


def test_totals_that_fall_start_a_new_count() -> None:
    lines = [
        META,
        token_line("2026-11-30T10:00:01Z", GOOD),
        token_line("2026-11-30T10:00:02Z", {**GOOD, "input_tokens": 50, "cached_input_tokens": 0}),
    ]
    assert [m.usage for m in rollout.turns("\n".join(lines))] == [
        Usage(60, 40, 0, 7),
        Usage(50, 0, 0, 7),
    ]


@settings(
    max_examples=fuzz_examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.binary(max_size=3000), st.booleans())
def test_any_bytes_as_a_rollout_never_raise(data: bytes, with_meta: bool) -> None:
    text = (META + "\n" if with_meta else "") + data.decode("utf-8", errors="replace")
    for message in rollout.usage_messages([text], "s"):
        assert all(0 <= kind <= MAX_TOKENS for kind in message.usage)
    rollout.meta(text)
    rollout.exec_events(text)


def test_exec_json_events_give_the_thread_and_the_turns_usage() -> None:
    out = "\n".join(
        [
            '{"type":"thread.started","thread_id":"0199-th"}',
            '{"type":"turn.started"}',
            '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}',
            '{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,'
            '"output_tokens":122}}',
            "not json",
            '{"type":"turn.failed","error":{"message":"x"},"usage":{"input_tokens":10,'
            '"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":1}}',
            '{"type":"turn.failed","error":{"message":"older versions carry no usage"}}',
        ]
    )
    run = rollout.exec_events(out)
    assert run == rollout.ExecRun("0199-th", Usage(24763 - 24448 + 10, 24448, 0, 122 + 1), 2)
    assert rollout.exec_events('{"type": "result", "usage": {}}') is None


def test_presets_build_the_harness_command_lines() -> None:
    assert loop.preset_command("claude", "/r/.git") == [
        "claude",
        "-p",
        "--output-format",
        "json",
        "--dangerously-skip-permissions",
    ]
    codex = loop.preset_command("codex", "/r/.git")
    assert codex is not None and codex[:3] == ["codex", "exec", "--json"]
    assert 'sandbox_workspace_write.writable_roots=["/r/.git"]' in codex
    assert codex[-2:] == ["-c", "allow_login_shell=false"]  # (a login shell resets PATH)
    assert loop.preset_command("codex exec --json", "/r/.git") is None


# -- in a project ------------------------------------------------------------------------------


def test_the_fixture_counts_once_however_often_read_and_costs_the_hand_figures(
    scaffold: Path, tmp_path: Path
) -> None:
    price(scaffold)
    path = write(tmp_path / "rollout-2026-11-30T10-00-00-fixture.jsonl", FIXTURE.read_text())
    out = ok(scaffold, "usage", "record", "--transcript", str(path))
    assert f"recorded {TOTAL.tokens:,} tokens of session {SESSION} (unattributed)" in out
    assert "nothing new" in ok(scaffold, "usage", "record", "--transcript", str(path))
    hook = json.dumps({"session_id": SESSION, "transcript_path": str(path), "cwd": str(scaffold)})
    assert "nothing new" in ok(scaffold, "usage", "record", input=hook)
    data = cost_json(scaffold)
    assert kinds(data["unattributed"]) == TOTAL
    assert kinds(data["totals"]) == TOTAL
    assert data["totals"]["fresh_equivalent"] == pytest.approx(FRESH) == 15_900
    assert data["totals"]["usd"] == pytest.approx(USD) == pytest.approx(0.0255)
    # the file grows (the session goes on): only the new response is added
    more = {"input_tokens": 40_000, "cached_input_tokens": 30_000, "output_tokens": 1_600}
    with path.open("a") as handle:
        handle.write(token_line("2026-11-30T10:00:20.000Z", more) + "\n")
    # (reasoning_output_tokens left out: a count Codex does not write is 0, never a fall)
    assert "recorded 10,100 tokens" in ok(scaffold, "usage", "record", "--transcript", str(path))
    third = Usage(input=(40_000 - 30_000) - (30_000 - 24_000), cache_read=6_000, output=100)
    assert kinds(cost_json(scaffold)["totals"]) == TOTAL + third


def test_found_by_cwd_under_codex_home_and_attributed_to_the_claim_at_its_time(
    scaffold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    shell_features(scaffold, "a.txt")  # F001
    ok(scaffold, "claim", "F001")
    during = datetime.now(UTC)
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "write a")
    after = datetime.now(UTC) + timedelta(seconds=1)
    day = home / "sessions" / during.strftime("%Y/%m/%d")
    write(
        day / f"rollout-{during:%Y-%m-%dT%H-%M-%S}-{SESSION}.jsonl",
        retimed(scaffold, during, after),
    )
    other = retimed(tmp_path / "elsewhere", during, after).replace(SESSION, "0199-other")
    write(day / "rollout-other-0199-other.jsonl", other)  # another project's session
    out = ok(scaffold, "usage", "record")
    assert f"recorded {TOTAL.tokens:,} tokens of session {SESSION} (F001, unattributed)" in out
    assert "0199-other" not in out
    assert "nothing new" in ok(scaffold, "usage", "record")
    data = cost_json(scaffold)
    assert kinds(data["features"]["F001"]) == TURN_1  # while F001 was claimed
    assert kinds(data["unattributed"]) == TURN_2  # after its finish
    empty = tmp_path / "empty-home"
    result = shiftkit(scaffold, "usage", "record", env={"CODEX_HOME": str(empty)})
    assert result.returncode == 2 and "Traceback" not in result.output
    assert result.stderr.startswith("shiftkit: usage record: no transcript")


def test_a_codex_session_start_hook_names_the_rollout_recorded_at_each_boundary(
    scaffold: Path, tmp_path: Path
) -> None:
    shell_features(scaffold, "a.txt")
    path = tmp_path / "rollout.jsonl"
    hook = {
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": str(scaffold),
        "hook_event_name": "SessionStart",
        "model": "gpt-5-codex",
        "source": "startup",
    }
    ok(scaffold, "start", "--brief", "--hook-input", "--no-check", input=json.dumps(hook))
    ok(scaffold, "claim", "F001")
    write(path, retimed(scaffold, datetime.now(UTC), None))  # the session so far: response 1
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "write a")  # the boundary reads the rollout it was told of
    committed = git_ok(scaffold, "show", "HEAD:.shiftkit/ledger.jsonl")
    usage = [json.loads(line) for line in committed.splitlines() if '"usage"' in line]
    assert [(u["session"], u["feature"], u["input"], u["cache_read"]) for u in usage] == [
        (SESSION, "F001", TURN_1.input, TURN_1.cache_read)
    ]


# -- `shiftkit run --agent codex` ------------------------------------------------------------

STAND_IN = r'''#!{python}
"""A stand-in for `codex exec --json`: writes a rollout as Codex does and prints its events."""
import json, os, subprocess, sys, uuid
from datetime import datetime, timezone

argv = sys.argv[1:]
assert argv[:3] == ["exec", "--json", "--sandbox"], argv
prompt = argv[-1]
thread = str(uuid.uuid4())
now = lambda: datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
home = os.environ["CODEX_HOME"]
day = datetime.now(timezone.utc).strftime("%Y/%m/%d")
os.makedirs(os.path.join(home, "sessions", day), exist_ok=True)
path = os.path.join(home, "sessions", day, f"rollout-{{now()[:19].replace(':', '-')}}-{{thread}}.jsonl")
lines = []

def log(kind, payload):
    lines.append(json.dumps({{"timestamp": now(), "type": kind, "payload": payload}}))
    if not os.environ.get("EPHEMERAL"):
        with open(path, "a") as handle:
            handle.write(lines[-1] + "\n")

def total(i, c, o):
    usage = {{"input_tokens": i, "cached_input_tokens": c, "output_tokens": o,
              "reasoning_output_tokens": o // 3, "total_tokens": i + o}}
    return {{"type": "token_count", "info": {{"total_token_usage": usage, "last_token_usage": usage}}}}

print(json.dumps({{"type": "thread.started", "thread_id": thread}}), flush=True)
log("session_meta", {{"id": thread, "cwd": os.getcwd(), "source": "exec"}})
log("turn_context", {{"cwd": os.getcwd(), "model": "gpt-5-codex"}})
print(json.dumps({{"type": "turn.started"}}), flush=True)
log("event_msg", {{"type": "token_count", "info": None}})
claimed = subprocess.run(["shiftkit", "claim"], capture_output=True, text=True).stdout
feature = claimed.split("claimed ", 1)[1].split(":", 1)[0]
verify = json.loads(subprocess.run(["shiftkit", "show", feature, "--json"],
                                   capture_output=True, text=True).stdout)["verify"]
log("event_msg", total(12000, 8000, 600))
log("event_msg", total(12000, 8000, 600))
open(verify[len("test -f "):], "w").write("done\n")
log("event_msg", total(30000, 24000, 1500))
log("event_msg", total(30000, 24000, 1500))
subprocess.run(["shiftkit", "finish", "-m", f"make {{feature}} work"], check=True,
               capture_output=True)
print(json.dumps({{"type": "item.completed", "item": {{"id": "item_0", "type": "agent_message",
                                                     "text": "done"}}}}), flush=True)
print(json.dumps({{"type": "turn.completed", "usage": {{"input_tokens": 30000,
      "cached_input_tokens": 24000, "output_tokens": 1500, "reasoning_output_tokens": 500}}}}),
      flush=True)
'''


def stand_in(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    program = write(bin_dir / "codex", STAND_IN.format(python=sys.executable))
    program.chmod(0o755)
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CODEX_HOME": str(tmp_path / "ch"),
    }


@pytest.mark.parametrize("ephemeral", [False, True])
def test_run_agent_codex_records_one_session_once(
    scaffold: Path, tmp_path: Path, ephemeral: bool
) -> None:
    shell_features(scaffold, "a.txt")
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    price(scaffold)
    env = stand_in(tmp_path) | ({"EPHEMERAL": "1"} if ephemeral else {})
    result = shiftkit(scaffold, "run", "--agent", "codex", "--max-sessions", "3", env=env)
    assert "Traceback" not in result.output
    assert result.returncode == loop.ALL_PASS, result.output
    assert "session 1: F001 passed · 2/2 passing" in result.output
    assert f"{TOTAL.tokens:,} tokens" in result.output
    data = cost_json(scaffold)
    assert kinds(data["totals"]) == TOTAL  # the rollout or the printed events: never both
    # the printed events name no model: unpriced
    assert data["totals"].get("usd") == (None if ephemeral else pytest.approx(USD))
    usage = [json.loads(line) for line in _ledger(scaffold) if '"usage"' in line]
    assert len({u["session"] for u in usage}) == 1
    assert {u["source"] for u in usage} == {"result" if ephemeral else "transcript"}
    if not ephemeral:  # each response at its time: both while F001 was claimed
        assert kinds(data["features"]["F001"]) == TOTAL
        again = shiftkit(scaffold, "usage", "record", env=env)
        assert again.returncode == 0 and "nothing new" in again.stdout, again.output


def _ledger(project: Path) -> list[str]:
    committed = (project / ".shiftkit" / "ledger.jsonl").read_text().splitlines()
    pending = project / ".git" / "shiftkit" / "ledger-pending.jsonl"
    return committed + (pending.read_text().splitlines() if pending.exists() else [])


def test_a_rollout_found_after_the_printed_usage_was_recorded_adds_nothing(
    scaffold: Path, tmp_path: Path
) -> None:
    shell_features(scaffold, "a.txt")
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    env = stand_in(tmp_path) | {"EPHEMERAL": "1"}
    result = shiftkit(scaffold, "run", "--agent", "codex", "--max-sessions", "1", env=env)
    assert result.returncode == loop.ALL_PASS, result.output
    [thread] = {json.loads(line)["session"] for line in _ledger(scaffold) if '"usage"' in line}
    now = datetime.now(UTC) - timedelta(seconds=30)
    day = Path(env["CODEX_HOME"]) / "sessions" / now.strftime("%Y/%m/%d")
    write(
        day / f"rollout-late-{thread}.jsonl", retimed(scaffold, now, now).replace(SESSION, thread)
    )
    again = shiftkit(scaffold, "usage", "record", env=env)
    assert again.returncode == 0 and f"of session {thread} (nothing new)" in again.stdout
    assert kinds(cost_json(scaffold)["totals"]) == TOTAL


CLAUDE = r'''#!{python}
"""A stand-in for `claude -p --output-format json`: its SessionStart hook names a transcript,
which it writes as the session goes, and it prints the JSON result at the end."""
import json, os, subprocess, sys, uuid
from datetime import datetime, timezone

argv = sys.argv[1:]
assert argv[:5] == ["-p", "--output-format", "json", "--dangerously-skip-permissions",
                    argv[4]] and len(argv) == 5, argv
session = str(uuid.uuid4())
transcript = os.path.join(os.environ["TRANSCRIPTS"], session + ".jsonl")
hook = {{"session_id": session, "transcript_path": transcript, "cwd": os.getcwd(),
        "hook_event_name": "SessionStart", "source": "startup"}}
subprocess.run(["shiftkit", "start", "--brief", "--hook-input", "--no-check"],
               input=json.dumps(hook), capture_output=True, text=True, check=True)
claimed = subprocess.run(["shiftkit", "claim"], capture_output=True, text=True).stdout
feature = claimed.split("claimed ", 1)[1].split(":", 1)[0]
now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
usage = {{"input_tokens": 1000, "cache_creation_input_tokens": 200,
          "cache_read_input_tokens": 5000, "output_tokens": 100}}
line = {{"type": "assistant", "timestamp": now, "sessionId": session,
        "message": {{"id": "msg_1", "model": "claude-sonnet-4-5", "usage": usage}}}}
os.makedirs(os.path.dirname(transcript), exist_ok=True)
with open(transcript, "w") as handle:
    handle.write(json.dumps(line) + "\n" + json.dumps(line) + "\n")
open("a.txt", "w").write("done\n")
subprocess.run(["shiftkit", "finish", "-m", f"make {{feature}} work"], check=True,
               capture_output=True)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
                  "session_id": session, "total_cost_usd": 0.5, "usage": usage}}))
'''


def test_run_agent_claude_counts_the_transcript_and_not_the_result_again(
    scaffold: Path, tmp_path: Path
) -> None:
    shell_features(scaffold, "a.txt")
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    bin_dir = tmp_path / "bin"
    write(bin_dir / "claude", CLAUDE.format(python=sys.executable)).chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "TRANSCRIPTS": str(tmp_path / "transcripts"),
    }
    result = shiftkit(scaffold, "run", "--agent", "claude", "--max-sessions", "1", env=env)
    assert result.returncode == loop.ALL_PASS, result.output
    assert "session 1: F001 passed · 2/2 passing" in result.output
    usage = [json.loads(line) for line in _ledger(scaffold) if '"usage"' in line]
    # the finish recorded the transcript its hook named; the result is the same tokens again
    assert [(u["source"], u["feature"]) for u in usage] == [("transcript", "F001")]
    assert kinds(cost_json(scaffold)["totals"]) == Usage(1000, 5000, 200, 100)


@settings(
    max_examples=fuzz_examples(5, subprocess_runs=True),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.binary(max_size=2000))
def test_any_bytes_as_a_rollout_file_are_no_traceback(
    scaffold: Path, tmp_path: Path, data: bytes
) -> None:
    path = tmp_path / "fuzzed-rollout.jsonl"
    path.write_bytes(META.encode() + b"\n" + data)
    result = shiftkit(scaffold, "usage", "record", "--transcript", str(path), "--session", "f")
    assert "Traceback" not in result.output
    assert result.returncode == 0, result.output


# -- Codex 0.169's per-response records --------------------------------------------------------


def record_line(at: str, response: str, i: int, cached: int, o: int, reasoning: int) -> str:
    usage = {
        "input_tokens": i,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": 0,
        "output_tokens": o,
        "reasoning_output_tokens": reasoning,
        "total_tokens": i + o,
    }
    payload = {"thread_id": "t", "turn_id": "u", "response_id": response, "usage": usage}
    return json.dumps({"timestamp": at, "type": "token_usage_record", "payload": payload})


def test_token_usage_records_are_the_responses_each_once_by_id() -> None:
    """A rollout with `token_usage_record` lines (as Codex 0.169 writes them, one per model
    response): each is one response by its id, a copied line adds nothing, the cumulative
    `token_count` lines beside them are not counted again, and the output is output_tokens
    (the reasoning inside it, never added)."""
    first = record_line("2026-12-01T10:00:01.000Z", "resp_a", 1000, 200, 50, 20)
    second = record_line("2026-12-01T10:00:02.000Z", "resp_b", 3000, 1000, 70, 0)
    total = {"input_tokens": 4000, "cached_input_tokens": 1200, "output_tokens": 120}
    text = "\n".join(
        [
            META,
            first,
            token_line("2026-12-01T10:00:01.100Z", total),
            second,
            first,  # a copy of a line (a resumed session replays)
            token_line("2026-12-01T10:00:02.100Z", total),
        ]
    )
    found = rollout.turns(text, "t")
    assert [(m.id, m.usage) for m in found] == [
        ("t#resp_a", Usage(800, 200, 0, 50)),
        ("t#resp_b", Usage(2000, 1000, 0, 70)),
    ]
