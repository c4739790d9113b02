from __future__ import annotations

import difflib
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shiftkit.core import features
from shiftkit.core.errors import BadInput
from shiftkit.core.resources import hooks_dir, schema_path, template_root


def make(n: int, **overrides: object) -> features.FeatureList:
    items = []
    for i in range(n):
        item = {
            "id": f"F{i:03d}",
            "category": "functional",
            "description": f"Feature number {i} works",
            "steps": [f"step one of {i}", f"step two of {i}"],
            "verify": f"pytest -q tests/test_{i}.py",
            "passes": False,
        }
        items.append(item)
    items[0].update(overrides)
    return features.from_document({"$schema": features.SCHEMA_REF, "features": items})


def test_round_trip_is_byte_identical() -> None:
    text = features.dumps(make(20, core=True, attempts=2))
    assert features.dumps(features.loads(text)) == text


def test_template_feature_list_is_in_canonical_form() -> None:
    text = (template_root() / "template" / "features.json").read_text()
    assert features.dumps(features.loads(text)) == text
    assert [f.id for f in features.loads(text).features] == ["F000"]


def test_the_template_root_holds_the_schema_and_the_plain_hook_shims() -> None:
    """One copy of the template (docs/decisions/0003): a checkout reads the repository's."""
    assert (template_root() / "copier.yml").is_file()
    schema = json.loads(schema_path().read_text())
    assert schema_path().name == "features.schema.json" and "feature" in schema["$defs"]
    assert sorted(p.name for p in hooks_dir().iterdir()) == [
        "commit-msg",
        "pre-commit",
        "pre-push",
        "reference-transaction",
        "site-check",
    ]
    assert "exec shiftkit hook pre-commit" in (hooks_dir() / "pre-commit").read_text()


def test_flipping_passes_changes_exactly_one_line() -> None:
    before = make(10)
    after = before.replace_feature(before.features[4]._replace(passes=True))
    diff = [
        line
        for line in difflib.unified_diff(
            features.dumps(before).splitlines(), features.dumps(after).splitlines(), n=0
        )
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert diff == ['-      "passes": false', '+      "passes": true']


def test_serialization_fixed_key_order_and_trailing_newline() -> None:
    text = features.dumps(make(1, core=True, depends_on=[], attempts=1))
    assert text.endswith("}\n")
    keys = [line.strip().split('"')[1] for line in text.splitlines() if line.startswith('      "')]
    assert keys == [
        "id",
        "category",
        "description",
        "steps",
        "verify",
        "core",
        "passes",
        "attempts",
    ]


def test_legacy_import_keeps_order_and_passes_and_assigns_ids() -> None:
    legacy = [
        {"category": "functional", "description": f"d{i}", "steps": ["s"], "passes": i % 2 == 0}
        for i in range(12)
    ]
    result = features.loads_any(json.dumps(legacy), "legacy.json")
    assert [f.description for f in result.features] == [f"d{i}" for i in range(12)]
    assert [f.passes for f in result.features] == [i % 2 == 0 for i in range(12)]
    assert [f.id for f in result.features][:2] == ["F001", "F002"]
    assert len({f.id for f in result.features}) == 12


def test_legacy_error_names_array_path() -> None:
    legacy = [
        {"category": "c", "description": "d", "steps": ["s"], "passes": False},
        {"category": "c", "description": "d", "passes": False},
    ]
    with pytest.raises(BadInput, match=r"legacy.json: \$\[1\]: 'steps' is a required property"):
        features.loads_any(json.dumps(legacy), "legacy.json")


def test_loads_rejects_legacy_with_hint() -> None:
    with pytest.raises(BadInput, match="shiftkit import"):
        features.loads("[]", "features.json")


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["features"][3].update(steps=[]),
            r"\$\.features\[3\]\.steps: \[\] should be non-empty",
        ),
        (
            lambda d: d["features"][2].update(passes="yes"),
            r"\$\.features\[2\]\.passes: 'yes' is not of type 'boolean'",
        ),
        (
            lambda d: d["features"][1].pop("description"),
            r"\$\.features\[1\]: 'description' is a required property",
        ),
        (
            lambda d: d["features"][1].update(colour="red"),
            r"\$\.features\[1\]: Additional properties",
        ),
        (lambda d: d["features"][4].update(id="F 4"), r"\$\.features\[4\]\.id"),
        (lambda d: d["features"][4].update(attempts=-1), r"\$\.features\[4\]\.attempts"),
        (
            lambda d: d["features"][4].update(id="F000"),
            r"\$\.features\[4\]\.id: duplicate id 'F000'",
        ),
        (
            lambda d: d["features"][4].update(depends_on=["F999"]),
            r"depends_on\[0\]: unknown feature id 'F999'",
        ),
        (lambda d: d.update(extra=1), r"\$: Additional properties"),
    ],
)
def test_validation_reports_json_path(mutate, expected) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(features.dumps(make(6)))
    mutate(document)
    with pytest.raises(BadInput, match=expected):
        features.loads(json.dumps(document), "features.json")


