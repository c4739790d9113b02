"""The feature list: parsing, validation, deterministic serialization and the `next` rule.

Pure functions over text and values; the callers do the reading and writing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from shiftkit.core import jsonbound
from shiftkit.core.errors import BadInput

SCHEMA_REF = ".shiftkit/features.schema.json"
DEFINITION_FIELDS = (
    "id",
    "category",
    "description",
    "steps",
    "verify",
    "core",
    "depends_on",
    "oracle",
)
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
    oracle: tuple[str, ...] = ()  # what its verifier judges by (decision record 0048)
    passes: bool = False
    attempts: int = 0
    blocked: Blocked | None = None

    def definition(self) -> tuple[Any, ...]:
        return self[: len(DEFINITION_FIELDS)]


class Table(NamedTuple):
    """What the protocol's choices read of every feature, column by column, without building
    a `Feature` for each: the ids in order, a flags byte each (`PASSES`, `BLOCKED`, `CORE`)
    and the dependencies. Kept in the git dir per list blob, so `status`, `next` and `claim`
    on a 50,000-feature list read this instead of parsing the list."""

    ids: tuple[str, ...]
    flags: bytes
    depends_on: tuple[tuple[str, ...], ...]


PASSES, BLOCKED, CORE = 1, 2, 4
# A flags byte to 1 when BLOCKED is set, else 0 (for `bytes.translate`).
_BLOCKED_MARKS = bytes(1 if flags & BLOCKED else 0 for flags in range(256))
# How many ids `FeatureList.position` looks up by scanning before it builds an index.
_SCANNED_LOOKUPS = 4


def table_of(items: Sequence[Mapping[str, Any]]) -> Table:
    return Table(
        tuple(item["id"] for item in items),
        bytes(
            (PASSES if item["passes"] is True else 0)
            | (BLOCKED if item.get("blocked") is not None else 0)
            | (CORE if item.get("core") is True else 0)
            for item in items
        ),
        tuple(tuple(item.get("depends_on", ())) for item in items),
    )


def _flags(feature: Feature) -> int:
    return (
        (PASSES if feature.passes else 0)
        | (BLOCKED if feature.blocked is not None else 0)
        | (CORE if feature.core else 0)
    )


class FeatureList:
    """The features in priority order. Built from parsed JSON it stays lazy: a commit hook
    on a 5,000-feature list turns only the items it looks at into `Feature` objects.

    Built from a checked text and its `Table` (`from_text`) it is lazier still: nothing is
    parsed until asked for; `get` parses the one item's text (``spans``: where each item's
    object lies in the text, when it is laid out as `dumps` writes it), and `replace_feature`
    and `append` change only that item's text. ``checked``: every item is known valid (what
    `edge.project` records per blob so no command validates the same list twice).
    """

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
        self._lookups = 0
        self._table: Table | None = None
        self.text: str | None = None  # the exact text this list was read from, if any
        self.spans: tuple[int, ...] | None = None  # start, end of each item's object
        self.checked = False

    @classmethod
    def from_text(
        cls,
        text: str,
        table: Table,
        spans: Sequence[int] | None,
        schema_ref: str | None,
        checked: bool = True,
        items: Sequence[Mapping[str, Any]] | None = None,
    ) -> FeatureList:
        made = cls(schema_ref=schema_ref, items=items)
        made.text, made._table, made.checked = text, table, checked
        made.spans = tuple(spans) if spans is not None else None
        return made

    @property
    def table(self) -> Table:
        if self._table is None:
            self._table = table_of(self.items)
        return self._table

    @property
    def features(self) -> tuple[Feature, ...]:
        if self._features is None:
            self._features = tuple(feature_from_dict(item) for item in self.items)
        return self._features

    @property
    def items(self) -> Sequence[Mapping[str, Any]]:
        """The features as parsed JSON objects."""
        if self._items is None:
            if self._features is None and self.text is not None:
                self._items = json.loads(self.text)["features"]  # (checked when it was read)
            else:
                self._items = [feature_to_dict(f) for f in self.features]
        return self._items

    @property
    def by_id(self) -> Mapping[str, Feature]:
        if self._by_id is None:
            self._by_id = {f.id: f for f in self.features}
        return self._by_id

    def __len__(self) -> int:
        if self._features is not None:
            return len(self._features)
        if self._items is not None:
            return len(self._items)
        return len(self.table.ids)

    def position(self, feature_id: str) -> int | None:
        if self._index is None:
            ids = self.table.ids
            self._lookups += 1
            if self._lookups <= _SCANNED_LOOKUPS:
                # A few lookups (the hooks and `audit` make one or two per list): a scan in C
                # each, where building the index costs a dictionary entry per feature.
                # From the end, as the index maps a repeated id to its last position.
                if feature_id not in ids:
                    return None
                return len(ids) - 1 - ids[::-1].index(feature_id)
            self._index = {feature_id: i for i, feature_id in enumerate(ids)}
        return self._index.get(feature_id)

    def get(self, feature_id: str) -> Feature | None:
        if self._by_id is not None:
            return self._by_id.get(feature_id)
        index = self.position(feature_id)
        if index is None:
            return None
        return self.at(index)

    def at(self, index: int) -> Feature:
        if self._features is not None:
            return self._features[index]
        return feature_from_dict(self.items_at(index))

    def items_at(self, index: int) -> Mapping[str, Any]:
        """Item ``index`` as parsed JSON (only that item parsed, when laid out)."""
        if self._items is None and self.spans is not None and self.text is not None:
            start, end = self.spans[2 * index], self.spans[2 * index + 1]
            parsed: Mapping[str, Any] = json.loads(self.text[start:end])
            return parsed
        return self.items[index]

    def index_of(self, feature_id: str) -> int:
        index = self.position(feature_id)
        if index is None:
            raise KeyError(feature_id)
        return index

    def replace_feature(self, new: Feature) -> FeatureList:
        index = self.index_of(new.id)
        if self.text is not None and self.spans is not None:
            start, end = self.spans[2 * index], self.spans[2 * index + 1]
            return self._spliced(index, start, end, new, "")
        features = (*self.features[:index], new, *self.features[index + 1 :])
        return FeatureList(features, self.schema_ref)

    def append(self, new: Feature) -> FeatureList:
        if self.text is not None and self.spans is not None and self.spans:
            end = self.spans[-1]
            return self._spliced(len(self.table.ids), end, end, new, ",\n    ")
        return FeatureList((*self.features, new), self.schema_ref)

    def _spliced(self, index: int, start: int, end: int, new: Feature, lead: str) -> FeatureList:
        """This list with item ``index`` (the text from ``start`` to ``end``) replaced, or
        appended, by ``new`` laid out as `dumps` lays it out; only that item is checked."""
        assert self.text is not None and self.spans is not None
        table = self.table
        item = feature_to_dict(new)
        body = item_text(item)
        text = self.text[:start] + lead + body + self.text[end:]
        delta = len(lead) + len(body) - (end - start)
        first = start + len(lead)
        mine = (first, first + len(body))
        appended = index == len(table.ids)
        spans = (
            *self.spans[: 2 * index],
            *mine,
            *(position + delta for position in self.spans[2 * index + 2 :]),
        )
        new_table = Table(
            (*table.ids[:index], new.id, *table.ids[index + 1 :]),
            table.flags[:index] + bytes((_flags(new),)) + table.flags[index + 1 :],
            (*table.depends_on[:index], new.depends_on, *table.depends_on[index + 1 :]),
        )
        # (a flip of `passes` alone keeps a valid item valid: the schema asks no more of it)
        flip = not appended and self.at(index)._replace(passes=new.passes) == new
        checked = self.checked and (flip or _item_fits(item, table, None if appended else index))
        return FeatureList.from_text(text, new_table, spans, self.schema_ref, checked)


def item_text(item: Mapping[str, Any]) -> str:
    """One feature's object as `dumps` lays it out inside the list (at an indent of four;
    JSON strings hold no raw line break, so every line break is the layout's)."""
    return json.dumps(item, indent=2, ensure_ascii=False).replace("\n", "\n    ")


