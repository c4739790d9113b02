"""Property-based fuzzing: generated inputs for the pure modules and the command line.

Every failure a user can cause must be a `BadInput` (or a one-line `shiftkit:` message and
a documented exit code), never another exception. Example counts are set for a quick run
(the whole file in well under a minute); raise them for a long run with
``SHIFTKIT_FUZZ_EXAMPLES=N`` (N examples for each pure property, N/10 for the
subprocess ones) or ``SHIFTKIT_FUZZ=long`` (ten times the defaults).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import fuzz_examples as examples
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from shiftkit.core import config, features, messages, progress
from shiftkit.core.errors import BadInput

REPO_ROOT = Path(__file__).resolve().parent.parent

settings.register_profile(
    "shiftkit-fuzz",
    deadline=None,
    database=None,  # nothing written into the repository
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
settings.load_profile("shiftkit-fuzz")


def one_line_bad_input(exc: BadInput, source: str | None = None) -> None:
    assert exc.exit_code == 2
    assert "\n" not in exc.message and "\r" not in exc.message, exc.message
    if source is not None:
        assert exc.message.startswith(f"{source}: "), exc.message


# -- features.json -------------------------------------------------------------------------

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,15}")
ids = st.from_regex(ID_RE, fullmatch=True).filter(
    lambda s: ".." not in s and not s.endswith((".lock", "."))
)
# Text as an agent writes it (any Unicode but lone surrogates) with something visible.
texts = st.text(max_size=20).filter(lambda s: re.search(r"\S", s) is not None)
attempt_counts = st.integers(min_value=0, max_value=10**6)
blocks = st.builds(
    features.Blocked, reason=texts, since=st.text(min_size=1, max_size=30), attempts=attempt_counts
)


@st.composite
def feature_lists(draw: st.DrawFn, max_size: int = 5) -> features.FeatureList:
    chosen = draw(st.lists(ids, min_size=0, max_size=max_size, unique=True))
    items = []
    for position, feature_id in enumerate(chosen):
        others = [i for i in chosen if i != feature_id]
        items.append(
            features.Feature(
                id=feature_id,
                category=draw(texts),
                description=draw(texts),
                steps=tuple(draw(st.lists(texts, min_size=1, max_size=3))),
                verify=draw(st.none() | texts),
                core=draw(st.booleans()),
                depends_on=tuple(draw(st.lists(st.sampled_from(others), unique=True, max_size=3)))
                if others
                else (),
                passes=draw(st.booleans()),
                attempts=draw(attempt_counts),
                blocked=draw(st.none() | blocks),
            )
        )
        del position
    schema_ref = draw(st.sampled_from([features.SCHEMA_REF, None]) | st.text(max_size=20))
    return features.FeatureList(items, schema_ref)


@settings(max_examples=examples(120))
@given(feature_lists())
def test_valid_lists_round_trip_byte_identically(feature_list: features.FeatureList) -> None:
    text = features.dumps(feature_list)
    loaded = features.loads(text)
    assert features.dumps(loaded) == text
    assert loaded.features == feature_list.features
    assert loaded.schema_ref == feature_list.schema_ref


@settings(max_examples=examples(100))
@given(feature_lists().filter(lambda fl: len(fl) > 0), st.data())
def test_flipping_one_feature_changes_exactly_one_line(
    feature_list: features.FeatureList, data: st.DataObject
) -> None:
    target = data.draw(st.sampled_from(feature_list.features))
    flipped = feature_list.replace_feature(target._replace(passes=not target.passes))
    before = features.dumps(feature_list).split("\n")
    after = features.dumps(flipped).split("\n")
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b]
    assert len(changed) == 1
    assert '"passes"' in after[changed[0]]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def check_loads(text: str, source: str = "features.json") -> features.FeatureList | None:
    """features.loads either returns a list that survives a round trip or raises a
    one-line BadInput that names the file."""
    try:
        loaded = features.loads(text, source)
    except BadInput as exc:
        one_line_bad_input(exc, source)
        return None
    # Whatever was accepted must be usable: every item becomes a Feature and serializes.
    again = features.dumps(loaded)
    assert features.dumps(features.loads(again, source)) == again
    return loaded


@settings(max_examples=examples(200))
@given(json_values)
@example(
    {
        "features": [
            {"id": "F1\n", "category": "c", "description": "d", "steps": ["s"], "passes": False}
        ]
    }
)
@example(
    {
        "features": [
            {
                "id": "F1",
                "category": "c",
                "description": "d",
                "steps": ["s"],
                "passes": False,
                "attempts": 2.0,
            }
        ]
    }
)
def test_arbitrary_json_parses_or_is_bad_input(value: Any) -> None:
    text = json.dumps(value)
    loaded = check_loads(text)
    if loaded is not None:
        assert isinstance(value, dict)
    for feature in loaded.features if loaded is not None else ():
        assert "\n" not in feature.id
        assert type(feature.attempts) is int


def _document(feature_list: features.FeatureList) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(features.dumps(feature_list))
    return loaded


field_names = st.sampled_from(
    features.DEFINITION_FIELDS + features.STATUS_FIELDS + ("$schema", "features", "extra")
)


@st.composite
def mutated_documents(draw: st.DrawFn) -> tuple[str, str]:
    """A valid list's text, broken in one way; returns (kind, text)."""
    document = _document(draw(feature_lists(max_size=4).filter(lambda fl: len(fl) > 0)))
    items = document["features"]
    index = draw(st.integers(0, len(items) - 1))
    kind = draw(
        st.sampled_from(["drop", "wrong-type", "duplicate", "truncate", "bytes", "blocked", "top"])
    )
    if kind == "drop":
        key = draw(st.sampled_from(sorted(items[index])))
        del items[index][key]
    elif kind == "wrong-type":
        items[index][draw(field_names)] = draw(json_values)
    elif kind == "duplicate":
        items.append(dict(items[index]))
    elif kind == "blocked":
        items[index]["blocked"] = draw(
            st.dictionaries(
                st.sampled_from(["reason", "since", "attempts", "x"]), json_values, max_size=4
            )
        )
    elif kind == "top":
        document[draw(field_names)] = draw(json_values)
    text = json.dumps(document, indent=2, ensure_ascii=draw(st.booleans())) + "\n"
    if kind == "truncate":
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif kind == "bytes":
        position = draw(st.integers(0, len(text)))
        noise = draw(st.text(min_size=1, max_size=8))
        text = text[:position] + noise + text[position:]
    return kind, text


