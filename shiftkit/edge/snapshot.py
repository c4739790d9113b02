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
    """A parent's list: from its recorded table when checked before, checked (once)
    otherwise; None when absent or invalid (a commit made past the hooks — `audit` names
    it)."""
    if blob is None:
        return None
    recorded = state.recorded_list(common_dir, blob[0], blob[1])
    if recorded is not None:
        return recorded
    if known_valid(common_dir, blob):
        parsed = features.from_document(json.loads(blob[1]))
    else:
        try:
            parsed = features.loads(blob[1], source)
        except BadInput:
            return None
    items = parsed.items
    checked = features.FeatureList.from_text(
        blob[1],
        features.table_of(items),
        features.item_spans(blob[1], items),
        parsed.schema_ref,
        items=items,
    )
    state.record_checked(common_dir, blob[0], checked)
    return checked


def checked_list(common_dir: Path, blob: tuple[str, str] | None) -> features.FeatureList | None:
    """The proposed list when this exact text was checked before (`rules.evaluate`'s
    ``checked``)."""
    return None if blob is None else state.recorded_list(common_dir, blob[0], blob[1])


def record(common_dir: Path, blob: tuple[str, str] | None, report: rules.Report) -> None:
    """After the rules: a proposed list that passed rule 1 is recorded, so it is not
    checked again."""
    if (
        blob is not None
        and report.staged is not None
        and not any(v.rule == rules.Rule.SCHEMA for v in report.violations)
        and state.read_table(common_dir, blob[0]) is None
    ):
        record_list(common_dir, blob, report.staged)


def record_list(common_dir: Path, blob: tuple[str, str], checked: features.FeatureList) -> None:
    """Record the list ``blob`` holds, which passed rule 1 (``checked``), with its table."""
    if checked.text is None:
        checked = features.FeatureList.from_text(
            blob[1], checked.table, None, checked.schema_ref, items=checked.items
        )
    state.record_checked(common_dir, blob[0], checked)


def trust(
    parents: Sequence[rules.Side], blobs: Sequence[tuple[str, str] | None], common_dir: Path
) -> dict[str, Any]:
    """`rules.evaluate`'s ``trusted_list``: the first parent's list when it is known to be
    valid, so unchanged items are not checked again."""
    if (
        not parents
        or not blobs
        or parents[0].features is None
        or not known_valid(common_dir, blobs[0])
    ):
        return {}
    return {"trusted_list": parents[0].features}


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


def merge_base(root: Path, revs: Sequence[str], source: str, common_dir: Path) -> rules.MergeBase:
    """The lists at the common ancestors of a merge's first parent with each other one
    (``revs``: the parents)."""
    bases = []
    for other in revs[1:]:
        oids = gitio.merge_bases(root, revs[0], other)
        blobs = gitio.read_blobs_with_ids(root, [f"{oid}:{source}" for oid in oids])
        bases.append(tuple(parse_list(blob, source, common_dir) for blob in blobs))
    return rules.MergeBase(tuple(bases))


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
