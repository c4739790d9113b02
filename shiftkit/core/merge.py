"""The `features.json` merge driver: two sessions' lists merged feature by feature.

Passes from either side, demotions win, attempts take the maximum, a block from either side
stays, and new features from both sides are appended in order (ours first). Two sides that
changed the same feature's definition differently is a conflict for a person.
"""

from __future__ import annotations

from shiftkit.core import features
from shiftkit.core.errors import Refused


def merge_lists(
    base: features.FeatureList | None, ours: features.FeatureList, theirs: features.FeatureList
) -> features.FeatureList:
    merged = []
    for mine in ours.features:
        other = theirs.get(mine.id)
        if other is None:
            merged.append(mine)
            continue
        if other.definition() != mine.definition():
            raise Refused(
                f"{mine.id}: both sides changed its definition differently; "
                f"merge features.json by hand"
            )
        before = base.get(mine.id) if base is not None else None
        was_passing = before is not None and before.passes
        demoted = was_passing and not (mine.passes and other.passes)
        merged.append(
            mine._replace(
                passes=False if demoted else (mine.passes or other.passes),
                attempts=max(mine.attempts, other.attempts),
                blocked=mine.blocked or other.blocked,
            )
        )
    merged += [f for f in theirs.features if ours.get(f.id) is None]
    return features.FeatureList(merged, ours.schema_ref)
