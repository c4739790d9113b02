"""The feature list: parsing, validation, deterministic serialization and the `next` rule.

Pure functions over text and values; the callers do the reading and writing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from shiftkit.core.errors import BadInput

SCHEMA_REF = ".shiftkit/features.schema.json"
DEFINITION_FIELDS = ("id", "category", "description", "steps", "verify", "core", "depends_on")
STATUS_FIELDS = ("passes", "attempts", "blocked")


# NamedTuples rather than dataclasses: the commit hooks import this module, and a
# dataclass costs generated code at import time (see docs/decisions/0002).


class Blocked(NamedTuple):
    reason: str
    since: str
    attempts: int


class Feature(NamedTuple):
    id: str
    category: str
    description: str
    steps: tuple[str, ...]
    verify: str | None = None
    core: bool = False
    depends_on: tuple[str, ...] = ()
    passes: bool = False
    attempts: int = 0
    blocked: Blocked | None = None

    def definition(self) -> tuple[Any, ...]:
        return self[: len(DEFINITION_FIELDS)]


class FeatureList:
    """The features in priority order. Built from parsed JSON it stays lazy: a commit hook
    on a 5,000-feature list turns only the items it looks at into `Feature` objects."""

    def __init__(
        self,
        features: Iterable[Feature] | None = None,
        schema_ref: str | None = SCHEMA_REF,
        *,
        items: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        self._features: tuple[Feature, ...] | None = (
            tuple(features) if features is not None else None
        )
        self._items = items
        self.schema_ref = schema_ref
        self._by_id: dict[str, Feature] | None = None
        self._index: dict[str, int] | None = None

    @property
    def features(self) -> tuple[Feature, ...]:
        if self._features is None:
            self._features = tuple(feature_from_dict(item) for item in self._items or ())
        return self._features

    @property
    def items(self) -> Sequence[Mapping[str, Any]]:
        """The features as parsed JSON objects."""
        if self._items is None:
            self._items = [feature_to_dict(f) for f in self.features]
        return self._items

    @property
    def by_id(self) -> Mapping[str, Feature]:
        if self._by_id is None:
            self._by_id = {f.id: f for f in self.features}
        return self._by_id

    def __len__(self) -> int:
        return len(self._features) if self._features is not None else len(self._items or ())

    def position(self, feature_id: str) -> int | None:
        if self._index is None:
            self._index = {item["id"]: i for i, item in enumerate(self.items)}
        return self._index.get(feature_id)

    def get(self, feature_id: str) -> Feature | None:
        if self._by_id is not None:
            return self._by_id.get(feature_id)
        index = self.position(feature_id)
        if index is None:
            return None
        if self._features is not None:
            return self._features[index]
        return feature_from_dict(self.items[index])

    def index_of(self, feature_id: str) -> int:
        index = self.position(feature_id)
        if index is None:
            raise KeyError(feature_id)
        return index

    def replace_feature(self, new: Feature) -> FeatureList:
        index = self.index_of(new.id)
        features = (*self.features[:index], new, *self.features[index + 1 :])
        return FeatureList(features, self.schema_ref)

    def append(self, new: Feature) -> FeatureList:
        return FeatureList((*self.features, new), self.schema_ref)


def require(feature_list: FeatureList, feature_id: str, source: str) -> Feature:
    """The feature with ``feature_id``, or a clear error naming the ids there are."""
    feature = feature_list.get(feature_id)
    if feature is None:
        ids = [f.id for f in feature_list.features]
        known = f"{ids[0]}..{ids[-1]}" if ids else "no features"
        raise BadInput(f"unknown feature id {feature_id!r} ({source} has {known})")
    return feature


# -- parsing -----------------------------------------------------------------------------


def parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(
            f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise BadInput(f"{source}: invalid JSON: nested too deeply to read") from None
    except ValueError:  # int() refuses more than sys.get_int_max_str_digits() digits
        raise BadInput(f"{source}: invalid JSON: a number too long to read") from None


_validator: Any = None


def schema_errors(document: Any) -> str | None:
    """The best schema error as ``$.json.path: message``, or None when the document is valid.

    jsonschema is imported here, on the paths that validate, and the validator is built
    once per process.
    """
    global _validator
    from jsonschema.exceptions import best_match

    if _validator is None:
        from jsonschema import Draft202012Validator, validators

        from shiftkit.core.resources import schema_path

        # JSON Schema counts 2.0 as an integer; a count in the list must be written 2.
        integers = Draft202012Validator.TYPE_CHECKER.redefine(
            "integer", lambda _, value: type(value) is int
        )
        validator_class = validators.extend(  # type: ignore[no-untyped-call]
            Draft202012Validator, type_checker=integers
        )
        schema = json.loads(schema_path().read_text(encoding="utf-8"))
        _validator = validator_class(schema)
    error = best_match(_validator.iter_errors(document))
    if error is None:
        return None
    return f"{error.json_path}: {error.message}"


def check_document(
    document: Any,
    source: str,
    trusted: Mapping[str, Any] | None = None,
    *,
    text: str | None = None,
    trusted_text: str | None = None,
) -> None:
    """Rule 1: valid against the packaged schema, ids unique, dependencies known.

    ``trusted`` is a document already known to be valid (HEAD's, when it was validated
    before): items identical to the one at the same position are not validated again, which
    keeps the common commit of a large list fast.
    """
    problem = _schema_problem(document, trusted, text, trusted_text)
    if problem is not None:
        raise BadInput(f"{source}: {problem}")
    seen: dict[str, int] = {}
    for index, item in enumerate(document["features"]):
        if "\n" in item["id"]:  # the schema's `$` lets one trailing line break through
            raise BadInput(
                f"{source}: $.features[{index}].id: {item['id']!r} ends with a line break; "
                f"remove it"
            )
        if item["id"] in seen:
            raise BadInput(
                f"{source}: $.features[{index}].id: duplicate id {item['id']!r} "
                f"(first used at $.features[{seen[item['id']]}]); give each feature its own id"
            )
        seen[item["id"]] = index
    for index, item in enumerate(document["features"]):
        for position, dep in enumerate(item.get("depends_on", ())):
            if dep not in seen:
                raise BadInput(
                    f"{source}: $.features[{index}].depends_on[{position}]: "
                    f"unknown feature id {dep!r}"
                )
            if dep == item["id"]:
                raise BadInput(
                    f"{source}: $.features[{index}].depends_on[{position}]: "
                    f"a feature cannot depend on itself"
                )


def _schema_problem(
    document: Any,
    trusted_document: Mapping[str, Any] | None,
    text: str | None,
    trusted_text: str | None,
) -> str | None:
    items = document.get("features") if isinstance(document, dict) else None
    if trusted_document is None or not isinstance(items, list):
        return schema_errors(document)
    trusted = trusted_document["features"]
    same_text = _same_item_texts(text, trusted_text, len(items), len(trusted))
    if same_text is not None:
        changed = [i for i in range(len(items)) if i >= len(trusted) or not same_text[i]]
    else:
        changed = [
            index
            for index, item in enumerate(items)
            if index >= len(trusted) or not same_json(item, trusted[index])
        ]
    skeleton = {k: v for k, v in document.items() if k != "features"}
    trusted_skeleton = {k: v for k, v in trusted_document.items() if k != "features"}
    return changed_items_problem(document, trusted, changed, same_json(skeleton, trusted_skeleton))


def changed_items_problem(
    document: Mapping[str, Any],
    trusted: Sequence[Any],
    changed: Sequence[int],
    same_skeleton: bool,
) -> str | None:
    """The schema's verdict on ``document``, whose items equal the valid ``trusted`` ones at
    their positions except at ``changed`` (and any beyond ``trusted``): only those are
    validated, and the rest of the document too unless ``same_skeleton`` (as the trusted
    one's)."""
    items = document["features"]
    # An item that differs from a valid one only in a boolean `passes` (a flip, a
    # demotion) is valid: the schema asks nothing more of `passes`.
    changed = [
        i for i in changed if i >= len(trusted) or not _only_passes_differs(items[i], trusted[i])
    ]
    if not changed and same_skeleton:
        return None
    problem = schema_errors({**document, "features": [items[i] for i in changed]})
    if problem is None:
        return None
    return re.sub(
        r"^\$\.features\[(\d+)\]",
        lambda match: f"$.features[{changed[int(match.group(1))]}]",
        problem,
    )


ITEM_SEPARATOR = "\n    },\n    {\n"


def _same_item_texts(
    text: str | None, trusted_text: str | None, count: int, trusted_count: int
) -> list[bool] | None:
    """Which items have the same text in both lists, when both are laid out as `dumps`
    writes them; None otherwise. Identical text is identical JSON, and comparing strings
    costs far less than comparing 5,000 parsed items.

    The separator (a line "    }," then a line "    {") can only stand between two
    elements of an array of objects, and `features` is the only such array, so when the
    number of pieces equals the number of items, piece i is item i (the first and last
    pieces carry the document's head and tail as well, which only makes them compare
    unequal more often).
    """
    if text is None or trusted_text is None:
        return None
    pieces = text.split(ITEM_SEPARATOR)
    trusted_pieces = trusted_text.split(ITEM_SEPARATOR)
    if len(pieces) != count or len(trusted_pieces) != trusted_count:
        return None
    return [i < trusted_count and pieces[i] == trusted_pieces[i] for i in range(count)]


def _only_passes_differs(item: Any, valid: Mapping[str, Any]) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("passes"), bool)
        and same_json({**item, "passes": valid.get("passes")}, valid)
    )