@settings(max_examples=examples(150))
@given(mutated_documents())
def test_mutated_lists_parse_or_name_the_problem(case: tuple[str, str]) -> None:
    kind, text = case
    loaded = check_loads(text)
    if kind in ("drop", "duplicate") and loaded is None:
        try:
            features.loads(text)
        except BadInput as exc:
            assert "$" in exc.message, exc.message  # the JSON path of the field


@settings(max_examples=examples(150))
@given(
    st.binary(max_size=200)
    | feature_lists(max_size=2)
    .map(lambda fl: features.dumps(fl).encode("utf-8"))
    .flatmap(
        lambda raw: st.tuples(
            st.just(raw), st.integers(0, len(raw)), st.binary(min_size=1, max_size=4)
        ).map(lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :])
    )
)
def test_any_bytes_read_from_disk_parse_or_are_bad_input(raw: bytes) -> None:
    from shiftkit.edge import project

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "features.json"
        path.write_bytes(raw)
        try:
            text = project.read_text(path, "features.json", "hint")
        except BadInput as exc:
            one_line_bad_input(exc, "features.json")
            return
    check_loads(text)
    try:
        features.loads_any(text, "features.json")
    except BadInput as exc:
        one_line_bad_input(exc, "features.json")


@settings(max_examples=examples(100))
@given(st.text(max_size=300))
@example("[" * 100_000)
@example('{"features": [], "n": ' + "1" * 5000 + "}")
def test_random_text_parses_or_is_bad_input(text: str) -> None:
    check_loads(text)
    try:
        features.loads_any(text, "legacy.json")
    except BadInput as exc:
        one_line_bad_input(exc, "legacy.json")


@settings(max_examples=examples(100))
@given(
    st.lists(
        json_values
        | st.fixed_dictionaries(
            {
                "category": texts,
                "description": texts,
                "steps": st.lists(texts, min_size=1),
                "passes": st.booleans(),
            }
        ),
        max_size=5,
    )
)
def test_legacy_arrays_import_or_are_bad_input(items: list[Any]) -> None:
    try:
        features.loads_any(json.dumps(items), "legacy.json")
    except BadInput as exc:
        one_line_bad_input(exc, "legacy.json")


# -- .shiftkit.toml ------------------------------------------------------------------------


def toml_string(value: str) -> str:
    escaped = []
    for char in value:
        if char in '"\\' or ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04X}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


