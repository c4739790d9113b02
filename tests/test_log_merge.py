"""The progress log's merge driver (decision record 0046): entry by entry, so two clones'
entries that share a header line stay two — git's line-wise `union` folded them into one,
and rule 8 then refused the merge (an agent trial: two clones demoted one feature from one
base in the same minute, and `shiftkit sync` could not merge)."""

from __future__ import annotations

from pathlib import Path

from conftest import LOG, git, git_ok, ok, shiftkit
from hypothesis import given
from hypothesis import strategies as st

from shiftkit.core import progress

HEAD = "Goal: build it.\n"


def entry(body: str, feature: str = "F001", time: str = "2026-12-01 18:00 UTC") -> str:
    return progress.format_entry(time, feature, "demoted at HEAD", "abc1234", body)


def log(*entries: str) -> str:
    text = HEAD
    for item in entries:
        text = progress.append(text, item)
    return text


def keys(text: str) -> list[str]:
    return [e.key for e in progress.parse(text).entries]


def test_entries_sharing_a_header_stay_two() -> None:
    base = log(entry("an old entry", "F000"))
    ours = log(entry("an old entry", "F000"), entry("failed: km is not a unit"))
    theirs = log(entry("an old entry", "F000"), entry("failed: exit 1"))
    merged = progress.merge(base, ours, theirs)
    assert merged.startswith(ours)
    assert keys(merged) == keys(ours) + keys(theirs)[1:]


def test_the_same_entry_on_both_sides_is_one() -> None:
    base = log()
    both = log(entry("failed: exit 1"))
    assert progress.merge(base, both, both) == both


def test_an_entry_ours_pruned_is_not_brought_back() -> None:
    old = entry("pruned on our side", "F000")
    base = log(old)
    ours = log(entry("after the prune"))
    theirs = log(old, entry("theirs"))
    assert keys(progress.merge(base, ours, theirs)) == keys(ours) + keys(log(entry("theirs")))


def test_the_merged_log_is_in_time_order() -> None:
    # (issue 29: after sync merges the log was in file order, ours then theirs)
    common = entry("the start", "F000", "2026-12-01 17:00 UTC")
    base = log(common)
    ours = log(common, entry("ours, later", "F001", "2026-12-01 18:10 UTC"))
    theirs = log(
        common,
        entry("theirs, earlier", "F002", "2026-12-01 18:05 UTC"),
        entry("theirs, last", "F003", "2026-12-01 18:20 UTC"),
    )
    merged = progress.parse(progress.merge(base, ours, theirs))
    assert [e.feature for e in merged.entries] == ["F000", "F002", "F001", "F003"]
    assert merged.head == HEAD + "\n"
    assert progress.merge(base, ours, theirs).startswith(log(common))
    # Merged either way round, the same order.
    other = progress.parse(progress.merge(base, theirs, ours))
    assert [e.feature for e in other.entries] == ["F000", "F002", "F001", "F003"]


times = st.lists(st.integers(min_value=0, max_value=59), max_size=4).map(sorted)


@given(times, times)
def test_sides_in_time_order_merge_in_time_order(mine: list[int], yours: list[int]) -> None:
    base = log(entry("common", "F000", "2026-12-01 17:00 UTC"))
    ours = log(
        entry("common", "F000", "2026-12-01 17:00 UTC"),
        *(entry(f"ours {n}", "F001", f"2026-12-01 18:{m:02d} UTC") for n, m in enumerate(mine)),
    )
    theirs = log(
        entry("common", "F000", "2026-12-01 17:00 UTC"),
        *(entry(f"theirs {n}", "F002", f"2026-12-01 18:{m:02d} UTC") for n, m in enumerate(yours)),
    )
    merged = progress.parse(progress.merge(base, ours, theirs))
    stamps = [e.time for e in merged.entries]
    assert stamps == sorted(stamps)
    assert sorted(keys(progress.merge(base, ours, theirs))) == sorted(
        set(keys(ours) + keys(theirs))
    )


bodies = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="#"),
    max_size=30,
)


@given(st.lists(bodies, max_size=4), st.lists(bodies, max_size=4), st.lists(bodies, max_size=4))
def test_every_entry_of_both_sides_is_kept(
    common: list[str], mine: list[str], yours: list[str]
) -> None:
    base = log(*(entry(b, "F000") for b in common))
    ours = log(*(entry(b, "F000") for b in common), *(entry(b) for b in mine))
    theirs = log(*(entry(b, "F000") for b in common), *(entry(b, "F002") for b in yours))
    merged = progress.merge(base, ours, theirs)
    assert merged.startswith(ours)
    assert set(keys(ours)) | set(keys(theirs)) == set(keys(merged))
    added = keys(merged)[len(keys(ours)) :]  # (ours is kept verbatim, repeats and all)
    assert len(added) == len(set(added)) and not set(added) & set(keys(ours))


def note(body: str) -> str:
    """A log entry no rule ties to a change of the list (a demotion entry needs its demotion:
    rule 5, decision record 0055)."""
    return progress.format_entry("2026-12-01 18:00 UTC", "F001", "note", "abc1234", body)


def test_two_clones_entries_with_one_header_merge(scaffold: Path, tmp_path: Path) -> None:
    """Through real git: the scaffold's attributes and the driver `setup` configures."""
    p = scaffold
    git_ok(p, "checkout", "-q", "-b", "theirs")
    (p / LOG).write_text(progress.append((p / LOG).read_text(), note("failed: exit 1")))
    git_ok(p, "commit", "-q", "-am", "Note a failure")
    git_ok(p, "checkout", "-q", "-")
    (p / LOG).write_text(progress.append((p / LOG).read_text(), note("failed: km unknown")))
    git_ok(p, "commit", "-q", "-am", "Note another failure")
    merged = git(p, "merge", "-q", "--no-edit", "theirs")
    assert merged.returncode == 0, merged.output
    text = (p / LOG).read_text()
    assert "failed: exit 1" in text and "failed: km unknown" in text
    assert text.count("## 2026-12-01 18:00 UTC | F001") == 2
    assert shiftkit(p, "audit").returncode == 0
    assert "merge drivers" not in ok(p, "start", "--no-check")
