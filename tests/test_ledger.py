"""The ledger: transcripts in Claude Code's format summed exactly, attributed by time to the
feature claimed, persisted at unit boundaries, append-only under the hooks."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import git, git_ok, shell_features, shiftkit, write

from shiftkit.core import config, ledger
from shiftkit.core.errors import BadInput
from shiftkit.core.ledger import Entry, Interval, Usage


def ok(project: Path, *args: str, input: str | None = None) -> str:
    result = shiftkit(project, *args, input=input)
    assert result.returncode == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout


# -- transcripts, as Claude Code writes them ----------------------------------------------------


def assistant(
    message_id: str,
    at: str,
    usage: dict[str, int],
    model: str = "claude-sonnet-4-5",
    sidechain: bool = False,
    text: str = "working",
) -> str:
    """One line of a transcript: an assistant message (one content block) with its usage."""
    return json.dumps(
        {
            "parentUuid": None,
            "isSidechain": sidechain,
            "userType": "external",
            "cwd": "/work/project",
            "sessionId": "s-1",
            "version": "2.0.0",
            "type": "assistant",
            "uuid": f"uuid-{message_id}-{len(text)}-{at}",
            "timestamp": at,
            "requestId": f"req_{message_id}",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": None,
                "usage": {**usage, "service_tier": "standard"},
            },
        }
    )


def user(at: str, text: str = "go on") -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": f"u-{at}",
            "timestamp": at,
            "sessionId": "s-1",
            "message": {"role": "user", "content": text},
        }
    )


def u(i: int, cw: int, cr: int, o: int) -> dict[str, int]:
    return {
        "input_tokens": i,
        "cache_creation_input_tokens": cw,
        "cache_read_input_tokens": cr,
        "output_tokens": o,
    }


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# -- pure: the core ------------------------------------------------------------------------------


def test_transcript_counts_each_message_once_and_skips_synthetic() -> None:
    main = "\n".join(
        [
            user("2026-11-30T10:00:00.000Z"),
            # streaming: one message on three lines (one per content block), the output
            # count growing to its final value
            assistant("msg_A", "2026-11-30T10:00:01.000Z", u(10, 100, 1000, 1), text="a"),
            assistant("msg_A", "2026-11-30T10:00:01.500Z", u(10, 100, 1000, 40), text="bb"),
            assistant("msg_A", "2026-11-30T10:00:02.000Z", u(10, 100, 1000, 40), text="ccc"),
            assistant("msg_S", "2026-11-30T10:00:03.000Z", u(99, 99, 99, 99), model="<synthetic>"),
            '{"type": "assistant", "message": {"usage": ',  # a line being written
        ]
    )
    subagent = "\n".join(
        [
            assistant("msg_A", "2026-11-30T10:00:01.000Z", u(10, 100, 1000, 40), sidechain=True),
            assistant("msg_B", "2026-11-30T10:00:05.000Z", u(3, 0, 500, 7), sidechain=True),
        ]
    )
    messages = ledger.transcript_messages([main, subagent])
    assert [(m.id, m.at, m.usage) for m in messages] == [
        ("msg_A", "2026-11-30T10:00:01.000Z", Usage(10, 1000, 100, 40)),
        ("msg_B", "2026-11-30T10:00:05.000Z", Usage(3, 500, 0, 7)),
    ]


def test_attribution_by_time_and_recording_again_adds_nothing() -> None:
    messages = [
        ledger.Message("m1", "sonnet", "2026-11-30T09:59:59.000Z", Usage(1, 2, 3, 4)),
        ledger.Message("m2", "sonnet", "2026-11-30T10:00:30.000Z", Usage(10, 20, 30, 40)),
        ledger.Message("m3", "haiku", "2026-11-30T10:01:30.000Z", Usage(5, 0, 0, 5)),
        ledger.Message("m4", "sonnet", "2026-11-30T10:03:00.000Z", Usage(7, 0, 0, 1)),
    ]
    claims = [
        Interval("F001", "2026-11-30T10:00:00Z", "2026-11-30T10:01:00.000Z"),
        Interval("F002", "2026-11-30T10:01:00Z", None),  # still open
    ]
    totals = ledger.attribute(messages[:3], claims)
    assert totals == {
        (None, "sonnet"): Usage(1, 2, 3, 4),
        ("F001", "sonnet"): Usage(10, 20, 30, 40),
        ("F002", "haiku"): Usage(5, 0, 0, 5),
    }
    assert ledger.news(totals, totals) == []
    later = ledger.attribute(messages, claims)
    assert ledger.news(later, totals) == [(("F002", "sonnet"), Usage(7, 0, 0, 1))]


def test_serialization_is_deterministic_and_round_trips() -> None:
    entry = Entry(
        "usage",
        "0123456789abcdef",
        "2026-11-30T10:00:00.000Z",
        feature="F001",
        session="s-1",
        model="claude-sonnet-4-5",
        usage=Usage(1, 2, 3, 4),
        usd=0.5,
        source="transcript",
    )
    line = ledger.dumps_entry(entry)
    assert line == (
        '{"at":"2026-11-30T10:00:00.000Z","cache_read":2,"cache_write":3,"feature":"F001",'
        '"id":"0123456789abcdef","input":1,"kind":"usage","model":"claude-sonnet-4-5",'
        '"output":4,"session":"s-1","source":"transcript","usd":0.5}'
    )
    assert ledger.parse(line + "\n") == [entry]
    with pytest.raises(BadInput, match="line 2"):
        ledger.parse(line + "\n" + '{"kind": "usage"}\n', "ledger")


def test_append_only_rule() -> None:
    one = ledger.dumps([Entry("verify", "a1", "2026-11-30T10:00:00Z", "F001", ok=True)])
    two = ledger.dumps([Entry("verify", "b2", "2026-11-30T10:00:01Z", "F002", ok=False)])
    three = ledger.dumps([Entry("verify", "c3", "2026-11-30T10:00:02Z", "F003", ok=True)])
    assert ledger.append_problems([one], one + two) == []
    assert ledger.append_problems([None], one) == []
    assert "changed or removed" in ledger.append_problems([one + two], two)[0]
    assert "changed or removed" in ledger.append_problems([one], two + one)[0]
    assert "every line is an entry" in ledger.append_problems([one], one + "junk\n")[0]
    # a merge is a union: every parent's lines, in any order
    assert ledger.append_problems([one + two, one + three], one + two + three) == []
    assert "lost lines" in ledger.append_problems([one + two, one + three], one + two)[0]


def test_cost_settings_are_validated() -> None:
    cfg = config.parse(
        "[shiftkit.cost]\noutput_ratio = 4\n[shiftkit.prices]\n"
        '"claude-sonnet-4-5" = { input = 3, cache_read = 0.3, cache_write = 3.75, output = 15 }\n'
    )
    assert cfg.cost == config.CostConfig(0.1, 1.25, 4.0)
    assert cfg.prices == (("claude-sonnet-4-5", config.ModelPrice(3.0, 0.3, 3.75, 15.0)),)
    for text, message in [
        ("[shiftkit.cost]\noutput_ratoi = 4\n", "unknown key 'shiftkit.cost.output_ratoi'"),
        ("[shiftkit.cost]\noutput_ratio = 'x'\n", "'shiftkit.cost.output_ratio' must be a number"),
        ("[shiftkit.cost]\ncache_read_ratio = -1\n", "'shiftkit.cost.cache_read_ratio' must be 0"),
        ("[shiftkit.prices]\nm = 3\n", "key 'shiftkit.prices.m' must be a table"),
        ("[shiftkit.prices]\nm = { input = 1, output = 2 }\n", "lacks cache_read, cache_write"),
        (
            "[shiftkit.prices]\nm = { input = 1, cache_read = 0, cache_write = 0, output = 2, x = 1 }\n",
            "unknown key 'shiftkit.prices.m.x'",
        ),
        (
            "[shiftkit.prices]\nm = { input = true, cache_read = 0, cache_write = 0, output = 2 }\n",
            "'shiftkit.prices.m.input' must be a number",
        ),
    ]:
        with pytest.raises(BadInput, match=message.replace("(", r"\(")):
            config.parse(text)


# -- end to end: real claims, commits and hooks ---------------------------------------------------


def committed_entries(project: Path) -> list[Entry]:
    return ledger.parse(git_ok(project, "show", f"HEAD:{ledger.LEDGER_FILE}"))


def cost_json(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ok(project, "cost", "--json"))
    return data


def kinds(row: dict[str, Any]) -> tuple[int, int, int, int]:
    return (row["input"], row["cache_read"], row["cache_write"], row["output"])


def test_transcripts_summed_exactly_per_feature_and_kind(
    scaffold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIFTKIT_SESSION", "sess-1")  # (the claims are the session's own)
    shell_features(scaffold, "a.txt", "b.txt")  # F001, F002
    ok(scaffold, "claim", "F001")
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "write a")
    ok(scaffold, "claim", "F002")
    write(scaffold / "c.txt", "not b\n")
    assert shiftkit(scaffold, "verify").returncode == 1
    ok(scaffold, "revert", "--reason", "wrote the wrong file")
    units = {e.feature: e for e in committed_entries(scaffold) if e.kind == "unit"}
    assert (units["F001"].outcome, units["F002"].outcome) == ("passed", "failed")
    time.sleep(0.2)

    def inside(feature: str) -> datetime:
        start, end = parse_time(units[feature].claimed_at or ""), parse_time(units[feature].at)
        return start + (end - start) / 2

    before = parse_time(units["F001"].claimed_at or "") - timedelta(minutes=5)
    after = parse_time(units["F002"].at) + timedelta(milliseconds=100)
    t1, t2 = inside("F001"), inside("F002")
    ms = timedelta(milliseconds=1)
    main = [
        user(iso(before)),
        # orientation, before any claim (the session's first claim's): streamed on two
        # identical lines
        assistant("msg_01", iso(before + ms), u(5, 2000, 0, 100), text="a"),
        assistant("msg_01", iso(before + 2 * ms), u(5, 2000, 0, 100), text="b"),
        assistant("msg_02", iso(t1), u(7, 300, 2000, 1), text="c"),  # F001, streaming: 1 ...
        assistant("msg_02", iso(t1 + ms), u(7, 300, 2000, 250), text="dd"),  # ... then 250
        assistant("msg_syn", iso(t1 + 2 * ms), u(1000, 0, 0, 1000), model="<synthetic>"),
        assistant("msg_03", iso(t2), u(2, 0, 2300, 80), model="claude-haiku-4-5"),  # F002
        assistant("msg_04", iso(after), u(1, 0, 2400, 20)),  # after the revert: F002's wrap-up
    ]
    subagent = [
        # a subagent's transcript repeats messages of the main one, and adds its own
        assistant("msg_02", iso(t1 + ms), u(7, 300, 2000, 250), sidechain=True),
        assistant("msg_03", iso(t2), u(2, 0, 2300, 80), model="claude-haiku-4-5", sidechain=True),
        assistant("msg_05", iso(t1 + 3 * ms), u(4, 100, 500, 60), sidechain=True),  # F001
    ]
    transcript = write(tmp_path / "projects" / "p" / "sess-1.jsonl", "\n".join(main) + "\n")
    write(transcript.with_suffix("") / "subagents" / "agent-1.jsonl", "\n".join(subagent) + "\n")
    hook_input = json.dumps(
        {
            "session_id": "sess-1",
            "transcript_path": str(transcript),
            "cwd": str(scaffold),
            "hook_event_name": "SessionEnd",
            "reason": "other",
        }
    )
    assert time.time() > after.timestamp()  # (no message from the future)
    out = ok(scaffold, "usage", "record", input=hook_input)
    assert "recorded 10,129 tokens of session sess-1" in out

    def check(data: dict[str, Any]) -> None:
        check_tokens(data)
        features = data["features"]
        assert features["F001"]["sessions"] == 1 and features["F002"]["failed_attempts"] == 1
        assert features["F001"]["verifier_runs"] == 1 and features["F002"]["verifier_runs"] == 1

    def check_tokens(data: dict[str, Any]) -> None:
        features = data["features"]
        # input, cache_read, cache_write, output
        # (decision record 0065: a session's orientation and wrap-up land on its claims)
        assert kinds(features["F001"]) == (5 + 7 + 4, 2000 + 500, 2000 + 300 + 100, 100 + 250 + 60)
        assert kinds(features["F002"]) == (2 + 1, 2300 + 2400, 0, 80 + 20)
        assert kinds(features["F000"]) == (0, 0, 0, 0)
        assert kinds(data["unattributed"]) == (0, 0, 0, 0)
        assert kinds(data["totals"]) == (19, 7200, 2400, 510)
        assert data["totals"]["fresh_equivalent"] == pytest.approx(
            19 + 0.1 * 7200 + 1.25 * 2400 + 5 * 510
        )

    check(cost_json(scaffold))
    # recording the same transcript again counts nothing twice
    assert "nothing new" in ok(scaffold, "usage", "record", input=hook_input)
    check(cost_json(scaffold))
    # between boundaries the usage waits in the git dir; the next boundary commits it
    assert not any(e.kind == "usage" for e in committed_entries(scaffold))
    ok(scaffold, "claim", "F002")
    write(scaffold / "b.txt", "b\n")
    ok(scaffold, "finish", "-m", "write b")
    committed = committed_entries(scaffold)
    assert sum(e.usage.tokens for e in committed if e.kind == "usage") == 10_129
    assert (scaffold / ".git" / "shiftkit" / "ledger-pending.jsonl").read_text() == ""
    check_tokens(cost_json(scaffold))
    assert git_ok(scaffold, "status", "--porcelain") == ""


def test_usage_add_goes_to_the_current_claim(scaffold: Path) -> None:
    shell_features(scaffold, "a.txt")
    ok(scaffold, "usage", "add", "--input", "50", "--output", "5")  # no claim: unattributed
    ok(scaffold, "claim", "F001")
    ok(scaffold, "usage", "add", "--input", "100", "--output", "10", "--cache-read", "1000")
    ok(scaffold, "release")
    data = cost_json(scaffold)
    assert kinds(data["features"]["F001"]) == (100, 1000, 0, 10)
    assert kinds(data["unattributed"]) == (50, 0, 0, 5)
    assert data["features"]["F001"]["claims"] == 1 and data["features"]["F001"]["attempts"] == 0
    bad = shiftkit(scaffold, "usage", "add", "--input", "-1", "--output", "1")
    assert bad.returncode == 2 and bad.stderr.startswith("shiftkit:")
    assert "Traceback" not in bad.output
    pending = scaffold / ".git" / "shiftkit" / "ledger-pending.jsonl"
    before = pending.read_text()
    for cost in ("nan", "inf", "-inf", "-0.5"):
        bad = shiftkit(
            scaffold, "usage", "add", "--input", "1", "--output", "1", "--cost-usd", cost
        )
        assert bad.returncode == 2, (cost, bad.output)
        assert bad.stderr.startswith("shiftkit: --cost-usd must be a number of dollars")
        assert "Traceback" not in bad.output
    assert pending.read_text() == before  # nothing recorded


def test_a_zeroed_copy_of_a_waiting_entry_does_not_stand_for_it(scaffold: Path) -> None:
    """The waiting entry's id, committed by hand with no tokens and no money, must not make
    the real entry look recorded: the real one is committed under an id of its own."""
    shell_features(scaffold, "a.txt")
    ok(scaffold, "claim", "F001")
    ok(scaffold, "usage", "add", "--input", "900000", "--output", "300000", "--cost-usd", "40")
    pending = scaffold / ".git" / "shiftkit" / "ledger-pending.jsonl"
    [waiting] = [json.loads(x) for x in pending.read_text().splitlines() if '"usage"' in x]
    forged = {**waiting, "input": 0, "output": 0, "usd": 0}
    path = scaffold / ledger.LEDGER_FILE
    old = path.read_text() if path.exists() else ""
    path.write_text(old + json.dumps(forged, separators=(",", ":")) + "\n")
    git_ok(scaffold, "add", ledger.LEDGER_FILE)
    git_ok(scaffold, "commit", "-q", "-m", "Record the session's usage")  # (an append: allowed)
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "write a")
    row = cost_json(scaffold)["features"]["F001"]
    assert kinds(row) == (900000, 0, 0, 300000), row
    assert '"input":900000' not in pending.read_text()  # it waits no longer
    assert path.read_text().count('"input":900000') == 1


def test_hooks_refuse_edits_of_past_lines(scaffold: Path) -> None:
    shell_features(scaffold, "a.txt")
    ok(scaffold, "usage", "add", "--input", "100", "--output", "10")
    ok(scaffold, "claim", "F001")
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "write a")
    path = scaffold / ledger.LEDGER_FILE
    original = path.read_text()
    path.write_text(original.replace('"input":100', '"input":1'))
    git_ok(scaffold, "add", ledger.LEDGER_FILE)
    refused = git(scaffold, "commit", "-m", "Make the bill smaller")
    assert refused.returncode != 0 and "rule 12" in refused.output
    path.write_text(original + "not an entry\n")
    git_ok(scaffold, "add", ledger.LEDGER_FILE)
    refused = git(scaffold, "commit", "-m", "Add a line by hand")
    assert refused.returncode != 0 and "rule 12" in refused.output
    assert ".shiftkit/ledger.jsonl merge=union" in (scaffold / ".gitattributes").read_text()


def test_absurd_numbers_are_refused_at_input_by_rule_12_and_by_the_readers(
    scaffold: Path,
) -> None:
    """`usage add --input 1<400 zeros>` once made `status` and `cost` exit 4 in every clone
    (a float overflow): it is bad input now, rule 12 refuses such a line, and a committed one
    (hooks off) gives `cost` one shiftkit: line and leaves `status` working."""
    huge = "1" + "0" * 400
    bad = shiftkit(scaffold, "usage", "add", "--input", huge, "--output", "1")
    assert bad.returncode == 2 and bad.stderr.startswith("shiftkit: --input"), bad.output
    bad = shiftkit(scaffold, "usage", "add", "--input", "1", "--output", "1", "--cost-usd", "1e300")
    assert bad.returncode == 2 and bad.stderr.startswith("shiftkit: --cost-usd"), bad.output
    line = json.dumps(
        {"at": "2026-11-30T10:00:00Z", "id": "u-huge", "input": int(huge), "kind": "usage"}
    )
    path = scaffold / ledger.LEDGER_FILE
    path.write_text((path.read_text() if path.exists() else "") + line + "\n")
    git_ok(scaffold, "add", ledger.LEDGER_FILE)
    refused = git(scaffold, "commit", "-m", "Record usage")
    assert refused.returncode != 0 and "rule 12" in refused.output and "digits" in refused.output
    hooks = scaffold / ".git" / "hooks"
    hooks.rename(hooks.with_name("hooks.off"))
    git_ok(scaffold, "commit", "-q", "-m", "Record usage")
    hooks.with_name("hooks.off").rename(hooks)
    status = shiftkit(scaffold, "status")
    assert status.returncode == 0, status.output
    cost = shiftkit(scaffold, "cost")
    assert cost.returncode == 2 and "Traceback" not in cost.output
    assert (
        cost.stderr.startswith("shiftkit: .shiftkit/ledger.jsonl line ")
        and cost.stderr.count("\n") == 1
    ), cost.stderr


HOSTILE_LINES = {
    "5,000 digits": '{"at":"2026-11-30T10:00:00Z","id":"u-huge","input":1%s,"kind":"usage"}'
    % ("0" * 5000),
    "100,000 deep": '{"at":"2026-11-30T10:00:00Z","extra":%s,"id":"u-deep","kind":"usage"}'
    % ("[" * 100_000 + "]" * 100_000),
    "a long line": '{"at":"2026-11-30T10:00:00Z","id":"u-long","kind":"usage","model":"%s"}'
    % ("m" * 2_000_000),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LINES))
def test_an_unreadable_ledger_line_is_one_line_in_every_command_and_in_audit(
    scaffold: Path, case: str
) -> None:
    """A hand-appended ledger line with a 5,000-digit count, or nested 100,000 deep, made
    `status`, `cost`, `report --json` and the pre-commit hook exit 4 (Python's int() digit
    limit, RecursionError); committed past the hooks, `audit` exited 4 in every clone. Each
    now says file and line in one `shiftkit:` line and exits 1 or 2 (decision 0061)."""
    path = scaffold / ledger.LEDGER_FILE
    before = path.read_text() if path.exists() else ""
    number = len(before.splitlines()) + 1
    path.write_text(before + HOSTILE_LINES[case] + "\n")
    where = f"{ledger.LEDGER_FILE} line {number}"
    for args in (["cost"], ["report", "--json"], ["report"]):
        result = shiftkit(scaffold, *args)
        assert result.returncode == 2 and "Traceback" not in result.output, (args, result.output)
        assert (
            result.stderr.startswith(f"shiftkit: {where}: ") and result.stderr.count("\n") == 1
        ), (args, result.stderr)
    status = shiftkit(scaffold, "status")
    assert status.returncode in (0, 2) and "internal error" not in status.output, status.output
    git_ok(scaffold, "add", ledger.LEDGER_FILE)
    refused = git(scaffold, "commit", "-m", "Record usage")
    assert refused.returncode == 1 and "rule 12" in refused.output, refused.output
    assert f"line {number}: " in refused.output and "internal error" not in refused.output
    hooks = scaffold / ".git" / "hooks"
    hooks.rename(hooks.with_name("hooks.off"))
    git_ok(scaffold, "commit", "-q", "-m", "Record usage")
    hooks.with_name("hooks.off").rename(hooks)
    audit = shiftkit(scaffold, "audit")
    assert audit.returncode == 1 and "internal error" not in audit.output, audit.output
    assert f"rule 12: {ledger.LEDGER_FILE}: line {number}: " in audit.stdout, audit.stdout
    as_json = shiftkit(scaffold, "audit", "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout), as_json.output


def test_usage_record_names_the_row_cost_counts_the_session_in(
    scaffold: Path, tmp_path: Path
) -> None:
    """`usage record` said "unattributed" where `cost` said "coordination" or "idle" (an
    agent trial, issue 29): both name a session's usage by one function (`cost.bucket`)."""
    shell_features(scaffold, "a.txt")  # F000, F001

    def record(session: str, tokens: int) -> str:
        moment = iso(datetime.now(UTC) - timedelta(seconds=1))
        line = assistant(f"msg_{session}", moment, u(tokens, 0, 0, 0))
        transcript = write(tmp_path / "projects" / f"{session}.jsonl", line + "\n")
        hook_input = json.dumps({"session_id": session, "transcript_path": str(transcript)})
        said = shiftkit(
            scaffold, "usage", "record", input=hook_input, env={"SHIFTKIT_SESSION": session}
        )
        assert said.returncode == 0 and "Traceback" not in said.output, said.output
        return said.stdout

    worker = {"SHIFTKIT_SESSION": "sess-work"}
    for feature_id in ("F000", "F001"):
        assert shiftkit(scaffold, "claim", feature_id, env=worker).returncode == 0
        if feature_id == "F001":
            write(scaffold / "a.txt", "a\n")
        assert shiftkit(scaffold, "finish", "-m", "done", env=worker).returncode == 0
    # every feature passes: this session's `claim` finds nothing to take
    looked = shiftkit(scaffold, "claim", env={"SHIFTKIT_SESSION": "sess-look"})
    assert looked.returncode == 0 and "all 2 features" in looked.stdout, looked.output
    said = {
        "sess-work": record("sess-work", 100),  # held claims: its wrap-up is its last one's
        "sess-look": record("sess-look", 20),  # claimed nothing, found nothing to take
        "sess-idle": record("sess-idle", 3),  # claimed nothing, did not look
    }
    data = cost_json(scaffold)
    table = ok(scaffold, "cost")
    for session, row, tokens in (
        ("sess-work", "F001", 100),
        ("sess-look", "coordination", 20),
        ("sess-idle", "idle", 3),
    ):
        assert f"recorded {tokens:,} tokens of session {session} ({row})" in said[session], said
        counted = data["features"][row] if row.startswith("F") else data[row]
        assert counted["input"] == tokens, (row, data)
        assert any(line.split()[:1] == [row] for line in table.splitlines()), table
    assert kinds(data["unattributed"]) == (0, 0, 0, 0)
    # the report names them as `cost` does, in its JSON and on its page
    page = tmp_path / "report.html"
    shown = json.loads(ok(scaffold, "report", "--json"))
    assert (shown["coordination"]["input"], shown["idle"]["input"]) == (20, 3), shown
    assert shown["unattributed"]["input"] == 0
    ok(scaffold, "report", "-o", str(page))
    note = page.read_text().split("of which outside any feature ", 1)[1].split("</", 1)[0]
    assert re.fullmatch(r"coordination \S+( fresh-eq tokens)?, idle \S+( fresh-eq tokens)?\.", note)