toml_scalars = (
    st.booleans() | st.integers(-5, 10**4) | st.integers() | st.floats() | st.text(max_size=15)
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
TOP_KEYS = [k for k in config.Config._fields if k not in ("log", "claims")]
SECTION_KEYS = {name: list(cls._fields) for name, cls in config._SECTIONS.items()}


def right_value(cls: Any, key: str) -> st.SearchStrategy[Any]:
    if key in config._CHOICES:
        return st.sampled_from(config._CHOICES[key])
    kind = type(cls._field_defaults[key])
    if kind is bool:
        return st.booleans()
    if kind is int:
        return st.integers(-3, 10**6)
    return st.text(max_size=20)


@st.composite
def config_tables(draw: st.DrawFn) -> dict[str, Any]:
    def table(cls: Any, keys: list[str]) -> dict[str, Any]:
        chosen = draw(st.lists(st.sampled_from(keys), unique=True, max_size=len(keys)))
        values = {
            k: draw(
                right_value(cls, k) | toml_values if draw(st.booleans()) else right_value(cls, k)
            )
            for k in chosen
        }
        if draw(st.integers(0, 9)) == 0:
            values[draw(st.text(min_size=1, max_size=10))] = draw(toml_values)
        return values

    top = table(config.Config, TOP_KEYS)
    for section, keys in SECTION_KEYS.items():
        if draw(st.booleans()):
            cls = config._SECTIONS[section]
            top[section] = table(cls, keys) if draw(st.integers(0, 9)) else draw(toml_values)
    document: dict[str, Any] = {"shiftkit": top}
    if draw(st.integers(0, 19)) == 0:
        document[draw(st.text(min_size=1, max_size=10))] = draw(toml_values)
    return document


def render_toml(document: dict[str, Any]) -> str:
    # Plain values first: after a [table] header they would belong to the table.
    lines = [
        f"{toml_string(name)} = {toml_value(value)}"
        for name, value in document.items()
        if not isinstance(value, dict)
    ]
    for name, table in document.items():
        if not isinstance(table, dict):
            continue
        lines.append(f"[{toml_string(name)}]")
        for key, value in table.items():
            lines.append(f"{toml_string(key)} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


def finite(value: float) -> bool:
    """Not nan or infinite, nor a whole number too large for a float."""
    return -sys.float_info.max <= value <= sys.float_info.max


def bad_prices(table: Any) -> bool:
    """`[shiftkit.prices]`: per model, all four prices, each a finite number of 0 or more."""
    if not isinstance(table, dict):
        return True
    for entry in table.values():
        if not isinstance(entry, dict) or set(entry) != set(config.ModelPrice._fields):
            return True
        for value in entry.values():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                return True
            if not finite(value):
                return True
    return False


def expected_problem(document: dict[str, Any]) -> bool:
    """Whether `config.parse` must refuse this document."""
    if set(document) != {"shiftkit"}:
        return True

    def bad_table(cls: Any, table: Any, sections: bool) -> bool:
        if not isinstance(table, dict):
            return True
        for key, value in table.items():
            if sections and key == "prices":
                if bad_prices(value):
                    return True
                continue
            if sections and key in SECTION_KEYS:
                if bad_table(config._SECTIONS[key], value, False):
                    return True
                continue
            if key not in cls._field_defaults:
                return True
            expected = type(cls._field_defaults[key])
            if expected is float and type(value) in (int, float) and not finite(value):
                return True  # nan, infinite, or too large for a float
            if expected is float and type(value) is int:
                value = float(value)  # a whole number where a ratio goes is fine
            if type(value) is not expected:
                return True
            if expected is float and value < 0:
                return True
            if key in config._CHOICES and value not in config._CHOICES[key]:
                return True
            minimum = 0 if key == "regression_sample" else 1
            if (
                type(value) is int
                and key in config._POSITIVE | {"regression_sample"}
                and value < minimum
            ):
                return True
            if key == "ref_prefix" and not config._ref_prefix_ok(value):
                return True  # (claims live in a ref namespace: refs/.../)
            if type(value) is int and value > config._MAXIMUM.get(key, value):
                return True  # (an upper bound: ttl_hours = 9999999999 overflowed a date)
        return False

    return bad_table(config.Config, document["shiftkit"], True)


@settings(max_examples=examples(200))
@given(config_tables())
@example({"shiftkit": {"cost": {"output_ratio": math.nan}}})
@example({"shiftkit": {"cost": {"cache_read_ratio": 10**400}}})
def test_config_tables_parse_or_name_the_key(document: dict[str, Any]) -> None:
    text = render_toml(document)
    try:
        parsed = config.parse(text)
    except BadInput as exc:
        one_line_bad_input(exc, ".shiftkit.toml")
        assert expected_problem(document), exc.message
        assert "'shiftkit" in exc.message or "table" in exc.message, exc.message
        return
    assert not expected_problem(document), text
    for key, value in document["shiftkit"].items():
        if key == "prices":
            assert dict(parsed.prices) == {m: config.ModelPrice(**v) for m, v in value.items()}
        elif key in SECTION_KEYS:
            for sub_key, sub_value in value.items():
                assert getattr(getattr(parsed, key), sub_key) == sub_value
        else:
            assert getattr(parsed, key) == value


@settings(max_examples=examples(150))
@given(
    st.text(max_size=200)
    | st.sampled_from(["[shiftkit]\n", "[shiftkit.log]\n"]).flatmap(
        lambda head: st.text(max_size=100).map(lambda tail: head + tail)
    )
)
@example("[shiftkit]\nmax_attempts = " + "1" * 5000)
@example("x = " + "[" * 100_000)
@example('[shiftkit]\n"a\\nb" = 1\n')
@example('["a\\nb"]\n')
def test_random_config_text_parses_or_is_bad_input(text: str) -> None:
    try:
        config.parse(text)
    except BadInput as exc:
        one_line_bad_input(exc, ".shiftkit.toml")


# -- the progress log ----------------------------------------------------------------------

times = st.builds(
    lambda y, mo, d, h, mi: f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d} UTC",
    st.integers(2000, 2099),
    st.integers(1, 12),
    st.integers(1, 28),
    st.integers(0, 23),
    st.integers(0, 59),
)
bases = st.from_regex(r"[0-9a-f]{4,40}", fullmatch=True) | st.just("-")
outcomes = st.text(max_size=30)
bodies = st.text(max_size=120) | st.lists(
    st.sampled_from(["## 2026-01-01 00:00 UTC | F1 | passed | abcd", "", "text", "  ", "\r"])
    | st.text(max_size=20),
    max_size=6,
).map("\n".join)
heads = st.text(max_size=80).filter(lambda s: progress.HEADER.search(s) is None)
entry_args = st.tuples(times, ids, outcomes, bases, bodies)


def build_log(head: str, entries: list[tuple[str, str, str, str, str]]) -> tuple[str, list[str]]:
    text = head
    blocks = []
    for args in entries:
        block = progress.format_entry(*args)
        blocks.append(block)
        text = progress.append(text, block)
        assert text.endswith(block)
    return text, blocks


@settings(max_examples=examples(150))
@given(heads, st.lists(entry_args, max_size=8))
def test_appended_entries_parse_back(
    head: str, entries: list[tuple[str, str, str, str, str]]
) -> None:
    text, blocks = build_log(head, entries)
    log = progress.parse(text)
    assert log.text() == text
    assert [e.key for e in log.entries] == [b.rstrip("\n") for b in blocks]
    for entry, (time, feature, _, base, _) in zip(log.entries, entries, strict=True):
        assert (entry.time, entry.feature, entry.base) == (time, feature, base)
        assert entry.outcome and "|" not in entry.outcome


@settings(max_examples=examples(150))
@given(
    st.text(max_size=400)
    | st.lists(
        st.sampled_from(
            [
                "## 2026-11-29 14:05 UTC | F012 | passed | a1b2c3d",
                "body",
                "",
                "## 2026-11-29 14:05 UTC | F 1 | x | zz",
                "[shiftkit] 3 earlier",
            ]
        )
        | st.text(max_size=30),
        max_size=12,
    ).map("\n".join)
)
def test_random_text_never_crashes_the_log_parser(text: str) -> None:
    log = progress.parse(text)
    assert log.text() == text
    assert log.preamble.endswith("\n")
    for entry in log.entries:
        assert entry.text.startswith("## ")
        assert isinstance(entry.body, str)
    progress.index_line(log.entries, "archive.txt")


def is_subsequence(part: list[str], whole: list[str]) -> bool:
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


def raw_entry(args: tuple[str, str, str, str, str], blank_line: bool) -> str:
    """An entry as a person might write it by hand: maybe no blank line after it."""
    block = progress.format_entry(*args)
    return block + "\n" if blank_line else block


@settings(max_examples=examples(120))
@given(
    heads,
    st.lists(st.tuples(entry_args, st.booleans()), min_size=1, max_size=10),
    st.lists(st.tuples(entry_args, st.booleans()), max_size=3),
    st.integers(1, 6),
    st.data(),
)
def test_prune_keeps_every_entry_verbatim(
    head: str, entries: list[Any], archived: list[Any], keep: int, data: st.DataObject
) -> None:
    if head and not head.endswith("\n"):
        head += "\n"
    archive_text = "".join(raw_entry(args, blank) for args, blank in archived)
    if archive_text:
        # As an earlier prune leaves them: the archive, and its index line in the log.
        archive_text = progress.ARCHIVE_HEAD + "\n" + archive_text
        count = progress.index_line(progress.parse(archive_text).entries, "progress-archive.txt")
        head += count + "\n\n"
    log_text = head + "".join(raw_entry(args, blank) for args, blank in entries)
    log = progress.parse(log_text)
    assert len(log.entries) == len(entries)
    feature_ids = sorted({e.feature for e in log.entries})
    blocked = data.draw(st.lists(st.sampled_from(feature_ids), unique=True, max_size=3))
    pruned = progress.prune(log, archive_text, keep, blocked, "progress-archive.txt")

    new_log = progress.parse(pruned.log_text)
    new_archive = progress.parse(pruned.archive_text)
    old_keys = [e.key for e in log.entries]
    moved_keys = [e.key for e in pruned.moved]
    kept_keys = [e.key for e in new_log.entries]
    # Rule 8: survivors unchanged and in order, removed entries unchanged at the end of the
    # archive, which otherwise only grows (both tidied: blank lines, line-end whitespace).
    assert pruned.archive_text.startswith(progress.tidy(archive_text))
    assert pruned.archive_text.endswith("\n".join(e.clean for e in pruned.moved))
    assert is_subsequence(kept_keys, old_keys)
    assert progress.tidy(pruned.log_text) == pruned.log_text
    # Nothing lost: log + archive hold every entry, each part in its original order.
    assert [e.key for e in new_archive.entries] == (
        [e.key for e in progress.parse(archive_text).entries] + moved_keys
    )
    assert sorted(moved_keys + kept_keys) == sorted(old_keys)
    assert is_subsequence(moved_keys, old_keys) and is_subsequence(kept_keys, old_keys)
    assert len(new_log.entries) <= max(keep, len(entries)) + len(blocked)
    for feature_id in blocked:  # the newest entry about a blocked feature stays in the log
        newest = [e.key for e in log.entries if e.feature == feature_id][-1]
        assert newest in [e.key for e in new_log.entries]
    assert new_log.preamble == log.preamble
    assert new_log.index_line is not None
    assert f"{len(new_archive.entries)} earlier entries" in new_log.index_line


# -- commit messages -----------------------------------------------------------------------

message_texts = st.text(max_size=300) | st.lists(
    st.sampled_from(
        [
            "",
            "# comment",
            "Subject line",
            "F012: add the list",
            "wip",
            "  ",
            "Shiftkit-Override: reason",
            "Key: value",
            "\t",
            "x" * 80,
            "a\r",
            messages.SCISSORS,
        ]
    )
    | st.text(max_size=40),
    max_size=10,
).map("\n".join)


@settings(max_examples=examples(300))
@given(message_texts)
def test_message_functions_never_crash(raw: str) -> None:
    violations = messages.check_message(raw)
    assert all(v.rule == 9 for v in violations) and len(violations) <= 1
    first = messages.subject(raw)
    assert "\n" not in first
    if not first:
        assert violations
    if len(first) > messages.MAX_SUBJECT:
        assert violations and "characters" in violations[0].message
    found = messages.trailers(raw)
    assert all(isinstance(v, list) for v in found.values())
    messages.override_reason(raw)
    messages.rule5_message(["F012"], raw)


@settings(max_examples=examples(100))
@given(
    st.lists(
        st.text(
            alphabet=st.characters(exclude_categories=("Cs", "Zl", "Zp")), min_size=1, max_size=30
        ).filter(lambda s: s.strip(" \t\r\n") and not s.startswith("#") and "\n" not in s),
        min_size=1,
        max_size=5,
    ),
    st.text(max_size=40),
)
def test_subject_is_the_first_paragraph_joined(lines: list[str], rest: str) -> None:
    raw = "\n".join(lines) + "\n\n" + rest
    expected = " ".join(line.rstrip(" \t\r") for line in lines).strip()
    assert messages.subject(raw) == expected
    violations = messages.check_message(raw)
    if len(expected) > messages.MAX_SUBJECT:
        assert violations and violations[0].rule == 9
    assert messages.check_message("") and messages.check_message("\n# only\n  \n")


git_message_texts = st.lists(
    st.sampled_from(
        [
            "",
            "# comment",
            "#",
            "Subject",
            "  indented",
            "trailing  ",
            "\t",
            "a\r",
            "b\x0b",
            "c\x0c",
            " ",
            "Key: value",
            "é\u2028x",
        ]
    )
    | st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\0"), max_size=20
    ),
    max_size=8,
).map("\n".join)


