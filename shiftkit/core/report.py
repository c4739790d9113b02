"""`shiftkit report`'s data: the protocol history (what passed when, what was demoted or
reverted), the ledger (what it cost) and the state now (claims, the last check), shaped into
one value that the page and `--json` both show. Pure: values in, values out.

The cost per passing feature at a moment is *all* the spend recorded up to then — failed
attempts, checks and unattributed usage included — divided by the features passing then
(seed 004's c(H)/s(H)); the last point is `shiftkit cost`'s figure.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from shiftkit.core import cost
from shiftkit.core.config import CostConfig
from shiftkit.core.ledger import Entry, time_key


class Step(NamedTuple):
    """One protocol commit as the report reads it: its list compared with its first
    parent's."""

    oid: str
    parents: tuple[str, ...]
    time: int  # committer time, seconds since the epoch
    subject: str
    passing: int
    total: int
    became_passing: tuple[str, ...] = ()
    demoted: tuple[str, ...] = ()
    reverted: tuple[str, ...] = ()  # attempts grew: a failed attempt was reverted
    readable: bool = True  # False: the list did not parse (the parent's is carried on)
    # features the commit appended to its parent's list: a person action (decision 0050)
    added: tuple[str, ...] = ()


class HeadFeature(NamedTuple):
    """A feature of HEAD's list."""

    id: str
    description: str
    status: str  # passing, open, blocked
    blocked_reason: str | None = None


class Check(NamedTuple):
    """What the verify cache says of HEAD's tree: which passing features a check (or a
    checkout-mode finish) saw pass there, and when the last of them was recorded."""

    tree: str
    verified: tuple[str, ...]
    unchecked: tuple[str, ...]  # passing, not verified at this tree (or no verifier)
    at: float | None  # seconds since the epoch of the newest record at this tree


class Claim(NamedTuple):
    feature: str
    where: str  # here, remote, here only
    session: str
    host: str
    branch: str
    taken: str
    heartbeat: str
    stale: str | None


class BurnPoint(NamedTuple):
    n: int  # 1-based position on HEAD's first-parent line of protocol commits
    commit: str
    time: int
    passing: int
    total: int
    demoted: tuple[str, ...]


class CostPoint(NamedTuple):
    time: float
    passing: int
    spend: cost.Spend  # all spend recorded up to ``time``
    per_passing: cost.Spend | None  # None while nothing passes


class FeatureRow(NamedTuple):
    id: str
    description: str
    status: str
    blocked_reason: str | None
    claimed: bool
    attempts: int  # ledger: claims that ended in a result
    reverts: int  # history: commits that raised its attempts (a failed attempt reverted)
    demotions: int  # history: commits that took its pass away
    first_claim: str | None  # ledger (or the open claim)
    first_passing: int | None  # history: committer time of the first commit it passed in
    spend: cost.Spend
    verified_at_head: bool | None  # None: not passing
    # appended after the list's first commit: its definition is a person's (decision 0050)
    added_later: bool = False


class Report(NamedTuple):
    project: str
    head: str
    generated: float
    features: list[FeatureRow]
    burnup: list[BurnPoint]
    costs: list[CostPoint]
    totals: cost.Spend
    unattributed: cost.Spend
    per_passing: cost.Spend | None
    passing: int
    claims: list[Claim]
    claims_note: str | None  # why the remote's claims are not shown, when they are not
    check: Check
    unreadable: list[str]  # commits whose list did not parse
    # without the usage of sessions that found nothing to take (decision record 0065)
    per_passing_without_coordination: cost.Spend | None = None
    # the usage of sessions that claimed nothing, named as `cost` names its rows (`cost.bucket`)
    coordination: cost.Spend = cost.Spend()
    idle: cost.Spend = cost.Spend()

    @property
    def money(self) -> bool:
        """Whether any spend has a price (then money is shown, else fresh-equivalent)."""
        return self.totals.usd is not None


