"""The `features.json` merge driver: two sessions' lists merged feature by feature.

Passes from either side, demotions win, attempts take the maximum, a block from either side
stays, and new features from both sides are appended in order (ours first). Two sides that
changed the same feature's definition differently is a conflict for a person.

`merge_lists` states the rules over whole lists; `merge_texts` is what the driver runs: the
three texts checked as `features.loads` checks them, but only where they differ from a list
known to be valid, and merged feature by feature where the sides differ, the features they
share word for word copied as text (see `_merged_text`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from shiftkit.core import features
from shiftkit.core.errors import Refused


def merge_feature(
    before: features.Feature | None, mine: features.Feature, other: features.Feature
) -> features.Feature:
    """One feature both sides have (``before``: the base's, None when it is new)."""
    if other.definition() != mine.definition():
        raise Refused(
            f"{mine.id}: both sides changed its definition differently; merge features.json by hand"
        )
    was_passing = before is not None and before.passes
    demoted = was_passing and not (mine.passes and other.passes)
    return mine._replace(
        passes=False if demoted else (mine.passes or other.passes),
        attempts=max(mine.attempts, other.attempts),
        blocked=mine.blocked or other.blocked,
    )


def merge_lists(
    base: features.FeatureList | None, ours: features.FeatureList, theirs: features.FeatureList
) -> features.FeatureList:
    merged = []
    for mine in ours.features:
        other = theirs.get(mine.id)
        if other is None:
            merged.append(mine)
            continue
        before = base.get(mine.id) if base is not None else None
        merged.append(merge_feature(before, mine, other))
    merged += [f for f in theirs.features if ours.get(f.id) is None]
    return features.FeatureList(merged, ours.schema_ref)


class Version(NamedTuple):
    """One of the versions git passes the driver: its text, its name in messages, and whether
    it is known to be valid (its blob recorded as validated in the git dir)."""

    text: str
    name: str
    known_valid: bool = False


class Merged(NamedTuple):
    text: str
    validated: tuple[Version, ...]  # the versions checked in full here: worth recording


def merge_texts(base: Version | None, ours: Version, theirs: Version) -> Merged:
    """`features.dumps(merge_lists(...))` of the three versions (``base`` None: no common
    ancestor), each first checked as `features.loads(text, name)` checks it: the same
    refusals, with the same messages, ours's first, then theirs's, then the base's.

    A list is checked in full only when none of the three is known to be valid: then ours,
    which is checked first anyway, and the others only where they differ from it. Otherwise
    each one not known to be valid is checked where it differs from the first known-valid
    one (the base, usually: the features neither side touched are skipped). A check against
    a valid list finds exactly what a full check finds, with the same message (see
    `features.check_document`), so nothing that was refused passes."""
    anchor = next((v for v in (base, ours, theirs) if v is not None and v.known_valid), ours)
    trusted = _document(anchor) if anchor.known_valid else _checked(anchor)

    def check(version: Version) -> Any:
        if version is anchor:
            return trusted
        if version.known_valid:
            return _document(version)
        return _checked(version, trusted, anchor.text)

    ours_document, theirs_document = check(ours), check(theirs)
    base_document = check(base) if base is not None else None
    validated = () if anchor.known_valid else (anchor,)
    text = _merged_text(base_document, ours, ours_document, theirs, theirs_document)
    if text is None:
        lists = [
            features.from_document(d) if d is not None else None
            for d in (base_document, ours_document, theirs_document)
        ]
        assert lists[1] is not None and lists[2] is not None
        text = features.dumps(merge_lists(lists[0], lists[1], lists[2]))
    return Merged(text, validated)


def _document(version: Version) -> Any:
    return json.loads(version.text)  # (known valid: it was parsed and checked before)


def _checked(
    version: Version, trusted: Mapping[str, Any] | None = None, trusted_text: str | None = None
) -> Any:
    return features.checked_document(version.text, version.name, trusted, trusted_text)


def _merged_text(
    base: Mapping[str, Any] | None,
    ours: Version,
    ours_document: Mapping[str, Any],
    theirs: Version,
    theirs_document: Mapping[str, Any],
) -> str | None:
    """`merge_lists` over the texts, when both sides are laid out as `features.dumps` writes a
    list (else None): a feature ours has and theirs has word for word, or that only one side
    has, merges to itself, and its text is copied; `merge_feature` merges the rest, which
    `features.dumps` writes. For lists that `dumps` wrote, the text is `dumps` of the merge.

    Laid out as `dumps` writes it: the head and tail `dumps` gives the list's `$schema`, one
    `features` key, and as many items as pieces between item separators. The separator closes
    an object and opens another in the same array, which in a valid list only stands between
    two features, so then piece i is all of feature i, and the same piece is the same feature.
    (Spacing inside a piece is kept as it is.)"""
    sides = _pieces(ours.text, ours_document), _pieces(theirs.text, theirs_document)
    ours_pieces, theirs_pieces = sides
    if ours_pieces is None or theirs_pieces is None:
        return None
    ours_items, theirs_items = ours_document["features"], theirs_document["features"]
    theirs_at = {item["id"]: j for j, item in enumerate(theirs_items)}
    base_at = {item["id"]: item for item in base["features"]} if base is not None else {}
    out = []
    for i, item in enumerate(ours_items):
        j = theirs_at.get(item["id"])
        if j is None or ours_pieces[i] == theirs_pieces[j]:
            out.append(ours_pieces[i])
            continue
        before = base_at.get(item["id"])
        merged = merge_feature(
            features.feature_from_dict(before) if before is not None else None,
            features.feature_from_dict(item),
            features.feature_from_dict(theirs_items[j]),
        )
        piece = _piece(merged)
        if piece is None:
            return None
        out.append(piece)
    ours_ids = {item["id"] for item in ours_items}
    out += [theirs_pieces[j] for j, item in enumerate(theirs_items) if item["id"] not in ours_ids]
    head = _head(ours_document.get("$schema"))
    return head + features.ITEM_SEPARATOR.join(out) + _TAIL if head is not None else None


_TAIL = "\n    }\n  ]\n}\n"


def _head(schema_ref: str | None) -> str | None:
    """What `features.dumps` writes before the first feature's fields (None if that is not
    the layout assumed here: then the driver merges as `merge_lists`)."""
    if schema_ref not in _HEADS:
        schema = json.dumps(schema_ref, ensure_ascii=False)
        head = "{\n" + (f'  "$schema": {schema},\n' if schema_ref is not None else "")
        head += '  "features": [\n    {\n'
        probe = features.Feature("F1", "c", "d", ("s",))
        written = features.dumps(features.FeatureList([probe], schema_ref))
        _HEADS[schema_ref] = head if written.startswith(head) and written.endswith(_TAIL) else None
    return _HEADS[schema_ref]


_HEADS: dict[str | None, str | None] = {}


def _piece(feature: features.Feature) -> str | None:
    """The feature as `features.dumps` writes it between two item separators."""
    written = features.dumps(features.FeatureList([feature], None))
    head = _head(None)
    if head is None:
        return None
    return written[len(head) : -len(_TAIL)]


def _pieces(text: str, document: Mapping[str, Any]) -> list[str] | None:
    """The features' texts, when ``text`` (valid, parsed as ``document``) is laid out as
    `features.dumps` writes it (see `_merged_text`); None otherwise."""
    items = document["features"]
    head = _head(document.get("$schema"))
    pieces = text.split(features.ITEM_SEPARATOR)
    if (
        not items
        or head is None
        or len(pieces) != len(items)
        or not text.startswith(head)
        or not text.endswith(_TAIL)
        # A second `features` key (the last one counts) would leave some items out of it.
        or text.count('"features"') != 1
    ):
        return None
    pieces[0] = pieces[0][len(head) :]
    pieces[-1] = pieces[-1][: -len(_TAIL)]
    return pieces