@settings(max_examples=examples(60))
@given(git_message_texts)
def test_message_body_matches_git_stripspace(raw: str) -> None:
    proc = subprocess.run(
        ["git", "stripspace", "--strip-comments"],
        input=raw.encode("utf-8"),
        capture_output=True,
        check=True,
    )
    assert messages.message_body(raw) == proc.stdout.decode("utf-8").rstrip("\n")


# -- the command line, one process per example ---------------------------------------------

COMMANDS = [
    "status",
    "next",
    "show",
    "claim",
    "verify",
    "finish",
    "revert",
    "add",
    "import",
    "validate",
    "log",
    "decide",
    "note",
    "audit",
    "guard",
    "stop-check",
    "claims",
    "release",
    "unblock",
    "hook",
    "start",
    "new",
    "install-hooks",
    "merge-features",
    "demo",
    "bootstrap",
]
OPTIONS = [
    "--json",
    "--id",
    "--description",
    "--step",
    "--verify",
    "--category",
    "--core",
    "--depends-on",
    "-m",
    "--message",
    "--note",
    "--reason",
    "--why",
    "--rejected",
    "--decision",
    "--since",
    "--reverify",
    "--prune",
    "--steal",
    "--brief",
    "--no-check",
    "--force",
    "--data",
    "--defaults",
    "--features",
    "-o",
    "--output",
    "--help",
    "-h",
    "--version",
    "--",
    "-",
    "pre-commit",
    "commit-msg",
    "--features-import",
]
IDS = [
    "F000",
    "F001",
    "F999",
    "",
    "HEAD",
    "features.json",
    ".shiftkit.toml",
    "claude-progress.txt",
    "..",
    "/",
    "../..",
    "a b",
    "--x",
]
non_utf8 = st.binary(min_size=1, max_size=6).map(os.fsdecode)
tokens = (
    st.sampled_from(OPTIONS)
    | st.sampled_from(IDS)
    | st.sampled_from(COMMANDS)
    | st.text(max_size=12).filter(lambda s: "\0" not in s)
    | non_utf8.filter(lambda s: "\0" not in s)
)
arg_text = st.text(max_size=15).filter(lambda s: "\0" not in s) | non_utf8.filter(
    lambda s: "\0" not in s
)
some_id = st.sampled_from(IDS) | arg_text