def mainline(steps: Sequence[Step], head: str) -> list[Step]:
    """HEAD's first-parent line through ``steps``, oldest first."""
    by_oid = {step.oid: step for step in steps}
    line = []
    current: str | None = head
    while current is not None and current in by_oid:
        step = by_oid[current]
        line.append(step)
        current = step.parents[0] if step.parents else None
    line.reverse()
    return line


def burnup(line: Sequence[Step]) -> list[BurnPoint]:
    return [
        BurnPoint(n, step.oid, step.time, step.passing, step.total, step.demoted)
        for n, step in enumerate(line, 1)
    ]


def belongs_at(entry: Entry, units: Sequence[Entry]) -> float:
    """When a usage entry counts: its own time, or — recorded after its unit ended (Claude
    Code's SessionEnd comes after the session's finish commit) — the end of the unit it was
    spent on: the same session's unit of its feature, else the feature's newest unit claimed
    before it. So the cost curve counts a session's spend at the commit it produced."""
    at = time_key(entry.at)
    if entry.feature is None:
        return at
    mine = [u for u in units if u.feature == entry.feature]
    same = [u for u in mine if entry.session and u.session == entry.session]
    claimed = [u for u in mine if time_key(u.claimed_at or u.at) <= at]
    owner = (same or claimed)[-1:] if (same or claimed) else []
    return min(at, time_key(owner[0].at)) if owner else at


def _usage_series(
    entries: Sequence[Entry], ratios: CostConfig, prices: cost.Lookup
) -> tuple[list[float], list[cost.Spend]]:
    """The usage entries' times (as they count: `belongs_at`) in order and the spend
    recorded up to each (inclusive)."""
    units = sorted((e for e in entries if e.kind == "unit"), key=lambda e: time_key(e.at))
    usage = sorted(
        (
            (belongs_at(e, units), cost.spend_of(e, ratios, prices))
            for e in entries
            if e.kind == "usage"
        ),
        key=lambda pair: pair[0],
    )
    times, running, total = [], [], cost.Spend()
    for at, spend in usage:
        total = total + spend
        times.append(at)
        running.append(total)
    return times, running


def cost_points(
    line: Sequence[Step],
    entries: Sequence[Entry],
    ratios: CostConfig,
    prices: cost.Lookup,
    passing_now: int,
) -> list[CostPoint]:
    """The cost per passing feature at each commit of ``line`` (spend recorded up to its
    time ÷ features passing in it), and now (all spend ÷ features passing at HEAD)."""
    times, running = _usage_series(entries, ratios, prices)

    def spent(at: float) -> cost.Spend:
        n = bisect.bisect_right(times, at)
        return running[n - 1] if n else cost.Spend()

    points = []
    for step in line:
        spend = spent(step.time)
        per = spend.divided(step.passing) if step.passing else None
        points.append(CostPoint(step.time, step.passing, spend, per))
    last = max([*times[-1:], *(step.time for step in line[-1:])], default=0.0)
    total = running[-1] if running else cost.Spend()
    points.append(
        CostPoint(last, passing_now, total, total.divided(passing_now) if passing_now else None)
    )
    return points


