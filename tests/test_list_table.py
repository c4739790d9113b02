"""The feature list read by its table and changed item by item (issue 12): every fast path
gives what the full parse and check give, or hands over to them."""

from __future__ import annotations

import json

from conftest import fuzz_examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shiftkit.core import features, progress, rules

IDS = [f"F{i:03d}" for i in range(12)]


def checked(text: str) -> features.FeatureList:
    """``text`` as `edge.project` reads a list it checked: by its table and spans."""
    parsed = features.loads(text)
    items = parsed.items
    return features.FeatureList.from_text(
        text,
        features.table_of(items),
        features.item_spans(text, items),
        parsed.schema_ref,
        items=items,
    )


def feature(i: int, **fields: object) -> features.Feature:
    made = features.Feature(
        id=IDS[i],
        category="functional",
        description=f"Feature {i} — naïve “quotes” and \\ backslashes",
        steps=(f"step {i}",),
        verify=f"pytest -q tests/test_{i}.py",
    )
    return made._replace(**fields)  # type: ignore[arg-type]


@st.composite
def lists(draw: st.DrawFn) -> list[features.Feature]:
    count = draw(st.integers(1, 8))
    made = []
    for i in range(count):
        depends = draw(st.lists(st.sampled_from(IDS[:i]), unique=True, max_size=2)) if i else []
        made.append(
            feature(
                i,
                passes=draw(st.booleans()),
                core=draw(st.booleans()),
                depends_on=tuple(depends),
                attempts=draw(st.integers(0, 3)),
                blocked=draw(st.none() | st.just(features.Blocked("stuck", "2026-11-30", 2))),
            )
        )
    return made


EDITS = st.sampled_from(
    ["flip", "flips", "append", "describe", "remove", "swap", "block", "bad-dependency", "none"]
)


def edited(before: list[features.Feature], edit: str, at: int) -> list[features.Feature]:
    after = list(before)
    k = at % len(after)
    if edit == "flip":
        after[k] = after[k]._replace(passes=not after[k].passes)
    elif edit == "flips":
        for j in {k, (k + 3) % len(after)}:
            after[j] = after[j]._replace(passes=not after[j].passes)
    elif edit == "append" and len(after) < len(IDS):
        after.append(feature(len(after), depends_on=(IDS[0],)))
    elif edit == "describe":
        after[k] = after[k]._replace(description="changed")
    elif edit == "remove" and len(after) > 1:
        del after[-1]
    elif edit == "swap" and len(after) > 1:
        after[0], after[-1] = after[-1], after[0]
    elif edit == "block":
        after[k] = after[k]._replace(blocked=features.Blocked("x", "y", 1), attempts=5)
    elif edit == "bad-dependency":
        after[k] = after[k]._replace(depends_on=("nowhere",))
    return after


