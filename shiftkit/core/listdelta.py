"""A feature list checked beside its parent's, in time proportional to what changed.

`audit` judges one commit after another, and each usually changes one feature of a list that
can hold thousands: parsing and checking the whole list again for every commit is what makes
it slow. `features.dumps` writes one item per block, blocks separated by
`features.ITEM_SEPARATOR`, so two versions of a list compare as text: find where they differ,
parse only the items there, and reuse every other item of the parent, which is valid.

`beside` returns None whenever it cannot prove its answer is the one `features.loads` would
give (a change in the first or last item, items added or removed, a changed id or
dependency, anything invalid); the caller then checks the whole list the ordinary way, which
also words any violation. Pure: text in, lists out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from shiftkit.core import features

SEPARATOR = features.ITEM_SEPARATOR
# An item's block is the text between two separators: the separator before it ends with its
# opening brace, the one after it starts with its closing brace.
_OPEN, _CLOSE = "{\n", "\n    }"


class Aligned(features.FeatureList):
    """A valid list whose items are its base's, in the same places with the same ids, except
    the items at ``changed`` (status or wording changes). Lookups by id use the first list of
    the chain's index, so a chain of thousands of commits builds one index."""

    def __init__(
        self,
        base: features.FeatureList,
        items: Sequence[Mapping[str, Any]],
        changed: tuple[int, ...],
    ) -> None:
        super().__init__(schema_ref=base.schema_ref, items=items)
        self.changed = changed
        # (the first list itself, not the base: a chain of references would keep every list)
        self._positions: features.FeatureList = (
            base._positions if isinstance(base, Aligned) else base
        )

    def position(self, feature_id: str) -> int | None:
        return self._positions.position(feature_id)


def aligned(feature_list: features.FeatureList, text: str) -> bool:
    """Whether ``text`` (the valid list ``feature_list`` was read from) has one block per item:
    the lists `features.dumps` writes do."""
    if isinstance(feature_list, Aligned):
        return True  # (built that way)
    return text.count(SEPARATOR) == len(feature_list) - 1


def beside(text: str, base: features.FeatureList, base_text: str) -> Aligned | None:
    """The list ``text`` holds, checked as `features.loads` would check it, given the valid
    list ``base`` read from ``base_text`` (which is `aligned`); None when that cannot be
    decided from the items that changed."""
    if text == base_text:
        return Aligned(base, base.items, ())
    start = _common_prefix(text, base_text)
    end = _common_suffix(text, base_text, start)
    # The blocks around what changed: from the last separator entirely before it to the first
    # one entirely after it. Both are in the text the versions share; either missing means
    # the first or the last block changed, which holds the document's head or tail.
    before = base_text.rfind(SEPARATOR, 0, start)
    after = base_text.find(SEPARATOR, len(base_text) - end)
    if before < 0 or after < 0:
        return None
    first = before + len(SEPARATOR)
    old_blocks = base_text[first:after].split(SEPARATOR)
    new_blocks = text[first : after + len(text) - len(base_text)].split(SEPARATOR)
    if len(old_blocks) != len(new_blocks):
        return None  # items added or removed
    try:
        head = json.loads(_OPEN + old_blocks[0] + _CLOSE)
    except (ValueError, RecursionError):
        return None
    head_id = head.get("id") if isinstance(head, dict) else None
    offset = base.position(head_id) if isinstance(head_id, str) else None
    items = base.items
    if offset is None or not features.same_json(head, items[offset]):
        return None
    # The text is the base's with these blocks replaced; each block parses alone to one object
    # ending at its last brace, so the whole text parses to the base's document with these
    # items replaced (JSON reads left to right, and the rest of the text is the base's).
    changed: list[int] = []
    replaced: list[Any] = []
    for index, (old_block, new_block) in enumerate(zip(old_blocks, new_blocks, strict=True)):
        if old_block == new_block:
            continue
        try:
            item = json.loads(_OPEN + new_block + _CLOSE)
            before_item = json.loads(_OPEN + old_block + _CLOSE)
        except (ValueError, RecursionError):
            return None
        old = items[offset + index]
        if not features.same_json(before_item, old):
            return None  # (the blocks are not the items they should be: check it all)
        if not isinstance(item, dict) or not _same_links(item, old):
            return None
        changed.append(offset + index)
        replaced.append(item)
    new_items = list(items)
    for position, item in zip(changed, replaced, strict=True):
        new_items[position] = item
    # Ids and dependencies are the base's, which passed the checks of ids: only the schema
    # can object, and only to the changed items.
    skeleton = {} if base.schema_ref is None else {"$schema": base.schema_ref}
    document = {**skeleton, "features": new_items}
    if features.changed_items_problem(document, items, changed, same_skeleton=True) is not None:
        return None
    return Aligned(base, new_items, tuple(changed))


def _same_links(item: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """The item keeps the id and the dependencies it had."""
    return (
        isinstance(item.get("id"), str)
        and item.get("id") == old.get("id")
        and ("depends_on" in item) == ("depends_on" in old)
        and features.same_json(item.get("depends_on"), old.get("depends_on"))
    )


_CHUNK = 1 << 15


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start, compared a chunk at a time
    (in C: a character loop in Python would cost a thousand times more)."""
    limit = min(len(a), len(b))
    low = 0
    while low < limit:
        high = min(low + _CHUNK, limit)
        if not a.startswith(b[low:high], low):
            break
        low = high
    else:
        return limit
    while high - low > 1:  # a[:low] == b[:low], a[:high] != b[:high]
        middle = (low + high) // 2
        if a.startswith(b[low:middle], low):
            low = middle
        else:
            high = middle
    return low


def _common_suffix(a: str, b: str, prefix: int) -> int:
    """How many characters ``a`` and ``b`` share at their end, not counting the first
    ``prefix`` of either."""
    limit = min(len(a), len(b)) - prefix
    low = 0
    while low < limit:
        high = min(low + _CHUNK, limit)
        if not a.endswith(b[len(b) - high : len(b) - low], 0, len(a) - low):
            break
        low = high
    else:
        return limit
    while high - low > 1:  # the last low characters agree, the last high do not
        middle = (low + high) // 2
        if a.endswith(b[len(b) - middle : len(b) - low], 0, len(a) - low):
            low = middle
        else:
            high = middle
    return low