def same_json(a: Any, b: Any) -> bool:
    """Equality of parsed JSON that tells ``true`` from ``1`` and ``1`` from ``1.0``
    (Python's ``==`` does not; ``repr`` does, and runs in C)."""
    return bool(a == b) and repr(a) == repr(b)


def feature_from_dict(item: Mapping[str, Any]) -> Feature:
    blocked = item.get("blocked")
    return Feature(
        id=item["id"],
        category=item["category"],
        description=item["description"],
        steps=tuple(item["steps"]),
        verify=item.get("verify"),
        core=bool(item.get("core", False)),
        depends_on=tuple(item.get("depends_on", ())),
        passes=item["passes"],
        attempts=item.get("attempts", 0),
        blocked=Blocked(blocked["reason"], blocked["since"], blocked["attempts"])
        if blocked
        else None,
    )


def from_document(document: Mapping[str, Any]) -> FeatureList:
    """A list from a document that passed `check_document` (nothing is re-checked)."""
    return FeatureList(schema_ref=document.get("$schema"), items=document["features"])


def loads(
    text: str,
    source: str = "features.json",
    trusted: Mapping[str, Any] | None = None,
    trusted_text: str | None = None,
) -> FeatureList:
    """Parse and fully check a feature list in the current format (``trusted``: a valid
    list, and its text, to check only what differs from it)."""
    document = parse_json(text, source)
    if isinstance(document, list):
        raise BadInput(
            f"{source}: this is the legacy bare-array format; "
            f"convert it with `shiftkit import {source}`"
        )
    check_document(document, source, trusted, text=text, trusted_text=trusted_text)
    return from_document(document)