def feature_rows(
    head_list: Sequence[HeadFeature],
    steps: Sequence[Step],
    entries: Sequence[Entry],
    ratios: CostConfig,
    prices: cost.Lookup,
    claimed: Mapping[str, str],
    check: Check,
) -> list[FeatureRow]:
    """One row per feature of HEAD's list. ``claimed``: feature -> when its open claim was
    taken. Reverts and demotions are counted on commits with one parent (a merge brings
    its side's events, already counted there)."""
    reverts: dict[str, int] = {}
    demotions: dict[str, int] = {}
    first_passing: dict[str, int] = {}
    added = {feature_id for step in steps for feature_id in step.added}
    for step in steps:
        for feature_id in step.became_passing:
            if feature_id not in first_passing or step.time < first_passing[feature_id]:
                first_passing[feature_id] = step.time
        if len(step.parents) > 1:
            continue
        for feature_id in step.reverted:
            reverts[feature_id] = reverts.get(feature_id, 0) + 1
        for feature_id in step.demoted:
            demotions[feature_id] = demotions.get(feature_id, 0) + 1
    per: dict[str | None, list[Entry]] = {}
    for entry in entries:
        per.setdefault(entry.feature, []).append(entry)
    verified = set(check.verified)
    rows = []
    for item in head_list:
        mine = per.get(item.id, [])
        ledger_row = cost.report(mine, [(item.id, item.status)], ratios, prices)
        claims = [e.claimed_at or e.at for e in mine if e.kind == "unit"]
        if item.id in claimed:
            claims.append(claimed[item.id])
        claims = [at for at in claims if at and at != "?"]
        rows.append(
            FeatureRow(
                item.id,
                item.description,
                item.status,
                item.blocked_reason,
                item.id in claimed,
                ledger_row.rows[0].attempts,
                reverts.get(item.id, 0),
                demotions.get(item.id, 0),
                min(claims, key=time_key) if claims else None,
                first_passing.get(item.id),
                ledger_row.rows[0].spend,
                (item.id in verified) if item.status == "passing" else None,
                item.id in added,
            )
        )
    return rows


def time_to_passing(row: FeatureRow) -> float | None:
    """Seconds from the first claim to the first commit it passed in (None: not both)."""
    if row.first_claim is None or row.first_passing is None:
        return None
    return max(row.first_passing - time_key(row.first_claim), 0.0)


def build(
    project: str,
    head: str,
    steps: Sequence[Step],
    head_list: Sequence[HeadFeature],
    entries: Sequence[Entry],
    ratios: CostConfig,
    prices: cost.Prices,
    claims: Sequence[Claim],
    check: Check,
    generated: float,
    claims_note: str | None = None,
) -> Report:
    price_of = cost.lookup(prices)
    line = mainline(steps, head)
    passing = sum(1 for item in head_list if item.status == "passing")
    whole = cost.report(entries, [(f.id, f.status) for f in head_list], ratios, prices)
    claimed = {c.feature: c.taken for c in claims}
    return Report(
        project,
        head,
        generated,
        feature_rows(head_list, steps, entries, ratios, price_of, claimed, check),
        burnup(line),
        cost_points(line, entries, ratios, price_of, passing),
        whole.totals,
        whole.unattributed.spend,
        whole.per_passing_feature,
        passing,
        list(claims),
        claims_note,
        check,
        [step.oid for step in steps if not step.readable],
        whole.per_passing_without_coordination if whole.coordination.spend.usage.tokens else None,
        whole.coordination.spend,
        whole.idle.spend,
    )


# -- words ----------------------------------------------------------------------------------


def when(seconds: float | None) -> str:
    if seconds is None or seconds <= 0:
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.1f}d"


def spend_text(spend: cost.Spend | None, money: bool) -> str:
    if spend is None:
        return "-"
    if money:
        return cost.money(spend.usd)
    return f"{cost.number(round(spend.fresh_equivalent))} fresh-eq tokens"


def check_text(check: Check, passing: int) -> str:
    short = check.tree[:7]
    if not passing:
        return "last check: nothing passes yet"
    if not check.unchecked:
        return (
            f"last check: all {passing} passing verified at HEAD's tree ({short}, {when(check.at)})"
        )
    return (
        f"last check: {len(check.verified)} of {passing} passing verified at HEAD's tree "
        f"({short}); "
        f"not verified there: {_names(check.unchecked)} (`shiftkit check`)"
    )


