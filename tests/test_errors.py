"""Every expected failure is one `ShiftkitError`: one line on stderr and an exit code
(docs/decisions/0004-exit-codes-and-errors.md)."""

from __future__ import annotations

import pytest

from shiftkit.core import errors
from shiftkit.core.errors import BadInput, HookRefused, Refused, ShiftkitError


def test_each_failure_has_its_exit_code() -> None:
    assert (errors.OK, errors.REFUSED, errors.USAGE, errors.CLAIM_HELD, errors.INTERNAL) == (
        0,
        1,
        2,
        3,
        4,
    )
    assert BadInput("bad").exit_code == errors.USAGE
    assert Refused("no").exit_code == errors.REFUSED
    assert ShiftkitError("held", errors.CLAIM_HELD).exit_code == 3
    assert ShiftkitError("plain").exit_code == errors.USAGE
    refused = HookRefused("the pre-commit hook refused the commit", "rule 3: two flips\n")
    assert isinstance(refused, Refused) and refused.exit_code == errors.REFUSED
    assert (refused.message, refused.shown) == (
        "the pre-commit hook refused the commit",
        "rule 3: two flips\n",
    )
    assert str(refused) == refused.message


@pytest.mark.parametrize(
    "brk", ["\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
)
def test_one_line_escapes_every_line_break_a_reader_splits_on(brk: str) -> None:
    text = f"features.json: id 'F1{brk}' ends{brk}{brk}badly"
    shown = errors.one_line(text)
    assert shown.splitlines() == [shown]
    escaped = brk.encode("unicode_escape").decode("ascii")
    assert shown == f"features.json: id 'F1{escaped}' ends{escaped}{escaped}badly"


def test_one_line_keeps_other_text_as_it_is() -> None:
    text = "F001 — «déjà» \t tabbed\\n (a backslash-n, not a break)"
    assert errors.one_line(text) == text


def test_report_prints_one_line_and_returns_the_exit_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert errors.report(Refused("rule 3: two flips\nin one commit")) == 1
    assert errors.report(BadInput("features.json: not JSON")) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "shiftkit: rule 3: two flips\\nin one commit\nshiftkit: features.json: not JSON\n"
    )