def _item_fits(item: Mapping[str, Any], table: Table, index: int | None) -> bool:
    """Rule 1 for one item put into a valid list at ``index`` (None: appended): it matches
    the schema, its id is its own, its dependencies are known and not itself."""
    ids = table.ids
    if index is not None and ids[index] != item["id"]:
        return False
    if index is None and (item["id"] in ids or "\n" in item["id"]):
        return False
    known = set(ids) | {item["id"]}
    dependencies = item.get("depends_on", ())
    if item["id"] in dependencies or any(dep not in known for dep in dependencies):
        return False
    return schema_errors({"features": [item]}) is None


_CHUNK = 1 << 16


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share: chunk by chunk (compared in C,
    `startswith` at an offset copying one side only), then halving inside the first chunk
    that differs."""
    limit = min(len(a), len(b))
    low = 0
    while low + _CHUNK <= limit and a.startswith(b[low : low + _CHUNK], low):
        low += _CHUNK
    high = min(low + _CHUNK, limit)
    while low < high:  # a[:low] == b[:low]; the first difference is before `high`
        middle = (low + high + 1) // 2
        if a.startswith(b[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, most: int) -> int:
    """How many trailing characters ``a`` and ``b`` share, at most ``most``."""
    ra, rb = len(a), len(b)
    length = 0
    while length + _CHUNK <= most and a.endswith(
        b[rb - length - _CHUNK : rb - length], 0, ra - length
    ):
        length += _CHUNK
    high = min(length + _CHUNK, most)
    while length < high:
        middle = (length + high + 1) // 2
        if a.endswith(b[rb - middle : rb - length], 0, ra - length):
            length = middle
        else:
            high = middle - 1
    return length


def _touched(spans: Sequence[int], size: int, prefix: int, suffix: int) -> range:
    """The items of a laid-out text of ``size`` characters (item ``i`` from ``spans[2i]`` to
    ``spans[2i + 1]``) that a change of everything between its first ``prefix`` and its
    last ``suffix`` characters may touch. The items before the range lie, with the
    separator after each, in the prefix; the ones after it, with the separator before
    each, in the suffix."""
    import bisect

    first = bisect.bisect_right(spans[1::2], prefix - (len(ITEM_SEPARATOR) - 6))
    last = bisect.bisect_left(spans[0::2], size - suffix + 12)
    return range(first, max(first, last))


def _differing(old: str, new: str) -> tuple[int, int]:
    """(common prefix, common suffix) of two texts, never overlapping in either."""
    global _last_differing
    last_old, last_new, found = _last_differing
    # `audit` and the hooks compare the same two texts in `loads_against` and again in
    # `changed_positions`: the last answer is kept, told by the texts' identity.
    if old is last_old and new is last_new:
        return found
    prefix = _common_prefix(old, new)
    found = prefix, _common_suffix(old, new, min(len(old), len(new)) - prefix)
    _last_differing = old, new, found
    return found


_last_differing: tuple[str, str, tuple[int, int]] = ("", "", (0, 0))


def changed_positions(old: FeatureList, new: FeatureList) -> list[int] | None:
    """The positions (below ``len(old)``) whose item text differs between two laid-out
    lists, when ``new`` keeps every position of ``old`` (items only appended); None when
    that cannot be told from the texts (the caller compares parsed items instead). Only
    the items around the texts' differing middle are compared one by one."""
    if old.text is None or new.text is None or old.spans is None or new.spans is None:
        return None
    a, b, at, bt = old.spans, new.spans, old.text, new.text
    if len(b) < len(a):
        return None
    prefix, suffix = _differing(at, bt)
    touched = _touched(a, len(at), prefix, suffix)
    if len(b) != len(a) and touched.stop < len(a) // 2:
        return None  # items added before others: not a plain append
    return [i for i in touched if at[a[2 * i] : a[2 * i + 1]] != bt[b[2 * i] : b[2 * i + 1]]]