def with_options(
    command: list[str],
    required: dict[str, st.SearchStrategy[str]],
    optional: dict[str, st.SearchStrategy[str | None]],
) -> st.SearchStrategy[list[str]]:
    """An invocation of one command with its options and generated values."""

    def build(values: tuple[dict[str, str], dict[str, str | None]]) -> list[str]:
        args = list(command)
        for option, value in {**values[0], **values[1]}.items():
            args += [option] if value is None else [option, value]
        return args

    return st.tuples(
        st.fixed_dictionaries(required), st.fixed_dictionaries({}, optional=optional)
    ).map(build)


flag: st.SearchStrategy[str | None] = st.none()
well_formed = st.one_of(
    some_id.map(lambda i: ["show", i]),
    some_id.map(lambda i: ["show", i, "--json"]),
    st.sampled_from(
        [
            ["status"],
            ["status", "--json"],
            ["next"],
            ["next", "--json"],
            ["claims"],
            ["claims", "--json"],
            ["log"],
            ["log", "--prune"],
            ["validate"],
            ["audit"],
            ["audit", "--json"],
            ["start", "--no-check", "--brief"],
            ["verify"],
            ["release"],
            ["stop-check"],
            ["claim"],
        ]
    ),
    with_options(
        ["add"],
        {"--description": arg_text, "--step": arg_text},
        {
            "--id": some_id,
            "--verify": arg_text,
            "--category": arg_text,
            "--core": flag,
            "--depends-on": some_id,
        },
    ),
    with_options(
        ["decide", "title"], {"--why": arg_text, "--rejected": arg_text}, {"--decision": arg_text}
    ),
    st.tuples(arg_text, st.sampled_from([[], ["--why", "w", "--rejected", "r"]])).map(
        lambda t: ["decide", t[0], *t[1]]
    ),
    with_options(["unblock", "F000"], {"--note": arg_text}, {}),
    some_id.map(lambda i: ["unblock", i, "--note", "n"]),
    some_id.map(lambda i: ["claim", i]),
    some_id.map(lambda i: ["release", i, "--steal"]),
    some_id.map(lambda i: ["verify", i]),
    arg_text.map(lambda t: ["note", t]),
    arg_text.map(lambda t: ["finish", "-m", t]),
    arg_text.map(lambda t: ["revert", "--reason", t]),
    arg_text.map(lambda t: ["audit", "--since", t]),
    arg_text.map(lambda t: ["validate", t]),
    arg_text.map(lambda t: ["import", t]),
    st.sampled_from(["features.json", ".shiftkit.toml", "claude-progress.txt", "init.sh"]).map(
        lambda name: ["import", name]
    ),
    st.sampled_from(["features.json", ".shiftkit.toml", "claude-progress.txt", ".git/HEAD"]).map(
        lambda name: ["hook", "commit-msg", name]
    ),
    st.lists(arg_text, max_size=3).map(lambda rest: ["hook", *rest]),
)
cli_args = well_formed | st.tuples(
    st.sampled_from(COMMANDS) | tokens,
    st.lists(tokens, max_size=5),
).map(lambda t: [t[0], *t[1]])

