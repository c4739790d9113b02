"""The pure half of the oracle overlay (decision record 0081): which commit defines each
oracle file, the rows rule 14 judges, and how the overlay is said."""

from __future__ import annotations

from shiftkit.core import overlay


def test_the_newest_trusted_commit_defines_a_file() -> None:
    touches = [
        overlay.Touch("c3", frozenset({"tests/test_a.py"}), False),  # the agent, last
        overlay.Touch("c2", frozenset({"tests/test_a.py", "tests/test_b.py"}), True),  # a person
        overlay.Touch("c1", frozenset({"tests/test_c.py"}), False),
    ]
    found = overlay.sources(["tests/test_a.py", "tests/test_b.py", "tests/test_c.py"], touches, "d")
    assert found == {"tests/test_a.py": "c2", "tests/test_b.py": "c2", "tests/test_c.py": "d"}


def test_rows_between_the_defined_and_the_judged_versions() -> None:
    pairs = {"same": ("1", "1"), "new": (None, "2"), "gone": ("3", None), "edited": ("4", "5")}
    assert overlay.changed_rows(pairs) == [("A", "new"), ("D", "gone"), ("M", "edited")]


def test_the_note_names_each_source_and_what_was_removed() -> None:
    restored = [
        overlay.Restored("tests/test_a.py", "1234567890"),
        overlay.Restored("conftest.py", "1234567890", removed=True),
        overlay.Restored("tests/test_b.py", "abcdef0123"),
    ]
    assert overlay.note(restored) == (
        "oracle restored from 1234567: tests/test_a.py, conftest.py (removed); "
        "from abcdef0: tests/test_b.py"
    )
