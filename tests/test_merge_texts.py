"""The merge driver over texts (`merge.merge_texts`) against the reference: every version
checked in full with `features.loads`, merged with `merge.merge_lists`, written with
`features.dumps`. Same text out, same refusals, whichever versions are known to be valid.

Example counts are small for a quick run; ``SHIFTKIT_FUZZ_EXAMPLES=N`` raises them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import git_ok, shiftkit
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core import features, merge
from shiftkit.core.errors import BadInput, Refused, ShiftkitError

Feature, FeatureList = features.Feature, features.FeatureList


def examples(default: int) -> int:
    wanted = os.environ.get("SHIFTKIT_FUZZ_EXAMPLES", "").strip()
    return max(default, int(wanted)) if wanted.isdigit() else default


PROFILE: dict[str, Any] = {"deadline": None, "database": None}


def reference(base: str, ours: str, theirs: str) -> str | ShiftkitError:
    """What the driver wrote before: `loads` of each (ours, theirs, base), merged, dumped."""
    try:
        ours_list = features.loads(ours, "ours")
        theirs_list = features.loads(theirs, "theirs")
        base_list = features.loads(base, "base") if base.strip() else None
        return features.dumps(merge.merge_lists(base_list, ours_list, theirs_list))
    except ShiftkitError as exc:
        return exc


def driver(
    base: str, ours: str, theirs: str, known: tuple[bool, bool, bool]
) -> str | ShiftkitError:
    try:
        return merge.merge_texts(
            merge.Version(base, "base", known[0]) if base.strip() else None,
            merge.Version(ours, "ours", known[1]),
            merge.Version(theirs, "theirs", known[2]),
        ).text
    except ShiftkitError as exc:
        return exc


def same(got: str | ShiftkitError, expected: str | ShiftkitError) -> bool:
    if isinstance(expected, ShiftkitError):
        return type(got) is type(expected) and str(got) == str(expected)
    return got == expected


# -- lists and what two sessions do to them ---------------------------------------------------

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1).filter(
    str.strip
)


@st.composite
def base_lists(draw: Any) -> FeatureList:
    count = draw(st.integers(1, 8))
    items = []
    for i in range(count):
        deps = draw(st.lists(st.sampled_from([f"F{j:03d}" for j in range(i)] or ["-"]), max_size=2))
        items.append(
            Feature(
                id=f"F{i:03d}",
                category=draw(st.sampled_from(["functional", "ui"])),
                description=draw(words),
                steps=tuple(draw(st.lists(words, min_size=1, max_size=2))),
                verify=draw(st.none() | st.just("true")),
                core=draw(st.booleans()),
                depends_on=tuple(dict.fromkeys(d for d in deps if d != "-")),
                passes=draw(st.booleans()),
                attempts=draw(st.integers(0, 3)),
                blocked=draw(
                    st.none()
                    | st.builds(features.Blocked, words, st.just("2026-11-29"), st.just(1))
                ),
            )
        )
    schema = draw(st.sampled_from([features.SCHEMA_REF, None, "x/é.json"]))
    return FeatureList(items, schema)


@st.composite
def session(draw: Any, base: FeatureList, name: str) -> FeatureList:
    """A session's work on the base list: flips, demotions, attempts, blocks and unblocks,
    maybe an edited definition or a dropped feature, and new features at the end."""
    result = list(base.features)
    dropped: set[str] = set()
    for i, feature in enumerate(result):
        change = draw(st.sampled_from(["keep"] * 4 + ["flip", "attempt", "block", "edit", "drop"]))
        if change == "flip":
            result[i] = feature._replace(passes=not feature.passes)
        elif change == "attempt":
            result[i] = feature._replace(attempts=draw(st.integers(0, 5)))
        elif change == "block":
            blocked = None if feature.blocked else features.Blocked("stuck", "2026-11-30", 2)
            result[i] = feature._replace(blocked=blocked)
        elif change == "edit":
            result[i] = feature._replace(description=draw(st.sampled_from(["edited", "other"])))
        elif change == "drop" and not any(feature.id in f.depends_on for f in result):
            dropped.add(feature.id)
    kept = [f for f in result if f.id not in dropped]
    for k in range(draw(st.integers(0, 2))):
        new_id = draw(st.sampled_from([f"{name}{k}", "N0"]))
        if all(f.id != new_id for f in kept):
            kept.append(
                Feature(new_id, "new", f"added by {name}", ("s",), passes=draw(st.booleans()))
            )
    return FeatureList(kept, base.schema_ref)


def hand_written(text: str, how: str) -> str:
    """The same list laid out another way (what a person or another tool might write)."""
    document = json.loads(text)
    if how == "indent4":
        return json.dumps(document, indent=4, ensure_ascii=False) + "\n"
    if how == "compact":
        return json.dumps(document, ensure_ascii=False)
    if how == "crlf":
        return text.replace("\n", "\r\n")
    return text


knowns = st.tuples(st.booleans(), st.booleans(), st.booleans())


@settings(max_examples=examples(300), **PROFILE)
@given(st.data(), knowns)
def test_the_driver_writes_what_the_reference_writes(
    data: st.DataObject, known: tuple[bool, bool, bool]
) -> None:
    base = data.draw(base_lists())
    ours = data.draw(session(base, "O"))
    theirs = data.draw(session(base, "T"))
    texts = [features.dumps(x) for x in (base, ours, theirs)]
    if data.draw(st.booleans()):
        texts[0] = ""  # no common ancestor
    layouts = st.sampled_from(["dumps"] * 6 + ["indent4", "compact", "crlf"])
    texts = [hand_written(t, data.draw(layouts)) if t else t for t in texts]
    expected = reference(*texts)
    got = driver(*texts, (known[0] and bool(texts[0]), known[1], known[2]))
    assert same(got, expected), (got, expected)


def bad(text: str, how: str) -> str:
    document = json.loads(text)
    items = document["features"]
    if not items:  # (a session may have dropped every feature)
        items.append(
            {"id": "Z1", "category": "c", "description": "d", "steps": ["s"], "passes": False}
        )
    if how == "passes":
        items[-1]["passes"] = "yes"
    elif how == "duplicate":
        items.append({**items[0]})
    elif how == "unknown dependency":
        items[-1]["depends_on"] = ["NOPE"]
    elif how == "legacy":
        return json.dumps(items, indent=2)
    elif how == "json":
        return text[:-3]
    elif how == "extra key":
        document["extra"] = 1
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


BAD = ["passes", "duplicate", "unknown dependency", "legacy", "json", "extra key"]


@settings(max_examples=examples(150), **PROFILE)
@given(st.data(), knowns, st.sampled_from(BAD), st.sampled_from(["ours", "theirs", "base"]))
def test_an_invalid_version_is_refused_as_before(
    data: st.DataObject, known: tuple[bool, bool, bool], how: str, which: str
) -> None:
    base = data.draw(base_lists())
    texts = {
        "base": features.dumps(base),
        "ours": features.dumps(data.draw(session(base, "O"))),
        "theirs": features.dumps(data.draw(session(base, "T"))),
    }
    texts[which] = bad(texts[which], how)
    # Only a valid version can be known to be valid.
    flags = {name: flag and name != which for name, flag in zip(texts, known, strict=True)}
    expected = reference(texts["base"], texts["ours"], texts["theirs"])
    assert isinstance(expected, BadInput)
    assert str(expected).startswith(f"{which}: ")
    got = driver(texts["base"], texts["ours"], texts["theirs"], tuple(flags.values()))  # type: ignore[arg-type]
    assert same(got, expected), (got, expected)


def listing(*specs: tuple[str, bool]) -> FeatureList:
    return FeatureList(
        Feature(id=i, category="c", description=f"does {i}", steps=("s",), passes=p)
        for i, p in specs
    )


def test_the_examples_of_the_issue() -> None:
    base = listing(*((f"F{i:04d}", i < 50) for i in range(100)))
    ours = base.replace_feature(base.features[70]._replace(passes=True))
    theirs = base.append(Feature("F0100", "c", "new", ("s",)))
    texts = [features.dumps(x) for x in (base, ours, theirs)]
    for known in ((True, False, False), (False, False, False), (False, True, True)):
        assert driver(*texts, known) == reference(*texts)
    conflict = base.replace_feature(base.features[3]._replace(description="else"))
    other = base.replace_feature(base.features[3]._replace(description="other"))
    got = driver(texts[0], features.dumps(conflict), features.dumps(other), (True, False, False))
    assert isinstance(got, Refused) and "F0003: both sides changed its definition" in str(got)


def test_only_the_changed_features_are_checked_against_a_known_valid_base(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = listing(*((f"F{i:04d}", False) for i in range(200)))
    ours = base.replace_feature(base.features[10]._replace(passes=True))
    theirs = base.append(Feature("F0200", "c", "new", ("s",)))
    checked: list[int] = []
    original = features.schema_errors

    def counting(document: Any) -> str | None:
        checked.append(len(document["features"]))
        return original(document)  # type: ignore[no-any-return]

    texts = [features.dumps(x) for x in (base, ours, theirs)]
    expected = reference(*texts)
    monkeypatch.setattr(features, "schema_errors", counting)
    merged = merge.merge_texts(
        merge.Version(texts[0], "base", True),
        merge.Version(texts[1], "ours"),
        merge.Version(texts[2], "theirs"),
    )
    assert merged.text == expected and merged.validated == ()
    assert checked == [1]  # theirs's new feature; ours's flip needs no schema
    checked.clear()
    merged = merge.merge_texts(
        merge.Version(texts[0], "base"),
        merge.Version(texts[1], "ours"),
        merge.Version(texts[2], "theirs"),
    )
    assert checked[0] == 200 and sum(checked[1:]) <= 2  # ours in full, then what differs
    assert [v.name for v in merged.validated] == ["ours"]


def test_spacing_inside_an_untouched_feature_is_kept_and_the_list_is_the_same() -> None:
    base = listing(("F1", False), ("F2", False), ("F3", False))
    loose = features.dumps(base).replace('"passes": false\n', '"passes":   false\n', 1)
    ours = features.dumps(base.replace_feature(base.features[1]._replace(passes=True)))
    ours = ours.replace('"passes": false\n', '"passes":   false\n', 1)
    theirs = features.dumps(base.append(Feature("F4", "c", "new", ("s",))))
    theirs = theirs.replace('"passes": false\n', '"passes":   false\n', 1)
    got = driver(loose, ours, theirs, (True, False, False))
    assert isinstance(got, str) and '"passes":   false' in got
    expected = reference(loose, ours, theirs)
    assert isinstance(expected, str)
    assert features.loads(got).features == features.loads(expected).features


def test_the_driver_refuses_naming_the_file_and_records_a_list_it_checked_in_full(
    scaffold: Path,
) -> None:
    base = listing(("F1", False), ("F2", False))  # lists this repository never saw
    ours = base.replace_feature(base.features[0]._replace(passes=True))
    (scaffold / "base").write_text(features.dumps(base))
    (scaffold / "ours").write_text(features.dumps(ours))
    invalid = json.loads(features.dumps(base))
    invalid["features"][1]["passes"] = "yes"
    (scaffold / "theirs").write_text(json.dumps(invalid, indent=2) + "\n")
    refused = shiftkit(scaffold, "merge-features", "base", "ours", "theirs")
    assert refused.returncode == 2
    assert (
        "shiftkit: theirs: $.features[1].passes: 'yes' is not of type 'boolean'" in refused.output
    )
    assert (scaffold / "ours").read_text() == features.dumps(ours)  # untouched

    (scaffold / "theirs").write_text(features.dumps(base.append(Feature("F3", "c", "new", ("s",)))))
    blobs = {
        name: git_ok(scaffold, "hash-object", name).strip() for name in ("base", "ours", "theirs")
    }
    done = shiftkit(scaffold, "merge-features", "base", "ours", "theirs")
    assert done.returncode == 0, done.output
    assert [(f.id, f.passes) for f in features.loads((scaffold / "ours").read_text()).features] == [
        ("F1", True),
        ("F2", False),
        ("F3", False),
    ]
    validated = scaffold / ".git" / "shiftkit" / "validated"
    # None was known: ours was checked in full and is recorded; the others were checked
    # against it.
    assert [(validated / blobs[n]).exists() for n in ("base", "ours", "theirs")] == [
        False,
        True,
        False,
    ]