SHIFTKIT_LINE = re.compile(r"^shiftkit( guard)?: ", re.MULTILINE)
# Refusals whose report is the command's output itself (documented in ADR 0004 and SPEC 6).
STDOUT_REFUSALS = {"next", "audit", "verify", "stop-check"}


def child_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SHIFTKIT_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def run_shiftkit(
    args: list[str], cwd: Path, stdin: bytes = b"", timeout: float = 90
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "shiftkit", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env=child_environment(),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:  # pragma: no cover - a hang is a finding
        pytest.fail(f"shiftkit {args!r} did not finish in {timeout} s")


@pytest.fixture(scope="module")
def fuzz_scaffold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scaffold made by this checkout's shiftkit (not whichever is installed)."""
    target = tmp_path_factory.mktemp("fuzz") / "project"
    result = run_shiftkit(["new", str(target), "--defaults"], target.parent, timeout=300)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return target


@pytest.fixture(scope="module")
def scaffold_copies(fuzz_scaffold: Path) -> Iterator[Callable[[], Path]]:
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**9))

        def fresh() -> Path:
            target = Path(tmp) / f"p{next(counter)}" / "project"
            shutil.copytree(fuzz_scaffold, target, symlinks=True)
            return target

        yield fresh


def test_the_children_run_this_checkout(tmp_path: Path) -> None:
    code = "import shiftkit; print(shiftkit.__file__)"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=child_environment(),
        check=True,
    )
    assert Path(proc.stdout.strip()).is_relative_to(REPO_ROOT)