def test_malformed_json_names_line_and_column() -> None:
    with pytest.raises(BadInput, match=r"features.json: invalid JSON at line 3 column 1"):
        features.loads('{\n  "features": [\n}\n', "features.json")


def test_next_skips_passing_blocked_claimed_and_unmet_dependencies() -> None:
    base = make(6)
    f = list(base.features)
    f[0] = f[0]._replace(passes=True)
    f[1] = f[1]._replace(blocked=features.Blocked("flaky", "2026-11-29T10:00:00Z", 3))
    f[2] = f[2]._replace(depends_on=("F001",))
    f[4] = f[4]._replace(depends_on=("F000",))
    listing = features.FeatureList(tuple(f))
    assert features.next_feature(listing).id == "F003"  # type: ignore[union-attr]
    assert features.next_feature(listing, {"F003"}).id == "F004"  # type: ignore[union-attr]
    assert features.next_feature(listing, {"F003", "F004", "F005"}) is None


def test_next_is_none_when_all_pass_and_counts() -> None:
    listing = features.FeatureList(tuple(f._replace(passes=True) for f in make(3).features))
    assert features.next_feature(listing) is None
    assert (
        features.all_pass_message(listing, True)
        == "all 3 features pass (checked at HEAD) — nothing to do"
    )
    assert (
        "not yet verified in a clean checkout of HEAD — run `shiftkit check`"
        in features.all_pass_message(listing, False)
    )
    c = features.counts(listing)
    assert (c.total, c.passing, c.open, c.blocked) == (3, 3, 0, 0)


def test_next_free_id() -> None:
    assert features.next_free_id(make(12)) == "F012"
    assert features.next_free_id(features.FeatureList(())) == "F000"


# -- incremental validation against a list known to be valid (the hooks' path) -----------------


def _valid_list(n: int) -> features.FeatureList:
    return features.FeatureList(
        [features.Feature(f"F{i:03d}", "c", f"feature {i}", ("s",), "true") for i in range(n)]
    )


def test_an_item_changed_against_a_trusted_list_is_validated_and_named_by_its_position() -> None:
    trusted_list = _valid_list(4)
    trusted_text = features.dumps(trusted_list)
    trusted = json.loads(trusted_text)
    broken = json.loads(trusted_text)
    broken["features"][2]["steps"] = []
    text = json.dumps(broken, indent=2) + "\n"
    with pytest.raises(BadInput, match=r"\$\.features\[2\]\.steps"):
        features.loads(text, "features.json", trusted, trusted_text)
    flipped = trusted_list.replace_feature(trusted_list.by_id["F001"]._replace(passes=True))
    assert (
        features.loads(features.dumps(flipped), "features.json", trusted, trusted_text)
        .by_id["F001"]
        .passes
    )
    appended = trusted_list.append(features.Feature("F009", "c", "new", ("s",)))
    parsed = features.loads(json.dumps(json.loads(features.dumps(appended))), "f", trusted, None)
    assert len(parsed) == 5


def test_require_next_free_id_and_the_project_wide_verifier() -> None:
    listing = _valid_list(3)
    with pytest.raises(
        BadInput, match=r"unknown feature id 'F777' \(features.json has F000..F002\)"
    ):
        features.require(listing, "F777", "features.json")
    with pytest.raises(BadInput, match="has no features"):
        features.require(features.FeatureList([]), "F1", "features.json")
    assert features.next_free_id(listing) == "F003"
    assert features.next_free_id(features.FeatureList([])) == "F000"
    bare = features.Feature("F1", "c", "d", ("s",))
    assert features.effective_verify(bare, "") is None
    assert features.effective_verify(bare, "make check") == "make check"
    assert features.effective_verify(bare._replace(verify="pytest"), "make check") == "pytest"
    assert (
        features.all_pass_message(listing, True)
        == "all 3 features pass (checked at HEAD) — nothing to do"
    )
    assert (
        "not yet verified in a clean checkout of HEAD — run `shiftkit check`"
        in features.all_pass_message(listing, False)
    )
    with pytest.raises(KeyError):
        listing.index_of("F999")


# -- lookups, ids, and the legacy format ----------------------------------------------------------


def test_lookups_by_id_and_position_agree() -> None:
    listing = _valid_list(3)
    assert features.require(listing, "F001", "features.json") == listing.features[1]
    assert listing.by_id is listing.by_id  # built once
    assert listing.get("F002") == listing.features[2] and listing.get("F9") is None
    lazy = features.loads(features.dumps(listing))  # from parsed JSON, no Feature built yet
    assert lazy.get("F002") == listing.features[2] and lazy.position("F002") == 2
    assert lazy.index_of("F000") == 0 and lazy.get("F9") is None and len(lazy) == 3
    assert features.blocked_ids(listing) == []
    blocked = listing.replace_feature(
        listing.features[1]._replace(blocked=features.Blocked("r", "2026-11-30T10:00:00Z", 3))
    )
    assert features.blocked_ids(blocked) == ["F001"]