def loads_any(text: str, source: str) -> FeatureList:
    """Parse either format: the current object or the legacy bare array."""
    document = parse_json(text, source)
    if isinstance(document, list):
        return from_legacy(document, source)
    check_document(document, source)
    return from_document(document)


def from_legacy(items: Sequence[Any], source: str) -> FeatureList:
    """The published harness's bare array of {category, description, steps, passes}."""
    width = max(3, len(str(len(items))))
    converted = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadInput(f"{source}: $[{index}]: expected an object, got {_json_type(item)}")
        if "id" not in item:
            item = {"id": f"F{index + 1:0{width}d}", **item}
        converted.append(item)
    document = {"features": converted}
    try:
        check_document(document, source)
    except BadInput as exc:
        raise BadInput(exc.message.replace("$.features[", "$[", 1)) from None
    return from_document(document)


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else "null"
    )


# -- serialization -----------------------------------------------------------------------


def feature_to_dict(feature: Feature) -> dict[str, Any]:
    """Fixed key order; optional fields only when they say something."""
    item: dict[str, Any] = {
        "id": feature.id,
        "category": feature.category,
        "description": feature.description,
        "steps": list(feature.steps),
    }
    if feature.verify is not None:
        item["verify"] = feature.verify
    if feature.core:
        item["core"] = True
    if feature.depends_on:
        item["depends_on"] = list(feature.depends_on)
    item["passes"] = feature.passes
    if feature.attempts:
        item["attempts"] = feature.attempts
    if feature.blocked is not None:
        item["blocked"] = {
            "reason": feature.blocked.reason,
            "since": feature.blocked.since,
            "attempts": feature.blocked.attempts,
        }
    return item