def assert_clean_exit(args: list[str], proc: subprocess.CompletedProcess[bytes]) -> None:
    stderr = proc.stderr.decode("utf-8", "replace")
    stdout = proc.stdout.decode("utf-8", "replace")
    shown = (
        f"shiftkit {args!r} -> {proc.returncode}\nstdout: {stdout[-2000:]}\n"
        f"stderr: {stderr[-2000:]}"
    )
    assert proc.returncode in (0, 1, 2, 3), shown
    assert "Traceback" not in stderr, shown
    if proc.returncode != 0 and not (args[0] in STDOUT_REFUSALS and stdout.strip()):
        assert SHIFTKIT_LINE.search(stderr), shown
    if proc.returncode == 2 and not stdout:  # bad input: one line, whatever was typed
        assert len(stderr.splitlines()) == 1, shown


@settings(max_examples=examples(60, subprocess_runs=True))
@given(cli_args)
@example(["show", "\udcff"])
@example(["add", "--description", "caf\udce9", "--step", "s"])
@example(["\udcff"])
@example(["hook", "commit-msg", "\udcff"])
def test_cli_never_crashes(scaffold_copies: Callable[[], Path], args: list[str]) -> None:
    proc = run_shiftkit(args, scaffold_copies())
    event(f"exit {proc.returncode}")
    assert_clean_exit(args, proc)
    if any(not _utf8(arg) for arg in args):
        assert proc.returncode == 2
        assert proc.stderr.decode("utf-8", "replace").count("\n") == 1


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


guard_payloads = (
    st.binary(max_size=100)
    | json_values.map(lambda v: json.dumps(v).encode())
    | st.fixed_dictionaries(
        {
            "tool_name": st.sampled_from(["Bash", "Write", "Edit", "MultiEdit", "Read"])
            | json_values,
            "tool_input": st.fixed_dictionaries(
                {},
                optional={
                    "command": st.sampled_from(
                        ["git commit --no-verify -m x", "sed -i s/a/b/ features.json", "ls"]
                    )
                    | st.text(max_size=30),
                    "file_path": st.sampled_from(["features.json", "/etc/passwd", ""])
                    | st.text(max_size=20),
                    "content": st.text(max_size=30),
                    "old_string": st.text(max_size=10),
                    "new_string": st.text(max_size=10),
                },
            ),
        },
        optional={
            "cwd": st.sampled_from([".", "/nonexistent", "features.json"]) | st.text(max_size=10)
        },
    ).map(lambda v: json.dumps(v).encode())
)


