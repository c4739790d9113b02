"""Properties: the log's entries, rule 8 and the prune do not depend on the blank lines between
entries or at the end of the file (git's union merge, `end-of-file-fixer` and hand edits change
exactly those), and what shiftkit writes passes the whitespace fixers unchanged.

Example counts are small for a quick run; ``SHIFTKIT_FUZZ_EXAMPLES=N`` raises them."""

from __future__ import annotations

import os
from typing import Any

from fixers import fixed
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core import progress, rules


def examples(default: int) -> int:
    wanted = os.environ.get("SHIFTKIT_FUZZ_EXAMPLES", "").strip()
    return max(default, int(wanted)) if wanted.isdigit() else default


PROFILE: dict[str, Any] = {"deadline": None, "database": None}
PREAMBLE = "# Progress — spacing\nGoal: entries whatever the spacing.\n"

lines = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=24
)
entry_args = st.tuples(
    st.sampled_from(["2026-11-29 10:00 UTC", "2026-11-30 23:59 UTC"]),
    st.sampled_from(["F000", "F001", "F002", "F003"]),
    st.sampled_from(["passed", "attempt 1 failed, reverted", "unblocked"]),
    st.sampled_from(["abc1234", "-"]),
    st.lists(lines | st.just("## 2026-01-01 00:00 UTC | F9 | passed | abcd"), max_size=4).map(
        "\n".join
    ),
)
# What may stand between two entries, or after the last one: blank lines folded or added,
# whitespace left on them, the final newline missing.
gaps = st.sampled_from(["\n", "", "\n\n", " \n", "\t\n\n", "\n  \n"])
ends = st.sampled_from(["", "\n", "\n\n\n", " \n", "\r\n", "<no newline>"])


def canonical(entries: list[tuple[str, str, str, str, str]], head: str = PREAMBLE) -> str:
    text = head
    for args in entries:
        text = progress.append(text, progress.format_entry(*args))
    return text


def loosened(text: str, draw: Any) -> str:
    """``text`` with other spacing at every entry boundary and at the end."""
    log = progress.parse(text)
    out = log.head
    for entry in log.entries:
        out += entry.key + "\n" + draw(gaps)
    end = draw(ends)
    if end == "<no newline>":
        return out.rstrip("\n \t")
    return out.rstrip("\n \t") + "\n" + end if log.entries else out


def keys(text: str) -> list[str]:
    return [e.key for e in progress.parse(text).entries]


def rule8(
    old: str,
    new: str,
    old_archive: str = "",
    new_archive: str = "",
    kept: frozenset[str] = frozenset(),
) -> list[rules.Violation]:
    return rules.rule8_log(
        [rules.Side(None, old, old_archive or None)],
        rules.Proposed(None, new, new_archive or None),
        "log",
        "archive",
        kept,
    )


@settings(max_examples=examples(100), **PROFILE)
@given(st.lists(entry_args, max_size=6), st.data())
def test_entries_are_the_same_whatever_the_spacing(
    entries: list[tuple[str, str, str, str, str]], data: st.DataObject
) -> None:
    text = canonical(entries)
    loose = loosened(text, data.draw)
    assert keys(loose) == keys(text)
    assert len(keys(text)) == len(entries)
    assert progress.parse(loose).preamble == progress.parse(text).preamble
    assert progress.tidy(loose) == text  # the layout shiftkit writes, from any spacing
    assert rule8(text, loose) == [] and rule8(loose, text) == []


@settings(max_examples=examples(100), **PROFILE)
@given(st.lists(entry_args, max_size=6), st.lists(entry_args, min_size=1, max_size=3), st.data())
def test_appending_to_a_log_of_any_spacing_passes_rule8(
    old_entries: list[tuple[str, str, str, str, str]],
    new_entries: list[tuple[str, str, str, str, str]],
    data: st.DataObject,
) -> None:
    old = loosened(canonical(old_entries), data.draw)
    appended = old
    for args in new_entries:
        appended = progress.append(appended, progress.format_entry(*args))
    assert appended.startswith(old)
    added = [key for key in keys(appended)[len(keys(old)) :] if key not in keys(old)]
    for new in (appended, progress.tidy(appended), loosened(appended, data.draw)):
        assert rule8(old, new) == []
        # rule 5 sees the new entries as new, and only them, however they are spaced
        found = rules.new_entries([rules.Side(None, old, None)], new)
        assert [e.key for e in found] == added


@settings(max_examples=examples(80), **PROFILE)
@given(
    st.lists(entry_args, min_size=1, max_size=8),
    st.lists(entry_args, max_size=3),
    st.integers(1, 4),
    st.lists(st.sampled_from(["F000", "F001", "F002", "F003"]), unique=True, max_size=2),
    st.lists(entry_args, max_size=1),
    st.data(),
)
def test_a_prune_of_a_log_of_any_spacing_passes_rule8(
    entries: list[tuple[str, str, str, str, str]],
    archived: list[tuple[str, str, str, str, str]],
    keep: int,
    blocked: list[str],
    added: list[tuple[str, str, str, str, str]],
    data: st.DataObject,
) -> None:
    """As `finish` and `revert` do it: maybe an entry appended, then the prune."""
    old_archive = ""
    head = PREAMBLE
    if archived:
        old_archive = loosened(canonical(archived, progress.ARCHIVE_HEAD), data.draw)
        count = progress.index_line(progress.parse(old_archive).entries, "archive")
        head = PREAMBLE + "\n" + count + "\n"
    old = loosened(canonical(entries, head), data.draw)
    proposed = old
    for args in added:
        proposed = progress.append(proposed, progress.format_entry(*args))
    pruned = progress.prune(progress.parse(proposed), old_archive, keep, blocked, "archive")
    kept = frozenset(blocked)
    if pruned.moved:
        assert rule8(old, pruned.log_text, old_archive, pruned.archive_text, kept) == []
        # the whole log and archive, entry by entry, unchanged by the prune
        assert sorted(keys(pruned.log_text) + keys(pruned.archive_text)) == sorted(
            keys(proposed) + keys(old_archive)
        )
    # and an edit of a surviving entry slipped into the prune is still refused
    survivors = len(keys(old)) - len(pruned.moved)
    if survivors > 0 and pruned.moved:
        first = progress.parse(pruned.log_text).entries[0].key
        tampered = pruned.log_text.replace(first, first + " (edited)")
        assert rule8(old, tampered, old_archive, pruned.archive_text, kept) != []


@settings(max_examples=examples(30), **PROFILE)
@given(st.lists(entry_args, min_size=1, max_size=8), st.data())
def test_what_shiftkit_writes_passes_the_whitespace_fixers_unchanged(
    entries: list[tuple[str, str, str, str, str]], data: st.DataObject
) -> None:
    loose = loosened(canonical(entries), data.draw)
    assert fixed(progress.tidy(loose)) == {}
    pruned = progress.prune(progress.parse(loose), "", 1, [], "archive")
    assert fixed(pruned.log_text) == {}
    assert fixed(pruned.archive_text) == {}