def summary(rep: Report) -> str:
    """The line on top: the headline (`headline`), the cost per passing feature, the last
    check."""
    if not rep.totals.usage.tokens:
        per = "no usage recorded yet"
    elif rep.per_passing is None:
        per = f"{spend_text(rep.totals, rep.money)} spent, nothing passes yet"
    else:
        per = f"{spend_text(rep.per_passing, rep.money)} per passing feature"
        if rep.per_passing_without_coordination is not None:
            without = spend_text(rep.per_passing_without_coordination, rep.money)
            per += f" ({without} without coordination)"
    check = rep.check
    if rep.passing and check.unchecked:  # (the headline said how many: say which, what to do)
        names = _names(check.unchecked)
        last = f"not verified at HEAD's tree ({check.tree[:7]}): {names} (`shiftkit check`)"
    else:
        last = check_text(check, rep.passing)
    return f"{headline(rep)} · {per} · {last}"


def _names(ids: Sequence[str]) -> str:
    return f"{', '.join(ids[:5])}{' …' if len(ids) > 5 else ''}"


def headline(rep: Report) -> str:
    """What the page leads with: what was verified when a check is stale (the features marked
    passing come second then: the list's word is not the verdict), else N of M passing."""
    total = len(rep.features)
    if rep.passing and rep.check.unchecked:
        return (
            f"{len(rep.check.verified)} of {rep.passing} passing verified at HEAD's tree, "
            f"{rep.passing} of {total} marked passing"
        )
    return f"{rep.passing} of {total} passing"


def thin(count: int, most: int, keep: Sequence[int] = ()) -> list[int]:
    """At most about ``most`` of the positions ``range(count)``, evenly spread, always
    with the first, the last and those in ``keep`` (a chart need not draw 5,000 points)."""
    if count <= most:
        return list(range(count))
    stride = count / most
    chosen = {int(i * stride) for i in range(most)} | {0, count - 1} | set(keep)
    return sorted(i for i in chosen if 0 <= i < count)


# -- JSON -----------------------------------------------------------------------------------


def _spend(spend: cost.Spend | None) -> dict[str, Any] | None:
    return None if spend is None else cost.spend_json(spend)


def as_json(rep: Report) -> dict[str, Any]:
    return {
        "project": rep.project,
        "head": rep.head,
        "generated": when(rep.generated),
        "summary": summary(rep),
        "passing": rep.passing,
        "features_total": len(rep.features),
        "totals": cost.spend_json(rep.totals),
        "unattributed": cost.spend_json(rep.unattributed),
        "coordination": cost.spend_json(rep.coordination),
        "idle": cost.spend_json(rep.idle),
        "per_passing_feature": _spend(rep.per_passing),
        "per_passing_feature_without_coordination": _spend(rep.per_passing_without_coordination),
        "features": [
            {
                "id": row.id,
                "description": row.description,
                "status": row.status,
                "blocked": row.blocked_reason,
                "claimed": row.claimed,
                "attempts": row.attempts,
                "reverts": row.reverts,
                "demotions": row.demotions,
                "first_claim": row.first_claim,
                "first_passing": when(row.first_passing) if row.first_passing else None,
                "seconds_to_passing": time_to_passing(row),
                "verified_at_head": row.verified_at_head,
                "added_later": row.added_later,
                **cost.spend_json(row.spend),
            }
            for row in rep.features
        ],
        "burnup": [
            {
                "n": point.n,
                "commit": point.commit,
                "time": point.time,
                "passing": point.passing,
                "total": point.total,
                "demoted": list(point.demoted),
            }
            for point in rep.burnup
        ],
        "cost_per_passing_feature": [
            {
                "time": round(point.time, 3),
                "passing": point.passing,
                "spent": cost.spend_json(point.spend),
                "per_passing_feature": _spend(point.per_passing),
            }
            for point in rep.costs
        ],
        "claims": [claim._asdict() for claim in rep.claims],
        "claims_note": rep.claims_note,
        "last_check": {
            "tree": rep.check.tree,
            "verified": list(rep.check.verified),
            "unchecked": list(rep.check.unchecked),
            "at": when(rep.check.at) if rep.check.at else None,
        },
        "unreadable_commits": rep.unreadable,
    }