@settings(max_examples=examples(20, subprocess_runs=True))
@given(guard_payloads)
@example(b"\xff\xfe")
@example(b'{"tool_name": "Bash", "tool_input": {"command": "git commit --no-verify -m x"}}')
@example(b'{"tool_name": "Bash", "tool_input": {"command": "git commit -n"}, "cwd": 3}')
@example(b'{"tool_name": "Bash", "tool_input": {}, "cwd": "/nonexistent/dir"}')
@example(b'{"tool_name": "Bash", "tool_input": {}, "cwd": "features.json"}')
@example(b'{"tool_name": "Bash", "tool_input": {}, "cwd": "a\\u0000b"}')
def test_guard_never_crashes(scaffold_copies: Callable[[], Path], payload: bytes) -> None:
    proc = run_shiftkit(["guard"], scaffold_copies(), stdin=payload)
    event(f"exit {proc.returncode}")
    assert_clean_exit(["guard"], proc)
    # Claude Code's contract: 0 allows, 2 blocks with the reason (decision record 0009).
    assert proc.returncode in (0, 2), proc.stderr


@pytest.mark.parametrize(
    "payload",
    [
        b'{"tool_name": ["Bash"], "tool_input": {"command": "ls"}}',  # was a TypeError: unhashable
        b'{"tool_name": "Write", "tool_input": {"file_path": "a\\u0000b"}}',  # was a ValueError: NUL
    ],
)
def test_guard_once_crashed_on(fuzz_scaffold: Path, payload: bytes) -> None:
    proc = run_shiftkit(["guard"], fuzz_scaffold, stdin=payload)
    assert_clean_exit(["guard"], proc)


# -- bounded readers: numbers, depth and length no reader reads (decision 0061) -------------


@st.composite
def hostile_values(draw: st.DrawFn) -> str:
    """A JSON text a parser accepts but shiftkit must not read: an integer of thousands of
    digits, arrays or objects nested past any bound, or both; inside a ledger-like entry or
    alone."""
    kind = draw(st.sampled_from(["digits", "list", "object", "both"]))
    digits = "-" * draw(st.integers(0, 1)) + "1" + "0" * draw(st.integers(64, 6000))
    deep = draw(st.integers(65, 120_000))
    if kind == "digits":
        inner = digits
    elif kind == "list":
        inner = "[" * deep + "]" * deep
    elif kind == "object":
        inner = '{"a":' * deep + "1" + "}" * deep
    else:
        inner = "[" * deep + digits + "]" * deep
    if draw(st.booleans()):
        return inner
    key = draw(st.sampled_from(["input", "output", "usd", "seconds", "feature", "extra"]))
    return json.dumps(
        {"at": "2026-11-30T10:00:00Z", "id": "u-1", "kind": "usage", key: 0}, sort_keys=True
    ).replace(f'"{key}": 0', f'"{key}": {inner}')


@settings(max_examples=examples(80))
@given(hostile_values(), st.integers(1, 40))
@example("1" + "0" * 5000, 1)
@example("[" * 100_000 + "]" * 100_000, 1)
def test_every_reader_refuses_unreadable_json_in_one_line(text: str, line: int) -> None:
    from shiftkit.core import claim, jsonbound, ledger, orientation, rollout

    where = f".shiftkit/ledger.jsonl line {line}"
    with pytest.raises(BadInput) as caught:
        jsonbound.loads(text, where)
    one_line_bad_input(caught.value, where)
    with pytest.raises(BadInput) as caught:
        ledger.parse("\n" * (line - 1) + text + "\n")
    one_line_bad_input(caught.value, where)
    problems = ledger.append_problems([""], text + "\n")
    assert len(problems) == 1 and "\n" not in problems[0], problems
    assert isinstance(claim.parse_message(text), str)
    assert ledger.transcript_messages([text]) == []
    assert rollout.is_rollout(text) in (True, False)
    assert orientation.skip_checks_for(text) is None
    try:
        features.loads(text)
    except BadInput as exc:
        one_line_bad_input(exc, "features.json")
    else:  # pragma: no cover - no hostile text is a feature list
        pytest.fail("a hostile text was read as a feature list")


@settings(max_examples=examples(8, subprocess_runs=True))
@given(
    hostile_values(),
    st.sampled_from(
        [["cost"], ["status"], ["report", "--json"], ["audit"], ["show", "F000"], ["next"]]
    ),
)
def test_commands_never_crash_on_an_unreadable_ledger(
    scaffold_copies: Callable[[], Path], text: str, args: list[str]
) -> None:
    project = scaffold_copies()
    path = project / ".shiftkit" / "ledger.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    if args == ["audit"]:  # committed past every hook, as a forged push brings it
        hooks = project / ".git" / "hooks"
        hooks.rename(hooks.with_name("hooks.off"))
        for command in (["add", "-A"], ["commit", "-q", "-m", "Record usage"]):
            subprocess.run(["git", *command], cwd=project, check=True, capture_output=True)
        hooks.with_name("hooks.off").rename(hooks)
    proc = run_shiftkit(args, project)
    event(f"{args[0]} exit {proc.returncode}")
    assert_clean_exit(args, proc)
