"""Rule 9 on the subject as git forms it (default cleanup `strip`)."""

from __future__ import annotations

from shiftkit.core import messages


def test_a_multi_line_first_paragraph_is_one_subject() -> None:
    assert messages.subject("Fix\nthe parser") == "Fix the parser"
    assert messages.subject("Fix\nthe parser\n\nWhy it broke.\n") == "Fix the parser"
    assert messages.check_message("Fix\nthe parser") == []


def test_a_lone_generic_word_followed_by_more_lines_is_not_generic() -> None:
    assert messages.check_message("wip\nparser handles nested lists") == []


def test_a_long_joined_first_paragraph_is_refused() -> None:
    lines = [
        "Rework how the parser reads nested lists",
        "and how it reports the errors it",
        "finds in them",
    ]
    raw = "\n".join(lines) + "\n\nbody\n"
    assert all(len(line) <= messages.MAX_SUBJECT for line in lines)
    [violation] = messages.check_message(raw)
    assert violation.rule == 9
    assert f"{len(' '.join(lines))} characters" in violation.message


def test_comment_lines_and_blank_lines_are_cleaned_as_git_does() -> None:
    raw = "# Please enter the commit message\n\n  \nAdd the parser   \n# a comment\nfor lists\n\n\n\nBody\n"
    assert messages.subject(raw) == "Add the parser for lists"
    assert messages.message_body(raw) == "Add the parser\nfor lists\n\nBody"


def test_a_blank_line_of_spaces_ends_the_first_paragraph() -> None:
    assert messages.subject("Add the parser\n \t \nfor lists") == "Add the parser"


def test_only_newlines_split_lines_as_in_git() -> None:
    assert messages.subject("Add the parser\x0bfor lists") == "Add the parser\x0bfor lists"


def test_trailers_after_a_multi_line_subject() -> None:
    raw = "F012: add\nthe list\n\nShiftkit-Feature: F012\n"
    assert messages.trailers(raw) == {"Shiftkit-Feature": ["F012"]}
    assert messages.rule5_message(["F012"], raw) == []


def test_a_violation_names_its_feature_once() -> None:
    from shiftkit.core.messages import Violation

    assert str(Violation(2, "F002: the definition changed", "F002")) == (
        "rule 2 [F002]: the definition changed"
    )
    assert str(Violation(2, "F003 is new and already passing", "F003")) == (
        "rule 2 [F003]: F003 is new and already passing"
    )
    assert str(Violation(5, "no log entry names it", "F004")) == (
        "rule 5 [F004]: no log entry names it"
    )
    assert str(Violation(9, "the subject 'wip' says nothing")) == (
        "rule 9: the subject 'wip' says nothing"
    )
