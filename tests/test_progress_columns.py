"""Properties: the progress log's quick paths (`parse` in one split, `tidy` that checks before
it rebuilds, `prune` and `plan` by column without reading the archive back) give exactly what
the straightforward versions they replaced gave, kept here as the reference.

Example counts are small for a quick run; ``SHIFTKIT_FUZZ_EXAMPLES=N`` raises them."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core import progress
from shiftkit.core.progress import HEADER, Entry, Log


def examples(default: int) -> int:
    wanted = os.environ.get("SHIFTKIT_FUZZ_EXAMPLES", "").strip()
    return max(default, int(wanted)) if wanted.isdigit() else default


PROFILE: dict[str, Any] = {"deadline": None, "database": None}

# -- the reference: the versions before the quick paths, word for word ----------------------

_LINE_END_SPACE = re.compile(r"[ \t\r\x0b\x0c]+$", re.MULTILINE)


def ref_key(entry: Entry) -> str:
    return _LINE_END_SPACE.sub("", entry.text).rstrip("\n")


def ref_clean(entry: Entry) -> str:
    return ref_key(entry) + "\n"


def ref_parse(text: str) -> Log:
    starts = [match.start() for match in HEADER.finditer(text)]
    if not starts:
        return Log(text, ())
    entries = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(text)
        block = text[start:end]
        match = HEADER.match(block)
        assert match is not None
        entries.append(
            Entry(match["time"], match["feature"], match["outcome"].strip(), match["base"], block)
        )
    return Log(text[: starts[0]], tuple(entries))


def ref_tidy(text: str) -> str:
    log = ref_parse(text)
    head = _LINE_END_SPACE.sub("", log.head).rstrip("\n")
    parts = ([head + "\n"] if head.strip() else []) + [ref_clean(entry) for entry in log.entries]
    return "\n".join(parts)


def ref_index_line(archived: tuple[Entry, ...], archive_name: str) -> str:
    ids = sorted({e.feature for e in archived})
    dates = sorted(e.time[:10] for e in archived)
    span_ids = f"{ids[0]}..{ids[-1]}" if len(ids) > 1 else (ids[0] if ids else "-")
    span_dates = f"{dates[0]}..{dates[-1]}" if len(dates) > 1 else (dates[0] if dates else "-")
    return (
        f"{progress.INDEX_PREFIX}{len(archived)} earlier entries archived in {archive_name} "
        f"({span_ids}, {span_dates})"
    )


def ref_indexed_count(log: Log) -> int:
    match = re.match(rf"{re.escape(progress.INDEX_PREFIX)}(\d+) ", log.index_line or "")
    return int(match[1]) if match else 0


def ref_prune(
    log: Log, archive_text: str, keep: int, blocked_ids: Iterable[str], archive_name: str
) -> progress.Pruned:
    entries = log.entries
    cut = max(0, len(entries) - keep)
    older, newest = entries[:cut], entries[cut:]
    retained: set[int] = set()
    for feature_id in set(blocked_ids):
        if any(e.feature == feature_id for e in newest):
            continue
        for position in range(len(older) - 1, -1, -1):
            if older[position].feature == feature_id:
                retained.add(position)
                break
    moved = tuple(e for i, e in enumerate(older) if i not in retained)
    kept = tuple(e for i, e in enumerate(older) if i in retained) + newest
    new_archive = ref_tidy(archive_text) if archive_text.strip() else progress.ARCHIVE_HEAD
    archived = ref_parse(new_archive).entries
    interrupted = (
        moved
        and len(archived) == ref_indexed_count(log) + len(moved)
        and [ref_key(e) for e in archived[len(archived) - len(moved) :]]
        == [ref_key(e) for e in moved]
    )
    if moved and not interrupted:
        new_archive = progress.append(new_archive, "\n".join(ref_clean(e) for e in moved))
        archived = ref_parse(new_archive).entries
    head = "\n\n".join(
        part for part in (log.preamble.strip("\n"), ref_index_line(archived, archive_name)) if part
    )
    return progress.Pruned(
        "\n".join([head + "\n", *(ref_clean(e) for e in kept)]), new_archive, moved
    )


def ref_plan(
    text: str, archive_text: str, keep: int, block: int, blocked: list[str], name: str
) -> tuple[str, str | None]:
    """What `context.plan_log` did: tidy, parse, and prune when due."""
    text = ref_tidy(text)
    log = ref_parse(text)
    if len(log.entries) <= keep + block:
        return text, None
    pruned = ref_prune(log, archive_text, keep, blocked, name)
    return pruned.log_text, pruned.archive_text


# -- logs to try them on: as shiftkit writes them, loosened, and odd ------------------------

FEATURES = ["F000", "F001", "F002", "F003", "F010"]
lines = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=16)
odd_lines = st.sampled_from(
    [
        "## 2026-01-01 00:00 UTC | F9 | passed | abcd",
        "## 2026-01-01 00:00 UTC | F9 | passed | abcd \t",
        "## 2026-01-01 00:00 UTC | F 9 | x | zz",
        "## Notes",
        "[shiftkit] 3 earlier entries archived in a.txt (F1, 2026-01-01)",
        "",
        " ",
        "\t",
        "\r",
        "\x0c",
        "\x0b ",
        "\u00a0",
        "\u2028",
    ]
)
entry_args = st.tuples(
    st.sampled_from(["2026-11-29 10:00 UTC", "2026-11-30 23:59 UTC", "2025-01-02 03:04 UTC"]),
    st.sampled_from(FEATURES),
    st.sampled_from(["passed", "attempt 1 failed, reverted", "unblocked", " x "]),
    st.sampled_from(["abc1234", "-"]),
    st.lists(lines | odd_lines, max_size=4).map("\n".join),
)
gaps = st.sampled_from(["", "", "", "\n", "\n\n", " \n", "\t\n\n", "\n  \n", "\r\n", "\x0c\n"])
heads = st.sampled_from(
    [
        "",
        "\n",
        "# Progress — demo\nGoal: it works.\n",
        "# Progress — demo\nGoal: it works.\n\n",
        "# Progress — demo \n\n\n[shiftkit] 2 earlier entries archived in a.txt (F000, -)\n\n",
        "# P\r\nGoal\x0c \n",
        "\u00a0\n",
        " ",
    ]
)


@st.composite
def logs(draw: Any, head: Any = heads) -> str:
    """A log built with `append` from `format_entry`s, with maybe other spacing after each
    entry (a union merge, a fixer, a hand edit), or entries written raw."""
    text = draw(head)
    for args in draw(st.lists(entry_args, max_size=9)):
        if draw(st.booleans()):
            text = progress.append(text, progress.format_entry(*args))
        else:
            time, feature, outcome, base, body = args
            text += f"## {time} | {feature} | {outcome} | {base}\n{body}"
        text += draw(gaps)
    return text


# Half of them tidied: then `tidy`, `prune` and `plan` take their quick paths.
tidy_or_not = logs() | logs().map(ref_tidy)
texts = (
    tidy_or_not | st.text(max_size=200) | st.lists(lines | odd_lines, max_size=12).map("\n".join)
)
archive_logs = logs(st.sampled_from([progress.ARCHIVE_HEAD, ""]))
archives = st.just("") | st.just("  \n") | archive_logs | archive_logs.map(ref_tidy)


@settings(max_examples=examples(300), **PROFILE)
@given(texts)
def test_parse_and_tidy_are_the_reference(text: str) -> None:
    log = progress.parse(text)
    assert log == ref_parse(text)
    assert [e.key for e in log.entries] == [ref_key(e) for e in log.entries]
    assert progress.tidy(text) == ref_tidy(text)


@settings(max_examples=examples(300), **PROFILE)
@given(
    tidy_or_not,
    archives,
    st.integers(0, 5),
    st.integers(0, 3),
    st.lists(st.sampled_from(FEATURES), unique=True, max_size=3),
)
def test_prune_and_plan_are_the_reference(
    text: str, archive: str, keep: int, block: int, blocked: list[str]
) -> None:
    assert progress.prune(progress.parse(text), archive, keep, blocked, "a.txt") == ref_prune(
        ref_parse(text), archive, keep, blocked, "a.txt"
    )
    expected = ref_plan(text, archive, keep, block, blocked, "a.txt")
    assert progress.plan(text, lambda: archive, keep, block, blocked, "a.txt") == expected
    if expected[1] is not None:
        # The prune again, as if the log had not been written after the archive: as the
        # reference has it, and when the log's index line counts the archive right, the
        # interrupted prune is recognised and nothing is archived twice.
        again = progress.plan(text, lambda: expected[1] or "", keep, block, blocked, "a.txt")
        assert again == ref_plan(text, expected[1], keep, block, blocked, "a.txt")
        if ref_indexed_count(ref_parse(ref_tidy(text))) == len(ref_parse(archive).entries):
            assert again == expected


def test_the_archive_is_not_read_unless_a_prune_is_due() -> None:
    def unread() -> str:
        raise AssertionError("the archive was read")

    text = progress.append(
        "# Progress\n", progress.format_entry("2026-11-29 10:00 UTC", "F1", "ok", "-", "x")
    )
    assert progress.plan(text, unread, 1, 0, [], "a.txt") == (ref_tidy(text), None)


def test_a_long_tidy_log_prunes_as_the_reference() -> None:
    text = "# Progress — long\nGoal: many entries.\n"
    for i in range(400):
        body = f"did {i}\n\nnext: {i + 1}" if i % 3 else f"## not a header {i}"
        text = progress.append(
            text,
            progress.format_entry(
                f"2026-11-{i % 28 + 1:02d} 10:00 UTC", f"F{i:03d}", "ok", "-", body
            ),
        )
    archive = (
        progress.ARCHIVE_HEAD
        + "\n"
        + progress.format_entry("2025-01-01 00:00 UTC", "A1", "ok", "-", "old")
    )
    for blocked in ([], ["F005", "F398"]):
        expected = ref_plan(text, archive, 20, 10, blocked, "a.txt")
        assert progress.plan(text, lambda: archive, 20, 10, blocked, "a.txt") == expected
        assert expected[1] is not None and expected[1].startswith(archive + "\n")
