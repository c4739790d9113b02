"""Reading a change from git for the rules: the parents' state and the proposed state,
for the staged tree (the hooks) or for a commit (`audit`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

from shiftkit import features, gitio, rules, state
from shiftkit.errors import BadInput


def blob_id(text: str) -> str:
    """git's object id for a blob with this content, computed without asking git."""
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


def trusted_items(parents: Sequence[rules.Side], texts: Sequence[str | None],
                  common_dir: Path) -> list[Any] | None:  # fmt: skip
    """The first parent's items when its list is known valid: unchanged items skip the schema."""
    if not texts or texts[0] is None or not known_valid(common_dir, texts[0]):
        return None
    return rules.trusted_items(texts[0])


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


def merge_parents(git_dir: Path) -> list[str]:
    try:
        return (git_dir / "MERGE_HEAD").read_text(encoding="ascii").split()
    except FileNotFoundError:
        return []
