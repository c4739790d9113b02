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


@pytest.mark.parametrize(("message", "named"), [
    ("F002: subtract two numbers", True),
    ("Subtract two numbers\n\nF002 needed a helper", True),
    ("Subtract two numbers", False),
    ("Subtract two numbers\n\nShiftkit-Feature: F002\nShiftkit-Verified: 4b825dc\n"
     "Shiftkit-Claim: c1a1c1a\n", False),
    ("Subtract two numbers\n\nReviewed-for: F002\nShiftkit-Feature: F002\n", True),
])  # fmt: skip
def test_the_machine_trailers_do_not_name_a_flip(message: str, named: bool) -> None:
    """Regression: the commit-msg hook judges a message before it adds Shiftkit-Feature, and
    `audit` judged it after, where the trailer itself named the feature — so a flip whose
    message did not name it was refused by the hook but passed by `audit` once landed past
    the hooks with the usual trailers. Both now read the message without them."""
    found = rules.rule5_message(["F002"], message)
    assert (found == []) == named, found
    with_trailer = rules.rule5_message(["F002"], f"{message}\n\nShiftkit-Feature: F002\n")
    assert (with_trailer == []) == named, with_trailer


def test_check_list_reports_rule_one() -> None:
    _, [violation] = rules.check_list('{"features": 3}', "features.json")
    assert str(violation).startswith("rule 1: features.json: $.features: 3 is not of type 'array'")
    _, [missing] = rules.check_list(None, "features.json")
    assert "missing" in missing.message
