"""Reading a change from git for the rules: the parents' state and the proposed state,
for the staged tree (the hooks) or for a commit (`audit`)."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

from shiftkit import features, gitio, rules, state
from shiftkit.errors import BadInput


@functools.lru_cache(maxsize=8)
def blob_id(text: str) -> str:
    """git's object id for a blob with this content, computed without asking git (and once
    per text: a hook asks about the same 1 MB list several times)."""
    data = text.encode("utf-8", "surrogateescape")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def known_valid(common_dir: Path, text: str) -> bool:
    return state.is_validated(common_dir, blob_id(text))


def parse_list(text: str | None, source: str, common_dir: Path) -> features.FeatureList | None:
    """A parent's list: trusted when validated before, validated (once) otherwise; None when
    absent or invalid (a commit made past the hooks — `audit` names it)."""
    if text is None:
        return None
    if known_valid(common_dir, text):
        return features.from_document(json.loads(text))
    try:
        parsed = features.loads(text, source)
    except BadInput:
        return None
    state.mark_validated(common_dir, blob_id(text))
    return parsed


def trust(parents: Sequence[rules.Side], texts: Sequence[str | None],
          common_dir: Path) -> dict[str, Any]:  # fmt: skip
    """`rules.evaluate`'s ``trusted`` and ``trusted_text``: the first parent's list when it is
    known to be valid, so unchanged items skip the schema."""
    if not parents or not texts or texts[0] is None or parents[0].features is None:
        return {}
    if not known_valid(common_dir, texts[0]):
        return {}
    parent = parents[0].features
    document: dict[str, Any] = {} if parent.schema_ref is None else {"$schema": parent.schema_ref}
    document["features"] = parent.items
    return {"trusted": document, "trusted_text": texts[0]}


def read_sides(root: Path, revs: Sequence[str], names: tuple[str, str, str],
               common_dir: Path) -> tuple[list[rules.Side], list[str | None]]:  # fmt: skip
    """Each rev's (features, log, archive); also the raw feature-list texts."""
    specs = [f"{rev}:{name}" for rev in revs for name in names]
    blobs = gitio.read_blobs(root, specs)
    sides, texts = [], []
    for index in range(len(revs)):
        features_text, log, archive = blobs[3 * index : 3 * index + 3]
        texts.append(features_text)
        sides.append(rules.Side(parse_list(features_text, names[0], common_dir), log, archive))
    return sides, texts


def read_proposed(root: Path, specs: Sequence[str]) -> rules.Proposed:
    features_text, log, archive = gitio.read_blobs(root, specs)
    return rules.Proposed(features_text, log, archive)