def loads_against(text: str, trusted: FeatureList) -> FeatureList | None:
    """``text`` checked item by item against ``trusted`` (a checked, laid-out list): the
    head and tail of the document as in ``trusted``, every item either the same text as
    the trusted one at its position, or parsed and checked on its own (rule 1: the schema,
    ids unique, dependencies known). None whenever this cannot settle it — an item gone or
    inserted, an id changed, anything that does not parse or check — and the caller checks
    the whole text, which names the problem.

    Sound because ``text`` is then the trusted head, complete objects joined by ``,``
    and the trusted tail: the trusted document's shape with other items. Only the items
    around where the texts differ are looked at: the others are the trusted items, at the
    same place before the difference and moved by the same number of characters after."""
    if trusted.text is None or trusted.spans is None or not trusted.checked:
        return None
    old, spans = trusted.text, trusted.spans
    head, tail = old[: spans[0]], old[spans[-1] :]
    if len(text) < len(head) + len(tail) or not (text.startswith(head) and text.endswith(tail)):
        return None
    prefix, suffix = _differing(old, text)
    touched = _touched(spans, len(old), prefix, suffix)
    count_old, delta = len(spans) // 2, len(text) - len(old)
    before = list(spans[: 2 * touched.start])
    after = list(map(delta.__add__, spans[2 * touched.stop :]))  # (a C loop)
    # The middle of the new text, from its first item's start to its last one's end.
    # (an item ends 6 characters into the separator after it; the next starts 12 in)
    low = before[-1] + 6 if before else len(head)
    high = after[0] - 6 if after else len(text) - len(tail)
    if low >= high:
        return None
    middle = [low]
    at = text.find(ITEM_SEPARATOR, low, high)
    while at != -1:
        middle += (at + 6, at + 12)
        at = text.find(ITEM_SEPARATOR, at + len(ITEM_SEPARATOR), high)
    middle.append(high)
    found = len(middle) // 2
    if found < len(touched) or (found > len(touched) and after):
        return None  # an item gone, or one inserted before others: rule 2's to name
    new_spans = [*before, *middle, *after]
    table = trusted.table
    ids, flags, depends_on = list(table.ids), bytearray(table.flags), list(table.depends_on)
    to_check: list[Mapping[str, Any]] = []
    for index in range(touched.start, touched.start + found):
        piece = text[new_spans[2 * index] : new_spans[2 * index + 1]]
        if index < count_old and piece == old[spans[2 * index] : spans[2 * index + 1]]:
            continue
        try:
            item = json.loads(piece)
        except (ValueError, RecursionError):
            return None
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            return None
        if not isinstance(item.get("passes"), bool):
            return None
        row = table_of([item])
        if index < count_old:
            if item["id"] != ids[index]:
                return None
            # (a flip alone keeps a valid item valid: the schema asks no more of `passes`)
            if not _only_passes_differs(item, trusted.items_at(index)):
                to_check.append(item)
            flags[index], depends_on[index] = row.flags[0], row.depends_on[0]
        else:
            to_check.append(item)
            ids.append(item["id"])
            flags.append(row.flags[0])
            depends_on.append(row.depends_on[0])
    if to_check:
        if schema_errors({"features": to_check}) is not None:
            return None
        known = set(ids)
        if len(known) != len(ids) or any("\n" in item["id"] for item in to_check):
            return None
        for item in to_check:
            dependencies = item.get("depends_on", ())
            if item["id"] in dependencies or any(dep not in known for dep in dependencies):
                return None
    return FeatureList.from_text(
        text, Table(tuple(ids), bytes(flags), tuple(depends_on)), new_spans, trusted.schema_ref
    )