def test_next_free_id_counts_only_f_numbers_and_keeps_their_width() -> None:
    def listing(*ids: str) -> features.FeatureList:
        return features.FeatureList([features.Feature(i, "c", "d", ("s",)) for i in ids])

    assert features.next_free_id(listing("login", "X100", "F", "Fab", "F7")) == "F008"
    assert features.next_free_id(listing("F0100", "F009")) == "F0101"
    assert features.next_free_id(listing("parser", "ui")) == "F000"


def test_a_feature_cannot_depend_on_itself() -> None:
    document = json.loads(features.dumps(make(3)))
    document["features"][2]["depends_on"] = ["F000", "F002"]
    with pytest.raises(BadInput) as caught:
        features.loads(json.dumps(document), "features.json")
    assert caught.value.message == (
        "features.json: $.features[2].depends_on[1]: a feature cannot depend on itself"
    )


def test_legacy_items_keep_their_own_ids() -> None:
    legacy = [
        {"id": "login", "category": "c", "description": "d", "steps": ["s"], "passes": True},
        {"category": "c", "description": "d", "steps": ["s"], "passes": False},
    ]
    assert [f.id for f in features.loads_any(json.dumps(legacy), "legacy.json").features] == [
        "login",
        "F002",
    ]
    with pytest.raises(BadInput, match=r"^legacy.json: \$\[1\]: expected an object, got null$"):
        features.loads_any(json.dumps([legacy[0], None]), "legacy.json")


def test_a_list_laid_out_otherwise_than_the_trusted_one_is_still_checked_item_by_item() -> None:
    trusted_text = features.dumps(_valid_list(4))
    trusted = json.loads(trusted_text)
    compact = json.loads(trusted_text)
    compact["features"][1]["passes"] = True
    assert features.loads(json.dumps(compact), "f", trusted, trusted_text).by_id["F001"].passes
    compact["features"][3]["category"] = ""
    with pytest.raises(BadInput, match=r"^f: \$\.features\[3\]\.category: "):
        features.loads(json.dumps(compact), "f", trusted, trusted_text)


# -- the protocol's choice, as a property ---------------------------------------------------------


@st.composite
def feature_lists(draw: st.DrawFn) -> features.FeatureList:
    count = draw(st.integers(0, 8))
    ids = [f"F{i:03d}" for i in range(count)]
    items = []
    for feature_id in ids:
        state = draw(st.sampled_from(["open", "passing", "blocked"]))
        others = [i for i in ids if i != feature_id]
        depends = draw(st.lists(st.sampled_from(others), unique=True, max_size=2)) if others else []
        items.append(
            features.Feature(
                feature_id,
                "c",
                "d",
                ("s",),
                depends_on=tuple(depends),
                passes=state == "passing",
                blocked=features.Blocked("r", "2026-11-30T10:00:00Z", 3)
                if state == "blocked"
                else None,
            )
        )
    return features.FeatureList(items)


@settings(max_examples=150, deadline=None, database=None)
@given(feature_lists(), st.data())
def test_candidates_are_open_unclaimed_repairs_first_and_next_is_their_head(
    listing: features.FeatureList, data: st.DataObject
) -> None:
    ids = [f.id for f in listing.features] + ["F999"]
    claimed = data.draw(st.sets(st.sampled_from(ids)))
    repair = data.draw(st.lists(st.sampled_from(ids), max_size=4))
    plain = features.candidates(listing, claimed)
    head = features.next_feature(listing, claimed)
    assert (plain[0] if plain else None) == head
    found = features.candidates(listing, claimed, repair)
    found_ids = [f.id for f in found]
    assert len(set(found_ids)) == len(found_ids)
    assert all(features.is_open(f) and f.id not in claimed for f in found)
    repaired = [i for i in dict.fromkeys(repair) if i in found_ids]
    assert found_ids[: len(repaired)] == repaired
    assert found_ids[len(repaired) :] == [f.id for f in plain if f.id not in repaired]
    counts = features.counts(listing, claimed)
    assert counts.open + counts.passing + counts.blocked == counts.total == len(listing)
    assert counts.claimed == len(claimed - {"F999"})


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_items = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from(["F1", "F2", "G1"]) | _json,
        "description": st.text(max_size=100) | _json,
        "passes": st.booleans() | _json,
        "blocked": st.none() | _json,
    },
)


@settings(max_examples=150, deadline=None, database=None)
@example({"features": [{"id": "F1"}, {"id": "F1", "blocked": []}]}, "")  # (an id twice: CI)
@given(
    st.lists(_items | _json, max_size=5).flatmap(
        lambda items: st.sampled_from([{"features": items}, items])
    )
    | _json,
    st.sampled_from(["", "F", "F1", "G"]),
)
def test_completion_never_raises_and_its_kinds_split_the_ids(document: object, prefix: str) -> None:
    every = features.completion_candidates(document, "any", prefix)
    open_ = features.completion_candidates(document, "open", prefix)
    blocked = features.completion_candidates(document, "blocked", prefix)
    assert all(i.startswith(prefix) and len(text) <= 80 for i, text in every)
    assert all("\n" not in text and "  " not in text for _, text in every)
    assert set(open_) <= set(every) and set(blocked) <= set(every)
    assert not set(open_) & set(blocked)
