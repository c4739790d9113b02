"""The claim record on its own: parsing what a claim object or the local file holds."""

from __future__ import annotations

import json

import pytest

from shiftkit.core.claim import (
    ClaimRecord,
    LocalClaim,
    parse_local,
    parse_message,
    parse_record,
    record_message,
)

FULL = ClaimRecord(
    feature="F001",
    session="s-1",
    worktree="/w",
    branch="main",
    base="a" * 40,
    host="box",
    boot_id="b",
    pid=12,
    pid_start="99",
    taken="2026-11-30T00:00:00Z",
    expires="2026-11-30T08:00:00Z",
    nonce="n",
)


def test_a_record_round_trips_through_its_message() -> None:
    assert parse_message(record_message(FULL)) == FULL


def test_a_partial_record_names_its_holder_with_what_it_has() -> None:
    record = parse_record({"feature": "F002", "session": "s-9"})
    assert isinstance(record, ClaimRecord)
    assert record.holder().startswith("session s-9 (worktree ?, branch detached")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ([], "not a JSON object"),
        ({"session": "s"}, "names no feature"),
        ({"feature": 7}, "'feature' has the wrong type"),
        ({"feature": "F1", "pid": True}, "'pid' has the wrong type"),
        ({"feature": "F1", "branch": 3}, "'branch' has the wrong type"),
    ],
)
def test_a_record_of_the_wrong_shape_says_why(value: object, reason: str) -> None:
    problem = parse_record(value)
    assert isinstance(problem, str) and reason in problem


def test_a_message_that_is_not_json_is_broken() -> None:
    assert parse_message("{") == "its record is not JSON"


def test_the_local_claim_is_the_record_and_its_object() -> None:
    held = LocalClaim(FULL, "c" * 40)
    assert parse_local(json.loads(json.dumps(held.as_json()))) == held
    assert held.feature == "F001" and held.base == "a" * 40


@pytest.mark.parametrize(
    "value",
    [None, {}, {"feature": "F1"}, {"feature": "F1", "base": "x", "oid": 5}, {"base": "x"}],
)
def test_a_local_file_of_the_wrong_shape_is_no_claim(value: object) -> None:
    assert parse_local(value) is None
