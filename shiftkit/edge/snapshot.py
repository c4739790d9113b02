"""Reading a change from git for the rules: the parents' state and the proposed state,
for the staged tree (the hooks) or for a commit (`audit`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shiftkit.core import features, rules
from shiftkit.core.errors import BadInput
from shiftkit.edge import gitio, state


def known_valid(common_dir: Path, blob: tuple[str, str] | None) -> bool:
    return blob is not None and state.is_validated(common_dir, blob[0])


def parse_list(
    blob: tuple[str, str] | None, source: str, common_dir: Path
) -> features.FeatureList | None:
    """A parent's list: trusted when validated before, validated (once) otherwise; None when
    absent or invalid (a commit made past the hooks — `audit` names it)."""
    if blob is None:
        return None
    if known_valid(common_dir, blob):
        return features.from_document(json.loads(blob[1]))
    try:
        parsed = features.loads(blob[1], source)
    except BadInput:
        return None
    state.mark_validated(common_dir, blob[0])
    return parsed


def trust(
    parents: Sequence[rules.Side], blobs: Sequence[tuple[str, str] | None], common_dir: Path
) -> dict[str, Any]:
    """`rules.evaluate`'s ``trusted`` and ``trusted_text``: the first parent's list when it is
    known to be valid, so unchanged items skip the schema."""
    if (
        not parents
        or not blobs
        or parents[0].features is None
        or not known_valid(common_dir, blobs[0])
    ):
        return {}
    parent = parents[0].features
    document: dict[str, Any] = {} if parent.schema_ref is None else {"$schema": parent.schema_ref}
    document["features"] = parent.items
    return {"trusted": document, "trusted_text": blobs[0][1] if blobs[0] else None}


def read_sides(
    root: Path,
    revs: Sequence[str],
    names: tuple[str, str, str],
    common_dir: Path,
    fetched: Sequence[tuple[str, str] | None] | None = None,
) -> tuple[list[rules.Side], list[tuple[str, str] | None]]:
    """Each rev's (features, log, archive); also its feature-list blob (id and text).
    ``fetched``: the blobs of ``rev:name`` for each rev and name, when already read."""
    specs = [f"{rev}:{name}" for rev in revs for name in names]
    blobs = fetched if fetched is not None else gitio.read_blobs_with_ids(root, specs)
    sides, feature_blobs = [], []
    for index in range(len(revs)):
        features_blob, log, archive = blobs[3 * index : 3 * index + 3]
        feature_blobs.append(features_blob)
        sides.append(
            rules.Side(
                parse_list(features_blob, names[0], common_dir),
                log[1] if log else None,
                archive[1] if archive else None,
            )
        )
    return sides, feature_blobs


def read_proposed(
    root: Path,
    specs: Sequence[str],
    fetched: Sequence[tuple[str, str] | None] | None = None,
) -> tuple[rules.Proposed, tuple[str, str] | None]:
    """The proposed (features, log, archive), and the feature-list blob (id and text)."""
    features_blob, log, archive = (
        fetched if fetched is not None else gitio.read_blobs_with_ids(root, specs)
    )
    proposed = rules.Proposed(
        *(blob[1] if blob else None for blob in (features_blob, log, archive))
    )
    return proposed, features_blob


def read_staged_change(
    root: Path,
    revs: Sequence[str],
    names: tuple[str, str, str],
    common_dir: Path,
    proposed_names: tuple[str, str, str] | None = None,
) -> tuple[list[rules.Side], list[tuple[str, str] | None], rules.Proposed, tuple[str, str] | None]:
    """The parents' side (under the parent's ``names``) and the index's (under
    ``proposed_names``, which differ when the change moves a file), with one `git cat-file`."""
    specs = [f"{rev}:{name}" for rev in revs for name in names]
    staged_specs = [f":{name}" for name in proposed_names or names]
    blobs = gitio.read_blobs_with_ids(root, specs + staged_specs)
    sides, feature_blobs = read_sides(root, revs, names, common_dir, blobs[: len(specs)])
    proposed, staged_blob = read_proposed(root, [], blobs[len(specs) :])
    return sides, feature_blobs, proposed, staged_blob
