from __future__ import annotations

import pytest

from shiftkit import rules


@pytest.mark.parametrize("message", ["wip", "WIP\n", "fix", "Update.", "  changes  ", "", "# only a comment\n"])
def test_generic_or_empty_subjects_are_refused(message: str) -> None:
    [violation] = rules.check_message(message)
    assert violation.rule == 9


@pytest.mark.parametrize("message", ["F012: add the todo list", "Fix the crash when the list is empty",
                                     "wip: parser handles nested lists\n\nbody"])
def test_meaningful_subjects_pass(message: str) -> None:
    assert rules.check_message(message) == []


def test_long_subject_refused_with_length() -> None:
    [violation] = rules.check_message("x" * 73)
    assert "73 characters" in str(violation)


def test_scissors_and_comments_ignored() -> None:
    raw = "Add the parser\n# Please enter the commit message\n# ------------------------ >8 ------------------------\nwip\n"
    assert rules.check_message(raw) == []


def test_check_list_reports_rule_one() -> None:
    _, [violation] = rules.check_list('{"features": 3}', "features.json")
    assert str(violation).startswith("rule 1: features.json: $.features: 3 is not of type 'array'")
    _, [missing] = rules.check_list(None, "features.json")
    assert "missing" in missing.message