def item_spans(text: str, items: Sequence[Mapping[str, Any]]) -> tuple[int, ...] | None:
    """Where each item's object lies in ``text`` (start, end, start, end, ...), when the list
    is laid out as `dumps` writes it; None otherwise. ``items`` is ``text``'s checked parse.

    Between two items stands `ITEM_SEPARATOR`; in a list valid against the schema no other
    array holds objects and no string holds a raw line break, so ``len(items) - 1``
    separators are exactly the boundaries of the items. The first item's start and the
    last one's end are found by their lines and confirmed by parsing those two items."""
    if not items:
        return None
    cuts = []
    at = text.find(ITEM_SEPARATOR)
    while at != -1:
        cuts.append(at)
        at = text.find(ITEM_SEPARATOR, at + len(ITEM_SEPARATOR))
    if len(cuts) != len(items) - 1:
        return None
    first = text.find("\n    {\n")
    last = text.rfind("\n    }\n")
    if first == -1 or last == -1:
        return None
    spans = [first + 5]
    for cut in cuts:
        spans += (cut + 6, cut + 12)
    spans.append(last + 6)
    for index in (0, len(items) - 1):
        try:
            parsed = json.loads(text[spans[2 * index] : spans[2 * index + 1]])
        except ValueError:
            return None
        if not same_json(parsed, items[index]):
            return None
    return tuple(spans)


