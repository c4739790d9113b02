from __future__ import annotations

from shiftkit.core import progress

PREAMBLE = "# Progress — demo\nGoal: build it.\nConstraints: one at a time.\n"


def entry(n: int, feature: str | None = None, outcome: str = "passed") -> str:
    return progress.format_entry(
        f"2026-11-{n % 28 + 1:02d} 10:{n % 60:02d} UTC",
        feature or f"F{n:03d}",
        outcome,
        "abc1234",
        f"did thing {n}\nnext: more",
    )


def build(n: int) -> str:
    text = PREAMBLE
    for i in range(n):
        text = progress.append(text, entry(i))
    return text


def test_parse_round_trip_and_fields() -> None:
    text = build(3)
    log = progress.parse(text)
    assert log.text() == text
    assert [e.feature for e in log.entries] == ["F000", "F001", "F002"]
    assert log.entries[1].outcome == "passed" and log.entries[1].base == "abc1234"
    assert log.entries[1].body == "did thing 1\nnext: more"
    assert log.preamble == PREAMBLE


def test_append_keeps_old_text_as_prefix() -> None:
    text = build(2)
    assert progress.append(text, entry(9)).startswith(text)
    assert progress.append("no newline", entry(1)).startswith("no newline\n\n## ")


def test_body_line_looking_like_a_header_does_not_split() -> None:
    text = progress.append(
        PREAMBLE,
        progress.format_entry(
            "2026-11-29 10:00 UTC",
            "F001",
            "passed",
            "abc1234",
            "## 2026-11-29 10:00 UTC | F999 | passed | abc1234",
        ),
    )
    assert len(progress.parse(text).entries) == 1


def test_prune_moves_verbatim_and_keeps_newest() -> None:
    log = progress.parse(build(12))
    assert progress.due(log, keep=5, block=3)
    pruned = progress.prune(log, "", keep=5, blocked_ids=[], archive_name="progress-archive.txt")
    after = progress.parse(pruned.log_text)
    archive = progress.parse(pruned.archive_text)
    assert len(after.entries) == 5
    assert [e.text for e in archive.entries] + [e.text for e in after.entries] == [
        e.text for e in log.entries
    ]
    assert after.preamble == PREAMBLE
    assert after.index_line == (
        "[shiftkit] 7 earlier entries archived in progress-archive.txt (F000..F006, 2026-11-01..2026-11-07)"
    )


def test_index_line_rederived_from_archive_each_time() -> None:
    text = build(9)
    pruned = progress.prune(progress.parse(text), "", 5, [], "a.txt")
    text2 = pruned.log_text
    for i in range(9, 18):
        text2 = progress.append(text2, entry(i))
    second = progress.prune(progress.parse(text2), pruned.archive_text, 5, [], "a.txt")
    assert progress.parse(second.log_text).index_line.startswith("[shiftkit] 13 earlier entries")  # type: ignore[union-attr]
    assert len(progress.parse(second.archive_text).entries) == 13


def test_newest_entry_about_a_blocked_feature_stays() -> None:
    text = PREAMBLE
    text = progress.append(text, entry(0, "F900", "attempt 3 failed, blocked"))
    for i in range(1, 12):
        text = progress.append(text, entry(i))
    pruned = progress.prune(progress.parse(text), "", 5, ["F900"], "a.txt")
    kept = progress.parse(pruned.log_text).entries
    assert kept[0].feature == "F900" and len(kept) == 6
    assert "F900" not in pruned.archive_text


def test_interrupted_prune_does_not_duplicate_archive() -> None:
    log = progress.parse(build(12))
    first = progress.prune(log, "", 5, [], "a.txt")
    again = progress.prune(log, first.archive_text, 5, [], "a.txt")
    assert again.archive_text == first.archive_text
