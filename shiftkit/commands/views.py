"""Plain-text and JSON renderings of the feature list. Pure: values in, text out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shiftkit.core import features
from shiftkit.edge.claims import Claim
from shiftkit.edge.regression import Listing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from shiftkit.core.cost import Attempts

BAR_WIDTH = 30


def progress_bar(passing: int, total: int) -> str:
    filled = round(BAR_WIDTH * passing / total) if total else 0
    percent = round(100 * passing / total) if total else 0
    return f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {passing}/{total} passing ({percent}%)"


def status_data(
    listing: Listing,
    claims: Mapping[str, Claim],
    upcoming: features.Feature | None,
    notes: tuple[str, ...] = (),
    now: str = "",
    counted: features.FeatureList | None = None,
    counted_on: str | None = None,
    diverged_from: str | None = None,
) -> dict[str, Any]:
    """``upcoming``: the feature `claim` would take now (`upcoming.Outlook.next`);
    ``counted``: the list it is chosen from when that is the remote's branch's, ``counted_on``
    (this branch is only behind it: decision record 0073), counted instead of HEAD's;
    ``diverged_from``: the remote's branch this one diverged from (counted here, and said:
    decision record 0079)."""
    from shiftkit.core.claim import age

    feature_list = counted if counted is not None else listing.features
    c = features.counts(feature_list, claims)
    marked = c.total > 0 and c.passing == c.total
    return {
        "notes": list(notes),
        "total": c.total,
        "passing": c.passing,
        "open": c.open,
        "blocked": c.blocked,
        "claimed": c.claimed,
        "counted_on": counted_on,
        "diverged_from": diverged_from,
        "next": upcoming.id if upcoming else None,
        "all_pass": marked and listing.checked and not counted_on,
        "all_marked_passing": marked,
        "all_pass_message": features.all_pass_message(
            feature_list,
            listing.checked,
            bool(counted_on or diverged_from),
            counted_on,
            listing.features,
        )
        if marked
        else None,
        "uncommitted_edit": listing.edited,
        "blocked_features": [
            {"id": f.id, "reason": f.blocked.reason, "since": f.blocked.since}
            for f in features.blocked_open(feature_list)
            if f.blocked is not None
        ],
        "claimed_features": [
            {
                "id": c.feature,
                **c.as_json(),
                "age": age(c.record.taken, now) if c.record else "?",
            }
            for c in claims.values()
        ],
    }


def status_text(data: Mapping[str, Any], *, terminal: bool) -> str:
    if terminal:
        head = progress_bar(data["passing"], data["total"])
    else:
        head = f"{data['passing']}/{data['total']} passing"
    where = features.where_counted(data.get("counted_on"), data.get("diverged_from"))
    lines = [
        *data.get("notes", ()),
        head + where + (f" {data['uncommitted_edit']}" if data["uncommitted_edit"] else ""),
        f"open {data['open']}, blocked {data['blocked']}, claimed {data['claimed']}{where}",
    ]
    if data["all_pass_message"]:
        lines.append(data["all_pass_message"])
    elif data["next"]:
        lines.append(f"next: {data['next']}")
    if data["blocked_features"]:
        lines.append("blocked:")
        lines += [
            f"  {b['id']}  {b['reason']} (since {b['since']})" for b in data["blocked_features"]
        ]
    if data["claimed_features"]:
        lines.append("claimed:")
        lines += [
            f"  {c['id']}  session {c.get('session', '?')} in {c.get('worktree', '?')} "
            f"(clone {c.get('clone') or '?'}) since {c.get('taken', '?')}, {c['age']} ago"
            for c in data["claimed_features"]
        ]
    return "\n".join(lines)


def _status_line(feature: features.Feature, tried: Attempts | None) -> str:
    state = "passing" if feature.passes else ("blocked" if feature.blocked else "open")
    if tried is None:
        from shiftkit.core.words import counted

        tried_here = counted(feature.attempts, "failed attempt")
        return f"  status: {state}, {tried_here} (the ledger is unreadable)"
    counter = ""
    if feature.attempts != tried.failed:  # (an unblock resets it; an old ledger lacks units)
        counter = f"; {feature.attempts} failed by the feature list's count, which blocks it"
    return f"  status: {state}, attempts {tried.text()}{counter}"


def feature_text(
    feature: features.Feature, project_verify: str = "", tried: Attempts | None = None
) -> str:
    """The feature in full; ``tried``: its attempts as `cost` counts them
    (`commands.cost.attempts_of`)."""
    verifier = features.effective_verify(feature, project_verify)
    if feature.verify is None and verifier:
        verify_line = f"{verifier}  (project-wide)"
    else:
        verify_line = verifier or "(none: this feature cannot become passing)"
    lines = [
        f"{feature.id}  {feature.description}",
        f"  category: {feature.category}{'  (core)' if feature.core else ''}",
        _status_line(feature, tried),
    ]
    if feature.blocked is not None:
        lines.append(f"  blocked: {feature.blocked.reason} (since {feature.blocked.since})")
    if feature.depends_on:
        lines.append(f"  depends on: {', '.join(feature.depends_on)}")
    lines.append(f"  verify: {verify_line}")
    if feature.oracle:
        lines.append(f"  oracle: {', '.join(feature.oracle)}")
    lines.append("  steps:")
    lines += [f"    {n}. {step}" for n, step in enumerate(feature.steps, 1)]
    return "\n".join(lines)