def as_document(feature_list: FeatureList) -> dict[str, Any]:
    """The list as the parsed JSON document (``$schema`` when it has one, ``features``)."""
    document: dict[str, Any] = {}
    if feature_list.schema_ref is not None:
        document["$schema"] = feature_list.schema_ref
    document["features"] = feature_list.items
    return document


def require(feature_list: FeatureList, feature_id: str, source: str) -> Feature:
    """The feature with ``feature_id``, or a clear error naming the ids there are."""
    feature = feature_list.get(feature_id)
    if feature is None:
        raise BadInput(f"unknown feature id {feature_id!r} ({source} has {id_range(feature_list)})")
    return feature


def id_range(feature_list: FeatureList) -> str:
    """The ids a list has, as an unknown id's error names them ("F000..F006")."""
    ids = feature_list.table.ids
    return f"{ids[0]}..{ids[-1]}" if ids else "no features"


# -- parsing -----------------------------------------------------------------------------


def parse_json(text: str, source: str) -> Any:
    # (its depth is bounded by the parser's own limit, and its shape by the schema, which
    # refuses a nested value at the field that holds it: no depth scan of a long list)
    return jsonbound.loads(text, source, max_depth=None)


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
        oracle=tuple(item.get("oracle", ())),
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
    return from_document(checked_document(text, source, trusted, trusted_text))


def checked_document(
    text: str,
    source: str,
    trusted: Mapping[str, Any] | None = None,
    trusted_text: str | None = None,
) -> Any:
    """The parsed document, checked as `loads` checks it (the same refusals), not yet a list."""
    document = parse_json(text, source)
    if isinstance(document, list):
        raise BadInput(
            f"{source}: this is the legacy bare-array format; "
            f"convert it with `shiftkit import {source}`"
        )
    check_document(document, source, trusted, text=text, trusted_text=trusted_text)
    return document


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
    if feature.oracle:
        item["oracle"] = list(feature.oracle)
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
    """2-space indent, one field per line, trailing newline: one flip is one changed line.
    A list read from a laid-out text, and changed by `replace_feature`/`append`, is that
    text as changed (the other items are not written again)."""
    if feature_list.text is not None and feature_list.spans is not None:
        return feature_list.text
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
    chosen = candidates(feature_list, claimed, limit=1)
    return chosen[0] if chosen else None


def candidates(
    feature_list: FeatureList,
    claimed: Iterable[str] = (),
    repair: Iterable[str] = (),
    limit: int | None = None,
) -> list[Feature]:
    """Every feature a session may take now, best first (the first ``limit`` of them): the
    ones the last start check demoted (repair first), then the protocol's order. `next`,
    `claim` without an id and `start` all read the head of this one list, from the list's
    `Table`: only the features returned are built."""
    taken = set(claimed)
    table = feature_list.table
    first = [
        f
        for i in dict.fromkeys(repair)
        if (f := feature_list.get(i)) is not None and is_open(f) and f.id not in taken
    ]
    chosen = {f.id for f in first}
    result = first[:limit] if limit is not None else first
    for index, (feature_id, flags) in enumerate(zip(table.ids, table.flags, strict=True)):
        if limit is not None and len(result) >= limit:
            break
        if flags & (PASSES | BLOCKED) or feature_id in taken or feature_id in chosen:
            continue
        if all(passes(feature_list, dep) for dep in table.depends_on[index]):
            result.append(feature_list.at(index))
    return result


def passes(feature_list: FeatureList, feature_id: str) -> bool:
    index = feature_list.position(feature_id)
    return index is not None and bool(feature_list.table.flags[index] & PASSES)


class Counts(NamedTuple):
    total: int
    passing: int
    open: int
    blocked: int
    claimed: int


