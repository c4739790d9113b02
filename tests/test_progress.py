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
    assert [e.key for e in archive.entries] + [e.key for e in after.entries] == [
        e.key for e in log.entries
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


# -- the layout whitespace hooks leave unchanged -------------------------------------------------

from fixers import fixed  # noqa: E402


def test_a_written_log_ends_with_one_newline_and_passes_the_fixers() -> None:
    text = build(3)
    assert text.endswith("more\n") and not text.endswith("\n\n")
    assert fixed(text) == {}


def test_an_entry_is_written_without_line_end_whitespace_or_stray_line_breaks() -> None:
    block = progress.format_entry(
        "2026-11-29 10:00 UTC",
        "F001",
        "passed  ",
        "abc1234",
        "\n\n  first   \r\nsecond\t\rthird \n\n",
    )
    assert block == "## 2026-11-29 10:00 UTC | F001 | passed | abc1234\n  first\nsecond\nthird\n"
    assert fixed(progress.append(PREAMBLE, block)) == {}


def test_entries_compare_without_blank_lines_and_line_end_whitespace() -> None:
    tidy = progress.parse(build(3))
    loose = progress.parse(
        build(3).replace("more\n\n", "more  \n\n\n").rstrip("\n").replace("thing 1", "thing one")
    )
    assert [e.key for e in loose.entries] != [e.key for e in tidy.entries]  # a real change
    loose = progress.parse(build(3).replace("more\n\n", "more  \n\n\n").rstrip("\n"))
    assert [e.key for e in loose.entries] == [e.key for e in tidy.entries]
    assert [e.clean for e in loose.entries] == [e.clean for e in tidy.entries]


def test_tidy_lays_out_any_spacing_the_way_shiftkit_writes_it() -> None:
    canonical = build(4)
    for loose in (
        canonical.rstrip("\n"),  # no newline at the end
        canonical + "\n\n",  # blank lines at the end
        canonical.replace("more\n\n", "more\n"),  # git's union merge folded the separators
        canonical.replace("more\n\n", "more \n \n\n\n"),  # a hand edit
        canonical.replace("\n", "\r\n"),
    ):
        assert progress.tidy(loose) == canonical
    assert progress.tidy(canonical) == canonical
    assert progress.tidy("") == ""
    assert progress.tidy(PREAMBLE + "\n\n") == PREAMBLE


def test_a_pruned_log_and_its_archive_pass_the_fixers() -> None:
    loose = build(12).rstrip("\n")  # as end-of-file-fixer and a missing newline leave it
    archive = progress.ARCHIVE_HEAD + "\n" + entry(90) + "\n\n\n"
    pruned = progress.prune(progress.parse(loose), archive, 5, [], "a.txt")
    assert fixed(pruned.log_text) == {} and fixed(pruned.archive_text) == {}
    assert [e.key for e in progress.parse(pruned.archive_text).entries] == [
        progress.parse(entry(90)).entries[0].key,
        *(e.key for e in progress.parse(loose).entries[:7]),
    ]


def test_an_interrupted_prune_is_recognised_whatever_the_spacing() -> None:
    log = progress.parse(build(12))
    first = progress.prune(log, "", 5, [], "a.txt")
    # end-of-file-fixer (or a person) touched the archive before the prune was run again
    again = progress.prune(log, first.archive_text.rstrip("\n") + "\n\n\n", 5, [], "a.txt")
    assert again.archive_text == first.archive_text and again.log_text == first.log_text