def dumps(feature_list: FeatureList) -> str:
    """2-space indent, one field per line, trailing newline: one flip is one changed line."""
    document: dict[str, Any] = {}
    if feature_list.schema_ref is not None:
        document["$schema"] = feature_list.schema_ref
    document["features"] = [feature_to_dict(f) for f in feature_list.features]
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# -- the protocol's choice ---------------------------------------------------------------


def is_open(feature: Feature) -> bool:
    return not feature.passes and feature.blocked is None


def next_feature(feature_list: FeatureList, claimed: Iterable[str] = ()) -> Feature | None:
    """i = min{j : not passing, not blocked, not claimed, dependencies passing}."""
    taken = set(claimed)
    for feature in feature_list.features:
        if not is_open(feature) or feature.id in taken:
            continue
        if all(_passes(feature_list, dep) for dep in feature.depends_on):
            return feature
    return None


def candidates(
    feature_list: FeatureList, claimed: Iterable[str] = (), repair: Iterable[str] = ()
) -> list[Feature]:
    """Every feature a session may take now, best first: the ones the last start check
    demoted (repair first), then the protocol's order. `next`, `claim` without an id and
    `start` all read the head of this one list."""
    taken = set(claimed)
    first = [
        f
        for i in dict.fromkeys(repair)
        if (f := feature_list.get(i)) is not None and is_open(f) and f.id not in taken
    ]
    rest = [
        f
        for f in feature_list.features
        if is_open(f)
        and f.id not in taken
        and f not in first
        and all(_passes(feature_list, dep) for dep in f.depends_on)
    ]
    return first + rest


def _passes(feature_list: FeatureList, feature_id: str) -> bool:
    feature = feature_list.get(feature_id)
    return feature is not None and feature.passes


class Counts(NamedTuple):
    total: int
    passing: int
    open: int
    blocked: int
    claimed: int


def counts(feature_list: FeatureList, claimed: Iterable[str] = ()) -> Counts:
    taken = set(claimed)
    features = feature_list.features
    passing = sum(1 for f in features if f.passes)
    blocked = sum(1 for f in features if not f.passes and f.blocked is not None)
    return Counts(
        total=len(features),
        passing=passing,
        open=len(features) - passing - blocked,
        blocked=blocked,
        claimed=sum(1 for f in features if f.id in taken),
    )


def all_pass_message(feature_list: FeatureList) -> str:
    return f"all {len(feature_list.features)} features pass — nothing to do"


def blocked_ids(feature_list: FeatureList) -> list[str]:
    return [f.id for f in feature_list.features if f.blocked is not None]


def next_free_id(feature_list: FeatureList) -> str:
    """The next ``F`` number after the highest one in use."""
    highest = -1
    width = 3
    for feature in feature_list.features:
        digits = feature.id[1:]
        if feature.id[:1] == "F" and digits.isdigit():
            highest = max(highest, int(digits))
            width = max(width, len(digits))
    return f"F{highest + 1:0{width}d}"


def effective_verify(feature: Feature, project_verify: str) -> str | None:
    """The feature's own verifier, else the project-wide one, else none (cannot pass)."""
    if feature.verify:
        return feature.verify
    return project_verify or None


# -- shell completion ----------------------------------------------------------------------

COMPLETE_KINDS = ("any", "open", "blocked")


def completion_candidates(document: Any, kind: str, prefix: str) -> list[tuple[str, str]]:
    """Feature ids starting with ``prefix``, with their descriptions, read from a parsed
    feature list of any shape (never raises): ``open`` ones for `claim`, ``blocked`` ones for
    `unblock`, ``any`` for `show` and `verify`. No schema check: completion must be quick."""
    items = document.get("features") if isinstance(document, Mapping) else document
    found: list[tuple[str, str]] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        feature_id, description = item.get("id"), item.get("description")
        if not isinstance(feature_id, str) or not feature_id.startswith(prefix):
            continue
        passes, blocked = item.get("passes") is True, item.get("blocked") is not None
        if kind == "open" and (passes or blocked):
            continue
        if kind == "blocked" and (passes or not blocked):
            continue
        text = " ".join(description.split()) if isinstance(description, str) else ""
        found.append((feature_id, text[:80]))
    return found