def counts(feature_list: FeatureList, claimed: Iterable[str] = ()) -> Counts:
    table = feature_list.table
    passing = sum(1 for flags in table.flags if flags & PASSES)
    blocked = sum(1 for flags in table.flags if flags & (PASSES | BLOCKED) == BLOCKED)
    taken = set(claimed)
    return Counts(
        total=len(table.ids),
        passing=passing,
        open=len(table.ids) - passing - blocked,
        blocked=blocked,
        claimed=sum(1 for feature_id in table.ids if feature_id in taken),
    )


def where_counted(counted_on: str | None, diverged_from: str | None = None) -> str:
    """Where a view's counts were counted, said right after them (decision record 0079):
    ``counted_on`` the remote's branch this one is only behind (its list is counted, the one
    `claim` takes from after its fast-forward); ``diverged_from`` the remote's branch this one
    diverged from (counted here); '' when this branch is the remote's (or there is none)."""
    if counted_on:
        return f" (at {counted_on}, which this branch is behind)"
    if diverged_from:
        return f" (here: this branch and {diverged_from} diverged)"
    return ""


def all_pass_message(
    feature_list: FeatureList,
    checked: bool,
    behind: bool = False,
    counted_on: str | None = None,
    here: FeatureList | None = None,
) -> str:
    """What to say when every feature is marked passing: "all pass" only when a check at
    HEAD's tree saw every one pass (``checked``), else what it is and what to run; never
    "nothing to do" while the branch is ``behind`` the remote's (which may hold new work).
    ``counted_on``: ``feature_list`` is the list of that remote branch, which this one is only
    behind (``here``: HEAD's list) — said as there, with the catching up it asks first."""
    total = len(feature_list)
    if counted_on:
        mine = counts(here) if here is not None else None
        local = f" ({mine.passing}/{mine.total} here)" if mine is not None else ""
        return (
            f"all {total} features are marked passing at {counted_on}, which this branch is "
            f"behind{local}: run `shiftkit sync` to catch up, then `shiftkit start`"
        )
    if behind:
        return (
            f"all {total} features here pass, but this branch is behind the "
            f"remote's, which may hold new features: run `shiftkit sync`, then `shiftkit start`"
        )
    if checked:
        return f"all {total} features pass (checked at HEAD) — nothing to do"
    return (  # (each passed its verifier in the work tree when it was finished)
        f"all {total} features marked passing; not yet verified in a clean "
        f"checkout of HEAD — run `shiftkit check`"
    )


def all_pass(feature_list: FeatureList) -> bool:
    flags = feature_list.table.flags
    return bool(flags) and all(f & PASSES for f in flags)


def blocked_ids(feature_list: FeatureList) -> list[str]:
    table = feature_list.table
    # Found with `bytes.find` over the flags: C work per feature, Python work per blocked one.
    marks = table.flags.translate(_BLOCKED_MARKS)
    found: list[str] = []
    at = marks.find(1)
    while at != -1:
        found.append(table.ids[at])
        at = marks.find(1, at + 1)
    return found


def blocked_open(feature_list: FeatureList) -> list[Feature]:
    """The blocked features that do not pass, built (they are few)."""
    table = feature_list.table
    return [
        feature_list.at(index)
        for index, flags in enumerate(table.flags)
        if flags & (PASSES | BLOCKED) == BLOCKED
    ]


def next_free_id(feature_list: FeatureList) -> str:
    """The next ``F`` number after the highest one in use."""
    highest = -1
    width = 3
    for feature_id in feature_list.table.ids:
        digits = feature_id[1:]
        if feature_id[:1] == "F" and digits.isdigit():
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
    seen: set[str] = set()
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        feature_id, description = item.get("id"), item.get("description")
        if not isinstance(feature_id, str) or not feature_id.startswith(prefix):
            continue
        if feature_id in seen:
            continue  # (a list with an id twice is invalid: its first feature answers)
        seen.add(feature_id)
        passes, blocked = item.get("passes") is True, item.get("blocked") is not None
        if kind == "open" and (passes or blocked):
            continue
        if kind == "blocked" and (passes or not blocked):
            continue
        text = " ".join(description.split()) if isinstance(description, str) else ""
        found.append((feature_id, text[:80]))
    return found