def test_a_published_commit_dropped_here_is_not_counted_again(
    scaffold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The night's adversity: a session finished a feature (its usage committed and pushed)
    and then dropped the commit with `git reset --hard HEAD~1`. Its SessionEnd recorded the
    whole session a second time, the dropped entries being gone from this clone's ledger —
    the team's cost 2 % over what the model served. The remote's branch still holds them."""
    from teams import team_project

    bare = team_project(scaffold, tmp_path, ["a.txt"])
    clone = tmp_path / "clone"
    git_ok(tmp_path, "clone", "-q", str(bare), str(clone))
    ok(clone, "install-hooks", "--force")
    monkeypatch.setenv("SHIFTKIT_SESSION", "sess-9")
    ok(clone, "claim", "F001")
    claimed = datetime.now(UTC)
    write(clone / "a.txt", "a\n")
    time.sleep(0.05)
    lines = [user(iso(claimed)), assistant("msg_91", iso(claimed), u(40, 0, 100, 10))]
    transcript = write(tmp_path / "projects" / "p" / "sess-9.jsonl", "\n".join(lines) + "\n")
    hook_input = json.dumps(
        {
            "session_id": "sess-9",
            "transcript_path": str(transcript),
            "cwd": str(clone),
            "hook_event_name": "SessionEnd",
            "reason": "other",
        }
    )
    ok(clone, "usage", "record", input=hook_input)
    ok(clone, "finish", "-m", "write a")
    assert git(clone, "reset", "-q", "--hard", "HEAD~1").returncode == 0
    again = ok(clone, "usage", "record", input=hook_input)
    assert "nothing new" in again, again
    totals = cost_json(clone)["totals"]
    assert (totals["input"], totals["cache_read"], totals["output"]) == (40, 100, 10)
