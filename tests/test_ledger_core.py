"""The ledger's pure core (`shiftkit.core.ledger`) in memory: entries to text and back, the
append-only check of rule 12, transcripts read line by line, and attribution by time.

The end-to-end tests (real claims, commits and hooks) are in test_ledger.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core import ledger
from shiftkit.core.errors import BadInput
from shiftkit.core.ledger import Entry, Interval, Message, Usage

AT = "2026-11-30T10:00:00Z"


def line(**fields: Any) -> str:
    """One ledger line as JSON, with a valid kind, id and time unless ``fields`` say else."""
    return json.dumps({"kind": "verify", "id": "v1", "at": AT, **fields})


def transcript_line(
    message: dict[str, Any] | None = None, timestamp: str | None = AT, **outer: Any
) -> str:
    """One transcript line: an assistant message with usage, as Claude Code writes it."""
    value: dict[str, Any] = {"type": "assistant", **outer}
    if timestamp is not None:
        value["timestamp"] = timestamp
    value["message"] = (
        {"id": "msg_1", "model": "sonnet", "usage": {"input_tokens": 1, "output_tokens": 2}}
        if message is None
        else message
    )
    return json.dumps(value)


# -- Usage ------------------------------------------------------------------------------------


def test_usage_adds_kind_by_kind_and_never_goes_below_zero() -> None:
    a, b = Usage(1, 20, 300, 4000), Usage(10, 2, 0, 1)
    assert a + b == Usage(11, 22, 300, 4001)
    assert a.minus(b) == Usage(0, 18, 300, 3999)
    assert b.minus(a) == Usage(9, 0, 0, 0)
    assert a.tokens == 4321 and Usage().tokens == 0


def test_usage_plus_a_plain_tuple_is_no_concatenation() -> None:
    with pytest.raises(TypeError):
        Usage(1, 2, 3, 4) + (5, 6, 7, 8)  # noqa: RUF005


# -- entries to text and back ------------------------------------------------------------------


def test_each_kind_writes_only_its_own_fields() -> None:
    unit = Entry(
        "unit",
        "unit-abc",
        "2026-11-30T10:10:00Z",
        "F001",
        session="s-1",
        outcome="failed",
        claimed_at="2026-11-30T10:00:00Z",
        signature="0123456789abcdef",
    )
    verify = Entry("verify", "v1", AT, "F001", ok=False, seconds=2.5)
    assert ledger.dumps_entry(unit) == (
        '{"at":"2026-11-30T10:10:00Z","claimed_at":"2026-11-30T10:00:00Z","feature":"F001",'
        '"id":"unit-abc","kind":"unit","outcome":"failed","session":"s-1",'
        '"signature":"0123456789abcdef"}'
    )
    assert ledger.dumps_entry(verify) == (
        '{"at":"2026-11-30T10:00:00Z","feature":"F001","id":"v1","kind":"verify","ok":false,'
        '"seconds":2.5}'
    )
    # unattributed usage: no feature key, and zero counts are still written
    usage = Entry("usage", "u1", AT, model="haiku", usage=Usage(0, 0, 0, 7), source="manual")
    assert json.loads(ledger.dumps_entry(usage)) == {
        "kind": "usage",
        "id": "u1",
        "at": AT,
        "model": "haiku",
        "source": "manual",
        "input": 0,
        "cache_read": 0,
        "cache_write": 0,
        "output": 7,
    }
    text = ledger.dumps([unit, verify, usage])
    assert text.count("\n") == 3 and text.endswith("\n")
    assert ledger.parse(text) == [unit, verify, usage]
    assert ledger.dumps([]) == "" and ledger.parse("") == []


def test_parse_skips_blank_lines_and_names_the_line_it_cannot_read() -> None:
    text = "\n" + line(id="a") + "\n   \n" + line(id="b") + "\n"
    assert [e.id for e in ledger.parse(text)] == ["a", "b"]
    with pytest.raises(BadInput) as caught:
        ledger.parse(text + "{oops\n", "ledger.jsonl")
    assert caught.value.message.startswith("ledger.jsonl line 5: not JSON (")
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2]", "not a JSON object"),
        ('"unit"', "not a JSON object"),
        (line(kind="cost"), "needs 'kind' (one of unit, verify, usage), 'id' and 'at'"),
        (line(id=7), "needs 'kind'"),
        (json.dumps({"kind": "unit", "id": "x"}), "needs 'kind'"),
        (line(at=None), "needs 'kind'"),
        (line(feature=1), "'feature' has the wrong type"),
        (line(ok="yes"), "'ok' has the wrong type"),
        (line(ok=1), "'ok' has the wrong type"),
        (line(seconds=True), "'seconds' has the wrong type"),
        (line(seconds="2"), "'seconds' has the wrong type"),
        (line(usd=[1]), "'usd' has the wrong type"),
        (line(input=-1), "'input' must be a count of tokens"),
        (line(output=1.5), "'output' must be a count of tokens"),
        (line(cache_read=True), "'cache_read' must be a count of tokens"),
        (line(cache_write="9"), "'cache_write' must be a count of tokens"),
        (line(usd=-12.5), "'usd' must be a finite amount, 0 or more"),
        (line(seconds=-1), "'seconds' must be a finite amount, 0 or more"),
        (line().replace("}", ',"usd":-Infinity}'), "'usd' must be a finite amount"),
        (line().replace("}", ',"usd":Infinity}'), "'usd' must be a finite amount"),
        (line().replace("}", ',"seconds":NaN}'), "'seconds' must be a finite amount"),
    ],
)
def test_an_entry_of_the_wrong_shape_is_bad_input_naming_where(text: str, expected: str) -> None:
    with pytest.raises(BadInput) as caught:
        ledger.parse_entry(text, "here")
    assert caught.value.message.startswith(f"here: {expected}"), caught.value.message


def test_a_missing_field_is_none_and_whole_seconds_and_money_are_kept() -> None:
    entry = ledger.parse_entry(line(feature=None, seconds=3, usd=0), "here")
    assert entry == Entry("verify", "v1", AT, seconds=3, usd=0)
    assert entry.feature is None and entry.ok is None and entry.usage == Usage()


def test_merged_keeps_each_id_once_the_first_seen_winning() -> None:
    a1 = Entry("verify", "a", AT, "F001", ok=True)
    a2 = a1._replace(ok=False)
    b = Entry("verify", "b", AT, "F002", ok=True)
    c = Entry("verify", "c", AT, "F003", ok=True)
    assert ledger.merged([a1, b], [a2, c], [b]) == [a1, b, c]
    assert ledger.merged([a2], [a1]) == [a2]
    assert ledger.merged() == []


# Strings as a harness or a person may give them (a model, a session): any Unicode but lone
# surrogates, line breaks of every kind included.
_text = st.text(max_size=12)
_counts = st.integers(min_value=0, max_value=10**12)


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    kind = draw(st.sampled_from(ledger.KINDS))
    optional = st.none() | _text
    fields: dict[str, Any] = {
        "feature": draw(optional),
        "session": draw(optional),
    }
    if kind == "unit":
        fields["outcome"] = draw(st.sampled_from(ledger.OUTCOMES))
        fields["claimed_at"] = draw(optional)
        fields["signature"] = draw(optional)
    elif kind == "verify":
        fields["ok"] = draw(st.booleans())
        fields["seconds"] = draw(st.floats(0, 1e6) | st.integers(0, 10**6))
    else:
        fields["model"] = draw(_text)
        fields["usage"] = Usage(*(draw(_counts) for _ in range(4)))
        fields["usd"] = draw(st.none() | st.floats(0, 1e6))
        fields["source"] = draw(st.sampled_from(["transcript", "result", "manual"]))
    return Entry(kind, draw(_text), draw(_text), **fields)


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(entries(), max_size=5, unique_by=lambda entry: entry.id))
def test_written_entries_read_back_as_they_were(written: list[Entry]) -> None:
    """What shiftkit writes is read back whole, whatever text the fields hold: one entry is
    one line, for `parse` and rule 12 alike (both split lines the way str.splitlines does)."""
    text = ledger.dumps(written)
    assert len(text.splitlines()) == len(written)
    assert ledger.parse(text) == written
    assert ledger.append_problems([""], text) == []


@pytest.mark.parametrize("breaker", ["\u2028", "\u2029", "\x85", "\n", "\x1c", "\r"])
def test_a_line_break_inside_a_field_stays_inside_its_line(breaker: str) -> None:
    entry = Entry("usage", "u1", AT, session=f"s{breaker}1", model="m", usage=Usage(1, 0, 0, 0))
    text = ledger.dumps([entry])
    assert text.splitlines() == [text.rstrip("\n")]
    assert ledger.parse(text) == [entry]
    assert ledger.append_problems([None], text) == []


# -- rule 12: the ledger only grows ------------------------------------------------------------


def test_append_problems_at_the_root_and_when_absent() -> None:
    one = line(id="a") + "\n"
    assert ledger.append_problems([], one) == []  # a root commit: new lines are entries
    assert ledger.append_problems([], None) == []
    assert ledger.append_problems([None], None) == []  # no ledger before or after
    assert ledger.append_problems([None], one + "\n\n") == []  # blank lines are no entries
    [problem] = ledger.append_problems([], one + "not json\n")
    assert problem.startswith("line 2: not JSON (") and problem.endswith(
        ": every line is an entry shiftkit wrote"
    )
    [problem] = ledger.append_problems([None], line(id="b", kind="bill") + "\n")
    assert problem == (
        "line 1: needs 'kind' (one of unit, verify, usage), 'id' and 'at': every line is an "
        "entry shiftkit wrote"
    )


def test_append_problems_refuses_a_removed_ledger_and_reports_before_reading_new_lines() -> None:
    one = line(id="a") + "\n"
    [problem] = ledger.append_problems([one], None)
    assert "changed or removed" in problem and "only grows at its end" in problem
    # an edited line is reported as an edit, not as a line that is no entry
    assert ledger.append_problems([one], "junk\n" + one) == [
        "lines written before were changed or removed; the ledger only grows at its end "
        "(shiftkit appends to it at unit boundaries)"
    ]


def test_append_problems_refuses_a_new_line_with_a_recorded_id() -> None:
    """Read by id the first line wins: a zeroed copy of a recorded entry, appended or put at
    the top in a merge, would hide it."""
    real = line(kind="usage", id="u1", input=900, usd=40)
    forged = line(kind="usage", id="u1", input=0, usd=0)
    other = line(kind="usage", id="u2", input=5)
    recorded = real + "\n"
    assert ledger.append_problems([recorded], recorded + forged + "\n") == [
        "line 2: the id 'u1' is recorded already; ids are unique"
    ]
    merged = forged + "\n" + real + "\n" + other + "\n"
    assert ledger.append_problems([recorded, other + "\n"], merged)[0].startswith("line 1:")
    twice = recorded + other + "\n" + other.replace("5", "6") + "\n"
    assert ledger.append_problems([recorded], twice)[0].startswith("line 3:")
    assert ledger.append_problems([recorded], recorded + other + "\n") == []


def test_append_problems_of_a_merge_names_each_parent_that_lost_lines() -> None:
    a, b, c = (line(id=i) + "\n" for i in "abc")
    assert ledger.append_problems([a + b, a + c], c + b + a) == []  # any order
    assert ledger.append_problems([a + b, None], a + b) == []  # a parent without a ledger
    assert ledger.append_problems([a + b, a + c], a) == [
        "the merge lost lines of a parent's ledger; merge it as a union",
        "the merge lost lines of a parent's ledger; merge it as a union",
    ]
    [problem] = ledger.append_problems([a, b], a + b + "{}\n")
    assert problem.startswith("line 3: needs 'kind'")


# -- transcripts ---------------------------------------------------------------------------------


def test_a_message_without_its_own_id_is_known_by_its_request_or_line() -> None:
    usage = {"input_tokens": 5}
    by_request = transcript_line({"model": "m", "usage": usage}, requestId="req_1", uuid="u-1")
    by_uuid = transcript_line({"model": "m", "usage": usage}, uuid="u-2")
    nameless = transcript_line({"model": "m", "usage": usage})
    messages = ledger.transcript_messages([by_request + "\n" + by_uuid + "\n" + nameless])
    assert [m.id for m in messages] == ["req_1", "u-2"]


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "user", "message": {"content": "no tokens here"}}',
        '["usage"]',
        '"usage"',
        json.dumps({"usage": {"input_tokens": 3}, "timestamp": AT, "message": "text"}),
        transcript_line({"id": "m", "model": "sonnet", "usage": 5}),
        transcript_line({"id": "m", "usage": {"input_tokens": 3}}),  # no model
        transcript_line({"id": "m", "model": 7, "usage": {"input_tokens": 3}}),
        transcript_line({"id": "m", "model": "<synthetic>", "usage": {"input_tokens": 3}}),
        transcript_line(timestamp=None),
        transcript_line(timestamp="yesterday"),
        transcript_line(timestamp="2026-11-30T10:00:00"),  # no zone: no moment
        transcript_line({"id": 12, "model": "sonnet", "usage": {"input_tokens": 3}}),
        '{"message": {"usage": {"input_tokens": 3',  # a line being written
        '{"usage": 1, "n": ' + "9" * 5000 + "}",  # past Python's digit limit (a ValueError)
        "[" * 100_000 + '"usage"',  # past its nesting limit (a RecursionError)
    ],
)
def test_lines_that_are_no_billed_message_are_skipped(text: str) -> None:
    assert ledger.transcript_messages([text]) == []


def test_counts_that_are_not_whole_positive_numbers_count_zero() -> None:
    weird = {
        "input_tokens": -4,
        "cache_read_input_tokens": True,
        "cache_creation_input_tokens": 2.5,
        "output_tokens": "9",
    }
    [message] = ledger.transcript_messages(
        [transcript_line({"id": "x", "model": "m", "usage": weird})]
    )
    assert message.usage == Usage()
    full = {
        "input_tokens": 1,
        "cache_read_input_tokens": 2,
        "cache_creation_input_tokens": 3,
        "output_tokens": 4,
    }
    [message] = ledger.transcript_messages(
        [transcript_line({"id": "x", "model": "m", "usage": full})]
    )
    assert message == Message("x", "m", AT, Usage(1, 2, 3, 4))


def test_a_message_seen_twice_keeps_its_first_model_earliest_time_and_largest_counts() -> None:
    late = transcript_line(
        {"id": "m1", "model": "first", "usage": {"input_tokens": 9, "output_tokens": 1}},
        timestamp="2026-11-30T10:00:05Z",
    )
    early = transcript_line(
        {"id": "m1", "model": "second", "usage": {"input_tokens": 2, "output_tokens": 30}},
        timestamp="2026-11-30T11:00:01+02:00",  # 09:00:01 UTC: earlier, in another zone
    )
    other = transcript_line(
        {"id": "m0", "model": "x", "usage": {"output_tokens": 1}},
        timestamp="2026-11-30T09:30:00Z",
    )
    messages = ledger.transcript_messages([late, early + "\n" + other])
    assert messages == [
        Message("m1", "first", "2026-11-30T11:00:01+02:00", Usage(9, 0, 0, 30)),
        Message("m0", "x", "2026-11-30T09:30:00Z", Usage(0, 0, 0, 1)),
    ]


def test_messages_at_one_moment_are_ordered_by_id() -> None:
    lines = [transcript_line({"id": i, "model": "m", "usage": {"output_tokens": 1}}) for i in "cab"]
    assert [m.id for m in ledger.transcript_messages(lines)] == ["a", "b", "c"]


def test_time_key_reads_zoned_iso_times_and_gives_zero_for_the_rest() -> None:
    assert ledger.time_key("1970-01-01T00:01:00Z") == 60.0
    assert ledger.time_key("1970-01-01T01:01:00+01:00") == 60.0
    assert ledger.time_key("1970-01-01T00:01:00") == 0.0
    assert ledger.time_key("not a time") == 0.0


# -- attribution by time --------------------------------------------------------------------------


def test_intervals_are_the_ended_units_with_a_claim_time_then_the_open_claim() -> None:
    done = Entry("unit", "u1", "2026-11-30T10:10:00Z", "F001", claimed_at=AT, outcome="passed")
    entries = [
        done,
        Entry("unit", "u2", AT, "F002", outcome="released"),  # no claim time: no interval
        Entry("unit", "u3", AT, None, claimed_at=AT, outcome="failed"),  # no feature
        Entry("verify", "v1", AT, "F001", claimed_at=AT),
    ]
    open_claim = Interval("F003", "2026-11-30T11:00:00Z", None)
    assert ledger.intervals(entries) == [Interval("F001", AT, "2026-11-30T10:10:00Z")]
    assert ledger.intervals(entries, open_claim) == [
        Interval("F001", AT, "2026-11-30T10:10:00Z"),
        open_claim,
    ]


def test_feature_at_takes_the_latest_claim_holding_the_moment_end_excluded() -> None:
    claims = [
        Interval("F001", "2026-11-30T10:00:00Z", "2026-11-30T12:00:00Z"),
        Interval("F002", "2026-11-30T11:00:00Z", "2026-11-30T11:30:00Z"),  # inside F001's
        Interval("F003", "2026-11-30T12:00:00Z", None),
    ]
    assert ledger.feature_at("2026-11-30T09:59:59Z", claims) is None
    assert ledger.feature_at("2026-11-30T10:00:00Z", claims) == "F001"
    assert ledger.feature_at("2026-11-30T11:15:00Z", claims) == "F002"
    assert ledger.feature_at("2026-11-30T11:30:00Z", claims) == "F001"  # F002 ended
    assert ledger.feature_at("2026-11-30T12:00:00Z", claims) == "F003"  # F001 ended
    assert ledger.feature_at("2027-01-01T00:00:00Z", claims) == "F003"  # still open
    assert ledger.feature_at("2026-11-30T11:15:00Z", list(reversed(claims))) == "F002"
    assert ledger.feature_at("2026-11-30T11:15:00Z", []) is None


def test_attribute_sums_each_model_per_feature_claimed_at_the_message_time() -> None:
    claims = [Interval("F001", "2026-11-30T10:00:00Z", "2026-11-30T10:10:00Z")]
    messages = [
        Message("a", "sonnet", "2026-11-30T10:01:00Z", Usage(1, 0, 0, 1)),
        Message("b", "sonnet", "2026-11-30T10:02:00Z", Usage(2, 0, 5, 0)),
        Message("c", "haiku", "2026-11-30T10:03:00Z", Usage(0, 7, 0, 0)),
        Message("d", "sonnet", "2026-11-30T10:10:00Z", Usage(4, 0, 0, 0)),  # after the end
        Message("e", "sonnet", "not a time", Usage(8, 0, 0, 0)),  # no moment: before any claim
    ]
    assert ledger.attribute(messages, claims) == {
        ("F001", "sonnet"): Usage(3, 0, 5, 1),
        ("F001", "haiku"): Usage(0, 7, 0, 0),
        (None, "sonnet"): Usage(12, 0, 0, 0),
    }
    assert ledger.attribute([], claims) == {}


def test_recorded_sums_one_session_and_source_per_feature_and_model() -> None:
    def usage(ident: str, feature: str | None, model: str | None, **kw: Any) -> Entry:
        base: dict[str, Any] = {"session": "s1", "source": "transcript"}
        return Entry(
            "usage", ident, AT, feature, model=model, usage=Usage(1, 2, 3, 4), **{**base, **kw}
        )

    entries = [
        usage("a", "F001", "sonnet"),
        usage("b", "F001", "sonnet"),
        usage("c", None, "sonnet"),
        usage("d", "F001", None),  # a model-less entry written by hand
        usage("e", "F001", "sonnet", session="s2"),
        usage("f", "F001", "sonnet", source="manual"),
        Entry("unit", "g", AT, "F001", session="s1", source="transcript", outcome="passed"),
    ]
    assert ledger.recorded(entries, "s1", "transcript") == {
        ("F001", "sonnet"): Usage(2, 4, 6, 8),
        (None, "sonnet"): Usage(1, 2, 3, 4),
        ("F001", "?"): Usage(1, 2, 3, 4),
    }
    assert ledger.recorded(entries, "s3", "transcript") == {}


def test_news_are_the_growth_per_key_in_a_stable_order() -> None:
    before: dict[ledger.Key, Usage] = {
        ("F001", "m"): Usage(10, 10, 10, 10),
        ("F002", "m"): Usage(5, 0, 0, 0),
    }
    now: dict[ledger.Key, Usage] = {
        ("F002", "m"): Usage(5, 0, 0, 0),  # unchanged: nothing new
        ("F001", "m"): Usage(12, 10, 10, 9),  # output shrank (never below zero), input grew
        (None, "z"): Usage(0, 0, 0, 1),  # unattributed sorts first
        ("F001", "a"): Usage(1, 0, 0, 0),  # a key the ledger lacks
    }
    assert ledger.news(now, before) == [
        ((None, "z"), Usage(0, 0, 0, 1)),
        (("F001", "a"), Usage(1, 0, 0, 0)),
        (("F001", "m"), Usage(2, 0, 0, 0)),
    ]
    assert ledger.news({}, before) == []


def test_counts_and_amounts_have_upper_bounds() -> None:
    line = '{"at":"%s","id":"u","kind":"usage","input":%d}'
    assert ledger.parse_entry(line % (AT, ledger.MAX_TOKENS), "x").usage.input == ledger.MAX_TOKENS
    with pytest.raises(BadInput, match="'input' must be a count of tokens up to"):
        ledger.parse_entry(line % (AT, 10**40), "x")
    with pytest.raises(BadInput, match=r"^x: a number of 401 digits"):  # not even read
        ledger.parse_entry(line % (AT, 10**400), "x")
    with pytest.raises(BadInput, match="'usd' must be a finite amount"):
        ledger.parse_entry(json.dumps({"at": AT, "id": "u", "kind": "usage", "usd": 1e300}), "x")
    assert ledger.count_problem("--input", ledger.MAX_TOKENS + 1) is not None
    assert ledger.count_problem("--input", 5) is None
    problems = ledger.append_problems([""], line % (AT, 10**400) + "\n")
    assert problems and "digits" in problems[0]


# -- a session's whole usage lands on its claims (issue 29, decision record 0065) -------------


def _message(ident: str, at: str, tokens: int) -> ledger.Message:
    return ledger.Message(ident, "m", at, ledger.Usage(input=tokens))


def test_a_sessions_orientation_and_wrap_up_land_on_its_claims() -> None:
    claims = [
        ledger.Interval("F001", "2026-12-01T10:10:00Z", "2026-12-01T10:20:00Z"),
        ledger.Interval("F002", "2026-12-01T10:30:00Z", "2026-12-01T10:40:00Z"),
    ]
    messages = [
        _message("a", "2026-12-01T10:00:00Z", 1),  # orientation before the first claim
        _message("b", "2026-12-01T10:15:00Z", 10),  # while F001 is held
        _message("c", "2026-12-01T10:25:00Z", 100),  # between: orientation for F002
        _message("d", "2026-12-01T10:35:00Z", 1000),  # while F002 is held
        _message("e", "2026-12-01T10:50:00Z", 10000),  # wrap-up after the last finish
    ]
    whole = ledger.attribute(messages, claims, whole_session=True)
    assert whole == {("F001", "m"): ledger.Usage(input=11), ("F002", "m"): ledger.Usage(11100)}
    # (before: the time outside the claims was nobody's)
    assert ledger.attribute(messages, claims)[(None, "m")] == ledger.Usage(input=10101)
    assert ledger.session_feature("2026-12-01T10:00:00Z", []) is None


def test_the_claims_of_other_sessions_do_not_take_a_sessions_usage() -> None:
    units = [
        ledger.Entry(
            "unit", "u1", "2026-12-01T10:20:00Z", "F001", "mine", "passed", "2026-12-01T10:10:00Z"
        ),
        ledger.Entry(
            "unit", "u2", "2026-12-01T10:40:00Z", "F002", "theirs", "passed", "2026-12-01T10:30:00Z"
        ),
    ]
    assert [c.feature for c in ledger.intervals(units, None, "mine")] == ["F001"]
    assert [c.feature for c in ledger.intervals(units)] == ["F001", "F002"]


def test_usage_attributed_anew_is_not_counted_twice() -> None:
    before = {(None, "m"): ledger.Usage(input=100)}  # recorded before the claim existed
    now = {("F001", "m"): ledger.Usage(input=150)}  # the same 100 and 50 more, now F001's
    assert ledger.news(now, before) == [(("F001", "m"), ledger.Usage(input=50))]
