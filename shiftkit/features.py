"""The feature list: parsing, validation, deterministic serialization and the `next` rule.

Pure functions over text and values; the callers do the reading and writing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from shiftkit.errors import BadInput

SCHEMA_REF = ".shiftkit/features.schema.json"
DEFINITION_FIELDS = ("id", "category", "description", "steps", "verify", "core", "depends_on")
STATUS_FIELDS = ("passes", "attempts", "blocked")


@dataclass(frozen=True)
class Blocked:
    reason: str
    since: str
    attempts: int


@dataclass(frozen=True)
class Feature:
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
        return tuple(getattr(self, name) for name in DEFINITION_FIELDS)


@dataclass(frozen=True)
class FeatureList:
    features: tuple[Feature, ...]
    schema_ref: str | None = SCHEMA_REF
    by_id: Mapping[str, Feature] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {f.id: f for f in self.features})

    def get(self, feature_id: str) -> Feature | None:
        return self.by_id.get(feature_id)

    def index_of(self, feature_id: str) -> int:
        for index, feature in enumerate(self.features):
            if feature.id == feature_id:
                return index
        raise KeyError(feature_id)

    def replace_feature(self, new: Feature) -> FeatureList:
        index = self.index_of(new.id)
        features = self.features[:index] + (new,) + self.features[index + 1 :]
        return replace(self, features=features)

    def append(self, new: Feature) -> FeatureList:
        return replace(self, features=self.features + (new,))


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


_validator: Any = None


def schema_errors(document: Any) -> str | None:
    """The best schema error as ``$.json.path: message``, or None when the document is valid.

    jsonschema is imported here, on the paths that validate, and the validator is built
    once per process.
    """
    global _validator
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    if _validator is None:
        from shiftkit.resources import schema_path

        schema = json.loads(schema_path().read_text(encoding="utf-8"))
        _validator = Draft202012Validator(schema)
    error = best_match(_validator.iter_errors(document))
    if error is None:
        return None
    return f"{error.json_path}: {error.message}"


def check_document(document: Any, source: str, trusted: Sequence[Any] | None = None) -> None:
    """Rule 1: valid against the packaged schema, ids unique, dependencies known.

    ``trusted`` is the feature items of a list already known to be valid (HEAD's, when it
    was validated before): items identical to the one at the same position are not
    validated again, which keeps the common commit of a large list fast.
    """
    problem = _schema_problem(document, trusted)
    if problem is not None:
        raise BadInput(f"{source}: {problem}")
    seen: dict[str, int] = {}
    for index, item in enumerate(document["features"]):
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


def _schema_problem(document: Any, trusted: Sequence[Any] | None) -> str | None:
    items = document.get("features") if isinstance(document, dict) else None
    if trusted is None or not isinstance(items, list):
        return schema_errors(document)
    changed = [
        index
        for index, item in enumerate(items)
        if index >= len(trusted) or not same_json(item, trusted[index])
    ]
    problem = schema_errors({**document, "features": [items[i] for i in changed]})
    if problem is None:
        return None
    return re.sub(
        r"^\$\.features\[(\d+)\]",
        lambda match: f"$.features[{changed[int(match.group(1))]}]",
        problem,
    )


def same_json(a: Any, b: Any) -> bool:
    """Equality that tells ``true`` from ``1`` (Python's ``==`` does not)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return bool(a == b)


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
    return FeatureList(
        features=tuple(feature_from_dict(item) for item in document["features"]),
        schema_ref=document.get("$schema"),
    )


def loads(
    text: str, source: str = "features.json", trusted: Sequence[Any] | None = None
) -> FeatureList:
    """Parse and fully check a feature list in the current format."""
    document = parse_json(text, source)
    if isinstance(document, list):
        raise BadInput(
            f"{source}: this is the legacy bare-array format; "
            f"convert it with `shiftkit import {source}`"
        )
    check_document(document, source, trusted)
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


def _passes(feature_list: FeatureList, feature_id: str) -> bool:
    feature = feature_list.get(feature_id)
    return feature is not None and feature.passes


@dataclass(frozen=True)
class Counts:
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