@settings(
    max_examples=fuzz_examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(lists(), EDITS, st.integers(0, 50))
def test_the_item_by_item_check_agrees_with_the_full_one(
    before: list[features.Feature], edit: str, at: int
) -> None:
    trusted = checked(features.dumps(features.FeatureList(before)))
    after = edited(before, edit, at)
    text = features.dumps(features.FeatureList(after))
    fast = features.loads_against(text, trusted)
    try:
        reference: features.FeatureList | None = features.loads(text)
    except Exception:
        reference = None
    if fast is None:
        # Handed over: only when the full check has something to say or positions moved.
        assert reference is None or edit in ("remove", "swap", "block")
        return
    assert reference is not None, f"{edit}: the fast check passed a list the full one refuses"
    assert fast.table == reference.table
    assert [fast.at(i) for i in range(len(after))] == list(reference.features)
    assert features.dumps(fast) == text
    changed = features.changed_positions(trusted, fast)
    assert changed == [i for i in range(len(before)) if before[i] != after[i]]


@settings(max_examples=fuzz_examples(200), deadline=None)
@given(lists(), st.integers(0, 50), st.booleans())
def test_a_splice_writes_what_serializing_the_whole_list_writes(
    before: list[features.Feature], at: int, append: bool
) -> None:
    trusted = checked(features.dumps(features.FeatureList(before)))
    k = at % len(before)
    if append and len(before) < len(IDS):
        new = feature(len(before), depends_on=(IDS[k],))
        spliced, reference = trusted.append(new), features.FeatureList((*before, new))
    else:
        new = before[k]._replace(passes=not before[k].passes, attempts=before[k].attempts + 1)
        spliced = trusted.replace_feature(new)
        reference = features.FeatureList((*before[:k], new, *before[k + 1 :]))
    assert features.dumps(spliced) == features.dumps(reference)
    assert spliced.table == reference.table
    assert spliced.checked
    assert [spliced.at(i) for i in range(len(reference))] == list(reference.features)
    # And the spliced text reads back by its new spans.
    assert spliced.spans == features.item_spans(spliced.text or "", reference.items)


def test_a_splice_that_breaks_rule_1_is_not_recorded_as_checked() -> None:
    trusted = checked(features.dumps(features.FeatureList([feature(0), feature(1)])))
    unknown = trusted.replace_feature(feature(1, depends_on=("F999",)))
    assert not unknown.checked
    empty_step = trusted.replace_feature(feature(1, steps=("",)))
    assert not empty_step.checked
    duplicate = trusted.append(feature(0)._replace(description="again"))
    assert not duplicate.checked
    flip = trusted.replace_feature(feature(1, passes=True))
    assert flip.checked


def test_spans_only_for_a_list_laid_out_as_dumps_writes_it() -> None:
    made = features.FeatureList([feature(0), feature(1), feature(2)])
    text = features.dumps(made)
    spans = features.item_spans(text, made.items)
    assert spans is not None
    for i, item in enumerate(made.items):
        assert json.loads(text[spans[2 * i] : spans[2 * i + 1]]) == item
    other = json.dumps(features.as_document(made), indent=4) + "\n"
    assert features.item_spans(other, made.items) is None
    single_line = json.dumps(features.as_document(made))
    assert features.item_spans(single_line, made.items) is None
    # A list read from such a text still works, through the full parse.
    listing = checked(other)
    assert listing.spans is None
    assert listing.replace_feature(feature(1, passes=True)).get("F001") == feature(1, passes=True)


def test_next_counts_and_blocked_read_the_table() -> None:
    made = [
        feature(0, passes=True),
        feature(1, blocked=features.Blocked("stuck", "2026-11-30", 3)),
        feature(2, depends_on=("F001",)),
        feature(3),
        feature(4, passes=True, core=True),
    ]
    listing = checked(features.dumps(features.FeatureList(made)))
    assert features.next_feature(listing) == made[3]
    assert [f.id for f in features.candidates(listing, repair=["F002", "F000"])] == [
        "F002",
        "F003",
    ]
    assert features.candidates(listing, claimed=["F003"], limit=1) == []
    assert features.counts(listing, ["F003"]) == features.Counts(5, 2, 2, 1, 1)
    assert features.blocked_ids(listing) == ["F001"]
    assert features.blocked_open(listing) == [made[1]]
    assert not features.all_pass(listing)
    assert features.next_free_id(listing) == "F005"


@settings(max_examples=fuzz_examples(300), deadline=None)
@given(st.text("ab", max_size=40), st.text("ab", max_size=12), st.text("ab", max_size=12))
def test_common_prefix_and_suffix_agree_with_comparing_character_by_character(
    middle: str, left: str, right: str
) -> None:
    def shared(a: str, b: str) -> int:  # character by character
        count = 0
        while count < min(len(a), len(b)) and a[count] == b[count]:
            count += 1
        return count

    old, new = left + middle, right + middle + left
    for chunk in (1, 3, features._CHUNK):  # chunks smaller than the texts, and larger
        saved, features._CHUNK = features._CHUNK, chunk
        try:
            prefix = features._common_prefix(old, new)
            most = min(len(old), len(new)) - prefix
            suffix = features._common_suffix(old, new, most)
        finally:
            features._CHUNK = saved
        assert prefix == shared(old, new)
        plain = shared(old[::-1], new[::-1])
        assert suffix == min(plain, most)


def test_positions_by_scan_then_by_index_and_every_blocked_id() -> None:
    made = [
        feature(i, blocked=features.Blocked("stuck", "2026-11-30", 3) if i % 3 == 1 else None)
        for i in range(9)
    ]
    listing = checked(features.dumps(features.FeatureList(made)))
    assert features.blocked_ids(listing) == ["F001", "F004", "F007"]
    # The first lookups scan, the later ones use the index: the same answers.
    answers = [listing.position(f"F{i:03d}") for i in [8, 0, 12, 4, 8, 0, 12, 4]]
    assert answers == [8, 0, None, 4] * 2
    assert listing.get("F005") == made[5]


ENTRIES = [
    progress.format_entry(f"2026-11-{day:02d} 10:00 UTC", f"F{n:03d}", "passed", "abc1234", body)
    for day, n, body in [(1, 0, "One."), (1, 0, "Other."), (2, 1, "Two."), (3, 2, "Three.")]
]


@settings(max_examples=fuzz_examples(300), deadline=None)
@given(
    st.lists(st.sampled_from(ENTRIES), max_size=4),
    st.lists(st.sampled_from(ENTRIES), max_size=3),
    st.lists(st.sampled_from(ENTRIES), max_size=3),
    st.sampled_from(["", "\n", "stray text\n"]),
)
def test_new_entries_parse_only_what_was_appended_and_agree_with_comparing_all(
    old: list[str], added: list[str], archived: list[str], joint: str
) -> None:
    preamble = "# Progress\n"
    old_log = preamble
    for entry in old:
        old_log = progress.append(old_log, entry)
    new_log = old_log + joint + "\n".join(added)
    archive = progress.ARCHIVE_HEAD
    for entry in archived:
        archive = progress.append(archive, entry)
    parents = [rules.Side(None, old_log, archive)]
    seen = {e.key for text in (old_log, archive) for e in progress.parse(text).entries}
    expected = [e.key for e in progress.parse(new_log).entries if e.key not in seen]
    assert [e.key for e in rules.new_entries(parents, new_log)] == expected
